import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PendingIntents } from '../../../src/engine/pending-intents.ts';
import type { Intent } from '../../../src/engine/types.ts';

interface Item {
  readonly strategyId: string;
  readonly intent: Intent;
  readonly at: number;
}

function contents(queue: PendingIntents, from = 0): Item[] {
  const out: Item[] = [];
  for (let k = from; k < queue.length; k++)
    out.push({ strategyId: queue.strategyId(k), intent: queue.intent(k), at: queue.at(k) });
  return out;
}

const item: fc.Arbitrary<Item> = fc.record({
  strategyId: fc.constantFrom('a', 'b', 'c'),
  intent: fc.integer({ min: -3, max: 3 }).map((size): Intent => ({ kind: 'target', contractId: 'X', size })),
  at: fc.integer({ min: 0, max: 9 }),
});

describe('PendingIntents', () => {
  it('holds what was pushed, sorts it by bar as a stable sort of the items would, and starts empty again after clear (over several pushes on one queue)', () => {
    fc.assert(
      fc.property(fc.array(fc.array(item, { maxLength: 40 }), { maxLength: 5 }), (pushes) => {
        const queue = new PendingIntents();
        for (const items of pushes) {
          queue.clear();
          expect(queue.length).toBe(0);
          expect(queue.nextAt(-1)).toBe(-1);
          for (const i of items) queue.push(undefined, i.strategyId, i.intent, i.at);
          expect(contents(queue)).toEqual(items);
          queue.sortByBar();
          const expected = [...items].sort((x, y) => x.at - y.at);
          const got = contents(queue);
          expect(got).toEqual(expected);
          // Same objects, not copies: the intent decided is the one the strategy made.
          for (let k = 0; k < got.length; k++) expect(got[k]!.intent).toBe(expected[k]!.intent);
          expect(queue.nextAt(-1)).toBe(expected.length === 0 ? -1 : expected[0]!.at);
        }
      }),
    );
  });

  it('keepUndecided keeps the decided ones before the cursor and then only the chosen undecided ones, in the order given', () => {
    fc.assert(
      fc.property(
        fc.array(item, { minLength: 1, maxLength: 30 }),
        fc.nat(),
        fc.array(fc.boolean(), { maxLength: 30 }),
        (items, cursorSeed, keepFlags) => {
          const queue = new PendingIntents();
          for (const i of items) queue.push(undefined, i.strategyId, i.intent, i.at);
          queue.cursor = cursorSeed % (items.length + 1);
          const undecided: number[] = [];
          for (let k = queue.cursor; k < items.length; k++) if (keepFlags[k] === true) undecided.push(k);
          const kept = [...undecided].reverse();
          queue.keepUndecided(kept);
          expect(contents(queue)).toEqual([...items.slice(0, queue.cursor), ...kept.map((k) => items[k]!)]);
        },
      ),
    );
  });

  it('moveAllTo makes every intent wait for one bar', () => {
    const queue = new PendingIntents();
    for (const at of [3, 1, 2]) queue.push(undefined, 's', { kind: 'flatten' }, at);
    queue.moveAllTo(7);
    expect([queue.at(0), queue.at(1), queue.at(2)]).toEqual([7, 7, 7]);
  });
});
