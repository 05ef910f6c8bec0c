/**
 * The bar pager against a model server (a pure function seam): for any set of bars, range, page size,
 * which end of an over-full window the server keeps, and the order it answers in, every bar of the
 * range comes back exactly once, oldest first. Non-increasing times within an answer are refused.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { GatewayError, pageBars, type Bar, type BarWindow } from '../../../src/adapters/gateway/index.ts';

const MINUTE = 60_000;
const T0 = Date.parse('2025-03-03T14:30:00Z');

type Keep = 'newest' | 'oldest';
type Order = 'newestFirst' | 'oldestFirst' | 'shuffled';

function barAt(ms: number): Bar {
  const price = 5000 + ((ms / MINUTE) % 97);
  return { t: new Date(ms).toISOString().replace('Z', '+00:00'), o: price, h: price + 1, l: price - 1, c: price, v: 1 };
}

/** A server holding `times` (epoch ms); per answer it keeps one end when over `limit` and orders as told. */
function modelServer(times: number[], keeps: Keep[], orders: Order[], seeds: number[], leak: boolean) {
  const sorted = [...new Set(times)].sort((a, b) => a - b);
  const windows: BarWindow[] = [];
  const fetch = async (w: BarWindow): Promise<Bar[]> => {
    const n = windows.length;
    windows.push(w);
    let selected = sorted.filter((t) => t >= w.startMs && t <= w.endMs);
    if (selected.length > w.limit)
      selected = keeps[n % keeps.length] === 'newest' ? selected.slice(-w.limit) : selected.slice(0, w.limit);
    // A careless server may add the bar just outside the window (an inclusive/exclusive mix-up).
    const before = sorted.filter((t) => t < w.startMs).at(-1);
    if (leak && before !== undefined) selected = [before, ...selected];
    let bars = selected.map(barAt);
    const order = orders[n % orders.length];
    if (order === 'newestFirst') bars.reverse();
    if (order === 'shuffled') bars = shuffle(bars, seeds[n % seeds.length] ?? 1);
    return bars;
  };
  return { fetch, windows, sorted };
}

function shuffle<T>(items: T[], seed: number): T[] {
  const out = [...items];
  let s = seed >>> 0 || 1;
  for (let i = out.length - 1; i > 0; i--) {
    s = (s * 1_103_515_245 + 12_345) >>> 0;
    const j = s % (i + 1);
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

const scenario = fc.record({
  minutes: fc.uniqueArray(fc.integer({ min: 0, max: 600 }), { maxLength: 250 }),
  from: fc.integer({ min: -20, max: 600 }),
  span: fc.integer({ min: 0, max: 700 }),
  pageSize: fc.integer({ min: 1, max: 40 }),
  keeps: fc.array(fc.constantFrom<Keep>('newest', 'oldest'), { minLength: 1, maxLength: 4 }),
  orders: fc.array(fc.constantFrom<Order>('newestFirst', 'oldestFirst', 'shuffled'), { minLength: 1, maxLength: 4 }),
  seeds: fc.array(fc.integer({ min: 1, max: 2 ** 31 }), { minLength: 1, maxLength: 4 }),
  leak: fc.boolean(),
});

describe('pageBars', () => {
  it('returns each bar of the range exactly once, oldest first (property)', async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async (s) => {
        const server = modelServer(
          s.minutes.map((m) => T0 + m * MINUTE),
          s.keeps,
          s.orders,
          s.seeds,
          s.leak,
        );
        const startMs = T0 + s.from * MINUTE;
        const endMs = startMs + s.span * MINUTE;
        const pages: number[] = [];
        const bars = await pageBars(server.fetch, {
          startMs,
          endMs,
          pageSize: s.pageSize,
          onPage: (i) => pages.push(i.pages),
        });
        const expected = server.sorted.filter((t) => t >= startMs && t <= endMs);
        expect(bars.map((b) => Date.parse(b.t))).toEqual(expected);
        for (const w of server.windows) {
          expect(w.limit).toBe(s.pageSize);
          expect(w.startMs).toBeGreaterThanOrEqual(startMs);
          expect(w.endMs).toBeLessThanOrEqual(endMs);
        }
        expect(pages).toEqual(server.windows.map((_, i) => i + 1));
      }),
      { numRuns: 300 },
    );
  });

  it('asks one window when everything fits', async () => {
    const server = modelServer([T0, T0 + MINUTE], ['newest'], ['newestFirst'], [1], false);
    await pageBars(server.fetch, { startMs: T0, endMs: T0 + 10 * MINUTE, pageSize: 20_000 });
    expect(server.windows).toHaveLength(1);
  });

  it('refuses an answer with two bars at the same time (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(fc.integer({ min: 0, max: 100 }), { minLength: 1, maxLength: 30 }),
        fc.nat(),
        async (minutes, pick) => {
          const bars = minutes.map((m) => barAt(T0 + m * MINUTE));
          const twin = bars[pick % bars.length] as Bar;
          bars.push({ ...twin, c: twin.c + 0.25 });
          const error = await pageBars(async () => bars, {
            startMs: T0,
            endMs: T0 + 100 * MINUTE,
            pageSize: 1_000,
          }).catch((e: unknown) => e);
          expect(error).toBeInstanceOf(GatewayError);
          expect(error).toMatchObject({ code: 'MALFORMED_RESPONSE', endpoint: 'History/retrieveBars' });
        },
      ),
      { numRuns: 100 },
    );
  });

  it('refuses a page size over 20,000 and a reversed range before asking', async () => {
    let asked = 0;
    const fetch = async () => {
      asked += 1;
      return [];
    };
    await expect(pageBars(fetch, { startMs: 0, endMs: 1, pageSize: 20_001 })).rejects.toMatchObject({
      code: 'RANGE_REFUSED',
    });
    await expect(pageBars(fetch, { startMs: 2, endMs: 1 })).rejects.toMatchObject({ code: 'INVALID_REQUEST' });
    expect(asked).toBe(0);
  });

  it('a full page entirely outside the window means the window is empty, not an endless loop', async () => {
    let asked = 0;
    const outside = [barAt(T0 - MINUTE)];
    const bars = await pageBars(
      async () => {
        asked += 1;
        return outside;
      },
      { startMs: T0, endMs: T0 + MINUTE, pageSize: 1 },
    );
    expect(bars).toEqual([]);
    expect(asked).toBe(1);
  });
});
