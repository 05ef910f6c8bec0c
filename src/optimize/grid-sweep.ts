/**
 * Parameter sweeps: every combination of a grid of strategy parameters, run on worker threads (one
 * backtest per job, the history shared with the workers through SharedArrayBuffers, not copied), ranked by
 * a chosen statistic. An optional walk-forward split runs the grid on the first part of the history
 * (in-sample) and the same parameter sets on the rest (out-of-sample), so over-fitting shows.
 */
import { randomUUID } from 'node:crypto';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { runStatistics, type RunStatistics } from '../report/statistics.ts';
import { METRICS, type BacktestConfig } from '../adapters/backtest/backtest-config.ts';
import { runDefinition, type History } from '../adapters/backtest/definition-run.ts';
import type { BarColumns } from '../engine/types.ts';
import { sliceByIndex } from '../data/columns.ts';
import { SweepPool } from './sweep-pool.ts';
import { isStrategyFile } from '../strategies/index.ts';
import { TicklineError } from '../engine/errors.ts';
import { BlockStock } from '../engine/block-stock.ts';

export { METRICS };
export type Metric = (typeof METRICS)[number];
/** Metrics where smaller is better. */
const ASCENDING: ReadonlySet<Metric> = new Set(['maxDrawdown']);

export type Grid = Readonly<Record<string, readonly unknown[]>>;

export interface RunSummary {
  readonly netPnl: number;
  readonly returnPct: number | null;
  readonly sharpe: number | null;
  readonly sortino: number | null;
  readonly profitFactor: number | null;
  readonly expectancy: number | null;
  readonly winRate: number | null;
  readonly maxDrawdown: number;
  readonly trades: number;
  readonly passed: boolean;
  readonly violations: number;
  readonly orderListHash: string;
}

export interface JobResult {
  readonly index: number;
  readonly params: Readonly<Record<string, unknown>>;
  readonly sample: 'all' | 'in' | 'out';
  readonly summary?: RunSummary;
  /** Why the run did not happen (parameters the strategy's schema refused), or why it stopped (`failedAfter`). */
  readonly error?: string;
  /**
   * Set when the strategy failed during the run (a throw or an errored stream): the bars that ran before it
   * stopped. The row has no summary (a partial run is not ranked); the other runs of the sweep go on.
   */
  readonly failedAfter?: number;
}

/** The samples of a sweep's history a job can run on. */
export const SAMPLES = ['all', 'in', 'out'] as const;

export interface Job {
  readonly index: number;
  readonly params: Readonly<Record<string, unknown>>;
  readonly sample: (typeof SAMPLES)[number];
}

/** Every combination of the grid, in a stable order (the first key varies slowest). */
export function gridCombinations(grid: Grid): Record<string, unknown>[] {
  let combos: Record<string, unknown>[] = [{}];
  for (const [key, values] of Object.entries(grid)) {
    const next: Record<string, unknown>[] = [];
    for (const combo of combos) for (const value of values) next.push({ ...combo, [key]: value });
    combos = next;
  }
  return combos;
}

export function summarize(
  statistics: RunStatistics,
  passed: boolean,
  violations: number,
  orderListHash: string,
): RunSummary {
  return {
    netPnl: statistics.netPnl,
    returnPct: statistics.returnPct,
    sharpe: statistics.sharpe,
    sortino: statistics.sortino,
    profitFactor: statistics.profitFactor,
    expectancy: statistics.expectancy,
    winRate: statistics.winRate,
    maxDrawdown: statistics.maxDrawdown,
    trades: statistics.trades,
    passed,
    violations,
    orderListHash,
  };
}

/** A run's `metric` as a score where larger is better; -Infinity for a run without a value. */
export function metricScore(result: JobResult, metric: Metric): number {
  const value = result.summary?.[metric] ?? null;
  if (value === null || Number.isNaN(value)) return -Infinity;
  return ASCENDING.has(metric) ? -value : value;
}

/** Best first by `metric`; runs without a value (or that failed) last; ties keep grid order. */
export function rank(results: readonly JobResult[], metric: Metric): JobResult[] {
  const sign = ASCENDING.has(metric) ? 1 : -1;
  return [...results].sort((a, b) => {
    const x = a.summary?.[metric] ?? null;
    const y = b.summary?.[metric] ?? null;
    if (x === null || y === null) return x === y ? a.index - b.index : x === null ? 1 : -1;
    return x === y ? a.index - b.index : sign * (x - y);
  });
}

/** The history split at `fraction` of its bars: [in-sample, out-of-sample]. */
export function splitHistory(bars: BarColumns, fraction: number): [BarColumns, BarColumns] {
  const cut = Math.round(bars.time.length * fraction);
  return [sliceByIndex(bars, 0, cut), sliceByIndex(bars, cut, bars.time.length)];
}

/** Copy columns into shared memory so workers read the same bars without a copy each. */
export function shareColumns(bars: BarColumns): BarColumns {
  const n = bars.time.length;
  const shared = new SharedArrayBuffer(n * 6 * 8);
  const out = allocateColumnsOn(shared, n);
  out.time.set(bars.time);
  out.open.set(bars.open);
  out.high.set(bars.high);
  out.low.set(bars.low);
  out.close.set(bars.close);
  out.volume.set(bars.volume);
  return out;
}

function allocateColumnsOn(buffer: SharedArrayBuffer, n: number): BarColumns {
  const column = (k: number) => new Float64Array(buffer, k * n * 8, n);
  return { time: column(0), open: column(1), high: column(2), low: column(3), close: column(4), volume: column(5) };
}

/** What a worker (or the in-process runner) needs for its jobs. */
export interface SweepContext {
  readonly config: BacktestConfig;
  readonly name: string;
  readonly samples: Readonly<Record<'all' | 'in' | 'out', History | undefined>>;
}

/**
 * The column blocks and equity points of this thread's runs: a job keeps only figures, so each lends the
 * next its arrays (block-stock.ts says why).
 */
const threadBlocks = new BlockStock();

/** Run one job in this thread. */
export async function runJob(context: SweepContext, job: Job): Promise<JobResult> {
  const history = context.samples[job.sample];
  if (history === undefined) return { ...job, error: `no ${job.sample} sample` };
  const config: BacktestConfig = {
    ...context.config,
    strategy: { ...context.config.strategy, params: { ...context.config.strategy.params, ...job.params } },
  };
  // A lease of its own: jobs of this thread awaited side by side never share an array.
  const blocks = threadBlocks.lease();
  try {
    // A sweep's run writes no report: no plots, no decision records, only the statistics it is ranked by.
    const run = await runDefinition(config, context.name, {
      history,
      overlays: false,
      decisions: false,
      blocks,
    });
    const r = run.result;
    if (r.failure !== undefined) return { ...job, error: r.failure.message.split('\n')[0]!, failedAfter: r.bars };
    return {
      ...job,
      summary: summarize(
        runStatistics(run.report, config.gaps.longerThanHours * 3_600_000),
        r.passed,
        r.violations.length,
        r.orderListHash,
      ),
    };
  } catch (error) {
    if (error instanceof Error && (error as { code?: string }).code === 'STRATEGY_PARAMS')
      return { ...job, error: error.message };
    throw error;
  } finally {
    blocks.end();
  }
}

export interface SweepOptions {
  /**
   * Parallel lanes: pool threads, while this thread hands out the jobs (default: one lane per core); 1 runs
   * everything in this thread.
   */
  readonly workers?: number;
  /**
   * A warm pool to run on (a search or a walk-forward keeps one for all its sweeps); without it the sweep
   * starts its own and closes it at the end.
   */
  readonly pool?: SweepPool;
  /** Use the pool whatever the size of the sweep (tests); by default small sweeps run in this thread. */
  readonly forcePool?: boolean;
  readonly onResult?: (result: JobResult, done: number, total: number) => void;
  /** A pool thread's warm-up before its first job (sweep-worker.ts), once per thread. */
  readonly onWarmUp?: (warmUp: WarmUpReport) => void;
}

/** One job as a pool worker receives it: the context (its bars in shared memory) travels with it. */
export interface SweepTask {
  readonly context: SweepContext;
  readonly job: Job;
  /** A key for each sample's history, the same for every task over the same shared columns (`historyKeys`). */
  readonly histories?: HistoryKeys;
}

export type HistoryKeys = Readonly<Partial<Record<Job['sample'], string>>>;

const historyKeyOf = new WeakMap<BarColumns, string>();

/**
 * A key for each sample's history in shared memory: the same columns, the same key. A task arrives in a
 * pool thread as a copy, its history a new object each time; by the key the thread keeps the first one it
 * received, and what is worked out once per history (the report's check of its columns, 20 ms on 1 M bars)
 * is not done again for every run.
 */
export function historyKeys(context: SweepContext): HistoryKeys {
  const keys: Partial<Record<Job['sample'], string>> = {};
  for (const sample of SAMPLES) {
    const bars = context.samples[sample]?.bars;
    if (bars === undefined) continue;
    let key = historyKeyOf.get(bars);
    if (key === undefined) {
      key = randomUUID();
      historyKeyOf.set(bars, key);
    }
    keys[sample] = key;
  }
  return keys;
}

/** What a pool thread did before its first job: runs on the first bars of that job's history. */
export interface WarmUpReport {
  readonly runs: number;
  readonly bars: number;
  /** The warm-up's run that threw or failed, and why (the job's own run goes over the same bars). */
  readonly failure?: string;
}

/** A pool worker's answer to a task: the job's result, and on a thread's first task its warm-up. */
export interface SweepAnswer {
  readonly result: JobResult;
  readonly warmUp?: WarmUpReport;
}

/**
 * Below this many bars run in total (jobs x bars), a sweep runs in this thread: starting a pool thread and
 * warming its compiled code costs ~0.2-0.5 s of CPU a thread, about what the engine needs for 1-2 M bars.
 */
export const INLINE_BAR_RUNS = 2_000_000;

/** Jobs queued ahead per pool thread, so a thread never waits for this one to hand it its next job. */
const QUEUE_DEPTH = 2;

/** Whether a sweep is cheap enough that pool threads would cost more than they save. */
export function runsInline(
  context: SweepContext,
  jobs: readonly Job[],
  workers: number,
  pool: SweepPool | undefined,
): boolean {
  if (workers <= 1 || jobs.length <= 1) return true;
  const bars = Math.max(0, ...Object.values(context.samples).map((h) => h?.bars.time.length ?? 0));
  // A started pool has paid its start-up; its threads' first runs are still slower until compiled.
  return jobs.length * bars < (pool?.started === true ? INLINE_BAR_RUNS / 4 : INLINE_BAR_RUNS);
}

/** The context with every sample's bars in shared memory (bars already shared are kept as they are). */
export function sharedContext(context: SweepContext): SweepContext {
  return {
    ...context,
    samples: Object.fromEntries(
      Object.entries(context.samples).map(([k, h]) => [
        k,
        h === undefined
          ? undefined
          : { ...h, bars: h.bars.time.buffer instanceof SharedArrayBuffer ? h.bars : shareColumns(h.bars) },
      ]),
    ) as SweepContext['samples'],
  };
}

/**
 * Run jobs on a warm pool of worker threads, one lane per thread; results in job order. A small sweep
 * runs in this thread instead (`runsInline`).
 *
 * This thread only hands out jobs and gathers results: as a lane of its own it answered its pool threads
 * only between two of its runs, and on 1 M bars a grid ran 1.6x slower that way than on two pool threads
 * (17.6 s against 11.1 s for 64 runs). Each thread has QUEUE_DEPTH jobs handed to it ahead, so it never
 * waits for its next one.
 */
export async function runSweep(
  context: SweepContext,
  jobs: readonly Job[],
  options: SweepOptions = {},
): Promise<JobResult[]> {
  const workers = Math.max(1, Math.min(options.workers ?? availableParallelism(), jobs.length));
  const results: JobResult[] = new Array(jobs.length);
  let done = 0;
  const finish = (k: number, result: JobResult) => {
    results[k] = result;
    done++;
    options.onResult?.(result, done, jobs.length);
  };
  if (options.forcePool !== true && runsInline(context, jobs, workers, options.pool)) {
    for (let k = 0; k < jobs.length; k++) finish(k, await runJob(context, jobs[k]!));
    return results;
  }
  const pool = options.pool ?? new SweepPool(workers, context.config.strategy.name);
  pool.checkStrategy(context.config.strategy.name);
  const compiled = await compiledStrategyOf(context, pool);
  const shared = sharedContext(compiled === undefined ? context : withStrategy(context, compiled));
  const histories = historyKeys(shared);
  let next = 0;
  let failed = false;
  const claim = (): number | undefined => (failed || next >= jobs.length ? undefined : next++);
  const poolLane = async () => {
    for (let k = claim(); k !== undefined; k = claim()) {
      try {
        const answer = await pool.run<SweepAnswer>({ context: shared, job: jobs[k]!, histories } satisfies SweepTask);
        if (answer.warmUp !== undefined) options.onWarmUp?.(answer.warmUp);
        finish(k, answer.result);
      } catch (error) {
        throw new SweepError(error instanceof Error ? (error.stack ?? error.message) : String(error));
      }
    }
  };
  // One failed run fails the sweep: no lane claims another job, and the sweep waits for those running.
  const stopOnFailure = (lane: Promise<void>) =>
    lane.catch((error: unknown) => {
      failed = true;
      throw error;
    });
  const lanes = Array.from({ length: pool.threads * QUEUE_DEPTH }, () => stopOnFailure(poolLane()));
  try {
    const settled = await Promise.allSettled(lanes);
    const rejected = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (rejected !== undefined) throw rejected.reason;
  } finally {
    if (options.pool === undefined) await pool.close();
  }
  return results;
}

/**
 * A TypeScript strategy file compiled once for all the pool's workers (this thread loaded it already);
 * undefined for a built-in or a JavaScript file.
 */
async function compiledStrategyOf(context: SweepContext, pool: SweepPool): Promise<string | undefined> {
  const name = context.config.strategy.name;
  if (!isStrategyFile(name) || !/\.[cm]?ts$/.test(name)) return undefined;
  return (await pool.compiledStrategy(path.resolve(name))).file;
}

function withStrategy(context: SweepContext, file: string): SweepContext {
  return { ...context, config: { ...context.config, strategy: { ...context.config.strategy, name: file } } };
}

export class SweepError extends TicklineError {
  override readonly name = 'SweepError';
  readonly kind = 'runtime';
  readonly code = 'SWEEP_FAILED';
}
