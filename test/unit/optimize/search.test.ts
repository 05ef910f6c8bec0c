import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { pointParams, search, spaceSize, type PointIndex, type SearchMethod } from '../../../src/optimize/search.ts';

const arbGrid = fc
  .array(fc.integer({ min: 1, max: 7 }), { minLength: 1, maxLength: 3 })
  .map((sizes) => Object.fromEntries(sizes.map((m, d) => [`p${d}`, Array.from({ length: m }, (_, v) => v * 10 + d)])));

/** A separable bowl with its top at (7, 13) on 0..20 x 0..20. */
const BOWL = { x: Array.from({ length: 21 }, (_, v) => v), y: Array.from({ length: 21 }, (_, v) => v) };
const bowl = (points: readonly PointIndex[]) =>
  Promise.resolve(points.map((p) => 100 - (p[0]! - 7) ** 2 - (p[1]! - 13) ** 2));

describe('parameter searches', () => {
  it('propose distinct points of the space only, as many as asked, the same for the same seed', async () => {
    await fc.assert(
      fc.asyncProperty(
        arbGrid,
        fc.constantFrom<SearchMethod>('grid', 'random', 'tpe'),
        fc.integer({ min: 1, max: 60 }),
        fc.integer(),
        fc.integer({ min: 1, max: 4 }),
        async (grid, method, trials, seed, batch) => {
          const seen: Record<string, unknown>[] = [];
          const score = (points: readonly PointIndex[]) => {
            for (const p of points) seen.push(pointParams(grid, p));
            return Promise.resolve(points.map((p) => Math.sin(p.reduce((s, v, d) => s + v * (d + 1), seed % 7))));
          };
          const first = await search(grid, { method, trials, seed, batch }, score);
          const again = await search(grid, { method, trials, seed, batch }, score);
          expect(again).toEqual(first);
          const expected = method === 'grid' ? spaceSize(grid) : Math.min(trials, spaceSize(grid));
          expect(first).toHaveLength(expected);
          expect(new Set(first.map((o) => o.point.join(','))).size).toBe(expected);
          for (const params of seen)
            for (const [key, value] of Object.entries(params)) expect(grid[key]).toContain(value);
        },
      ),
      { numRuns: 150 },
    );
  });

  it('a different seed gives a different random sample', async () => {
    const a = await search(BOWL, { method: 'random', trials: 20, seed: 1, batch: 2 }, bowl);
    const b = await search(BOWL, { method: 'random', trials: 20, seed: 2, batch: 2 }, bowl);
    expect(a.map((o) => o.point)).not.toEqual(b.map((o) => o.point));
  });

  it('TPE finds the top of an easy objective in a seventh of the space, for every seed tried', async () => {
    for (let seed = 1; seed <= 10; seed++) {
      const observations = await search(BOWL, { method: 'tpe', trials: 60, seed, batch: 2 }, bowl);
      expect(Math.max(...observations.map((o) => o.score)), `seed ${seed}`).toBe(100);
    }
  });
});
