/**
 * A small, deterministic run to render: a seeded random walk of minute bars with alternating long and
 * short trades, an equity curve marked to market at each close, and one violation.
 */
import { evaluationRulesSchema } from '../../../src/engine/evaluation-rules.ts';
import { evaluateRun } from '../../../src/report/evaluation-report.ts';
import type { ClosedTrade, DecisionRecord, ReportInput } from '../../../src/report/report-types.ts';
import { seededRandom } from '../../../src/engine/random.ts';

/** A report input whose trades are an array (the fixtures build them as one). */
export type ArrayReportInput = ReportInput & { readonly trades: readonly ClosedTrade[] };

export function generatedRun(barCount = 3000, seed = 7): ArrayReportInput {
  const random = seededRandom(seed);
  const tickValue = 12.5;
  const feePerSide = 2.1;
  const start = Date.parse('2024-03-07T14:30:00Z');
  const time = new Float64Array(barCount);
  const open = new Float64Array(barCount);
  const high = new Float64Array(barCount);
  const low = new Float64Array(barCount);
  const close = new Float64Array(barCount);
  let price = 20_000; // ticks: 5000.00 on a 0.25 grid
  for (let i = 0; i < barCount; i++) {
    time[i] = start + i * 60_000;
    open[i] = price;
    const move = Math.round((random() - 0.5) * 8);
    price += move;
    close[i] = price;
    high[i] = Math.max(open[i]!, close[i]!) + Math.floor(random() * 3);
    low[i] = Math.min(open[i]!, close[i]!) - Math.floor(random() * 3);
  }

  const trades: ClosedTrade[] = [];
  const equity = new Float64Array(barCount);
  let balance = 50_000;
  let position: { side: 'buy' | 'sell'; entryIndex: number; entryPrice: number } | undefined;
  for (let i = 0; i < barCount; i++) {
    if (position === undefined && i % 97 === 5 && i + 1 < barCount) {
      position = { side: trades.length % 2 === 0 ? 'buy' : 'sell', entryIndex: i + 1, entryPrice: open[i + 1]! };
    } else if (position !== undefined && i - position.entryIndex >= 40 && i + 1 < barCount) {
      const exitPrice = open[i + 1]!;
      const direction = position.side === 'buy' ? 1 : -1;
      const pnl = (exitPrice - position.entryPrice) * direction * tickValue;
      trades.push({
        contractId: 'CON.F.US.EP.H24',
        side: position.side,
        size: 1,
        entryTime: time[position.entryIndex]!,
        exitTime: time[i + 1]!,
        entryPrice: position.entryPrice,
        exitPrice,
        pnl,
        fees: 2 * feePerSide,
      });
      balance += pnl - 2 * feePerSide;
      position = undefined;
    }
    const open_ =
      position !== undefined && position.entryIndex <= i
        ? (close[i]! - position.entryPrice) * (position.side === 'buy' ? 1 : -1) * tickValue
        : 0;
    equity[i] = balance + open_;
  }

  return {
    title: 'Generated run <ES> & friends',
    contract: { id: 'CON.F.US.EP.H24', name: 'ESH4', symbolId: 'F.US.EP', tickSize: 0.25, tickValue },
    startingBalance: 50_000,
    bars: { time, open, high, low, close },
    trades,
    equity: { time, equity },
    violations: [
      {
        time: time[Math.floor(barCount / 2)]!,
        type: 6,
        rule: 'dailyLossLimit',
        duration: 2,
        balance: 48_900,
        message: 'equity 48,900.00 at the bar low crossed the daily floor 49,000.00',
      },
    ],
    closestApproach: [
      { rule: 'dailyLossLimit', minRoom: -100, time: time[Math.floor(barCount / 2)]! },
      { rule: 'maximumLossLimit', minRoom: 1_400, time: time[Math.floor(barCount / 2)]! },
    ],
    passed: false,
    verdict: 'daily loss limit crossed once (temporary)',
    orderListHash: 'sha256:0123456789abcdef',
    config: { strategy: 'sma-cross', fast: 10, slow: 30, slippageTicks: 1, sameBarRule: 'stop-first' },
  };
}

/** Two days of one-minute bars without data between them: the chart must not draw the empty hours. */
export const GAP_MS = 2 * 86_400_000;

/**
 * The generated run with what a backtest adds: a gap in the data (after `gapAfter` bars), the strategy's
 * overlays (two over the price, one in its own pane), the guard's decisions (two reasons refused), a change
 * of contract month and an evaluation with its Monte Carlo.
 */
export function annotatedRun(barCount = 3000, gapAfter = Math.floor(barCount / 3)): ArrayReportInput {
  const base = generatedRun(barCount);
  const time = Float64Array.from(base.bars.time, (t, i) => (i >= gapAfter ? t + GAP_MS : t));
  const at = (t: number) => (t >= (base.bars.time[gapAfter] as number) ? t + GAP_MS : t);
  const trades = base.trades.map((t) => ({ ...t, entryTime: at(t.entryTime), exitTime: at(t.exitTime) }));
  const close = base.bars.close;
  const average = (period: number) =>
    Float64Array.from(close, (_, i) => {
      if (i + 1 < period) return Number.NaN;
      let sum = 0;
      for (let k = i + 1 - period; k <= i; k++) sum += close[k] as number;
      return sum / period;
    });
  const rejected = (i: number, code: 'MAX_POSITION_SIZE' | 'TICK_MISALIGNED'): DecisionRecord => ({
    time: time[i]!,
    strategyId: 'generated',
    intent: { kind: 'place', contractId: base.contract.id, side: 'buy', size: 1, order: { type: 'market' } },
    result: { accepted: false, code, message: `${code} at bar ${i}` },
    position: 1,
    equity: 50_000,
  });
  const accepted = (i: number): DecisionRecord => ({
    time: time[i]!,
    strategyId: 'generated',
    intent: { kind: 'target', contractId: base.contract.id, size: 1 },
    result: { accepted: true },
  });
  const equity = { time, equity: base.equity.equity };
  const fills = trades.flatMap((t) => [
    { time: t.entryTime, side: t.side, size: t.size },
    { time: t.exitTime, side: t.side === 'buy' ? ('sell' as const) : ('buy' as const), size: t.size },
  ]);
  const rules = evaluationRulesSchema.parse({
    name: 'Generated 50K',
    startingBalance: 50_000,
    profitTarget: 500,
    maximumLossLimit: { amount: 1_500, variant: 'trailingIntraday' },
  });
  return {
    ...base,
    bars: { ...base.bars, time },
    trades,
    equity,
    violations: base.violations.map((v) => ({ ...v, time: at(v.time) })),
    closestApproach: base.closestApproach.map((a) => ({ ...a, time: a.time === null ? null : at(a.time) })),
    overlays: [
      { name: 'SMA 10', values: average(10) },
      { name: 'SMA 30', values: average(30) },
      {
        name: 'Momentum',
        pane: 'own',
        values: Float64Array.from(close, (c, i) => (i < 5 ? Number.NaN : c - (close[i - 5] as number))),
      },
    ],
    decisions: [
      accepted(20),
      rejected(40, 'TICK_MISALIGNED'),
      rejected(41, 'TICK_MISALIGNED'),
      accepted(60),
      rejected(barCount - 50, 'MAX_POSITION_SIZE'),
    ],
    rolls: [{ time: time[gapAfter]!, contract: 'ESM4' }],
    strategy: { name: 'generated', params: { fast: 10, slow: 30 } },
    data: 'generated random walk with a gap',
    timeframe: '1m',
    evaluation: evaluateRun(
      rules,
      { bars: { ...base.bars, time }, equity, fills, tickValue: base.contract.tickValue, startingBalance: 50_000 },
      { paths: 500, seed: 5 },
    ),
  };
}

/** Six years (in ms, about) between the two eras of `twoEraRun`. */
export const ERA_GAP_MS = 6 * 365 * 86_400_000;

/**
 * Two eras of one contract's prices years apart, as spliced real data has (ES at 1,800 in 2013 and 3,200 in
 * 2020): the bars after `gapAfter` start six years later and 9,000 ticks higher, the run records the gap,
 * and a moving average over the whole history mixes both eras right after it.
 */
export function twoEraRun(barCount = 3000, gapAfter = Math.floor(barCount / 2)): ReportInput {
  const base = generatedRun(barCount);
  const shift = (column: ArrayLike<number>, by: number) =>
    Float64Array.from(column, (v, i) => (i >= gapAfter ? v + by : v));
  const time = shift(base.bars.time, ERA_GAP_MS);
  const bars = {
    time,
    open: shift(base.bars.open, 9_000),
    high: shift(base.bars.high, 9_000),
    low: shift(base.bars.low, 9_000),
    close: shift(base.bars.close, 9_000),
  };
  const close = bars.close;
  const average = Float64Array.from(close, (_, i) => {
    if (i < 19) return Number.NaN;
    let sum = 0;
    for (let k = i - 19; k <= i; k++) sum += close[k] as number;
    return sum / 20;
  });
  const at = (t: number) => (t >= (base.bars.time[gapAfter] as number) ? t + ERA_GAP_MS : t);
  return {
    ...base,
    bars,
    trades: [],
    equity: { time, equity: new Float64Array(barCount).fill(base.startingBalance) },
    violations: base.violations.map((v) => ({ ...v, time: at(v.time) })),
    closestApproach: base.closestApproach.map((a) => ({ ...a, time: a.time === null ? null : at(a.time) })),
    gaps: [{ from: (time[gapAfter - 1] as number) + 60_000, to: time[gapAfter] as number, flattened: 0 }],
    overlays: [{ name: 'SMA 20', values: average }],
  };
}
