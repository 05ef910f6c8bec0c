/**
 * A rolling (or anchored) walk-forward: the history cut into `folds` consecutive test windows after a
 * first training span; for each fold the parameters are chosen by a search on its training window only,
 * then run on its test window. The folds' out-of-sample results are stitched into one equity curve (each
 * fold continues from where the previous one ended) with its statistics: what the strategy would have
 * earned re-optimized on a schedule, which one in-sample/out-of-sample split does not show.
 */
import type { BarColumns } from '../engine/types.ts';
import { parseParams, warmupBars } from '../engine/strategy.ts';
import { computeStatistics } from '../report/statistics.ts';
import type { ClosedTrade, EquityCurve, ReportInput, Statistics } from '../report/report-types.ts';
import type { History } from '../adapters/backtest/definition-run.ts';
import { executeBacktest } from '../adapters/backtest/execute.ts';
import { rank, shareColumns, type Grid, type JobResult, type Metric, type SweepContext } from './grid-sweep.ts';
import { runSearch, type SearchMethod } from './search.ts';
import { sliceByIndex } from '../data/columns.ts';
import { SweepPool } from './sweep-pool.ts';
import { loadStrategy } from '../strategies/index.ts';
import { TicklineError } from '../engine/errors.ts';

export const WINDOW_MODES = ['rolling', 'anchored'] as const;
export type WindowMode = (typeof WINDOW_MODES)[number];

/** Bar index ranges [start, end) of one fold. */
export interface Fold {
  readonly index: number;
  readonly train: readonly [number, number];
  readonly test: readonly [number, number];
}

export interface FoldPlan {
  readonly folds: number;
  /** The training window as a number of test windows (rolling: its length; anchored: its first length). */
  readonly trainWindows: number;
  readonly mode: WindowMode;
}

export class WalkForwardError extends TicklineError {
  override readonly name = 'WalkForwardError';
  // The folds asked for (--folds or optimize.walkForward) do not fit the history: nothing was run.
  readonly kind = 'usage';
  readonly code = 'WALK_FORWARD';
}

/**
 * The folds over `bars` bars: the history in `folds + trainWindows` equal windows (the last test window
 * takes the remainder); fold i tests window `trainWindows + i` and trains on the `trainWindows` windows
 * before it (rolling) or on everything before it (anchored). A fold's training window always ends where
 * its test window starts.
 */
export function walkForwardFolds(bars: number, plan: FoldPlan): Fold[] {
  if (!Number.isInteger(plan.folds) || plan.folds < 1)
    throw new WalkForwardError(`folds must be a positive whole number (${plan.folds})`);
  if (!Number.isInteger(plan.trainWindows) || plan.trainWindows < 1)
    throw new WalkForwardError(
      `the training window must be a positive whole number of test windows (${plan.trainWindows})`,
    );
  const window = Math.floor(bars / (plan.folds + plan.trainWindows));
  if (window < 1)
    throw new WalkForwardError(
      `${bars} bars are too few for ${plan.folds} folds with training windows of ${plan.trainWindows}`,
    );
  return Array.from({ length: plan.folds }, (_, i) => {
    const testStart = (plan.trainWindows + i) * window;
    const testEnd = i === plan.folds - 1 ? bars : testStart + window;
    const trainStart = plan.mode === 'anchored' ? 0 : i * window;
    return { index: i, train: [trainStart, testStart], test: [testStart, testEnd] } as const;
  });
}

export interface WalkForwardOptions {
  readonly plan: FoldPlan;
  readonly method: SearchMethod;
  readonly trials: number;
  readonly seed: number;
  readonly metric: Metric;
  readonly workers: number;
  /** A warm pool to run the searches on; otherwise the walk-forward starts its own. */
  readonly pool?: SweepPool;
  readonly onResult?: () => void;
}

export interface FoldResult {
  readonly fold: Fold;
  /** Every training run of the fold's search, best first. */
  readonly training: readonly JobResult[];
  /** The parameters chosen on the training window; undefined when no run there had a value. */
  readonly chosen?: Readonly<Record<string, unknown>>;
  /** The chosen parameters' statistics on the test window. */
  readonly test?: Statistics;
  readonly orderListHash?: string;
}

export interface WalkForwardResult {
  readonly folds: readonly FoldResult[];
  /** The test windows' equity one after another, each fold starting where the previous ended. */
  readonly equity: EquityCurve;
  readonly trades: readonly ClosedTrade[];
  /** Statistics of the stitched out-of-sample run. */
  readonly statistics: Statistics;
}

/** Run the walk-forward of `history`; the searches share one warm pool. */
export async function runWalkForward(
  context: Omit<SweepContext, 'samples'>,
  history: History,
  grid: Grid,
  options: WalkForwardOptions,
): Promise<WalkForwardResult> {
  const folds = walkForwardFolds(history.bars.time.length, options.plan);
  // Into shared memory once: every fold's training window is then a view of it, never copied.
  if (options.workers > 1 && !(history.bars.time.buffer instanceof SharedArrayBuffer))
    history = { ...history, bars: shareColumns(history.bars) };
  const ownPool =
    options.pool === undefined && options.workers > 1
      ? new SweepPool(options.workers, context.config.strategy.name)
      : undefined;
  const pool = options.pool ?? ownPool;
  const results: FoldResult[] = [];
  const tests: ReportInput[] = [];
  try {
    for (const fold of folds) {
      const train: History = {
        ...history,
        bars: sliceByIndex(history.bars, fold.train[0], fold.train[1]),
        description: `${history.description} (fold ${fold.index + 1} training)`,
      };
      const training = rank(
        await runSearch(
          { ...context, samples: { all: undefined, in: train, out: undefined } },
          grid,
          {
            method: options.method,
            trials: options.trials,
            seed: options.seed + fold.index,
            metric: options.metric,
            sample: 'in',
          },
          {
            workers: options.workers,
            ...(pool ? { pool } : {}),
            ...(options.onResult ? { onResult: options.onResult } : {}),
          },
        ),
        options.metric,
      );
      const best = training[0];
      if (best?.summary === undefined || best.summary[options.metric] === null) {
        results.push({ fold, training });
        continue;
      }
      const outcome = await testRun(context, history, fold, best.params);
      tests.push(outcome.report);
      results.push({
        fold,
        training,
        chosen: best.params,
        test: outcome.statistics,
        orderListHash: outcome.orderListHash,
      });
    }
  } finally {
    await ownPool?.close();
  }
  if (tests.length === 0)
    throw new WalkForwardError(`no fold's training window gave a run with a ${options.metric}: nothing to test`);
  const stitched = stitch(tests);
  return { folds: results, equity: stitched.equity, trades: stitched.trades, statistics: computeStatistics(stitched) };
}

/**
 * The chosen parameters on the fold's test window. The strategy's warm-up bars before the window are
 * part of the run (its indicators start warm, as they would have in trading), but the runner places no
 * order during them, and the curve and trades kept start at the window.
 */
async function testRun(
  context: Omit<SweepContext, 'samples'>,
  history: History,
  fold: Fold,
  params: Readonly<Record<string, unknown>>,
): Promise<{ report: ReportInput; statistics: Statistics; orderListHash: string }> {
  const config = {
    ...context.config,
    strategy: { ...context.config.strategy, params: { ...context.config.strategy.params, ...params } },
  };
  const strategy = await loadStrategy(config.strategy.name);
  const warmup = warmupBars(strategy, parseParams(strategy, config.strategy.params));
  const from = Math.max(0, fold.test[0] - warmup);
  const bars = sliceByIndex(history.bars, from, fold.test[1]);
  const outcome = await executeBacktest(config, context.name, {
    strategy,
    history: { ...history, bars, description: `${history.description} (fold ${fold.index + 1} test)` },
    overlays: false,
  });
  if (outcome.result.failure !== undefined) throw outcome.result.failure;
  const report = trimToWindow(outcome.report, history.bars.time[fold.test[0]]!);
  return { report, statistics: computeStatistics(report), orderListHash: outcome.result.orderListHash };
}

/** The report from `start` on: the warm-up bars and their (flat) equity left out. */
function trimToWindow(report: ReportInput, start: number): ReportInput {
  const barFrom = firstAtOrAfter(report.bars.time, start);
  const equityFrom = firstAtOrAfter(report.equity.time, start);
  return {
    ...report,
    bars: sliceByIndex(report.bars as BarColumns, barFrom, report.bars.time.length),
    equity: {
      time: Array.from(report.equity.time).slice(equityFrom),
      equity: Array.from(report.equity.equity).slice(equityFrom),
    },
    trades: [...report.trades].filter((t) => t.entryTime >= start),
  };
}

function firstAtOrAfter(times: ArrayLike<number>, value: number): number {
  let k = 0;
  while (k < times.length && times[k]! < value) k++;
  return k;
}

/** The folds' test reports as one run: bars and trades one after another, equity continued. */
function stitch(reports: readonly ReportInput[]): ReportInput & { readonly trades: readonly ClosedTrade[] } {
  const first = reports[0]!;
  const columns = ['time', 'open', 'high', 'low', 'close', 'volume'] as const;
  const total = reports.reduce((n, r) => n + r.bars.time.length, 0);
  const bars = Object.fromEntries(columns.map((c) => [c, new Float64Array(total)])) as unknown as BarColumns;
  const time: number[] = [];
  const equity: number[] = [];
  let offset = 0;
  let carried = 0;
  for (const report of reports) {
    const source = report.bars as BarColumns;
    for (const c of columns) bars[c].set(source[c], offset);
    offset += source.time.length;
    const n = report.equity.time.length;
    for (let k = 0; k < n; k++) {
      time.push(report.equity.time[k]!);
      equity.push(report.equity.equity[k]! + carried);
    }
    if (n > 0) carried += report.equity.equity[n - 1]! - report.startingBalance;
  }
  return {
    ...first,
    bars,
    equity: { time, equity },
    trades: reports.flatMap((r) => [...r.trades]),
    violations: reports.flatMap((r) => r.violations),
    decisions: [],
    overlays: [],
  };
}
