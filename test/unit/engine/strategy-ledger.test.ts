import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Accounting } from '../../../src/engine/accounting.ts';
import { marketOrder } from '../../../src/engine/intents.ts';
import { createEngine, UNATTRIBUTED } from '../../../src/engine/runner.ts';
import { StrategyLedger } from '../../../src/engine/strategy-ledger.ts';
import { PriceGrid } from '../../../src/engine/ticks.ts';
import type { ContractSpec, Fill, Intent, Side } from '../../../src/engine/types.ts';
import smaCross from '../../../src/strategies/sma-cross.ts';
import { ES, T0, TinyVenue, chunk, scripted } from './helpers.ts';

const NQ: ContractSpec = {
  id: 'CON.F.US.ENQ.Z25',
  name: 'NQZ5',
  symbolId: 'F.US.ENQ',
  description: 'E-mini Nasdaq-100',
  grid: new PriceGrid(0.25, 5),
};

/** A ledger beside an account, fed as the venue bridge feeds them. */
function harness(owners: Record<string, string[]>, bookEverything: boolean) {
  const accounting = new Accounting([ES, NQ], 50_000);
  accounting.startDay('d1');
  const ledger = new StrategyLedger({ contracts: [ES, NQ], accounting, riskStrategyId: 'risk', bookEverything });
  for (const [id, contracts] of Object.entries(owners)) ledger.register(id, contracts);
  let n = 0;
  const apply = (owner: string, contractId: string, side: Side, size: number, price: number, fees = 0): void => {
    n++;
    const fill: Fill = {
      kind: 'fill',
      fillId: `f${n}`,
      orderId: `${owner}-${n}`,
      contractId,
      side,
      size,
      price,
      fees,
      time: n,
    };
    ledger.beforeFill(fill, undefined);
    accounting.applyFill(fill, 'd1');
    ledger.afterFill(fill, undefined, 'd1', undefined);
  };
  const sizes = (contractId: string) =>
    Object.fromEntries(
      ledger
        .positions()
        .filter((p) => p.contractId === contractId)
        .map((p) => [p.strategyId, p.size]),
    );
  return { accounting, ledger, apply, sizes };
}

describe('strategy ledger', () => {
  it('an engine flatten takes every strategy flat, crossing internally at the fill price', () => {
    const { ledger, apply, sizes, accounting } = harness({ a: [ES.id], b: [ES.id] }, false);
    apply('a', ES.id, 'buy', 2, 100, 4);
    apply('b', ES.id, 'sell', 1, 100, 2);
    expect(sizes(ES.id)).toEqual({ a: 2, b: -1 });
    apply('risk', ES.id, 'sell', 1, 104, 2);
    expect(sizes(ES.id)).toEqual({ a: 0, b: 0 });
    // a: bought 2 at 100, out at 104: 4 ticks x 2 x 12.5; b: sold 1 at 100, bought back at 104.
    const a = ledger.snapshot('a');
    const b = ledger.snapshot('b');
    expect(a.realizedPnl).toBe(100);
    expect(b.realizedPnl).toBe(-50);
    expect(a.realizedPnl + b.realizedPnl).toBe(accounting.realizedPnl);
    // The risk fill's fee of 2 is shared by the contracts each line closed: a 2 of 3, b 1 of 3.
    expect(a.fees).toBeCloseTo(4 + 4 / 3, 12);
    expect(b.fees).toBeCloseTo(2 + 2 / 3, 12);
    expect(a.trades).toBe(1);
    expect(ledger.trades('b')).toMatchObject([{ side: 'sell', size: 1, entryPrice: 100, exitPrice: 104, pnl: -50 }]);
  });

  it('a foreign fill opens on the unattributed line; a reducing one takes that line first, then the side in proportion', () => {
    const { apply, sizes } = harness({ a: [ES.id], b: [ES.id] }, true);
    apply('a', ES.id, 'buy', 3, 100);
    apply('b', ES.id, 'buy', 1, 100);
    apply('venue', ES.id, 'buy', 2, 101);
    expect(sizes(ES.id)).toEqual({ a: 3, b: 1, [UNATTRIBUTED]: 2 });
    apply('venue', ES.id, 'sell', 3, 102);
    // 2 from the unattributed line, the last one from the larger long (a: 3 of 4, largest remainder).
    expect(sizes(ES.id)).toEqual({ a: 2, b: 1, [UNATTRIBUTED]: 0 });
    apply('venue', ES.id, 'sell', 5, 103);
    // through flat: every line closes, the 2 beyond flat open short on the unattributed line
    expect(sizes(ES.id)).toEqual({ a: 0, b: 0, [UNATTRIBUTED]: -2 });
  });

  it('a contract only one strategy trades reads the account until another owner fills it', () => {
    const { ledger, apply, sizes, accounting } = harness({ a: [ES.id] }, false);
    apply('a', ES.id, 'buy', 2, 100, 1);
    apply('risk', ES.id, 'sell', 2, 98, 1);
    apply('a', ES.id, 'sell', 1, 99, 1);
    expect(ledger.snapshot('a')).toMatchObject({
      realizedPnl: accounting.realizedPnl,
      fees: accounting.fees,
      trades: 1,
    });
    expect(ledger.trades('a')).toEqual(accounting.trades);
    // A manual trade: from here on the contract is booked line by line, from the account's book.
    apply('venue', ES.id, 'buy', 2, 97);
    expect(sizes(ES.id)).toEqual({ a: 0, [UNATTRIBUTED]: 1 });
    expect(ledger.snapshot('a').realizedPnl).toBe(-50 + 25);
  });

  it('a restored position belongs to no strategy until assigned', () => {
    const { ledger, accounting, sizes } = harness({ a: [ES.id] }, true);
    accounting.restore(50_000, [{ contractId: ES.id, size: -3, averagePrice: 200 }]);
    ledger.restore([{ contractId: ES.id, size: -3, averagePrice: 200 }]);
    expect(sizes(ES.id)).toEqual({ a: 0, [UNATTRIBUTED]: -3 });
    ledger.assign('a', ES.id, -2);
    expect(sizes(ES.id)).toEqual({ a: -2, [UNATTRIBUTED]: -1 });
    expect(ledger.position('a', ES.id).averagePrice).toBe(200);
    expect(() => ledger.assign('a', ES.id, 2)).toThrow(/unattributed line holds -1/);
  });

  const owners = fc.constantFrom('a', 'b', 'c', 'risk', 'venue');
  const fillArb = fc.record({
    owner: owners,
    contract: fc.constantFrom(ES.id, NQ.id),
    side: fc.constantFrom<Side>('buy', 'sell'),
    size: fc.integer({ min: 1, max: 4 }),
    price: fc.integer({ min: 90, max: 110 }),
    fees: fc.constantFrom(0, 1.5, 2.37),
  });
  const setups: Array<[string, Record<string, string[]>, boolean]> = [
    ['shared, booked', { a: [ES.id, NQ.id], b: [ES.id] }, true],
    ['one owner each, derived', { a: [ES.id], b: [NQ.id] }, false],
    ['shared and derived', { a: [ES.id, NQ.id], b: [ES.id], c: [] }, false],
  ];

  for (const [name, setup, bookEverything] of setups) {
    it(`property (${name}): the lines sum to the account at every fill; realized + fees too once flat`, () => {
      fc.assert(
        fc.property(fc.array(fillArb, { maxLength: 40 }), fc.integer({ min: 80, max: 120 }), (fills, mark) => {
          const { accounting, ledger, apply } = harness(setup, bookEverything);
          const check = () => {
            const lines = ledger.positions();
            for (const contract of [ES.id, NQ.id]) {
              const mine = lines.filter((l) => l.contractId === contract);
              expect(mine.reduce((s, l) => s + l.size, 0)).toBe(accounting.position(contract));
            }
            expect(lines.reduce((s, l) => s + l.fees, 0)).toBeCloseTo(accounting.fees, 6);
            for (const contract of [ES.id, NQ.id]) accounting.mark(contract, mark);
            const value = ledger.positions().reduce((s, l) => s + l.realizedPnl + l.unrealizedPnl, 0);
            expect(value).toBeCloseTo(accounting.realizedPnl + accounting.unrealizedPnl(), 6);
          };
          for (const f of fills) {
            apply(f.owner, f.contract, f.side, f.size, f.price, f.fees);
            check();
          }
          // The engine flattens what is left: every line ends flat, and the realized PnL is the account's.
          for (const contract of [ES.id, NQ.id]) {
            const position = accounting.position(contract);
            if (position !== 0) apply('risk', contract, position > 0 ? 'sell' : 'buy', Math.abs(position), mark, 1);
          }
          check();
          const lines = ledger.positions();
          if (lines.every((l) => l.size === 0)) {
            expect(lines.reduce((s, l) => s + l.realizedPnl - l.fees, 0)).toBeCloseTo(
              accounting.realizedPnl - accounting.fees,
              6,
            );
          }
          for (const id of ['a', 'b']) {
            const trades = ledger.trades(id);
            expect(trades.reduce((s, t) => s + t.pnl, 0)).toBeCloseTo(ledger.snapshot(id).realizedPnl, 6);
          }
        }),
        { numRuns: 300 },
      );
    });
  }
});

describe('engine: per-strategy attribution', () => {
  it('two strategies on one contract, then the kill switch: each line and the account agree', () => {
    const venue = new TinyVenue(2);
    const engine = createEngine({
      strategies: [
        { strategy: scripted('a', { 0: marketOrder('buy', 2) }) },
        { strategy: scripted('b', { 0: marketOrder('sell', 1) }) },
      ],
      contracts: [ES],
      venue,
      account: { startingBalance: 50_000 },
    });
    engine.push(chunk([100, 100]));
    expect(engine.strategyPositions().map((p) => [p.strategyId, p.size])).toEqual([
      ['a', 2],
      ['b', -1],
    ]);
    engine.killSwitch('test');
    engine.push(chunk([104], Date.UTC(2026, 10, 16, 15, 2)));
    expect(venue.placed.map((o) => `${o.id} ${o.side} ${o.size}`)).toEqual([
      'a-1 buy 2',
      'b-1 sell 1',
      'risk-1 sell 1',
    ]);
    expect(engine.strategySnapshot('a')).toMatchObject({ realizedPnl: 100, unrealizedPnl: 0, trades: 1 });
    expect(engine.strategySnapshot('b')).toMatchObject({ realizedPnl: -50, trades: 1 });
    expect(engine.strategySnapshot('a').fees + engine.strategySnapshot('b').fees).toBeCloseTo(8, 12);
    expect(engine.accounting.realizedPnl).toBe(50);
    expect(engine.strategyTrades('a')).toMatchObject([{ size: 2, entryPrice: 100, exitPrice: 104, pnl: 100 }]);
  });

  it("an order whose id does not carry its strategy's prefix is still its strategy's (the book knows it)", () => {
    const venue = new TinyVenue();
    const engine = createEngine({
      strategies: [
        { strategy: scripted('a', { 0: marketOrder('buy', 2, { id: 'entry' }) }) },
        { strategy: scripted('b', { 0: marketOrder('sell', 1) }), contracts: [ES.id] },
      ],
      contracts: [ES],
      venue,
      account: { startingBalance: 50_000 },
    });
    engine.push(chunk([100, 100]));
    expect(engine.strategyPositions().map((p) => [p.strategyId, p.size])).toEqual([
      ['a', 2],
      ['b', -1],
    ]);
  });

  it('one strategy: its line is the account, its trades are the account trades', () => {
    const venue = new TinyVenue(1);
    const engine = createEngine({
      strategies: [{ strategy: smaCross, params: { fast: 2, slow: 3 } }],
      contracts: [ES],
      venue,
      account: { startingBalance: 50_000 },
    });
    engine.push(chunk([10, 9, 8, 7, 6, 8, 10, 12, 14, 12, 10, 8, 6, 9, 12]));
    const line = engine.strategySnapshot('sma-cross');
    expect(line.positions).toEqual(
      [engine.accounting.positionView(ES.id)].map((p) => ({
        strategyId: 'sma-cross',
        contractId: ES.id,
        size: p.size,
        averagePrice: p.averagePrice,
        unrealizedPnl: p.unrealizedPnl,
        realizedPnl: p.realizedPnl,
        fees: p.fees,
        trades: engine.accounting.trades.length,
      })),
    );
    expect(engine.strategyTrades('sma-cross')).toEqual(engine.accounting.trades);
  });
});

describe('engine: attribution property', () => {
  const step = fc.record({
    a: fc.option(fc.integer({ min: -3, max: 3 }), { nil: undefined }),
    b: fc.option(fc.integer({ min: -3, max: 3 }), { nil: undefined }),
    c: fc.option(fc.integer({ min: 1, max: 2 }), { nil: undefined }),
    close: fc.integer({ min: 95, max: 105 }),
    after: fc.constantFrom('none', 'none', 'flatten', 'foreign'),
  });

  it('whatever the strategies, the engine and a manual trader do, the lines sum to the account', () => {
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 25 }), (steps) => {
        const plans: Record<string, Record<number, Intent>> = { a: {}, b: {}, c: {} };
        steps.forEach((s, i) => {
          if (s.a !== undefined) plans.a![i] = { kind: 'target', contractId: ES.id, size: s.a };
          if (s.b !== undefined) plans.b![i] = { kind: 'target', contractId: ES.id, size: s.b };
          if (s.c !== undefined) plans.c![i] = marketOrder(i % 2 === 0 ? 'buy' : 'sell', s.c);
        });
        const venue = new TinyVenue(1.25);
        const engine = createEngine({
          strategies: [
            { strategy: scripted('a', plans.a!) },
            { strategy: scripted('b', plans.b!), size: 2 },
            { strategy: scripted('c', plans.c!) },
          ],
          contracts: [ES],
          venue,
          account: { startingBalance: 50_000 },
        });
        let foreign = 0;
        steps.forEach((s, i) => {
          engine.push(chunk([s.close], T0 + i * 60_000));
          if (s.after === 'flatten') engine.submit('risk', { kind: 'flatten' });
          if (s.after === 'foreign')
            venue.subject.next({
              kind: 'fill',
              fillId: `m${++foreign}`,
              orderId: `venue-${foreign}`,
              contractId: ES.id,
              side: i % 2 === 0 ? 'sell' : 'buy',
              size: 1 + (i % 3),
              price: s.close,
              fees: 0.5,
              time: T0 + i * 60_000 + 1,
            });
          const lines = engine.strategyPositions();
          expect(lines.reduce((sum, l) => sum + l.size, 0)).toBe(engine.accounting.position(ES.id));
          expect(lines.reduce((sum, l) => sum + l.fees, 0)).toBeCloseTo(engine.accounting.fees, 6);
          expect(lines.reduce((sum, l) => sum + l.realizedPnl + l.unrealizedPnl, 0)).toBeCloseTo(
            engine.accounting.realizedPnl + engine.accounting.unrealizedPnl(),
            6,
          );
        });
      }),
      { numRuns: 150 },
    );
  });
});
