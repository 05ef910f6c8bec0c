/**
 * Parameter sweeps: every combination of a grid of strategy parameters, run on worker threads (one
 * backtest per job, the history shared with the workers through SharedArrayBuffers, not copied), ranked by
 * a chosen statistic. An optional walk-forward split runs the grid on the first part of the history
 * (in-sample) and the same parameter sets on the rest (out-of-sample), so over-fitting shows.
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { Statistics } from '../../report/types.ts';
import type { BacktestConfig } from './config.ts';
import { executeBacktest, type History } from './backtest.ts';
import type { BarColumns } from '../../engine/types.ts';
import { sliceByIndex } from './sources/columns.ts';

export const METRICS = ['netPnl', 'returnPct', 'sharpe', 'sortino', 'profitFactor', 'expectancy', 'winRate', 'maxDrawdown', 'trades'] as const;
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
  /** Why the run did not happen (parameters the strategy's schema refused). */
  readonly error?: string;
}

export interface Job {
  readonly index: number;
  readonly params: Readonly<Record<string, unknown>>;
  readonly sample: 'all' | 'in' | 'out';
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

export function summarize(statistics: Statistics, passed: boolean, violations: number, orderListHash: string): RunSummary {
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

/** Run one job in this thread. */
export async function runJob(context: SweepContext, job: Job): Promise<JobResult> {
  const history = context.samples[job.sample];
  if (history === undefined) return { ...job, error: `no ${job.sample} sample` };
  const config: BacktestConfig = { ...context.config, strategy: { ...context.config.strategy, params: { ...context.config.strategy.params, ...job.params } } };
  try {
    const outcome = await executeBacktest(config, context.name, { history });
    if (outcome.result.failure !== undefined) throw outcome.result.failure;
    const r = outcome.result;
    return { ...job, summary: summarize(outcome.statistics, r.passed, r.violations.length, r.orderListHash) };
  } catch (error) {
    if (error instanceof Error && (error as { code?: string }).code === 'STRATEGY_PARAMS') return { ...job, error: error.message };
    throw error;
  }
}

export interface SweepOptions {
  /**
   * Parallel lanes: this thread and `workers - 1` worker threads (default: one lane per core); 1 runs
   * everything in this thread.
   */
  readonly workers?: number;
  readonly onResult?: (result: JobResult, done: number, total: number) => void;
}

/** What a sweep worker receives: the context (history in shared memory), the jobs and the shared claim counter. */
export interface SweepWorkerData {
  readonly context: SweepContext;
  readonly jobs: readonly Job[];
  /** Int32 index of the next job to run; every lane claims jobs from it with Atomics.add. */
  readonly claim: SharedArrayBuffer;
}

/**
 * Run jobs in this thread and on worker threads; results in job order.
 *
 * This thread is one of the lanes: it is warm (its modules loaded and compiled), while a fresh worker
 * spends ~0.5 s CPU loading tsx and the modules and runs its first backtests slower until compiled; on a
 * 2-core machine one worker plus this thread took 10.1 s CPU for the bench's 16-run grid against 12.8 s
 * for two workers (sequential: 8.9-9.2 s). Every lane claims the next job from a shared counter, so no
 * lane waits for another to hand it work.
 */
export async function runSweep(context: SweepContext, jobs: readonly Job[], options: SweepOptions = {}): Promise<JobResult[]> {
  const workers = Math.max(1, Math.min(options.workers ?? availableParallelism(), jobs.length));
  const results: JobResult[] = new Array(jobs.length);
  let done = 0;
  const finish = (result: JobResult) => {
    results[jobs.findIndex((j) => j.index === result.index && j.sample === result.sample)] = result;
    done++;
    options.onResult?.(result, done, jobs.length);
  };
  if (workers === 1) {
    for (const job of jobs) finish(await runJob(context, job));
    return results;
  }
  const shared: SweepContext = {
    ...context,
    samples: Object.fromEntries(
      Object.entries(context.samples).map(([k, h]) => [k, h === undefined ? undefined : { ...h, bars: h.bars.time.buffer instanceof SharedArrayBuffer ? h.bars : shareColumns(h.bars) }]),
    ) as SweepContext['samples'],
  };
  const claim = new SharedArrayBuffer(4);
  const next = new Int32Array(claim);
  const workerData: SweepWorkerData = { context: shared, jobs, claim };
  const pool: Worker[] = [];
  const running = Promise.all(
    Array.from({ length: workers - 1 }, () =>
      new Promise<void>((resolve, reject) => {
        const worker = new Worker(new URL(WORKER_ENTRY, import.meta.url), { workerData });
        pool.push(worker);
        worker.on('message', (message: { result?: JobResult; error?: string; done?: true }) => {
          if (message.error !== undefined) {
            reject(new SweepError(message.error));
            return;
          }
          if (message.result !== undefined) finish(message.result);
          if (message.done === true) resolve();
        });
        worker.on('error', reject);
      }),
    ),
  );
  const local = (async () => {
    for (let k = Atomics.add(next, 0, 1); k < jobs.length; k = Atomics.add(next, 0, 1)) {
      finish(await runJob(context, jobs[k]!));
      // Let the workers' results in between two runs of this thread.
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
  })();
  try {
    await Promise.all([running, local]);
  } catch (error) {
    // One failed run fails the sweep: no lane claims another job, and the workers stop.
    Atomics.store(next, 0, jobs.length);
    await Promise.allSettled([local]);
    throw error;
  } finally {
    await Promise.all(pool.map((w) => w.terminate()));
  }
  return results;
}

/**
 * Compiled (dist/), the worker is plain JavaScript; run from the sources, its .mjs entry registers tsx
 * first (Node 20 ignores `--import tsx` in a worker's execArgv).
 */
const WORKER_ENTRY = import.meta.url.endsWith('.ts') ? './optimize-worker.mjs' : './optimize-worker.js';

export class SweepError extends Error {
  override readonly name = 'SweepError';
  readonly code = 'SWEEP_FAILED';
}

