import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { filter, map } from 'rxjs';
import { z } from 'zod';
import { limitOrder, marketOrder, stopOrder, target, trailingStopOrder, flatten } from '../../../src/engine/intents.ts';
import { REASON_CODES } from '../../../src/engine/risk.ts';
import type { Breach } from '../../../src/engine/account-rules.ts';
import {
  createEngine,
  type Decision,
  type EngineOptions,
  type TradingStateChange,
} from '../../../src/engine/runner.ts';
import { defineStrategy } from '../../../src/engine/strategy.ts';
import type { Intent } from '../../../src/engine/types.ts';
import { ES, T0, TinyVenue, chunk, type BarInput } from './helpers.ts';

function scripted(plan: Array<Intent | undefined>) {
  return defineStrategy({
    name: 'scripted',
    params: z.object({}),
    run: ({ barRecords }) => {
      let index = 0;
      return barRecords().pipe(
        map(() => plan[index++]),
        filter((intent): intent is Intent => intent !== undefined),
      );
    },
  });
}

function setup(plan: Array<Intent | undefined>, extra: Partial<EngineOptions> = {}) {
  const venue = new TinyVenue();
  const engine = createEngine({
    strategies: [{ strategy: scripted(plan) }],
    contracts: [ES],
    venue,
    account: { startingBalance: 50_000 },
    ...extra,
  });
  const decisions: Decision[] = [];
  const breaches: Breach[] = [];
  const states: TradingStateChange[] = [];
  engine.decisions$.subscribe((d) => decisions.push(d));
  engine.breaches$.subscribe((b) => breaches.push(b));
  engine.tradingState$.subscribe((s) => states.push(s));
  return { venue, engine, decisions, breaches, states };
}

const codes = (decisions: Decision[]) =>
  decisions.map((d) => (d.result.accepted ? (d.result.adjusted ?? 'ok') : d.result.code));

describe('runner and the rules', () => {
  it('personal daily loss limit: REDUCING for the rest of the day, ACTIVE the next day', () => {
    const plan = [target(1), undefined, undefined, target(2), target(0)];
    const { engine, breaches, decisions } = setup(plan, {
      account: { startingBalance: 50_000, personalDailyLossLimit: 200 },
    });
    // long at 100; bar 2 low 83 = -17 ticks = -212.5
    engine.push(chunk([100, 100, { open: 100, high: 100, low: 83, close: 95 }, 95, 95, 95]));
    expect(breaches).toMatchObject([{ type: 3, duration: 0 }]);
    expect(engine.tradingState().state).toBe('REDUCING');
    expect(codes(decisions)).toEqual(['ok', 'STATE_REDUCING', 'ok']);
    expect(engine.accounting.position(ES.id)).toBe(0);
    // next trading day (17:00 Chicago = 23:00 UTC in November)
    engine.push(chunk([95], Date.UTC(2026, 10, 16, 23, 0)));
    expect(engine.tradingState().state).toBe('ACTIVE');
  });

  it('limits changed while running apply from the next bar; a bad limit is refused by name', () => {
    const plan = [target(1), undefined, undefined, undefined, target(2)];
    const { engine, breaches, decisions } = setup(plan);
    // long at 100; bar 2 low 90 = -10 ticks = -125: no limit yet
    engine.push(chunk([100, 100, { open: 100, high: 100, low: 90, close: 95 }]));
    expect(breaches).toEqual([]);
    engine.setAccountLimits({ personalDailyLossLimit: 100, maximumLossLimit: { amount: 2_000, variant: 'static' } });
    expect(engine.rules.maximumLossFloor()).toBe(48_000);
    // bar 3 low 91: -112.5 today, past the new personal limit
    engine.push(chunk([{ open: 95, high: 95, low: 91, close: 95 }, 95], Date.UTC(2026, 10, 16, 15, 3)));
    expect(breaches).toMatchObject([{ type: 3 }]);
    expect(engine.tradingState().state).toBe('REDUCING');
    expect(codes(decisions).at(-1)).toBe('STATE_REDUCING');
    expect(() => engine.setAccountLimits({ dailyLossLimit: -5 })).toThrow(/dailyLossLimit/);
    expect(engine.rules.config.personalDailyLossLimit).toBe(100);
    engine.setAccountLimits({});
    expect(engine.rules.active).toBe(false);
  });

  it("the engine's own orders carry its riskStrategyId, which no strategy may take", () => {
    const plan = [target(1), undefined, undefined, target(1)];
    const { engine, venue } = setup(plan, {
      riskStrategyId: 'bot7-risk',
      account: { startingBalance: 50_000, maximumLossLimit: { amount: 500, variant: 'static' } },
    });
    engine.push(chunk([100, 100, { open: 100, high: 100, low: 60, close: 99 }, 99, 99]));
    expect(venue.placed.map((o) => o.id)).toEqual(['scripted-1', 'bot7-risk-1']);
    expect(() => setup([], { riskStrategyId: 'scripted' })).toThrow(/riskStrategyId/);
  });

  it('maximum loss limit: permanent HALT, lockout and flatten', () => {
    const plan = [target(1), undefined, undefined, target(1)];
    const { engine, breaches, venue } = setup(plan, {
      account: { startingBalance: 50_000, maximumLossLimit: { amount: 500, variant: 'static' } },
    });
    engine.push(chunk([100, 100, { open: 100, high: 100, low: 60, close: 99 }, 99, 99]));
    expect(breaches).toMatchObject([{ type: 6, rule: 'maximumLossLimit', duration: 1 }]);
    expect(engine.tradingState()).toMatchObject({ state: 'HALTED', until: Infinity });
    expect(venue.placed.map((o) => `${o.id} ${o.side}`)).toEqual(['scripted-1 buy', 'risk-1 sell']);
    engine.push(chunk([99], Date.UTC(2026, 10, 17, 15, 0)));
    expect(engine.tradingState().state).toBe('HALTED');
  });

  it('flat-by time closes positions and blocks new risk', () => {
    const plan = [target(1), undefined, undefined, target(1)];
    const risk = { sessions: { open: '08:30', close: '15:15', flatBy: '09:02' } };
    const { engine, venue, decisions } = setup(plan, { risk });
    // T0 = 09:00 Chicago; bar 1 ends 09:02
    engine.push(chunk([100, 101, 102, 103, 104]));
    expect(venue.placed.map((o) => `${o.id} ${o.side} ${o.size}`)).toEqual(['scripted-1 buy 1', 'risk-1 sell 1']);
    expect(codes(decisions).at(-1)).toBe('FLAT_BY');
    expect(engine.accounting.position(ES.id)).toBe(0);
  });

  it('kill switch and operator states', () => {
    const plan = [target(2), undefined, undefined, target(3), undefined, target(3)];
    const { engine, venue, decisions } = setup(plan);
    engine.push(chunk([100, 100, 100]));
    engine.killSwitch('operator');
    engine.push(chunk([100, 100], T0 + 3 * 60_000));
    expect(engine.accounting.position(ES.id)).toBe(0);
    expect(codes(decisions)).toEqual(['ok', 'ok', 'STATE_HALTED']);
    engine.setTradingState('ACTIVE', 'operator resumes');
    engine.push(chunk([100], T0 + 5 * 60_000));
    expect(venue.placed.map((o) => `${o.side} ${o.size}`)).toEqual(['buy 2', 'sell 2', 'buy 3']);
  });

  it('a partial last bar only marks the price', () => {
    const { engine, venue } = setup([target(1)]);
    engine.push({ ...chunk([100, 104]), partial: true });
    expect(venue.placed).toHaveLength(1);
    expect(engine.accounting.lastPrice(ES.id)).toBe(104);
  });

  it('tracks trailing stops from bars, so loosening modifies can be refused', () => {
    const plan: Array<Intent | undefined> = [
      target(1),
      trailingStopOrder('sell', 1, 96, { unit: 'ticks' }),
      undefined,
      { kind: 'modify', orderId: 'scripted-2', trailPrice: 103 },
      { kind: 'modify', orderId: 'scripted-2', trailPrice: 106 },
    ];
    const { decisions, engine } = setup(plan, { risk: { refuseLooseningTrail: true } });
    // last 100 at bar 1: trail distance 4; highs rise to 110 -> stop 106
    engine.push(chunk([100, 100, { open: 100, high: 110, low: 100, close: 107 }, 107, 108]));
    expect(codes(decisions)).toEqual(['ok', 'ok', 'TRAIL_LOOSENS', 'ok']);
  });
});

describe('runner properties', () => {
  const side = fc.constantFrom('buy' as const, 'sell' as const);
  const intent: fc.Arbitrary<Intent | undefined> = fc.oneof(
    fc.constant(undefined),
    fc.integer({ min: -4, max: 4 }).map((n) => target(n)),
    fc.record({ side, size: fc.integer({ min: 1, max: 4 }) }).map(({ side, size }) => marketOrder(side, size)),
    fc
      .record({ side, size: fc.integer({ min: 1, max: 3 }), p: fc.double({ min: 90, max: 110, noNaN: true }) })
      .map(({ side, size, p }) => limitOrder(side, size, p, { unit: 'ticks' })),
    fc
      .record({ side, size: fc.integer({ min: 1, max: 3 }), p: fc.integer({ min: 90, max: 110 }) })
      .map(({ side, size, p }) => stopOrder(side, size, p, { unit: 'ticks' })),
    fc
      .record({ side, p: fc.integer({ min: 0, max: 200 }) })
      .map(({ side, p }) => trailingStopOrder(side, 1, p, { unit: 'ticks' })),
    fc.constant(flatten()),
  );
  const bar: fc.Arbitrary<BarInput> = fc
    .record({
      open: fc.integer({ min: 95, max: 105 }),
      close: fc.integer({ min: 95, max: 105 }),
      up: fc.integer({ min: 0, max: 3 }),
      down: fc.integer({ min: 0, max: 3 }),
    })
    .map(({ open, close, up, down }) => ({
      open,
      close,
      high: Math.max(open, close) + up,
      low: Math.min(open, close) - down,
    }));

  it('no forwarded order breaks tick alignment or the position limit; every rejection has a code; PnL adds up', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(bar, intent), { minLength: 1, maxLength: 40 }), (steps) => {
        const { engine, venue, decisions } = setup(
          steps.map(([, i]) => i),
          {
            risk: { maxPositionSize: 3, maxTrailTicks: 20 },
            account: { startingBalance: 50_000, dailyLossLimit: 400 },
          },
        );
        const positions: number[] = [];
        engine.fills$.subscribe(() => positions.push(engine.accounting.position(ES.id)));
        engine.push(chunk(steps.map(([b]) => b)));
        for (const command of venue.placed) {
          expect(Number.isInteger(command.size) && command.size > 0).toBe(true);
          const o = command.order;
          for (const p of [
            'limitPrice' in o ? o.limitPrice : 0,
            'stopPrice' in o ? o.stopPrice : 0,
            o.type === 'trailingStop' ? o.trailPrice : 0,
          ]) {
            expect(Number.isInteger(p)).toBe(true);
          }
        }
        // stops placed independently can add to a position, so bound by max + the stop sizes placed
        const stopSizes = venue.placed
          .filter((c) => c.order.type === 'stop' || c.order.type === 'trailingStop')
          .reduce((s, c) => s + c.size, 0);
        for (const p of positions) expect(Math.abs(p)).toBeLessThanOrEqual(3 + stopSizes);
        for (const d of decisions) {
          if (!d.result.accepted) {
            expect(Object.keys(REASON_CODES)).toContain(d.result.code);
            expect(d.result.message).not.toBe('');
          }
        }
        const tradesPnl = engine.accounting.trades.reduce((s, t) => s + t.pnl, 0);
        expect(engine.accounting.realizedPnl).toBeCloseTo(tradesPnl, 6);
      }),
      { numRuns: 150 },
    );
  });
});

describe('restart', () => {
  it('restores balance, day start and positions so targets and daily limits continue', () => {
    const now = T0 - 60_000;
    const venue = new TinyVenue();
    const engine = createEngine({
      strategies: [{ strategy: scripted([target(2)]), id: 'live' }],
      contracts: [ES],
      venue,
      account: { startingBalance: 50_000, dailyLossLimit: 1_000 },
      clock: () => now,
      sequenceStart: { live: 118 },
    });
    engine.restore({
      balance: 50_500,
      startOfDayBalance: 51_000,
      positions: [{ contractId: ES.id, size: 1, averagePrice: 100 }],
    });
    expect(engine.rules.dailyLossFloor()).toBe(50_000);
    expect(engine.snapshot()).toMatchObject({ balance: 50_500, dayPnl: -500 });
    engine.push(chunk([100]));
    expect(venue.placed.map((o) => `${o.id} ${o.side} ${o.size}`)).toEqual(['live-118 buy 1']);
    expect(engine.rules.dailyLossFloor()).toBe(50_000);
  });
});
