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
import { sliceByIndex, type BarColumns } from './sources/columns.ts';

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
    const r = outcome.result;
    return { ...job, summary: summarize(outcome.statistics, r.passed, r.violations.length, r.orderListHash) };
  } catch (error) {
    if (error instanceof Error && (error as { code?: string }).code === 'STRATEGY_PARAMS') return { ...job, error: error.message };
    throw error;
  }
}

export interface SweepOptions {
  /** Worker threads; 1 runs everything in this thread. */
  readonly workers?: number;
  readonly onResult?: (result: JobResult, done: number, total: number) => void;
}

/** Run jobs on a pool of worker threads (or in this thread when `workers` is 1); results in job order. */
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
  const queue = [...jobs];
  const shared: SweepContext = {
    ...context,
    samples: Object.fromEntries(
      Object.entries(context.samples).map(([k, h]) => [k, h === undefined ? undefined : { ...h, bars: h.bars.time.buffer instanceof SharedArrayBuffer ? h.bars : shareColumns(h.bars) }]),
    ) as SweepContext['samples'],
  };
  const pool: Worker[] = [];
  // This thread is one of the lanes: it is warm and needs no start-up, so only workers - 1 threads start.
  const threads = workers - 1;
  const running = Promise.all(
    Array.from({ length: threads }, () =>
      new Promise<void>((resolve, reject) => {
        const worker = new Worker(new URL('./optimize-worker.mjs', import.meta.url), { workerData: shared });
        pool.push(worker);
        let inFlight = 0;
        const next = () => {
          const job = queue.shift();
          if (job === undefined) {
            if (inFlight === 0) void worker.terminate().then(() => resolve(), reject);
            return;
          }
          inFlight++;
          worker.postMessage(job);
        };
        worker.on('message', (message: { result?: JobResult; error?: string; ready?: true }) => {
          if (message.error !== undefined) {
            void worker.terminate();
            reject(new SweepError(message.error));
            return;
          }
          if (message.result !== undefined) {
            inFlight--;
            finish(message.result);
            next();
            return;
          }
          // Two jobs queued at the worker, so it never waits while this thread runs a job of its own.
          next();
          next();
        });
        worker.on('error', reject);
      }),
    ),
  );
  const local = (async () => {
    for (;;) {
      const job = queue.shift();
      if (job === undefined) return;
      finish(await runJob(context, job));
      // Let the workers' results in (and their next jobs out) between two local runs.
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
  })();
  try {
    await Promise.all([running, local]);
  } catch (error) {
    // One failed run fails the sweep: stop the other workers instead of letting them finish the queue.
    queue.length = 0;
    await Promise.all(pool.map((w) => w.terminate()));
    throw error;
  }
  return results;
}

export class SweepError extends Error {
  override readonly name = 'SweepError';
  readonly code = 'SWEEP_FAILED';
}

