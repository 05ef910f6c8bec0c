/**
 * The benchmark's reference strategy (issue 7) run two ways on the same bars, so the two can be timed and
 * proven equal: through the project's real engine (`runBacktest`: replay, the `sma-cross` strategy's
 * indicators and crossover, the runner, the risk guard, the fill model, accounting) and as a plain loop
 * over typed arrays with running sums. Both yield the list of fills and the PnL; `compareRuns` names the
 * first difference. The unit test (test/unit/bench) runs the same functions on fewer bars.
 */
import { AccountConfig } from '../src/adapters/backtest/backtest-config.ts';
import { resolveContract, type BacktestContract } from '../src/adapters/backtest/contract.ts';
import { OrderListHasher } from '../src/adapters/backtest/order-list-hash.ts';
import { runBacktest, type BacktestRunResult } from '../src/adapters/backtest/run.ts';
import { ignoreElements } from 'rxjs';
import { z } from 'zod';
import { crossover, sma } from '../src/engine/indicators.ts';
import { defineStrategy, type StrategyModule } from '../src/engine/strategy.ts';
import { timeframe } from '../src/engine/timeframe.ts';
import type { BarColumns, Fill } from '../src/engine/types.ts';
import { generateBars } from '../src/market/synthetic.ts';
import smaCross from '../src/strategies/sma-cross.ts';

export const MINUTE = timeframe('minute');

/** ES on a 0.25 tick ($12.50 a tick), from the simulator's catalogue. */
export const CONTRACT: BacktestContract = resolveContract('ESZ5');

export interface ReferenceParams {
  readonly fast: number;
  readonly slow: number;
}

export const REFERENCE_PARAMS: ReferenceParams = { fast: 10, slow: 30 };

/** Seed and start of the benchmark's market: fixed, so every run measures the same bars and fills. */
export const MARKET = { seed: 20_261_122, startPrice: 5000, start: Date.UTC(2024, 0, 1) } as const;

/** `count` one-minute bars of the simulator's seeded synthetic market on the contract's tick grid. */
export function referenceBars(count: number, seed: number = MARKET.seed): BarColumns {
  return generateBars({
    seed,
    tickSize: CONTRACT.grid.tickSize,
    startPrice: MARKET.startPrice,
    start: MARKET.start,
    count,
    stepMs: 60_000,
  });
}

/** A fill reduced to what both paths can state: bar time, signed size, price in ticks. */
export interface FillList {
  readonly time: number[];
  /** Signed contracts: + buy, - sell. */
  readonly size: number[];
  readonly price: number[];
}

export interface PathResult {
  readonly fills: FillList;
  /** Start of the bar each order was decided at, in placement order (the loop's orders are its fills, and one more when an order waits at the end). */
  readonly decidedAt: number[];
  /** Signed size of an order decided at the last bar and not yet filled (0: none). */
  readonly workingAtEnd: number;
  /** The order list hash: the engine's, or the loop's own orders hashed (`withOrderListHash`). */
  readonly orderListHash?: string;
  /** Money, realized over the run (no fees in the reference). */
  readonly realizedPnl: number;
  /** Balance plus the open position marked at the last close. */
  readonly endingEquity: number;
}

const STARTING_BALANCE = 50_000;

/** The reference's backtest settings: market fills at the next open, no slippage, no fees, no account limits. */
export function fullPathBacktest(bars: BarColumns, params: ReferenceParams = REFERENCE_PARAMS): BacktestRunResult {
  return referenceRun(bars, smaCross, params);
}

/**
 * The reference strategy's indicators and crossover with every signal dropped: the same engine and bars,
 * no order. Its time against the full path's is what the orders cost, against the plain loop's what the
 * engine's bar path costs.
 */
const quietCross = defineStrategy({
  name: 'sma-cross-quiet',
  params: z.strictObject({ fast: z.number().int().positive(), slow: z.number().int().positive(), size: z.number() }),
  warmup: (p) => p.slow,
  run: ({ bars, params }) => bars().pipe(crossover(sma(params.fast), sma(params.slow)), ignoreElements()),
});

/** `fullPathBacktest` with a strategy that computes the same signals and places no order. */
export function quietPathBacktest(bars: BarColumns, params: ReferenceParams = REFERENCE_PARAMS): BacktestRunResult {
  return referenceRun(bars, quietCross, params);
}

function referenceRun(bars: BarColumns, strategy: StrategyModule, params: ReferenceParams): BacktestRunResult {
  return runBacktest({
    contract: CONTRACT,
    bars,
    dataTimeframe: MINUTE,
    timeframe: MINUTE,
    strategy,
    params: { fast: params.fast, slow: params.slow, size: 1 },
    account: AccountConfig.parse({ startingBalance: STARTING_BALANCE }),
    risk: {},
    fills: { slippageTicks: 0, feePerContractPerSide: 0 },
    recordEquity: false,
  });
}

export function fullPathResult(run: BacktestRunResult): PathResult {
  const last = run.orders.at(-1);
  return {
    fills: fillList(run.fills),
    realizedPnl: run.realizedPnl,
    endingEquity: run.endingEquity,
    decidedAt: run.orders.map((o) => o.placedAt),
    workingAtEnd: last === undefined || last.state !== 'working' ? 0 : last.side === 'buy' ? last.size : -last.size,
    orderListHash: run.orderListHash,
  };
}

/**
 * The loop's orders as the engine's venue would list them (`sma-cross-<n>` market orders, each filled whole
 * at the next open), hashed: the order list hash computed without the engine. Untimed: for the checks.
 */
export function withOrderListHash(path: PathResult, contractId: string = CONTRACT.id): PathResult {
  const hasher = new OrderListHasher();
  const { fills, decidedAt } = path;
  for (let k = 0; k < decidedAt.length; k++) {
    const filled = k < fills.time.length;
    const signed = filled ? fills.size[k]! : path.workingAtEnd;
    const spec = { type: 'market' } as const;
    hasher.add({
      id: `sma-cross-${k + 1}`,
      contractId,
      side: signed > 0 ? 'buy' : 'sell',
      size: Math.abs(signed),
      type: 'market',
      limitPrice: null,
      stopPrice: null,
      trailPrice: null,
      role: 'entry',
      parentId: null,
      placedAt: decidedAt[k]!,
      state: filled ? 'filled' : 'working',
      fillPrice: filled ? fills.price[k]! : null,
      fillTime: filled ? fills.time[k]! : null,
      filledSize: filled ? Math.abs(signed) : 0,
      modifies: 0,
      spec,
    });
  }
  return { ...path, orderListHash: hasher.digest() };
}

function fillList(fills: readonly Fill[]): FillList {
  const out: FillList = { time: [], size: [], price: [] };
  for (const fill of fills) {
    out.time.push(fill.time);
    out.size.push(fill.side === 'buy' ? fill.size : -fill.size);
    out.price.push(fill.price);
  }
  return out;
}

/**
 * The same strategy with nothing in between: running sums for both averages, the side as the sign of
 * fast - slow (a tie keeps it), a cross decided at bar i fills at bar i+1's open, average-price PnL in
 * the same arithmetic as the engine's accounting (so the numbers are identical, not merely close).
 */
export function plainLoop(
  bars: BarColumns,
  params: ReferenceParams = REFERENCE_PARAMS,
  tickValue: number = CONTRACT.grid.tickValue,
): PathResult {
  const { fast, slow } = params;
  const { time, open, close } = bars;
  const n = time.length;
  const fastWindow = new Float64Array(fast);
  const slowWindow = new Float64Array(slow);
  let fastSum = 0;
  let slowSum = 0;
  let fastSlot = 0;
  let slowSlot = 0;
  let side = 0;
  let position = 0;
  let average = NaN;
  let realized = 0;
  /** Signed size to buy at the next bar's open (0: nothing working). */
  let pending = 0;
  const fills: FillList = { time: [], size: [], price: [] };
  const decidedAt: number[] = [];
  for (let i = 0; i < n; i++) {
    if (pending !== 0) {
      const price = open[i]!;
      fills.time.push(time[i]!);
      fills.size.push(pending);
      fills.price.push(price);
      if (position === 0) {
        average = price;
      } else {
        const closing = Math.min(Math.abs(position), Math.abs(pending));
        const direction = Math.sign(position);
        realized += (price - average) * closing * direction * tickValue;
        average = position + pending === 0 ? NaN : price;
      }
      position += pending;
      pending = 0;
    }
    const value = close[i]!;
    // Same operation order as the engine's SmaKernel (sum - oldest + newest), so equal sums, equal sides.
    // During warm-up the windows still hold zeros, and sum - 0 + value is exactly sum + value.
    fastSum = fastSum - fastWindow[fastSlot]! + value;
    slowSum = slowSum - slowWindow[slowSlot]! + value;
    fastWindow[fastSlot] = value;
    slowWindow[slowSlot] = value;
    fastSlot = fastSlot + 1 === fast ? 0 : fastSlot + 1;
    slowSlot = slowSlot + 1 === slow ? 0 : slowSlot + 1;
    if (i < slow - 1) continue;
    const a = fastSum / fast;
    const b = slowSum / slow;
    const now = a > b ? 1 : a < b ? -1 : side;
    if (now !== side) {
      if (side !== 0) {
        pending = now - position;
        decidedAt.push(time[i]!);
      }
      side = now;
    }
  }
  const last = n === 0 ? NaN : close[n - 1]!;
  const unrealized = position === 0 ? 0 : (last - average) * position * tickValue;
  return {
    fills,
    realizedPnl: realized,
    endingEquity: STARTING_BALANCE + realized + unrealized,
    decidedAt,
    workingAtEnd: pending,
  };
}

/** The first difference between two runs, or undefined when they agree exactly. */
export function compareRuns(engine: PathResult, loop: PathResult): string | undefined {
  const a = engine.fills;
  const b = loop.fills;
  const n = Math.min(a.time.length, b.time.length);
  for (let k = 0; k < n; k++) {
    if (a.time[k] !== b.time[k] || a.size[k] !== b.size[k] || a.price[k] !== b.price[k]) {
      const show = (f: FillList) =>
        `${new Date(f.time[k]!).toISOString()} ${f.size[k]! > 0 ? '+' : ''}${f.size[k]} @ ${f.price[k]} ticks`;
      return `fill #${k + 1} differs: engine ${show(a)}, loop ${show(b)}`;
    }
  }
  if (a.time.length !== b.time.length) return `engine made ${a.time.length} fills, loop ${b.time.length}`;
  if (engine.realizedPnl !== loop.realizedPnl)
    return `realized PnL differs: engine ${engine.realizedPnl}, loop ${loop.realizedPnl}`;
  if (engine.endingEquity !== loop.endingEquity)
    return `ending equity differs: engine ${engine.endingEquity}, loop ${loop.endingEquity}`;
  if (
    engine.orderListHash !== undefined &&
    loop.orderListHash !== undefined &&
    engine.orderListHash !== loop.orderListHash
  )
    return `order list hash differs: engine ${engine.orderListHash}, loop ${loop.orderListHash}`;
  return undefined;
}

export class PathsDisagreeError extends Error {
  override readonly name = 'PathsDisagreeError';
  readonly code = 'BENCH_PATHS_DISAGREE';
}
