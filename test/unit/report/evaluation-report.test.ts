import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  evaluationRulesSchema,
  type EvaluationRules,
  type EvaluationRulesInput,
} from '../../../src/engine/evaluation-rules.ts';
import {
  compressDays,
  compressPath,
  EvaluationAccount,
  evaluationDays,
  monteCarloEvaluation,
  replayEvaluation,
  wilsonInterval,
  type EvaluationDay,
} from '../../../src/report/evaluation-report.ts';

const T0 = Date.UTC(2025, 2, 3, 14, 30);
const MINUTE = 60_000;
const DAY = 86_400_000;

function rules(overrides: Partial<EvaluationRulesInput> = {}): EvaluationRules {
  return evaluationRulesSchema.parse({
    name: 'test',
    startingBalance: 50_000,
    profitTarget: 10_000,
    maximumLossLimit: { amount: 2_000, variant: 'static' },
    ...overrides,
  });
}

let dayCount = 0;
/** A trading day from its path of equity offsets (the first point is the day's opening, 0). */
function day(points: number[], extra: Partial<EvaluationDay> = {}): EvaluationDay {
  const index = dayCount++;
  const offsets = Float64Array.from([0, ...points]);
  const times = Float64Array.from(offsets, (_, k) => T0 + index * DAY + k * MINUTE);
  return {
    day: new Date(T0 + index * DAY).toISOString().slice(0, 10),
    offsets,
    times,
    low: Math.min(...offsets),
    high: Math.max(...offsets),
    closeBalance: offsets[offsets.length - 1]!,
    traded: true,
    largestPosition: 1,
    contractsBreach: Number.NaN,
    hoursBreach: Number.NaN,
    ...extra,
  };
}

const mll = (variant: string, lockAbove?: number) => ({
  maximumLossLimit: { amount: 2_000, variant, ...(lockAbove === undefined ? {} : { lockAbove }) } as never,
});

describe('evaluation rules on hand-made equity paths', () => {
  it('static maximum loss limit: the floor stays at starting balance - limit', () => {
    expect(replayEvaluation(rules(mll('static')), [day([1_500, 1_000]), day([-2_900])]).status).toBe('open');
    const failed = replayEvaluation(rules(mll('static')), [day([1_500, 1_000]), day([-2_500, -3_000, -2_000])]);
    expect(failed).toMatchObject({ status: 'failed', rule: 'maximumLossLimit', dayNumber: 2 });
    // The first point at or under 48,000 (51,000 - 3,000), not the low of the day.
    expect(failed.time).toBe(T0 + (dayCount - 1) * DAY + 2 * MINUTE);
  });

  it('trailing end of day: the floor follows the highest closing equity, not the intraday high', () => {
    const r = rules(mll('trailingEndOfDay'));
    // Day 1 peaks at +1,500 and closes at +1,000: floor 49,000 on day 2.
    expect(replayEvaluation(r, [day([1_500, 1_000]), day([-1_900])]).status).toBe('open');
    expect(replayEvaluation(r, [day([1_500, 1_000]), day([-2_000])])).toMatchObject({
      status: 'failed',
      rule: 'maximumLossLimit',
      dayNumber: 2,
    });
    // The same fall inside day 1 is measured from the starting balance's floor (48,000).
    expect(replayEvaluation(r, [day([1_500, -600])]).status).toBe('open');
  });

  it('trailing intraday: the floor follows the highest equity seen, inside the day too', () => {
    const r = rules(mll('trailingIntraday'));
    expect(replayEvaluation(r, [day([1_500, -600])])).toMatchObject({
      status: 'failed',
      rule: 'maximumLossLimit',
      dayNumber: 1,
    });
    expect(replayEvaluation(r, [day([1_500, -400])]).status).toBe('open');
    // Day 1 high 51,500: floor 49,500 on day 2 even though day 1 closed at 51,000.
    expect(replayEvaluation(r, [day([1_500, 1_000]), day([-1_500])])).toMatchObject({ status: 'failed', dayNumber: 2 });
  });

  it('a lock stops a trailing floor at the starting balance (+ lockAbove)', () => {
    // Day 1 closes at 53,000: unlocked the floor is 51,000, locked at the starting balance 50,000.
    const days = () => [day([3_000]), day([-2_900])];
    expect(replayEvaluation(rules(mll('trailingEndOfDay')), days()).status).toBe('failed');
    expect(replayEvaluation(rules(mll('trailingEndOfDay', 0)), days()).status).toBe('open');
    expect(replayEvaluation(rules(mll('trailingUntilLocked')), days()).status).toBe('open');
    expect(replayEvaluation(rules(mll('trailingEndOfDay', 0)), [day([3_000]), day([-3_000])]).status).toBe('failed');
    // Intraday with a lock 100 above the start: high 52,500 -> floor 50,100.
    const intraday = rules(mll('trailingIntraday', 100));
    expect(replayEvaluation(intraday, [day([2_500, 2_400]), day([-2_250])]).status).toBe('open');
    expect(replayEvaluation(intraday, [day([2_500, 2_400]), day([-2_350])])).toMatchObject({
      status: 'failed',
      dayNumber: 2,
    });
  });

  it('a static floor refuses a lock', () => {
    expect(() => rules(mll('static', 0))).toThrow(/lockAbove/);
  });

  it('daily loss limit: a soft breach is part of the day (the engine flattened and paused); a hard one fails', () => {
    const soft = rules({ dailyLossLimit: { amount: 1_000, breach: 'pausesDay' }, profitTarget: 1_000 });
    // Day 1 breaks at -1,100 and stays there (the engine's flatten and pause are in the path).
    const outcome = replayEvaluation(soft, [day([-1_100]), day([1_500]), day([600])]);
    expect(outcome).toMatchObject({ status: 'passed', dayNumber: 3, profit: 1_000 });
    const hard = rules({ dailyLossLimit: { amount: 1_000, breach: 'failsEvaluation' } });
    expect(replayEvaluation(hard, [day([500]), day([-1_100, 2_000])])).toMatchObject({
      status: 'failed',
      rule: 'dailyLossLimit',
      dayNumber: 2,
    });
  });

  it('the profit target is reached at the end of a day', () => {
    const r = rules({ profitTarget: 3_000 });
    // Day 2 touches +3,500 intraday but closes at +2,500.
    const outcome = replayEvaluation(r, [day([1_000]), day([2_500, 1_500]), day([1_000])]);
    expect(outcome).toMatchObject({ status: 'passed', dayNumber: 3, profit: 3_500 });
    expect(outcome.summary).toMatch(/^passed on trading day 3/);
  });

  it('consistency: the best day must stay below its share of the total profit', () => {
    const r = rules({ profitTarget: 3_000, consistency: { bestDayShare: 0.5 } });
    const days = [day([2_500]), ...Array.from({ length: 12 }, () => day([300]))];
    // 2,500 < 0.5 x profit needs a profit above 5,000: 2,500 + 9 x 300 = 5,200 on day 10.
    expect(replayEvaluation(r, days)).toMatchObject({ status: 'passed', dayNumber: 10 });
    const short = replayEvaluation(r, days.slice(0, 4));
    expect(short.status).toBe('open');
    expect(short.summary).toContain('must be below 50%');
  });

  it('minimum trading days count only days with a trade', () => {
    const r = rules({ profitTarget: 3_000, minimumTradingDays: 5 });
    const days = [
      day([1_000]),
      day([0], { traded: false }),
      day([1_000]),
      day([1_000]),
      day([100]),
      day([100]),
      day([100]),
    ];
    expect(replayEvaluation(r, days)).toMatchObject({ status: 'passed', dayNumber: 6, tradingDays: 5 });
  });

  it('maximum contracts and trading hours fail at their instant; the earliest broken rule counts', () => {
    const r = rules({
      maximumContracts: 2,
      tradingHours: { timeZone: 'America/Chicago', open: '08:30', close: '15:00' },
    });
    const base = T0 + dayCount * DAY;
    expect(replayEvaluation(r, [day([100], { contractsBreach: base + 30 * MINUTE })])).toMatchObject({
      status: 'failed',
      rule: 'maximumContracts',
      time: base + 30 * MINUTE,
    });
    const next = T0 + dayCount * DAY;
    expect(replayEvaluation(r, [day([100], { hoursBreach: next + 5 * MINUTE })])).toMatchObject({
      status: 'failed',
      rule: 'tradingHours',
    });
    // A maximum loss break at minute 1 comes before a contract breach at minute 2.
    const third = T0 + dayCount * DAY;
    expect(replayEvaluation(r, [day([-2_500], { contractsBreach: third + 2 * MINUTE })])).toMatchObject({
      rule: 'maximumLossLimit',
    });
    const fourth = T0 + dayCount * DAY;
    expect(replayEvaluation(r, [day([-100, -2_500], { contractsBreach: fourth })])).toMatchObject({
      rule: 'maximumContracts',
    });
  });

  it('reports the closest approach to each floor and to the target', () => {
    const r = rules({
      ...mll('trailingEndOfDay'),
      dailyLossLimit: { amount: 1_000, breach: 'pausesDay' },
      profitTarget: 3_000,
    });
    const outcome = replayEvaluation(r, [day([1_000]), day([-800, -300])]);
    expect(outcome.closest).toEqual([
      { rule: 'maximumLossLimit', minRoom: 1_200, time: T0 + (dayCount - 1) * DAY + MINUTE },
      { rule: 'dailyLossLimit', minRoom: 200, time: T0 + (dayCount - 1) * DAY + MINUTE },
      { rule: 'profitTarget', minRoom: 2_000, time: T0 + (dayCount - 2) * DAY + MINUTE },
    ]);
  });
});

describe('evaluation days of a run', () => {
  it('paths from the equity at each bar high and low with the position held, the cap and the hours', () => {
    // Four one-minute bars on 2025-03-04 (Chicago day), long 3 contracts from the second bar; tick value 12.5.
    const t = (k: number) => Date.UTC(2025, 2, 4, 14, 30 + k);
    const bars = {
      time: [t(0), t(1), t(2), t(3)],
      high: [100, 104, 106, 103],
      low: [98, 100, 101, 97],
      close: [99, 102, 103, 98],
    };
    const equity = { time: bars.time, equity: [50_000, 50_075, 50_112.5, 49_925] };
    const fills = [{ time: t(1), side: 'buy' as const, size: 3 }];
    const [only] = evaluationDays(
      { bars, equity, fills, tickValue: 12.5, startingBalance: 50_000 },
      { maximumContracts: 2, tradingHours: { timeZone: 'America/Chicago', open: '08:30', close: '08:32' } },
    );
    expect(only!.day).toBe('2025-03-04');
    // Bar 1: high 104 -> +75 + 3 x 2 x 12.5 = 150, low 100 -> 75 - 75 = 0; bar 2: 112.5 + 112.5, 112.5 - 75; bar 3: -75
    // + 187.5, -75 - 37.5.
    expect(Array.from(only!.offsets)).toEqual([0, 0, 150, 0, 225, 37.5, 112.5, -112.5, -75]);
    expect(only!.largestPosition).toBe(3);
    expect(only!.contractsBreach).toBe(t(1));
    // 08:32 Chicago is 14:32 UTC: the position held at the bar starting then is outside the hours.
    expect(only!.hoursBreach).toBe(t(2));
    expect(only!.traded).toBe(true);
    expect([only!.low, only!.high]).toEqual([-112.5, 225]);
  });

  it('splits days at the trading day boundary and measures each from the previous close', () => {
    const t1 = Date.UTC(2025, 2, 4, 22, 58);
    const t2 = Date.UTC(2025, 2, 4, 23, 1); // after 17:00 Chicago: the next trading day
    const days = evaluationDays(
      {
        bars: { time: [t1, t2], high: [1, 1], low: [1, 1], close: [1, 1] },
        equity: { time: [t1, t2], equity: [50_100, 50_050] },
        fills: [],
        tickValue: 1,
        startingBalance: 50_000,
      },
      {},
    );
    expect(days.map((d) => d.day)).toEqual(['2025-03-04', '2025-03-05']);
    expect(Array.from(days[0]!.offsets)).toEqual([0, 100]);
    expect(Array.from(days[1]!.offsets)).toEqual([0, -50]);
    expect(days[1]!.traded).toBe(false);
  });
});

describe('path compression', () => {
  it('keeps the turning points in order', () => {
    expect(compressPath([0, 1, 2, 3, 2, 1, 1, 4, 5, -1], [0, 1, 2, 3, 4, 5, 6, 7, 8, 9])).toEqual({
      values: [0, 3, 1, 5, -1],
      times: [0, 3, 5, 8, 9],
    });
  });

  const variants = fc.constantFrom(
    { amount: 1_000, variant: 'static' },
    { amount: 1_000, variant: 'trailingEndOfDay' },
    { amount: 1_000, variant: 'trailingIntraday' },
    { amount: 1_000, variant: 'trailingUntilLocked' },
    { amount: 1_000, variant: 'trailingIntraday', lockAbove: 0 },
  );
  const paths = fc.array(fc.array(fc.integer({ min: -300, max: 300 }), { minLength: 1, maxLength: 30 }), {
    minLength: 1,
    maxLength: 12,
  });

  it('gives the same outcome as the whole paths, point by point or a quiet day at once (property)', () => {
    fc.assert(
      fc.property(variants, fc.boolean(), paths, (maximumLossLimit, hardDaily, moves) => {
        const r = rules({
          maximumLossLimit: maximumLossLimit as never,
          profitTarget: 800,
          dailyLossLimit: { amount: 600, breach: hardDaily ? 'failsEvaluation' : 'pausesDay' },
        });
        const whole = moves.map((m) => {
          let v = 0;
          return day(m.map((x) => (v += x)));
        });
        const expected = replayEvaluation(r, whole);
        const compressed = replayEvaluation(r, compressDays(whole));
        expect([compressed.status, compressed.rule, compressed.dayNumber, compressed.profit]).toEqual([
          expected.status,
          expected.rule,
          expected.dayNumber,
          expected.profit,
        ]);
        const quick = new EvaluationAccount(r, false);
        const exact = new EvaluationAccount(r, true);
        for (const d of compressDays(whole)) {
          const a = quick.playDay(d);
          const b = exact.playDay(d);
          expect([a.status, a.rule, quick.equity]).toEqual([b.status, b.rule, exact.equity]);
          if (a.status !== undefined) break;
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe('Monte Carlo pass probability', () => {
  const target = rules({
    profitTarget: 3_000,
    ...mll('trailingIntraday'),
    dailyLossLimit: { amount: 1_000, breach: 'pausesDay' },
    consistency: { bestDayShare: 0.5 },
  });

  it('a strategy that cannot lose passes with probability 1', () => {
    const days = [day([300, 100, 500]), day([200, 800]), day([0, 400, 250]), day([0], { traded: false })];
    const result = monteCarloEvaluation(target, days, { paths: 2_000, seed: 3 });
    expect(result.passed).toBe(2_000);
    expect(result.passProbability).toBe(1);
    expect(result.failed).toEqual({ maximumLossLimit: 0, dailyLossLimit: 0, maximumContracts: 0, tradingHours: 0 });
    expect(result.daysToPass!.counts.reduce((a, b) => a + b, 0)).toBe(2_000);
    expect(result.daysToPass!.median).toBeGreaterThanOrEqual(7);
    expect(result.passInterval[0]).toBeGreaterThan(0.99);
  });

  it('a strategy that always breaches passes with probability 0', () => {
    const days = [day([400, -1_700]), day([1_000, -1_100]), day([-2_100])];
    const result = monteCarloEvaluation(target, days, { paths: 2_000, seed: 3 });
    expect(result.passed).toBe(0);
    expect(result.failed.maximumLossLimit).toBe(2_000);
    expect(result.failProbability.maximumLossLimit).toBe(1);
    expect(result.daysToPass).toBeNull();
    expect(result.passInterval[1]).toBeLessThan(0.01);
  });

  it('a seeded run is reproducible; another seed draws other paths', () => {
    const days = [day([300, -700, 200]), day([900, -400, 600]), day([-1_200, -900]), day([400]), day([-300, 800])];
    const a = monteCarloEvaluation(target, days, { paths: 3_000, seed: 42, blockDays: 2 });
    const b = monteCarloEvaluation(target, days, { paths: 3_000, seed: 42, blockDays: 2 });
    expect(b).toEqual(a);
    const c = monteCarloEvaluation(target, days, { paths: 3_000, seed: 43, blockDays: 2 });
    expect(c.fan.samples).not.toEqual(a.fan.samples);
    expect(a.passed + a.open + Object.values(a.failed).reduce((x, y) => x + y, 0)).toBe(3_000);
    expect(a.passProbability).toBeGreaterThan(0);
    expect(a.passProbability).toBeLessThan(1);
    expect(a.passInterval[0]).toBeLessThanOrEqual(a.passProbability);
    expect(a.passInterval[1]).toBeGreaterThanOrEqual(a.passProbability);
    // The fan holds the starting balance on day 0 and ordered quantiles on every day.
    expect(a.fan.p50[0]).toBe(50_000);
    a.fan.p05.forEach((low, k) => expect(low).toBeLessThanOrEqual(a.fan.p95[k]!));
  });

  it('blocks of the whole run replay it in order from a drawn start', () => {
    const days = [day([1_000]), day([1_000]), day([1_000])];
    const result = monteCarloEvaluation(rules({ profitTarget: 3_000 }), days, { paths: 50, blockDays: 3 });
    expect(result.daysToPass!.counts[2]).toBe(50);
  });

  it('Wilson interval', () => {
    const [low, high] = wilsonInterval(50, 100);
    expect(low).toBeCloseTo(0.4038, 3);
    expect(high).toBeCloseTo(0.5962, 3);
    expect(wilsonInterval(0, 10)[0]).toBe(0);
  });
});
