import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { OrderBook, type BookOrder } from '../../../src/engine/order-book.ts';
import { Recycler } from '../../../src/engine/recycler.ts';
import { MARKET_ORDER, target } from '../../../src/engine/intents.ts';
import smaCross from '../../../src/strategies/sma-cross.ts';
import type { OrderCommand, TargetIntent } from '../../../src/engine/types.ts';
import { ES, SIMULATED_VENUE, TinyVenue, chunk, recordingEngine, scripted } from './helpers.ts';

type Step = { kind: 'add' } | { kind: 'remove'; pick: number } | { kind: 'reclaim' };

const steps = fc.array(
  fc.oneof(
    fc.constant<Step>({ kind: 'add' }),
    fc.nat(50).map<Step>((pick) => ({ kind: 'remove', pick })),
    fc.constant<Step>({ kind: 'reclaim' }),
  ),
  { maxLength: 200 },
);

/** Replays `script` on a book; every record `add` hands out, with the records a caller could still hold then. */
function replay(recycles: boolean, script: readonly Step[]) {
  const book = new OrderBook(recycles);
  let next = 0;
  let removedSinceReclaim: BookOrder[] = [];
  const handedOut: Array<{ record: BookOrder; held: Set<BookOrder> }> = [];
  for (const step of script) {
    if (step.kind === 'add') {
      const held = new Set([...book.values(), ...removedSinceReclaim]);
      const id = `s-${++next}`;
      const record = book.add(id, 's', ES.id, 'buy', 1 + (next % 3), MARKET_ORDER, 'working', undefined, undefined);
      handedOut.push({ record, held });
      expect(record).toMatchObject({ id, size: 1 + (next % 3), filledSize: 0, reportedFilled: 0, state: 'working' });
      expect(book.get(id)).toBe(record);
    } else if (step.kind === 'remove') {
      if (book.size === 0) continue;
      const order = book.at(step.pick % book.size);
      book.remove(order);
      removedSinceReclaim.push(order);
      expect(book.recent(order.id)).toBe(order);
    } else {
      book.reclaim();
      // The last order gone stays what it was: a fill for it may still ask `recent`.
      removedSinceReclaim = removedSinceReclaim.slice(-1);
    }
  }
  return handedOut;
}

describe('records lent by the engine', () => {
  it('the book makes over only the records of orders gone before the last reclaim, never one a caller may hold', () => {
    fc.assert(
      fc.property(steps, fc.boolean(), (script, recycles) => {
        const handedOut = replay(recycles, script);
        for (const { record, held } of handedOut) expect(held.has(record)).toBe(false);
        // Without recycling, every order has a record of its own.
        if (!recycles) expect(new Set(handedOut.map((h) => h.record)).size).toBe(handedOut.length);
      }),
    );
  });

  it('a recycling book makes no record for an order once it has spare ones', () => {
    const handedOut = replay(true, [
      { kind: 'add' },
      { kind: 'add' },
      { kind: 'remove', pick: 0 },
      { kind: 'remove', pick: 0 },
      { kind: 'reclaim' },
      { kind: 'add' },
      { kind: 'add' },
    ]);
    const [first, second, third, fourth] = handedOut.map((h) => h.record);
    // The first order gone is made over; the second (the last gone) is kept for `recent`.
    expect(third).toBe(first);
    expect(fourth).not.toBe(second);
    expect(third).toMatchObject({ id: 's-3', size: 1 });
  });

  it('a recycler hands out only what was retired before the last reclaim, each once a retirement', () => {
    type Op = { kind: 'retire' } | { kind: 'reclaim' } | { kind: 'take' };
    const ops = fc.array(fc.constantFrom<Op>({ kind: 'retire' }, { kind: 'reclaim' }, { kind: 'take' }), {
      maxLength: 300,
    });
    fc.assert(
      fc.property(ops, fc.integer({ min: 1, max: 8 }), (script, limit) => {
        const recycler = new Recycler<{ n: number }>(limit);
        let made = 0;
        let retired: { n: number }[] = [];
        const spare = new Set<{ n: number }>();
        for (const op of script) {
          if (op.kind === 'retire') {
            const item = { n: made++ };
            recycler.retire(item);
            if (retired.length < limit) retired.push(item);
          } else if (op.kind === 'reclaim') {
            recycler.reclaim();
            for (const item of retired) spare.add(item);
            retired = [];
          } else {
            const item = recycler.take();
            if (item === undefined) expect(spare.size).toBe(0);
            else {
              expect(spare.has(item)).toBe(true);
              spare.delete(item);
            }
          }
        }
      }),
    );
  });

  it('decisions published keep the intents as they were, though the router fills its own again for each order', () => {
    const { engine, decisions } = recordingEngine(new TinyVenue(), {
      strategy: smaCross,
      params: { fast: 2, slow: 3 },
    });
    engine.push(chunk([10, 9, 8, 7, 6, 8, 10, 12, 14, 12, 10, 8, 6, 8, 10, 12, 14]));
    engine.close();
    const seen = decisions.map((d) => [d.intent, d.origin]);
    expect(seen).toEqual([
      [
        { kind: 'place', id: 'sma-cross-1', contractId: ES.id, side: 'buy', size: 1, order: MARKET_ORDER },
        { kind: 'target', contractId: ES.id, size: 1, id: 'sma-cross-1' },
      ],
      [
        { kind: 'place', id: 'sma-cross-2', contractId: ES.id, side: 'sell', size: 2, order: MARKET_ORDER },
        { kind: 'target', contractId: ES.id, size: -1, id: 'sma-cross-2' },
      ],
      [
        { kind: 'place', id: 'sma-cross-3', contractId: ES.id, side: 'buy', size: 2, order: MARKET_ORDER },
        { kind: 'target', contractId: ES.id, size: 1, id: 'sma-cross-3' },
      ],
    ]);
    // Left-out fields stay left out (a label the strategy did not give is no key).
    expect(Object.keys(decisions[0]!.intent)).not.toContain('label');
  });

  it('a target decided inside another (an observer of intents submitting at once) gets intents of its own', () => {
    const venue = new TinyVenue();
    const { engine, decisions } = recordingEngine(venue, { strategy: scripted('s', { 0: target(1) }) });
    let submitted = false;
    engine.intents$.subscribe(() => {
      if (submitted) return;
      submitted = true;
      engine.submit('s', target(3, { label: 'inside' }));
    });
    engine.push(chunk([10, 11]));
    engine.close();
    // The target inside is decided first; the outer one, still its own, then brings 3 back to 1.
    expect(venue.placed.map((o) => `${o.id} ${o.side} ${o.size}`)).toEqual(['s-2 buy 3', 's-1 sell 2']);
    expect(decisions.map((d) => [d.intent.id, (d.origin as TargetIntent | undefined)?.label])).toEqual([
      ['s-2', 'inside'],
      ['s-1', undefined],
    ]);
  });

  it('a venue that copies its commands is lent one object for every order; one that keeps them gets its own', () => {
    const closes = Array.from({ length: 300 }, (_, i) => 100 + Math.round(20 * Math.sin(i / 7) + 5 * Math.cos(i / 3)));
    const seen: OrderCommand[] = [];
    const copying = new (class extends TinyVenue {
      override place(command: OrderCommand): void {
        seen.push(command);
        super.place({ ...command });
      }
    })(0, { ...SIMULATED_VENUE, keepsCommands: false });
    const keeping = new TinyVenue();
    for (const venue of [copying, keeping]) {
      const { engine } = recordingEngine(venue, { strategy: smaCross, params: { fast: 3, slow: 8 } });
      engine.push(chunk(closes));
      engine.close();
    }
    expect(seen.length).toBeGreaterThan(5);
    expect(new Set(seen).size).toBe(1);
    expect(copying.placed).toEqual(keeping.placed);
    expect(new Set(keeping.placed).size).toBe(keeping.placed.length);
  });
});
