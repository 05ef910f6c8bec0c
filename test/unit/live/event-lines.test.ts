import { describe, expect, it } from 'vitest';
import {
  dayLine,
  decisionLine,
  EventLinePrinter,
  fillLine,
  LineDates,
  limitsText,
  orderLine,
  RejectionTally,
} from '../../../src/adapters/live/event-lines.ts';
import { flattenText } from '../../../src/adapters/live/kill-switch.ts';
import { PriceGrid } from '../../../src/engine/ticks.ts';
import type { ContractSpec, OrderUpdate } from '../../../src/engine/types.ts';

const ES: ContractSpec = {
  id: 'CON.F.US.EP.Z26',
  name: 'ESZ6',
  symbolId: 'F.US.EP',
  description: 'E-mini S&P 500',
  grid: new PriceGrid(0.25, 12.5),
};
const ctx = { contracts: new Map([[ES.id, ES]]), now: () => Date.UTC(2026, 10, 23, 14, 30) };
const at = Date.UTC(2026, 10, 23, 14, 30, 5);
const update = (over: Partial<OrderUpdate>): OrderUpdate => ({
  kind: 'order',
  orderId: 'bot-7',
  state: 'working',
  time: at,
  contractId: ES.id,
  side: 'buy',
  size: 2,
  filledSize: 0,
  order: { type: 'limit', limitPrice: 25_601 },
  ...over,
});

describe('readable event lines', () => {
  it('orders: placed, modified only when its terms change, cancelled, rejected with the reason; prices, not ticks', () => {
    expect(orderLine(ctx, update({}), undefined)).toBe('14:30:05 placed    bot-7 buy 2 ESZ6 limit 6400.25');
    expect(orderLine(ctx, update({ filledSize: 1 }), update({}))).toBeUndefined();
    expect(orderLine(ctx, update({ order: { type: 'limit', limitPrice: 25_600 } }), update({}))).toBe(
      '14:30:05 modified  bot-7 buy 2 ESZ6 limit 6400',
    );
    expect(orderLine(ctx, update({ state: 'cancelled', filledSize: 1 }), update({}))).toBe(
      '14:30:05 cancelled bot-7 buy 2 ESZ6 limit 6400.25 (1 filled before)',
    );
    expect(orderLine(ctx, update({ state: 'rejected', reason: 'OrderRejected (2)' }), undefined)).toBe(
      '14:30:05 rejected  bot-7 buy 2 ESZ6 limit 6400.25: OrderRejected (2)',
    );
    expect(orderLine(ctx, update({ state: 'pending' }), undefined)).toBeUndefined();
    expect(orderLine(ctx, update({ adopted: true }), undefined)).toMatch(/adopted/);
    // Filled before it was ever seen working (a realtime event beat the place answer): still a placed line.
    expect(orderLine(ctx, update({ state: 'filled', filledSize: 2 }), update({ state: 'pending' }))).toBe(
      '14:30:05 placed    bot-7 buy 2 ESZ6 limit 6400.25',
    );
    expect(orderLine(ctx, update({ state: 'filled', filledSize: 2 }), update({}))).toBeUndefined();
  });

  it('fills carry the position and the PnL after them; refusals their reason code', () => {
    const fill = {
      kind: 'fill' as const,
      fillId: 't1',
      orderId: 'bot-7',
      contractId: ES.id,
      side: 'sell' as const,
      size: 1,
      price: 25_599,
      fees: 1.4,
      time: at,
    };
    expect(fillLine(ctx, fill, -1, -12.5)).toBe(
      '14:30:05 filled    bot-7 sell 1 ESZ6 @ 6399.75 | position -1 | PnL today -$12.50',
    );
    expect(fillLine(ctx, fill, 0, 30)).toMatch(/position flat \| PnL today \$30\.00$/);
    const refused = decisionLine(ctx, {
      strategyId: 'bot',
      intent: { kind: 'place', contractId: ES.id, side: 'buy', size: 1, order: { type: 'stop', stopPrice: 6_400 } },
      result: {
        accepted: false,
        code: 'PRICE_TOO_FAR',
        message: 'stopPrice 1600 (6400 ticks) is 75.0% from the last price',
      },
      time: at,
    });
    expect(refused).toBe(
      '14:30:05 refused   bot: buy 1 ESZ6 stop 1600: PRICE_TOO_FAR stopPrice 1600 (6400 ticks) is 75.0% from the last price',
    );
    expect(
      decisionLine(ctx, {
        strategyId: 'bot',
        intent: { kind: 'target', contractId: ES.id, size: 1 },
        result: { accepted: true },
        time: at,
      }),
    ).toBeUndefined();
  });

  it('a flatten in words', () => {
    expect(
      flattenText('DEMO-1', {
        rounds: 1,
        cancelled: [11, 12],
        closed: [ES.id],
        failures: [],
        flat: true,
        remaining: { orders: 0, positions: 0 },
      }),
    ).toBe(`account DEMO-1 is flat (cancelled 2 orders (11, 12), closed ${ES.id}; 1 round)`);
    expect(
      flattenText('DEMO-1', {
        rounds: 3,
        cancelled: [],
        closed: [],
        failures: ['Position/closeContract: OrderRejected'],
        flat: false,
        remaining: { orders: 1, positions: 1 },
      }),
    ).toBe(
      'account DEMO-1 is NOT flat: 1 open order(s), 1 position(s) remain (no open order to cancel, no position to close; 3 rounds); failures: Position/closeContract: OrderRejected',
    );
  });

  it('dates: the first line and every line after a change of UTC date carry the date; times only in between', () => {
    const dated = { ...ctx, dates: new LineDates() };
    const late = Date.UTC(2026, 10, 23, 23, 59, 58);
    const afterMidnight = Date.UTC(2026, 10, 24, 0, 0, 3);
    expect(orderLine(dated, update({}), undefined)).toBe(
      '2026-11-23 14:30:05 placed    bot-7 buy 2 ESZ6 limit 6400.25',
    );
    expect(orderLine(dated, update({ state: 'cancelled', time: late }), update({}))).toBe(
      '23:59:58 cancelled bot-7 buy 2 ESZ6 limit 6400.25',
    );
    expect(orderLine(dated, update({ orderId: 'bot-8', time: afterMidnight }), undefined)).toMatch(
      /^2026-11-24 00:00:03 placed {4}bot-8 /,
    );
    expect(orderLine(dated, update({ orderId: 'bot-9', time: afterMidnight + 1_000 }), undefined)).toMatch(
      /^00:00:04 placed {4}bot-9 /,
    );
  });

  it('a trading day opens with its date, the previous day PnL and the limits in force; it dates the lines after it', () => {
    const dated = { ...ctx, dates: new LineDates() };
    // CME: the trading day of 2026-12-10 starts on 2026-12-09 at 17:00 CT (23:00 UTC).
    const start = Date.UTC(2026, 11, 9, 23, 0, 0);
    const limits = {
      dailyLossLimit: 1_000,
      dailyLossFloor: 49_120,
      maximumLossLimit: { amount: 2_000, variant: 'trailingEndOfDay' },
      maximumLossFloor: 48_120,
      personalDailyLossLimit: 500,
    };
    expect(dayLine(dated, { time: start, tradingDay: '2026-12-10', previousDayPnl: -12.5, limits })).toBe(
      '--- 2026-12-09 (trading day 2026-12-10) previous day PnL -$12.50, limits: daily loss $1000.00 (floor $49120.00), ' +
        'maximum loss $2000.00 trailingEndOfDay (floor $48120.00), personal daily loss $500.00',
    );
    expect(orderLine(dated, update({ time: start + 5_000 }), undefined)).toMatch(/^23:00:05 placed/);
    expect(
      dayLine(ctx, {
        time: start,
        tradingDay: '2026-12-10',
        previousDayPnl: undefined,
        limits: { dailyLossFloor: -Infinity, maximumLossFloor: -Infinity },
      }),
    ).toBe(
      '--- 2026-12-09 (trading day 2026-12-10) no previous day in this session, limits: none checked by the guard',
    );
    expect(limitsText({ dailyLossFloor: -Infinity, maximumLossFloor: -Infinity, personalDailyProfitTarget: 800 })).toBe(
      'personal profit target $800.00',
    );
  });

  it('a session whose every order was rejected is told at the end; one accepted order is enough to say nothing', () => {
    const tally = new RejectionTally();
    expect(tally.summary()).toBeUndefined();
    tally.note(update({ state: 'pending' }));
    tally.note(update({ state: 'rejected', reason: 'InsufficientFunds (3)' }));
    tally.note(update({ orderId: 'bot-8', state: 'pending' }));
    tally.note(update({ orderId: 'bot-8', state: 'rejected', reason: 'OutsideTradingHours (2)' }));
    tally.note(update({ state: 'rejected', reason: 'again' }));
    expect(tally.summary()).toBe('every order of the session was rejected (2); the first: InsufficientFunds (3)');
    tally.note(update({ orderId: 'bot-9', state: 'working' }));
    tally.note(update({ orderId: 'bot-10', state: 'rejected' }));
    expect(tally.summary()).toBeUndefined();
  });

  it("an earlier session's order resolved as rejected after a restart is not this session's", () => {
    const tally = new RejectionTally(at);
    tally.note(update({ orderId: 'bot-3', state: 'rejected', reason: 'not found', createdAt: at - 60_000 }));
    expect(tally.summary()).toBeUndefined();
    tally.note(update({ orderId: 'bot-4', state: 'rejected', reason: 'InsufficientFunds (3)', createdAt: at + 1 }));
    expect(tally.summary()).toBe('every order of the session was rejected (1); the first: InsufficientFunds (3)');
  });
});

describe('the order of the readable lines', () => {
  const fill = {
    kind: 'fill' as const,
    fillId: 'f1',
    orderId: 'bot-7',
    contractId: ES.id,
    side: 'buy' as const,
    size: 2,
    price: 25_601,
    fees: 2.8,
    time: at + 1_000,
  };

  it("a placed line carries the order's creation time, never one later than its fill", () => {
    // The working state first seen at 14:30:09, the order created at 14:30:05.
    expect(orderLine(ctx, update({ time: at + 4_000, createdAt: at }), undefined)).toBe(
      '14:30:05 placed    bot-7 buy 2 ESZ6 limit 6400.25',
    );
    // Filled before it was seen working: the update comes after the fill (14:30:06), the line does not.
    const placed = orderLine(
      ctx,
      update({ state: 'filled', filledSize: 2, time: at + 9_000, createdAt: at }),
      undefined,
    );
    expect(placed).toBe('14:30:05 placed    bot-7 buy 2 ESZ6 limit 6400.25');
    expect(fillLine(ctx, fill, 2, -5.6).slice(0, 8) >= placed!.slice(0, 8)).toBe(true);
    // Without a creation time, the update's.
    expect(orderLine(ctx, update({ time: at + 4_000 }), undefined)).toMatch(/^14:30:09 placed/);
  });

  it("a fill reported before its order's placed line waits for it", async () => {
    const printed: string[] = [];
    const lines = new EventLinePrinter(ctx, (line) => line !== undefined && printed.push(line));
    lines.order(update({ state: 'pending', createdAt: at }));
    // The executor's order: the fill, then the order's filled state.
    lines.fill(fill, 2, -5.6);
    expect(printed).toEqual([]);
    lines.order(update({ state: 'filled', filledSize: 2, time: at + 2_000, createdAt: at }));
    expect(printed.map((l) => l.slice(9, 18).trim())).toEqual(['placed', 'filled']);
    expect(printed[0]).toMatch(/^14:30:05 placed/);
    expect(printed[1]).toMatch(/^14:30:06 filled {4}bot-7 buy 2 ESZ6 @ 6400.25 \| position \+2/);

    // A fill whose order never says more is printed once the event is handled.
    printed.length = 0;
    lines.order(update({ orderId: 'bot-8', state: 'pending' }));
    lines.fill({ ...fill, fillId: 'f2', orderId: 'bot-8' }, 4, -11.2);
    expect(printed).toEqual([]);
    await Promise.resolve();
    expect(printed).toHaveLength(1);
    expect(printed[0]).toContain('filled    bot-8');

    // A fill of an order already placed is printed at once.
    printed.length = 0;
    lines.order(update({ orderId: 'bot-9', createdAt: at }));
    lines.fill({ ...fill, fillId: 'f3', orderId: 'bot-9' }, 6, -16.8);
    expect(printed.map((l) => l.slice(9, 18).trim())).toEqual(['placed', 'filled']);
  });
});
