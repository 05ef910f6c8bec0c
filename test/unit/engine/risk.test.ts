import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  flatten,
  limitOrder,
  marketOrder,
  modifyOrder,
  cancelOrder,
  stopOrder,
  stopLimitOrder,
  trailingStopOrder,
} from '../../../src/engine/intents.ts';
import {
  REASON_CODES,
  checkIntent,
  reasonCodeTable,
  riskConfigSchema,
  type GuardOrder,
  type GuardResult,
  type GuardState,
  type RiskConfig,
} from '../../../src/engine/risk.ts';
import { PriceGrid } from '../../../src/engine/ticks.ts';
import type { ContractSpec, Intent } from '../../../src/engine/types.ts';
import { ES } from './helpers.ts';

const C = ES.id;

function guardState(
  over: Partial<GuardState> & {
    positions?: Record<string, number>;
    orders?: Record<string, GuardOrder>;
    last?: number;
    sent?: number[];
    contracts?: ContractSpec[];
  } = {},
): GuardState {
  const contracts = over.contracts ?? [ES];
  const orders = over.orders ?? {};
  return {
    now: 1_000_000,
    tradingState: 'ACTIVE',
    lockedUntil: 0,
    session: 'open',
    marketPhase: () => 'open',
    equity: 50_000,
    dayPnl: 0,
    dailyLossFloor: -Infinity,
    maximumLossFloor: -Infinity,
    personalDailyLossLimit: undefined,
    personalDailyProfitTarget: undefined,
    contract: (id) => contracts.find((c) => c.id === id),
    position: (id) => over.positions?.[id] ?? 0,
    lastPrice: () => over.last ?? 16_000,
    order: (id) => orders[id],
    openOrderCount: () => Object.keys(orders).length,
    workingEntrySize: (id, side) =>
      Object.values(orders)
        .filter(
          (o) => o.contractId === id && o.side === side && (o.order.type === 'market' || o.order.type === 'limit'),
        )
        .reduce((sum, o) => sum + o.size, 0),
    hasStopOrder: (id, side) =>
      Object.values(orders).some(
        (o) => o.contractId === id && o.side === side && o.order.type !== 'market' && o.order.type !== 'limit',
      ),
    ordersSince: (since) => (over.sent ?? []).filter((t) => t >= since).length,
    ...over,
  };
}

function check(intent: Intent, state: GuardState = guardState(), config: RiskConfig = {}): GuardResult {
  return checkIntent(intent, state, riskConfigSchema.parse(config));
}

const code = (result: GuardResult) => (result.accepted ? (result.adjusted ?? 'ok') : result.code);
const buy = (size = 1) => marketOrder('buy', size, { contractId: C });
const sell = (size = 1) => marketOrder('sell', size, { contractId: C });
const trailOrder = (side: 'buy' | 'sell', stop: number): GuardOrder => ({
  contractId: C,
  side,
  size: 1,
  order: { type: 'trailingStop', trailPrice: stop },
  trailStop: stop,
});

describe('risk guard checks', () => {
  it('every reason code is described and listed', () => {
    expect(reasonCodeTable().map((r) => r.code)).toEqual(Object.keys(REASON_CODES));
    expect(reasonCodeTable().every((r) => r.description.length > 10)).toBe(true);
  });

  it("a passed evaluation's pass-lock refuses new risk with its reason and lets reducing orders through", () => {
    const locked = guardState({ passLock: 'the evaluation met its pass conditions', positions: { [C]: 2 } });
    expect(check(buy(), locked)).toEqual({
      accepted: false,
      code: 'PASS_LOCKED',
      message: 'the evaluation met its pass conditions',
    });
    expect(check(sell(2), locked)).toEqual({ accepted: true });
    // A reversal keeps only its closing part.
    expect(check(sell(3), locked)).toMatchObject({ accepted: true, size: 2, adjusted: 'PASS_LOCKED' });
    expect(code(check(buy(), guardState({ passLock: undefined })))).toBe('ok');
  });

  it('sizes, contracts and orders must exist and make sense', () => {
    expect(code(check(buy(0)))).toBe('INVALID_SIZE');
    expect(code(check(buy(1.5)))).toBe('INVALID_SIZE');
    expect(code(check(marketOrder('buy', 1, { contractId: 'X' })))).toBe('UNKNOWN_CONTRACT');
    expect(code(check(marketOrder('buy', 1, { contractId: C, bracket: { stopLossTicks: 0 } })))).toBe(
      'INVALID_BRACKET',
    );
    expect(code(check(modifyOrder('nope', { size: 2 })))).toBe('UNKNOWN_ORDER');
    expect(code(check(cancelOrder('nope')))).toBe('UNKNOWN_ORDER');
    const working = guardState({
      orders: {
        'q-7': { contractId: C, side: 'buy', size: 1, order: { type: 'limit', limitPrice: 1 }, trailStop: NaN },
      },
    });
    expect(code(check(marketOrder('buy', 1, { contractId: C, id: 'q-7' }), working))).toBe('DUPLICATE_ID');
    expect(code(check(marketOrder('buy', 1, { contractId: C, id: 'q-8' }), working))).toBe('ok');
  });

  it('tick alignment of limit, stop and trail prices, with the decimal price in the message', () => {
    const cases: Array<[number, number, string]> = [
      [0.25, 17287.5, '4321.875'],
      [0.1, 12.5, '1.25'],
      [0.01, 100.5, '1.005'],
      [0.005, 3.5, '0.0175'],
    ];
    for (const [tick, ticks, decimal] of cases) {
      const contract: ContractSpec = { ...ES, id: `T${tick}`, name: `T${tick}`, grid: new PriceGrid(tick, 1) };
      const state = guardState({ contracts: [contract], last: Math.floor(ticks) });
      for (const intent of [
        limitOrder('buy', 1, ticks, { contractId: contract.id }),
        stopOrder('buy', 1, ticks, { contractId: contract.id }),
        stopLimitOrder('buy', 1, 100, ticks, { contractId: contract.id }),
      ]) {
        const result = check(intent, state);
        expect(code(result)).toBe('TICK_MISALIGNED');
        expect(!result.accepted && result.message).toContain(decimal);
      }
      expect(code(check(limitOrder('buy', 1, Math.floor(ticks), { contractId: contract.id }), state))).toBe('ok');
    }
    expect(code(check(trailingStopOrder('sell', 1, 15_990.5, { contractId: C })))).toBe('TICK_MISALIGNED');
    const working = guardState({
      orders: { a: { contractId: C, side: 'buy', size: 1, order: { type: 'limit', limitPrice: 100 }, trailStop: NaN } },
    });
    expect(code(check(modifyOrder('a', { limitPrice: 100.25 }), working))).toBe('TICK_MISALIGNED');
  });

  it('trailPrice sanity: side, distance, last price, loosening', () => {
    expect(code(check(trailingStopOrder('sell', 1, 15_990, { contractId: C })))).toBe('ok');
    expect(code(check(trailingStopOrder('sell', 1, 16_010, { contractId: C })))).toBe('TRAIL_WRONG_SIDE');
    expect(code(check(trailingStopOrder('buy', 1, 15_990, { contractId: C })))).toBe('TRAIL_WRONG_SIDE');
    // a distance of 10 ticks passed by mistake as trailPrice: absurdly far from a last price of 16000 ticks
    const mistake = check(trailingStopOrder('sell', 1, 10, { contractId: C }));
    expect(code(mistake)).toBe('TRAIL_TOO_FAR');
    expect(!mistake.accepted && mistake.message).toContain('absolute price');
    expect(
      code(check(trailingStopOrder('sell', 1, 15_900, { contractId: C }), guardState(), { maxTrailTicks: 50 })),
    ).toBe('TRAIL_TOO_FAR');
    const orders = { t: trailOrder('sell', 15_980) };
    expect(code(check(modifyOrder('t', { trailPrice: 15_990 }), guardState({ orders, last: NaN })))).toBe(
      'NO_LAST_PRICE',
    );
    expect(code(check(trailingStopOrder('sell', 1, 15_990, { contractId: C }), guardState({ last: NaN })))).toBe(
      'NO_LAST_PRICE',
    );
    expect(
      code(check(modifyOrder('t', { trailPrice: 15_970 }), guardState({ orders }), { refuseLooseningTrail: true })),
    ).toBe('TRAIL_LOOSENS');
    expect(code(check(modifyOrder('t', { trailPrice: 15_970 }), guardState({ orders })))).toBe('ok');
    expect(
      code(check(modifyOrder('t', { trailPrice: 15_990 }), guardState({ orders }), { refuseLooseningTrail: true })),
    ).toBe('ok');
    expect(code(check(modifyOrder('t', { trailPrice: 16_001 }), guardState({ orders })))).toBe('TRAIL_WRONG_SIDE');
  });

  it('a limit or stop implausibly far from the last price is PRICE_TOO_FAR (1600 meant for 6400), on place and modify', () => {
    // ES at 6400.00 = 25,600 ticks of 0.25.
    const state = guardState({ last: 25_600 });
    const far = check(stopOrder('sell', 1, 6_400, { contractId: C }), state);
    expect(code(far)).toBe('PRICE_TOO_FAR');
    expect(!far.accepted && far.message).toMatch(
      /^stopPrice 1600 \(6400 ticks\) is 75\.0% from the last price 6400 \(25600 ticks\)/,
    );
    expect(code(check(limitOrder('buy', 1, 24_000, { contractId: C }), state))).toBe('ok');
    expect(code(check(limitOrder('buy', 1, 20_000, { contractId: C }), state))).toBe('PRICE_TOO_FAR');
    expect(code(check(limitOrder('buy', 1, 20_000, { contractId: C }), state, { maxPriceDistancePct: 25 }))).toBe('ok');
    const orders = {
      a: {
        contractId: C,
        side: 'buy' as const,
        size: 1,
        order: { type: 'limit' as const, limitPrice: 25_500 },
        trailStop: NaN,
      },
    };
    expect(code(check(modifyOrder('a', { limitPrice: 2_550 }), guardState({ last: 25_600, orders })))).toBe(
      'PRICE_TOO_FAR',
    );
  });

  it('trading states: HALTED lets only cancels and flattens through; REDUCING only reductions', () => {
    const orders = {
      a: {
        contractId: C,
        side: 'buy' as const,
        size: 1,
        order: { type: 'limit' as const, limitPrice: 15_990 },
        trailStop: NaN,
      },
    };
    const halted = guardState({ tradingState: 'HALTED', positions: { [C]: 2 }, orders });
    expect(code(check(sell(), halted))).toBe('STATE_HALTED');
    expect(code(check(modifyOrder('a', { limitPrice: 15_991 }), halted))).toBe('STATE_HALTED');
    expect(code(check(cancelOrder('a'), halted))).toBe('ok');
    expect(code(check(flatten(C), halted))).toBe('ok');
    const reducing = guardState({ tradingState: 'REDUCING', positions: { [C]: 2 } });
    expect(code(check(buy(), reducing))).toBe('STATE_REDUCING');
    expect(check(sell(2), reducing)).toEqual({ accepted: true });
    const flip = check(sell(5), reducing);
    expect(flip).toMatchObject({ accepted: true, size: 2, adjusted: 'STATE_REDUCING' });
  });

  it('lockout after a violation or the kill switch', () => {
    expect(code(check(buy(), guardState({ lockedUntil: Infinity })))).toBe('LOCKED_OUT');
    expect(code(check(buy(), guardState({ lockedUntil: 1_000_001 })))).toBe('LOCKED_OUT');
    expect(code(check(buy(), guardState({ lockedUntil: 999_999 })))).toBe('ok');
    expect(code(check(sell(), guardState({ lockedUntil: Infinity, positions: { [C]: 1 } })))).toBe('ok');
  });

  it('personal daily loss limit and profit target stop new risk, not reductions', () => {
    const lost = guardState({ dayPnl: -500, personalDailyLossLimit: 500, positions: { [C]: 1 } });
    expect(code(check(buy(), lost))).toBe('PERSONAL_DAILY_LOSS');
    expect(code(check(sell(), lost))).toBe('ok');
    expect(code(check(buy(), guardState({ dayPnl: -499, personalDailyLossLimit: 500 })))).toBe('ok');
    const won = guardState({ dayPnl: 1_000, personalDailyProfitTarget: 1_000, positions: { [C]: -1 } });
    expect(code(check(sell(), won))).toBe('PERSONAL_DAILY_PROFIT_TARGET');
    expect(code(check(buy(), won))).toBe('ok');
  });

  it("the account's daily and maximum loss floors, with the safety buffer", () => {
    expect(code(check(buy(), guardState({ equity: 48_000, dailyLossFloor: 48_000 })))).toBe('DAILY_LOSS_LIMIT');
    expect(code(check(buy(), guardState({ equity: 48_100, dailyLossFloor: 48_000 }), { safetyBuffer: 100 }))).toBe(
      'DAILY_LOSS_LIMIT',
    );
    expect(code(check(buy(), guardState({ equity: 48_101, dailyLossFloor: 48_000 }), { safetyBuffer: 100 }))).toBe(
      'ok',
    );
    expect(code(check(buy(), guardState({ equity: 47_000, maximumLossFloor: 47_500 })))).toBe('MAXIMUM_LOSS_LIMIT');
  });

  it('sizing against the room left: reject, or reduce when configured', () => {
    // room under the tightest floor: 50000 - 49500 = 500; 8 ticks x 12.5 = 100 a contract
    const state = guardState({ dailyLossFloor: 49_000, maximumLossFloor: 49_500 });
    const entry = (size: number) => marketOrder('buy', size, { contractId: C, bracket: { stopLossTicks: 8 } });
    expect(code(check(entry(5), state))).toBe('ok');
    expect(code(check(entry(6), state))).toBe('RISK_EXCEEDS_ROOM');
    expect(check(entry(6), state, { oversize: 'reduce' })).toMatchObject({
      accepted: true,
      size: 5,
      adjusted: 'RISK_EXCEEDS_ROOM',
    });
    // the personal daily loss limit counts as a limit too
    const personal = guardState({ dayPnl: -150, personalDailyLossLimit: 400 });
    expect(code(check(entry(3), personal))).toBe('RISK_EXCEEDS_ROOM');
    expect(code(check(entry(2), personal))).toBe('ok');
  });

  it('entries without a protective stop can be refused', () => {
    const config = { requireProtectiveStop: true };
    expect(code(check(buy(), guardState(), config))).toBe('NO_PROTECTIVE_STOP');
    expect(
      code(check(marketOrder('buy', 1, { contractId: C, bracket: { stopLossTicks: 8 } }), guardState(), config)),
    ).toBe('ok');
    const stopped = guardState({
      orders: {
        s: { contractId: C, side: 'sell', size: 1, order: { type: 'stop', stopPrice: 15_900 }, trailStop: NaN },
      },
    });
    expect(code(check(buy(), stopped, config))).toBe('ok');
    expect(code(check(sell(), guardState({ positions: { [C]: 1 } }), config))).toBe('ok');
  });

  it('maximum position size (working orders included), open orders and order rate', () => {
    const limits = { maxPositionSize: 3, maxOpenOrders: 2, maxOrderRate: { orders: 3, windowMs: 1_000 } };
    expect(code(check(buy(3), guardState(), limits))).toBe('ok');
    expect(code(check(buy(4), guardState(), limits))).toBe('MAX_POSITION_SIZE');
    const working = {
      w: {
        contractId: C,
        side: 'buy' as const,
        size: 2,
        order: { type: 'limit' as const, limitPrice: 1 },
        trailStop: NaN,
      },
    };
    expect(code(check(buy(2), guardState({ positions: { [C]: 0 }, orders: working }), limits))).toBe(
      'MAX_POSITION_SIZE',
    );
    expect(code(check(sell(6), guardState({ positions: { [C]: 3 } }), limits))).toBe('ok');
    expect(check(sell(7), guardState({ positions: { [C]: 3 } }), limits)).toMatchObject({
      accepted: true,
      size: 3,
      adjusted: 'MAX_POSITION_SIZE',
    });
    const two = { ...working, v: { ...working.w } };
    expect(code(check(buy(1), guardState({ orders: two }), { maxOpenOrders: 2 }))).toBe('MAX_OPEN_ORDERS');
    expect(code(check(buy(), guardState({ sent: [999_500, 999_600, 999_700] }), limits))).toBe('ORDER_RATE');
    expect(code(check(buy(), guardState({ sent: [998_000, 999_600, 999_700] }), limits))).toBe('ok');
  });

  it('sessions: no new risk outside hours or past the flat-by time', () => {
    expect(code(check(buy(), guardState({ session: 'closed' })))).toBe('OUTSIDE_SESSION');
    expect(code(check(buy(), guardState({ session: 'flatBy' })))).toBe('FLAT_BY');
    expect(code(check(sell(), guardState({ session: 'flatBy', positions: { [C]: 1 } })))).toBe('ok');
  });

  it('a bigger entry order through a modify is new risk', () => {
    const orders = {
      w: {
        contractId: C,
        side: 'buy' as const,
        size: 1,
        order: { type: 'limit' as const, limitPrice: 1 },
        trailStop: NaN,
      },
    };
    expect(code(check(modifyOrder('w', { size: 3 }), guardState({ orders, tradingState: 'REDUCING' })))).toBe(
      'STATE_REDUCING',
    );
    expect(code(check(modifyOrder('w', { size: 3 }), guardState({ orders })))).toBe('ok');
  });
});

describe('risk guard properties', () => {
  const side = fc.constantFrom('buy' as const, 'sell' as const);
  const price = fc.oneof(
    fc.integer({ min: 15_000, max: 17_000 }),
    fc.double({ min: 15_000, max: 17_000, noNaN: true }),
  );
  const intent: fc.Arbitrary<Intent> = fc.oneof(
    fc
      .record({ side, size: fc.integer({ min: -1, max: 8 }) })
      .map(({ side, size }) => marketOrder(side, size, { contractId: C })),
    fc
      .record({ side, size: fc.integer({ min: 1, max: 8 }), p: price })
      .map(({ side, size, p }) => limitOrder(side, size, p, { contractId: C })),
    fc
      .record({ side, size: fc.integer({ min: 1, max: 8 }), p: price })
      .map(({ side, size, p }) => stopOrder(side, size, p, { contractId: C })),
    fc
      .record({ side, size: fc.integer({ min: 1, max: 8 }), p: price })
      .map(({ side, size, p }) => trailingStopOrder(side, size, p, { contractId: C })),
    fc.record({ p: price }).map(({ p }) => modifyOrder('t', { trailPrice: p })),
  );
  const state = fc.record({
    position: fc.integer({ min: -5, max: 5 }),
    dayPnl: fc.integer({ min: -2_000, max: 2_000 }),
    equity: fc.integer({ min: 46_000, max: 52_000 }),
    tradingState: fc.constantFrom('ACTIVE' as const, 'REDUCING' as const, 'HALTED' as const),
    session: fc.constantFrom('open' as const, 'closed' as const, 'flatBy' as const),
  });

  it('no accepted intent breaks tick alignment or a limit; every rejection has a known code and a message', () => {
    const limits = riskConfigSchema.parse({ maxPositionSize: 4, maxTrailTicks: 100, safetyBuffer: 50 });
    fc.assert(
      fc.property(intent, state, (i, s) => {
        const gs = guardState({
          positions: { [C]: s.position },
          dayPnl: s.dayPnl,
          equity: s.equity,
          tradingState: s.tradingState,
          session: s.session,
          dailyLossFloor: 48_000,
          maximumLossFloor: 47_000,
          personalDailyLossLimit: 1_000,
          orders: { t: trailOrder('sell', 15_950) },
        });
        const result = checkIntent(i, gs, limits);
        if (!result.accepted) {
          expect(Object.keys(REASON_CODES)).toContain(result.code);
          expect(result.message.length).toBeGreaterThan(0);
          return;
        }
        if (i.kind === 'place') {
          const size = result.size ?? i.size;
          expect(Number.isInteger(size) && size > 0).toBe(true);
          const o = i.order;
          for (const p of [
            'limitPrice' in o ? o.limitPrice : 0,
            'stopPrice' in o ? o.stopPrice : 0,
            o.type === 'trailingStop' ? o.trailPrice : 0,
          ]) {
            expect(Number.isInteger(p)).toBe(true);
          }
          const after = s.position + (i.side === 'buy' ? size : -size);
          const addsRisk = Math.abs(after) > Math.abs(s.position) || Math.sign(after) === -Math.sign(s.position);
          if (addsRisk) {
            expect(s.tradingState).toBe('ACTIVE');
            expect(s.session).toBe('open');
            expect(Math.abs(after)).toBeLessThanOrEqual(4);
            expect(s.dayPnl).toBeGreaterThan(-1_000);
            expect(s.equity).toBeGreaterThan(48_050);
          }
          if (o.type === 'trailingStop') expect(Math.abs(16_000 - o.trailPrice)).toBeLessThanOrEqual(100);
        }
        if (i.kind === 'modify') {
          expect(s.tradingState).not.toBe('HALTED');
          expect(Number.isInteger(i.trailPrice)).toBe(true);
        }
      }),
      { numRuns: 2_000 },
    );
  });
});
