import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { DailyStatistics, DayStatistics } from '../../../src/protocol/schemas.ts';
import { TradingCalendar } from '../../../src/engine/trading-day.ts';
import {
  addDayEnds,
  cents,
  computeStatistics,
  dailyStatistics,
  drawdownStatistics,
  DrawdownTracker,
  endOfDayEquity,
  exposure,
  exposureOf,
  SpanUnion,
  ratio,
  sharpeRatio,
  sortinoRatio,
  tradeStatistics,
  tradingDayConfig,
} from '../../../src/report/statistics.ts';
import type { ClosedTrade, ReportInput } from '../../../src/report/report-types.ts';
import { isCheckedBarTimes, ReportInputError, validateReportInput } from '../../../src/report/validate.ts';

const MINUTE = 60_000;
const at = (iso: string): number => Date.parse(iso);

function trade(pnl: number, fees: number, overrides: Partial<ClosedTrade> = {}): ClosedTrade {
  return {
    contractId: 'CON.F.US.EP.Z25',
    side: 'buy',
    size: 1,
    entryTime: 0,
    exitTime: MINUTE,
    entryPrice: 20_000,
    exitPrice: 20_000,
    pnl,
    fees,
    ...overrides,
  };
}

function input(overrides: Partial<ReportInput> = {}): ReportInput {
  return {
    title: 'test',
    contract: { id: 'CON.F.US.EP.Z25', name: 'ESZ5', symbolId: 'F.US.EP', tickSize: 0.25, tickValue: 12.5 },
    startingBalance: 50_000,
    bars: { time: [], open: [], high: [], low: [], close: [] },
    trades: [],
    equity: { time: [], equity: [] },
    violations: [],
    closestApproach: [],
    passed: true,
    orderListHash: 'abc',
    ...overrides,
  };
}

describe('cents', () => {
  it('rounds half away from zero, including values stored just below the half', () => {
    expect(cents(1.005)).toBe(1.01);
    expect(cents(-1.005)).toBe(-1.01);
    expect(cents(0.1 + 0.2)).toBe(0.3);
    expect(Object.is(cents(-0.001), 0)).toBe(true);
  });
});

describe('tradeStatistics', () => {
  // Net PnL after fees: +96, -54, 0, +192.
  const trades = [trade(100, 4), trade(-50, 4), trade(4, 4), trade(200, 8, { size: 2 })];

  it('computes every trade statistic of a hand-checked case', () => {
    expect(tradeStatistics(trades)).toEqual({
      netPnl: 234,
      grossPnl: 254,
      fees: 20,
      trades: 4,
      contracts: 5,
      winningTrades: 2,
      losingTrades: 1,
      neutralTrades: 1,
      winRate: 0.5,
      profitFactor: 5.3333, // (96 + 192) / 54
      expectancy: 58.5,
      averageWin: 144,
      averageLoss: -54,
      largestWin: 192,
      largestLoss: -54,
    });
  });

  it('reports a profit factor of null (infinite) when no trade lost', () => {
    const stats = tradeStatistics([trade(100, 4), trade(30, 4)]);
    expect(stats.profitFactor).toBeNull();
    expect(stats.averageLoss).toBeNull();
    expect(stats.largestLoss).toBeNull();
    expect(stats.winRate).toBe(1);
  });

  it('returns nulls, never NaN, without trades', () => {
    const stats = tradeStatistics([]);
    expect(stats).toMatchObject({ trades: 0, netPnl: 0, winRate: null, profitFactor: null, expectancy: null });
    expect(JSON.stringify(stats)).not.toMatch(/NaN|Infinity/);
  });

  it('classifies a trade whose gross gain is eaten by fees as a loss', () => {
    expect(tradeStatistics([trade(3, 4)])).toMatchObject({ winningTrades: 0, losingTrades: 1, largestLoss: -1 });
  });
});

describe('drawdownStatistics', () => {
  it('measures money, percent and the longest time underwater', () => {
    const curve = { time: [0, 1, 2, 3, 4, 5].map((i) => i * MINUTE), equity: [1000, 1100, 900, 1000, 1150, 1100] };
    expect(drawdownStatistics(curve, 1000)).toEqual({
      maxDrawdown: 200,
      maxDrawdownPct: 18.1818, // 200 / 1100
      maxDrawdownPeakTime: 1 * MINUTE,
      maxDrawdownTroughTime: 2 * MINUTE,
      maxDrawdownDurationMs: 3 * MINUTE, // from the 1100 peak until 1150 at minute 4
    });
  });

  it('counts a drawdown never recovered until the end of the curve', () => {
    const curve = { time: [0, 5, 9].map((i) => i * MINUTE), equity: [990, 900, 950] };
    const stats = drawdownStatistics(curve, 1000);
    expect(stats.maxDrawdown).toBe(100); // from the starting balance
    expect(stats.maxDrawdownPct).toBe(10);
    expect(stats.maxDrawdownPeakTime).toBe(0);
    expect(stats.maxDrawdownDurationMs).toBe(9 * MINUTE);
  });

  it('does not count time without data: a step longer than the idle limit is no time under water', () => {
    const YEAR = 365 * 86_400_000;
    const curve = {
      time: [0, 1, 2, 3 + (7 * YEAR) / MINUTE, 4 + (7 * YEAR) / MINUTE].map((i) => i * MINUTE),
      equity: [1000, 900, 920, 950, 1000],
    };
    // Minutes 0 -> 2 and 3 -> 4 under water; the seven years between count nothing.
    expect(drawdownStatistics(curve, 1000).maxDrawdownDurationMs).toBe(3 * MINUTE);
    expect(drawdownStatistics(curve, 1000, Number.POSITIVE_INFINITY).maxDrawdownDurationMs).toBe(4 * MINUTE + 7 * YEAR);
  });

  it('property: a gap longer than the limit adds nothing to the longest drawdown', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 1, max: 600 }), fc.integer({ min: 900, max: 1100 })), {
          minLength: 2,
          maxLength: 40,
        }),
        fc.nat(),
        (points, at) => {
          const k = 1 + (at % (points.length - 1));
          const times = (extra: number) => {
            let t = 0;
            return points.map(([step], i) => (t += i === 0 ? 0 : i === k ? extra : step * MINUTE));
          };
          const equity = points.map(([, e]) => e);
          const gapped = drawdownStatistics({ time: times(10 * 365 * 86_400_000), equity }, 1000);
          const collapsed = drawdownStatistics({ time: times(0), equity }, 1000);
          expect(gapped.maxDrawdownDurationMs).toBe(collapsed.maxDrawdownDurationMs);
        },
      ),
    );
  });

  it('property: a curve given in parts has the figures of the whole, and its deepest fall is the one a plain reading finds', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 0, max: 600 }), fc.integer({ min: -200, max: 2_000 })), {
          maxLength: 200,
        }),
        fc.array(fc.nat(), { maxLength: 6 }),
        fc.integer({ min: 0, max: 1_500 }),
        (points, cuts, start) => {
          let t = 0;
          const time = points.map(([step]) => (t += step * MINUTE));
          // Cents and fractions of them, as a run's equity holds.
          const equity = points.map(([, e]) => e + 0.25);
          const whole = drawdownStatistics({ time, equity }, start, 30 * MINUTE);
          const tracker = new DrawdownTracker(start, 30 * MINUTE);
          const edges = [...new Set([0, ...cuts.map((c) => c % (time.length + 1)), time.length])].sort((a, b) => a - b);
          for (let k = 1; k < edges.length; k++)
            tracker.add({ time: time.slice(edges[k - 1], edges[k]), equity: equity.slice(edges[k - 1], edges[k]) });
          expect(tracker.result()).toEqual(whole);
          // The deepest fall below the highest equity before it (the starting balance the first peak).
          let peak = start;
          let peakTime = time[0];
          let deepest = 0;
          let at: [number | undefined, number | undefined] = [undefined, undefined];
          equity.forEach((e, i) => {
            if (e >= peak) [peak, peakTime] = [e, time[i]];
            else if (peak - e > deepest) [deepest, at] = [peak - e, [peakTime, time[i]]];
          });
          expect(whole.maxDrawdown).toBe(cents(deepest));
          expect([whole.maxDrawdownPeakTime, whole.maxDrawdownTroughTime]).toEqual(deepest === 0 ? [null, null] : at);
        },
      ),
    );
  });

  it('is zero for a curve that only rises', () => {
    const stats = drawdownStatistics({ time: [0, 1, 2], equity: [1000, 1001, 1002] }, 1000);
    expect(stats).toEqual({
      maxDrawdown: 0,
      maxDrawdownPct: 0,
      maxDrawdownPeakTime: null,
      maxDrawdownTroughTime: null,
      maxDrawdownDurationMs: 0,
    });
  });
});

describe('endOfDayEquity', () => {
  /** The definition: each point's trading day named, a point of the same day as the last entry replacing its equity. */
  function pointByPoint(curve: { time: number[]; equity: number[] }, calendar: TradingCalendar) {
    const days: { day: string; equity: number }[] = [];
    for (let i = 0; i < curve.time.length; i++) {
      const day = calendar.dayOf(curve.time[i]!);
      const last = days[days.length - 1];
      if (last !== undefined && last.day === day) last.equity = curve.equity[i]!;
      else days.push({ day, equity: curve.equity[i]! });
    }
    return days;
  }

  it('property: the day runs equal the definition point by point, in one piece or in parts, times in any order', () => {
    const start = at('2025-03-05T20:00:00Z');
    // Steps of a minute to two days, now and then backwards, across the daylight-saving change of March 9.
    const step = fc.oneof(
      fc.integer({ min: 1, max: 90 }).map((m) => m * MINUTE),
      fc.integer({ min: 1, max: 48 }).map((h) => h * 60 * MINUTE),
      fc.integer({ min: -600, max: -1 }).map((m) => m * MINUTE),
    );
    fc.assert(
      fc.property(
        fc.array(fc.tuple(step, fc.integer({ min: 40_000, max: 60_000 })), { maxLength: 120 }),
        fc.array(fc.nat(), { maxLength: 4 }),
        fc.constantFrom('17:00', '00:00', '08:30'),
        (points, cuts, startsAt) => {
          const time: number[] = [];
          let t = start;
          for (const [dt] of points) time.push((t += dt));
          const curve = { time, equity: points.map(([, e]) => e) };
          const config = { timeZone: 'America/Chicago', startsAt };
          const expected = pointByPoint(curve, new TradingCalendar(config));
          expect(endOfDayEquity(curve, new TradingCalendar(config))).toEqual(expected);
          const ends = [...new Set(cuts.map((c) => c % (time.length + 1)))].sort((a, b) => a - b);
          const days: { day: string; equity: number }[] = [];
          const calendar = new TradingCalendar(config);
          let from = 0;
          for (const to of [...ends, time.length]) {
            addDayEnds(days, { time: time.slice(from, to), equity: curve.equity.slice(from, to) }, calendar);
            from = Math.max(from, to);
          }
          expect(days).toEqual(expected);
        },
      ),
      { numRuns: 400 },
    );
  });

  it("property: over the times of checked bars (a backtest's curve), the day ends searched for are those walked to", () => {
    const start = at('2025-03-05T20:00:00Z');
    // Bars a minute to two days apart, runs of them in one day, across the daylight-saving change; half
    // hours often, so that bars fall on the days' starts (17:00, 00:00 or 08:30 in Chicago) themselves.
    const step = fc.oneof(
      fc.integer({ min: 1, max: 5 }).map((m) => m * MINUTE),
      fc.integer({ min: 1, max: 96 }).map((h) => h * 30 * MINUTE),
    );
    fc.assert(
      fc.property(
        fc.array(fc.tuple(step, fc.integer({ min: 40_000, max: 60_000 })), { minLength: 1, maxLength: 300 }),
        fc.constantFrom('17:00', '00:00', '08:30'),
        fc.nat(),
        (points, startsAt, short) => {
          let t = start;
          const time = Float64Array.from(points, ([dt]) => (t += dt));
          const prices = Float64Array.from(points, ([, e]) => e);
          const bars = { time, open: prices, high: prices, low: prices, close: prices };
          // Checked as a run's statistics check them: its times are then known to go forward.
          validateReportInput(input({ bars, equity: { time, equity: prices } }));
          expect(isCheckedBarTimes(time)).toBe(true);
          const config = { timeZone: 'America/Chicago', startsAt };
          // A curve as long as its bars, and one cut short (a run that stopped early).
          for (const length of [points.length, 1 + (short % points.length)]) {
            const equity = prices.slice(0, length);
            const walked = endOfDayEquity({ time: Array.from(time), equity }, new TradingCalendar(config));
            expect(endOfDayEquity({ time, equity }, new TradingCalendar(config))).toEqual(walked);
          }
        },
      ),
      { numRuns: 1_000 },
    );
  });
});

describe('Sharpe and Sortino', () => {
  const returns = [0.01, -0.005, 0.02, 0];

  it('annualise mean over sample deviation and over downside deviation with sqrt(252)', () => {
    // mean 0.00625; sample sd sqrt(3.6875e-4 / 3); downside sqrt(0.005^2 / 4) = 0.0025.
    expect(sharpeRatio(returns)).toBeCloseTo(8.949, 3);
    expect(sortinoRatio(returns)).toBeCloseTo(39.6863, 4);
  });

  it('are null for constant returns, no losing day, or fewer than two days', () => {
    expect(sharpeRatio([0, 0, 0])).toBeNull();
    expect(sharpeRatio([0.001, 0.001, 0.001])).toBeNull();
    expect(sortinoRatio([0.01, 0.02])).toBeNull();
    expect(sharpeRatio([0.01])).toBeNull();
    expect(sortinoRatio([])).toBeNull();
  });

  it('come from end-of-trading-day equity in computeStatistics', () => {
    // Four trading days (winter, boundary 23:00 UTC) with closing equity giving the returns above;
    // intraday points before each close must not matter.
    const equity = {
      time: [
        at('2024-01-08T15:00:00Z'),
        at('2024-01-08T22:59:00Z'),
        at('2024-01-09T15:00:00Z'),
        at('2024-01-09T22:00:00Z'),
        at('2024-01-09T23:30:00Z'), // trading day Jan 10
        at('2024-01-11T20:00:00Z'),
      ],
      equity: [9000, 10_100, 12_000, 10_049.5, 10_250.49, 10_250.49],
    };
    const stats = computeStatistics(input({ startingBalance: 10_000, equity }));
    expect(stats.tradingDays).toBe(4);
    expect(stats.sharpe).toBeCloseTo(8.949, 3);
    expect(stats.sortino).toBeCloseTo(39.6863, 3);
  });

  it('are null when nothing traded', () => {
    const time = [at('2024-01-08T15:00:00Z'), at('2024-01-09T15:00:00Z'), at('2024-01-10T15:00:00Z')];
    const stats = computeStatistics(input({ equity: { time, equity: [50_000, 50_000, 50_000] } }));
    expect(stats.sharpe).toBeNull();
    expect(stats.sortino).toBeNull();
    expect(JSON.stringify(stats)).not.toMatch(/NaN|Infinity/);
  });
});

describe('exposure', () => {
  const time = Array.from({ length: 10 }, (_, i) => i * MINUTE);

  it('counts bars overlapped by an open position', () => {
    const trades = [
      trade(0, 0, { entryTime: 2 * MINUTE, exitTime: 5 * MINUTE }), // bars 2, 3, 4
      trade(0, 0, { entryTime: 3 * MINUTE, exitTime: 4 * MINUTE + 1 }), // inside the first
      trade(0, 0, { entryTime: 7 * MINUTE + 30_000, exitTime: 7 * MINUTE + 30_000 }), // bar 7 only
    ];
    expect(exposure({ time }, trades)).toBe(0.4);
  });

  it('is zero without trades and null without bars', () => {
    expect(exposure({ time }, [])).toBe(0);
    expect(exposure({ time: [] }, [])).toBeNull();
  });
});

describe('dailyStatistics', () => {
  it('splits days at 17:00 Chicago in winter (23:00 UTC) and summer (22:00 UTC)', () => {
    const trades = [
      trade(100, 4, { exitTime: at('2024-01-10T22:59:00Z') }), // 16:59 CST -> Jan 10
      trade(-50, 4, { exitTime: at('2024-01-10T23:00:00Z') }), // 17:00 CST -> Jan 11
      trade(20, 4, { exitTime: at('2024-07-10T21:59:00Z') }), // 16:59 CDT -> Jul 10
      trade(30, 4, { exitTime: at('2024-07-10T22:00:00Z'), size: 3 }), // 17:00 CDT -> Jul 11
    ];
    const days = dailyStatistics(input({ trades }));
    expect(days.map((d) => d.tradeDate)).toEqual([
      '2024-01-10T00:00:00Z',
      '2024-01-11T00:00:00Z',
      '2024-07-10T00:00:00Z',
      '2024-07-11T00:00:00Z',
    ]);
    expect(days.map((d) => d.balance)).toEqual([50_096, 50_042, 50_058, 50_084]);
    expect(days[3]).toEqual({
      tradeDay: '2024-07-11T00:00:00Z',
      balance: 50_084,
      products: [{ tradeDay: '2024-07-11T00:00:00Z', symbolId: 'F.US.EP', totalTradedContracts: 3 }],
      tradeDate: '2024-07-11T00:00:00Z',
      totalPnL: 30,
      totalTrades: 1,
      winningTrades: 1,
      losingTrades: 0,
      neutralTrades: 0,
      winRate: 1,
      totalFees: 4,
    });
  });

  it('follows the daylight-saving transitions of March and November', () => {
    const days = (isos: string[]) =>
      dailyStatistics(input({ trades: isos.map((iso) => trade(10, 0, { exitTime: at(iso) })) })).map((d) =>
        d.tradeDate.slice(0, 10),
      );
    // 2024-03-10: clocks go from CST to CDT at 02:00; Sunday's session opens 17:00 CDT = 22:00 UTC.
    expect(days(['2024-03-10T21:59:00Z'])).toEqual(['2024-03-10']);
    expect(days(['2024-03-10T22:00:00Z'])).toEqual(['2024-03-11']);
    // 2024-11-03: back to CST at 02:00; the session opens 17:00 CST = 23:00 UTC.
    expect(days(['2024-11-03T22:30:00Z'])).toEqual(['2024-11-03']);
    expect(days(['2024-11-03T23:00:00Z'])).toEqual(['2024-11-04']);
    // A Sunday in winter opens an hour later in UTC than a Sunday in summer.
    expect(days(['2024-01-07T22:00:00Z'])).toEqual(['2024-01-07']);
    expect(days(['2024-01-07T23:00:00Z'])).toEqual(['2024-01-08']);
  });

  it('takes the trading day as an hour in Chicago or as the engine TradingDayConfig, with the same records', () => {
    const trades = [
      trade(10, 0, { exitTime: at('2024-01-10T23:30:00Z') }),
      trade(10, 0, { exitTime: at('2024-01-11T00:30:00Z') }),
    ];
    const byHour = dailyStatistics(input({ trades, tradingDayStartHour: 18 }));
    expect(byHour.map((d) => d.tradeDate.slice(0, 10))).toEqual(['2024-01-10', '2024-01-11']);
    expect(tradingDayConfig({ tradingDayStartHour: 18 })).toEqual({ timeZone: 'America/Chicago', startsAt: '18:00' });
    expect(dailyStatistics(input({ trades, tradingDay: { timeZone: 'America/Chicago', startsAt: '18:00' } }))).toEqual(
      byHour,
    );
    // The default day starts at 17:00 Chicago: both trades close in the trading day of 11 January.
    expect(dailyStatistics(input({ trades })).map((d) => d.tradeDate.slice(0, 10))).toEqual(['2024-01-11']);
  });

  it('refuses an impossible start hour or time zone, naming it', () => {
    expect(() => computeStatistics(input({ tradingDayStartHour: 24 }))).toThrow(
      /tradingDayStartHour must be an integer from 0 to 23 \(24\)/,
    );
    expect(() => computeStatistics(input({ tradingDay: { timeZone: 'Mars/Olympus', startsAt: '17:00' } }))).toThrow(
      ReportInputError,
    );
  });

  it('produces records that parse with the gateway schemas of spec 2.16 and 2.17', () => {
    const trades = [
      trade(100, 4, { exitTime: at('2024-01-10T22:59:00Z') }),
      trade(-50, 4, { exitTime: at('2024-01-11T15:00:00Z') }),
    ];
    const stats = computeStatistics(input({ trades }));
    expect(z.array(DailyStatistics).parse(stats.daily)).toEqual(stats.daily);
    expect(z.array(DayStatistics).parse(stats.dayStats)).toEqual(stats.dayStats);
  });

  it('lists a day with bars and no trade, in the spec 2.17 shape too', () => {
    const stats = computeStatistics(input({ equity: { time: [at('2024-01-10T15:00:00Z')], equity: [50_000] } }));
    expect(stats.dayStats).toEqual([
      {
        tradeDate: '2024-01-10T00:00:00Z',
        totalPnL: 0,
        totalTrades: 0,
        winningTrades: 0,
        losingTrades: 0,
        neutralTrades: 0,
        winRate: 0,
        totalFees: 0,
      },
    ]);
  });
});

describe('properties', () => {
  const tradeArbitrary = fc.record({
    pnlCents: fc.integer({ min: -500_000, max: 500_000 }),
    feeCents: fc.integer({ min: 0, max: 1_000 }),
    size: fc.integer({ min: 1, max: 5 }),
    hold: fc.integer({ min: 0, max: 600 }),
  });

  it('trade net PnL sums to net PnL; drawdown within [0, peak]; win rate within [0, 1]', () => {
    fc.assert(
      fc.property(
        fc.array(tradeArbitrary, { maxLength: 60 }),
        fc.integer({ min: 100_000, max: 10_000_000 }),
        (generated, startingCents) => {
          const start = at('2024-01-08T14:00:00Z');
          const startingBalance = startingCents / 100;
          const trades: ClosedTrade[] = [];
          const time: number[] = [];
          const equity: number[] = [];
          let balance = startingBalance;
          let clock = start;
          for (const g of generated) {
            const entryTime = clock;
            clock += (g.hold + 1) * MINUTE;
            trades.push(trade(g.pnlCents / 100, g.feeCents / 100, { size: g.size, entryTime, exitTime: clock }));
            balance += (g.pnlCents - g.feeCents) / 100;
            time.push(clock);
            equity.push(balance);
          }
          const stats = computeStatistics(input({ startingBalance, trades, equity: { time, equity } }));

          let summed = 0;
          for (const t of trades) summed += t.pnl - t.fees;
          expect(stats.netPnl).toBe(cents(summed));
          expect(Math.abs(stats.grossPnl - stats.fees - stats.netPnl)).toBeLessThanOrEqual(0.010001);
          const dailyTotal = stats.daily.reduce((sum, d) => sum + d.totalPnL - d.totalFees, 0);
          expect(Math.abs(dailyTotal - stats.netPnl)).toBeLessThan(0.01 * (stats.daily.length + 1));

          expect(stats.maxDrawdown).toBeGreaterThanOrEqual(0);
          const peak = Math.max(startingBalance, ...equity);
          if (Math.min(startingBalance, ...equity) >= 0) expect(stats.maxDrawdown).toBeLessThanOrEqual(peak);
          expect(stats.maxDrawdownPct).toBeGreaterThanOrEqual(0);

          if (stats.winRate !== null) {
            expect(stats.winRate).toBeGreaterThanOrEqual(0);
            expect(stats.winRate).toBeLessThanOrEqual(1);
          }
          expect(stats.winningTrades + stats.losingTrades + stats.neutralTrades).toBe(trades.length);
          expect(JSON.stringify(stats)).not.toMatch(/NaN|Infinity/);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('is deterministic: the same input gives byte-identical statistics', () => {
    const trades = [trade(100.123, 4.2), trade(-50.5, 4.2, { exitTime: at('2024-01-10T23:00:00Z') })];
    const a = JSON.stringify(computeStatistics(input({ trades })));
    const b = JSON.stringify(computeStatistics(input({ trades: trades.map((t) => ({ ...t })) })));
    expect(a).toBe(b);
  });
});

describe('input validation', () => {
  it('names every problem of a malformed input at once', () => {
    const bad = input({
      startingBalance: Number.NaN,
      bars: { time: [2, 1], open: [1, 1], high: [1, 1], low: [1], close: [1, 1] },
      equity: { time: [0, 1, 2], equity: [1, 2] },
      trades: [trade(10, 1, { entryTime: 5, exitTime: 4, size: 0 })],
    });
    let caught: unknown;
    try {
      computeStatistics(bad);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ReportInputError);
    const problems = (caught as ReportInputError).problems;
    expect((caught as ReportInputError).code).toBe('REPORT_INPUT_INVALID');
    expect(problems).toEqual([
      'startingBalance is not a finite number (NaN)',
      'bars.time[1] = 1 is not after bars.time[0] = 2 (oldest first, increasing)',
      'bars.low has 1 values, expected 2',
      'equity.equity has 2 values, expected 3',
      'trades[0].size must be a positive integer (0)',
      'trades[0] exits (4) before it enters (5)',
    ]);
  });
});

describe('exposure from trade spans', () => {
  it('counts the bars in the union of the spans, in any order, as a per-bar coverage count does', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 200 }).chain((count) =>
          fc.tuple(
            fc.constant(count),
            fc.array(fc.tuple(fc.integer({ min: 0, max: count - 1 }), fc.integer({ min: 0, max: count - 1 })), {
              maxLength: 30,
            }),
          ),
        ),
        ([count, pairs]) => {
          const spans = pairs.map(([a, b]) => [Math.min(a, b), Math.max(a, b)] as const);
          const covered = new Uint8Array(count);
          const union = new SpanUnion();
          const ordered = new SpanUnion();
          for (const [first, last] of spans) {
            covered.fill(1, first, last + 1);
            union.add(first, last);
            // After each span, the union so far is exactly the bars covered so far.
            expect(union.covered).toBe(covered.reduce((n, c) => n + c, 0));
          }
          for (const [first, last] of [...spans].sort((x, y) => x[0] - y[0])) ordered.add(first, last);
          expect(ordered.covered).toBe(union.covered);
          expect(exposureOf(count, union.covered)).toBe(ratio(union.covered / count));
        },
      ),
    );
  });
});
