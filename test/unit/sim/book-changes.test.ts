import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bookChanges, type DepthLevel } from '../../../src/sim/hubs/market-hub.ts';

const level = fc.record({ type: fc.integer({ min: 1, max: 4 }), volume: fc.integer({ min: 1, max: 1000 }) });
const book = fc
  .array(fc.tuple(fc.integer({ min: 0, max: 40 }), level))
  .map((entries) => new Map<number, DepthLevel>(entries));

describe('market hub depth changes', () => {
  it('applied to the book before, give the book after; an unchanged book sends nothing', () => {
    fc.assert(
      fc.property(book, book, (before, after) => {
        const held = new Map(before);
        for (const [ticks, change] of bookChanges(before, after)) {
          if (change.volume === 0) held.delete(ticks);
          else held.set(ticks, change);
        }
        expect(held).toEqual(after);
        expect(bookChanges(after, after)).toEqual([]);
      }),
    );
  });
});
