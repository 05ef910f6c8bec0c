/**
 * The queue side of `tickline optimize --queue` and `tickline sweep`: a sweep's definition from the loaded
 * config and history, enqueued on Redis, followed with a progress bar until every job has a result, and
 * shown and written as a local sweep is.
 */
import path from 'node:path';
import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { SingleBar } from 'cli-progress';
import type { History } from '../adapters/backtest/definition-run.ts';
import type { BacktestConfig } from '../adapters/backtest/backtest-config.ts';
import { metricScore, type Grid, type Job, type JobResult, type Metric } from '../optimize/grid-sweep.ts';
import { pointParams, search, SEARCH_BATCH } from '../optimize/search.ts';
import { isStrategyFile } from '../strategies/index.ts';
import { bundleStrategy } from '../strategies/compile.ts';
import {
  barsHash,
  configToWire,
  contentHash,
  type StoredSweep,
  type SweepSpec,
  type SweepView,
} from '../optimize/queue-spec.ts';
import { collectResults, connectQueue, enqueueSweep, QUEUE_NAME } from '../optimize/queue.ts';
import { ExitCode } from './exit.ts';
import { sweepExitCode, writeSweepOutputs, type SweepOutputs } from './optimize-report.ts';

/** A sweep as the queue stores it, and the bundle of its strategy file (null for a built-in strategy). */
export interface QueuedSweep {
  readonly spec: SweepSpec;
  readonly bundle: string | null;
}

/** The sweep as the queue stores it: the bars by location and content hash, a strategy file as a bundle by hash. */
export async function sweepSpecOf(
  config: BacktestConfig,
  name: string,
  history: History,
  walkForward: number | null,
  jobs: readonly Job[],
): Promise<QueuedSweep> {
  const strategy = config.strategy.name;
  const code = isStrategyFile(strategy) ? await bundleStrategy(strategy) : null;
  const spec: SweepSpec = {
    name,
    config: configToWire(config),
    walkForward,
    barsHash: barsHash(history.bars),
    strategyHash: code === null ? null : contentHash(code),
    jobs: [],
  };
  return { spec: withJobs(spec, jobs), bundle: code };
}

/** The same sweep with other jobs (a search's next batch: the bars and the strategy are hashed once). */
function withJobs(spec: SweepSpec, jobs: readonly Job[]): SweepSpec {
  return { ...spec, jobs: jobs.map((job) => ({ index: job.index, params: { ...job.params }, sample: job.sample })) };
}

/** A connection to the queue's Redis and its BullMQ queue, closed together. */
export async function openQueue(url: string): Promise<{ redis: Redis; queue: Queue; close(): Promise<void> }> {
  const redis = await connectQueue(url);
  const queue = new Queue(QUEUE_NAME, { connection: redis });
  return {
    redis,
    queue,
    async close() {
      await queue.close();
      redis.disconnect();
    },
  };
}

export interface QueueSweep {
  readonly url: string;
  readonly spec: SweepSpec;
  readonly bundle: string | null;
  readonly view: SweepView;
  readonly retries: number;
  readonly detach: boolean;
  readonly outputs: Omit<SweepOutputs, 'results' | 'ranOn'>;
}

export async function sweepOnQueue(sweep: QueueSweep): Promise<number> {
  const { redis, queue, close } = await openQueue(sweep.url);
  try {
    const enqueued = await enqueueSweep(redis, queue, sweep.spec, sweep.view, {
      retries: sweep.retries,
      bundle: sweep.bundle,
    });
    const again = enqueued.added < enqueued.total ? ` (${enqueued.total - enqueued.added} already queued or done)` : '';
    if (sweep.detach) {
      process.stdout.write(`${enqueued.id}\n`);
      process.stderr.write(
        `sweep ${enqueued.id}: ${enqueued.added} of ${enqueued.total} runs enqueued${again}; see \`tickline sweep status ${enqueued.id} --queue ...\`\n`,
      );
      return ExitCode.Ok;
    }
    process.stderr.write(`sweep ${enqueued.id}: ${enqueued.total} runs on the queue${again}\n`);
    const started = Date.now();
    const results = await followSweep(redis, sweep.url, enqueued.id, sweep.spec);
    const seconds = (Date.now() - started) / 1000;
    process.stdout.write(
      await writeSweepOutputs({
        ...sweep.outputs,
        results,
        ranOn: `${results.length} runs on the queue, sweep ${enqueued.id}, ${seconds.toFixed(1)} s`,
      }),
    );
    return sweepExitCode(results);
  } finally {
    await close();
  }
}

export interface QueueTpeSearch {
  readonly url: string;
  readonly config: BacktestConfig;
  readonly name: string;
  readonly history: History;
  readonly grid: Grid;
  readonly trials: number;
  readonly seed: number;
  /** In-sample fraction of a walk-forward split, or null: the search ranks on the first part only. */
  readonly walkForward: number | null;
  readonly view: SweepView;
  readonly retries: number;
  readonly outputs: Omit<SweepOutputs, 'results' | 'ranOn'>;
}

/**
 * A TPE search whose runs go to the queue's workers while this process chooses each next batch from the
 * results so far (so it cannot be detached). Each batch is a sweep of its own on the queue; the batches,
 * the points and the results are those of the same search run in one process.
 */
export async function tpeSearchOnQueue(run: QueueTpeSearch): Promise<number> {
  const { redis, queue, close } = await openQueue(run.url);
  try {
    const sample = run.walkForward === null ? ('all' as const) : ('in' as const);
    const results: JobResult[] = [];
    let sweeps = 0;
    const started = Date.now();
    // Bundled and hashed once: every batch runs the strategy as it was when the search started, on the same bars.
    const { spec: base, bundle } = await sweepSpecOf(run.config, run.name, run.history, run.walkForward, []);
    const runJobs = async (jobs: Job[]): Promise<JobResult[]> => {
      const spec = withJobs(base, jobs);
      const enqueued = await enqueueSweep(redis, queue, spec, run.view, { retries: run.retries, bundle });
      sweeps++;
      process.stderr.write(
        `sweep ${enqueued.id}: ${enqueued.total} runs of the tpe search on the queue (${results.length} done)\n`,
      );
      return followSweep(redis, run.url, enqueued.id, spec);
    };
    await search(
      run.grid,
      { method: 'tpe', trials: run.trials, seed: run.seed, batch: SEARCH_BATCH },
      async (points) => {
        const batch = await runJobs(
          points.map((point, k) => ({ index: results.length + k, params: pointParams(run.grid, point), sample })),
        );
        results.push(...batch);
        return batch.map((r) => metricScore(r, run.outputs.metric));
      },
    );
    if (run.walkForward !== null)
      results.push(
        ...(await runJobs(results.map((r) => ({ index: r.index, params: r.params, sample: 'out' as const })))),
      );
    const seconds = (Date.now() - started) / 1000;
    process.stdout.write(
      await writeSweepOutputs({
        ...run.outputs,
        results,
        ranOn: `${results.length} runs on the queue in ${sweeps} sweeps, ${seconds.toFixed(1)} s`,
      }),
    );
    return sweepExitCode(results);
  } finally {
    await close();
  }
}

/** Wait for every result, with a progress bar on a terminal. */
export async function followSweep(redis: Redis, url: string, id: string, spec: SweepSpec): Promise<JobResult[]> {
  const progress = process.stderr.isTTY
    ? new SingleBar({ format: 'sweep [{bar}] {value}/{total} runs', hideCursor: true, stream: process.stderr })
    : null;
  progress?.start(spec.jobs.length, 0);
  try {
    return await collectResults(redis, url, id, spec, (done, total) => {
      progress?.setTotal(total);
      progress?.update(done);
    });
  } finally {
    progress?.stop();
  }
}

/** The outputs of a stored sweep, shown as the enqueuing process would have shown them. */
export function storedOutputs(
  stored: StoredSweep,
  outDir: string | undefined,
): Omit<SweepOutputs, 'results' | 'ranOn'> {
  const { spec, view } = stored;
  const configOut = typeof spec.config.out === 'string' ? spec.config.out : undefined;
  const heatmap = view.heatmap as [string, string] | [string];
  return {
    name: spec.name,
    outDir: outDir ?? configOut ?? path.join('out', spec.name),
    metric: view.metric as Metric,
    grid: view.grid,
    search: view.search ?? { method: 'grid' },
    walkForward: spec.walkForward ?? undefined,
    top: view.top,
    axes: heatmap,
    data: view.data,
    combinations: new Set(spec.jobs.map((job) => job.index)).size,
  };
}
