import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Accounting } from '../../../src/engine/accounting.ts';
import type { Fill } from '../../../src/engine/types.ts';
import { ES } from './helpers.ts';

let seq = 0;
const fill = (side: 'buy' | 'sell', size: number, price: number, fees = 0): Fill => ({
  kind: 'fill',
  fillId: `f${++seq}`,
  orderId: 'o',
  contractId: ES.id,
  side,
  size,
  price,
  fees,
  time: seq,
});

describe('accounting', () => {
  it('average price, realized PnL in ticks x tick value, fees, reversal through zero', () => {
    const acc = new Accounting([ES], 50_000);
    acc.startDay('d1');
    acc.applyFill(fill('buy', 1, 100, 2), 'd1');
    acc.applyFill(fill('buy', 1, 104, 2), 'd1');
    expect(acc.position(ES.id)).toBe(2);
    expect(acc.averagePrice(ES.id)).toBe(102);
    acc.mark(ES.id, 110);
    expect(acc.unrealizedPnl()).toBe(8 * 2 * 12.5);
    const closed = acc.applyFill(fill('sell', 3, 106, 3), 'd1');
    // Fees of the round turn: 2 a contract on entry, 3 / 3 = 1 a contract on exit; the reversed contract keeps its 1.
    expect(closed).toMatchObject({
      side: 'buy',
      size: 2,
      entryPrice: 102,
      exitPrice: 106,
      pnl: 4 * 2 * 12.5,
      fees: (2 + 1) * 2,
    });
    expect(acc.position(ES.id)).toBe(-1);
    expect(acc.averagePrice(ES.id)).toBe(106);
    expect(acc.fees).toBe(7);
    expect(acc.balance).toBe(50_000 + 100 - 7);
    acc.mark(ES.id, 100);
    expect(acc.snapshot()).toMatchObject({ unrealizedPnl: 6 * 12.5, equity: 50_093 + 75, dayPnl: 93 + 75 });
  });

  it('ignores a fill seen twice', () => {
    const acc = new Accounting([ES], 0);
    const f = fill('buy', 1, 100);
    acc.applyFill(f, 'd');
    acc.applyFill(f, 'd');
    expect(acc.position(ES.id)).toBe(1);
  });

  it('without fill memory (a venue that cannot repeat a fill) gives the same books for distinct fills', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.tuple(fc.boolean(), fc.integer({ min: 1, max: 3 }), fc.integer({ min: 90, max: 110 }), fc.nat({ max: 3 })),
          { maxLength: 40 },
        ),
        (steps) => {
          const remembering = new Accounting([ES], 10_000);
          const trusting = new Accounting([ES], 10_000, { rememberFills: false });
          for (const [buy, size, price, fees] of steps) {
            const f = fill(buy ? 'buy' : 'sell', size, price, fees);
            expect(trusting.applyFill(f, 'd')).toEqual(remembering.applyFill(f, 'd'));
          }
          expect(trusting.snapshot()).toEqual(remembering.snapshot());
        },
      ),
    );
  });

  it('keeps per-day records', () => {
    const acc = new Accounting([ES], 1_000);
    acc.startDay('d1');
    acc.applyFill(fill('buy', 1, 100, 1), 'd1');
    acc.applyFill(fill('sell', 1, 98, 1), 'd1');
    acc.startDay('d2');
    acc.applyFill(fill('sell', 1, 100, 1), 'd2');
    acc.applyFill(fill('buy', 1, 96, 1), 'd2');
    expect(
      acc.days.map((d) => [
        d.tradingDay,
        d.realizedPnl,
        d.fees,
        d.trades,
        d.winningTrades,
        d.losingTrades,
        d.startBalance,
        d.endBalance,
      ]),
    ).toEqual([
      ['d1', -25, 2, 1, 0, 1, 1_000, 973],
      ['d2', 50, 2, 1, 1, 0, 973, 1_021],
    ]);
  });

  it("property: realized PnL equals the sum of the trades' PnL and, once flat, the fills' cash flow; the trades carry every fee", () => {
    const fills = fc.array(
      fc.record({
        side: fc.constantFrom('buy' as const, 'sell' as const),
        size: fc.integer({ min: 1, max: 5 }),
        price: fc.integer({ min: 1_000, max: 1_100 }),
        fees: fc.integer({ min: 0, max: 3 }),
      }),
      { maxLength: 60 },
    );
    fc.assert(
      fc.property(fills, (list) => {
        const acc = new Accounting([ES], 10_000);
        acc.startDay('d');
        let cash = 0;
        let position = 0;
        let fees = 0;
        for (const f of list) {
          acc.applyFill(fill(f.side, f.size, f.price, f.fees), 'd');
          cash += (f.side === 'sell' ? 1 : -1) * f.size * f.price * ES.grid.tickValue;
          position += f.side === 'buy' ? f.size : -f.size;
          fees += f.fees;
        }
        const last = list.length === 0 ? 1_000 : list[list.length - 1]!.price;
        if (position !== 0) {
          // close at the last price so that the cash flow is the whole PnL
          acc.applyFill(fill(position > 0 ? 'sell' : 'buy', Math.abs(position), last), 'd');
          cash += position * last * ES.grid.tickValue;
        }
        const tradesPnl = acc.trades.reduce((sum, t) => sum + t.pnl, 0);
        expect(acc.realizedPnl).toBeCloseTo(tradesPnl, 6);
        expect(acc.realizedPnl).toBeCloseTo(cash, 6);
        expect(acc.fees).toBe(fees);
        expect(acc.trades.reduce((sum, t) => sum + t.fees, 0)).toBeCloseTo(fees, 6);
        expect(acc.balance).toBeCloseTo(10_000 + cash - fees, 6);
      }),
      { numRuns: 300 },
    );
  });
});

describe('the entry label', () => {
  it('goes to every trade of the position its order opened; a reversal opens one with its own label', () => {
    const acc = new Accounting([ES], 50_000, { rememberFills: false });
    acc.applyFill(fill('buy', 2, 100), 'd', 'breakout');
    // Adding to the position and reducing it keep the entry's label.
    acc.applyFill(fill('buy', 1, 104), 'd', 'add');
    expect(acc.applyFill(fill('sell', 1, 106), 'd', 'exit')).toMatchObject({ size: 1, label: 'breakout' });
    // Selling 4 of 2 closes them (breakout) and opens a short of 2 labelled by the reversing order.
    expect(acc.applyFill(fill('sell', 4, 108), 'd', 'fade')).toMatchObject({ size: 2, label: 'breakout' });
    expect(acc.applyFill(fill('buy', 2, 101), 'd')).toMatchObject({ side: 'sell', size: 2, label: 'fade' });
    // Without a label the trade has none.
    acc.applyFill(fill('buy', 1, 100), 'd');
    expect(acc.applyFill(fill('sell', 1, 101), 'd', 'exit')!.label).toBeUndefined();
  });
});
