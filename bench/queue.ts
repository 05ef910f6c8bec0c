/**
 * Figure 13: a sweep on the queue (BullMQ on a real redis-server) against the same sweep in one thread.
 * `tickline worker --concurrency P` processes are started and warmed on a small sweep first (untimed);
 * timed is enqueuing the measured sweep until its last result is read. The in-process sweep (runSweep in
 * this thread, warm) is timed before and after the queued ones; the faster counts. Every queued sweep must give the
 * in-process sweep's results exactly (statistics and order list hash of every run).
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { Queue } from 'bullmq';
import { BacktestConfig } from '../src/adapters/backtest/backtest-config.ts';
import { gridCombinations, runSweep, type Job } from '../src/optimize/grid-sweep.ts';
import { collectResults, connectQueue, enqueueSweep, QUEUE_NAME } from '../src/optimize/queue.ts';
import { sweepHistory, sweepSamples } from '../src/optimize/sweep-history.ts';
import type { SweepView } from '../src/optimize/queue-spec.ts';
import { sweepSpecOf } from '../src/cli/sweep-queue.ts';
import { startRedisServer } from '../test/integration/distributed/redis-server.ts';

const CLI = path.resolve(import.meta.dirname, '../test/integration/distributed/cli.ts');
const REPO = path.resolve(import.meta.dirname, '..');
const GRID = { fast: [3, 4, 5, 6, 7, 8, 9, 10], slow: [15, 20, 25, 30, 35, 40, 45, 50] };
const VIEW: SweepView = {
  metric: 'sharpe',
  top: 20,
  grid: GRID,
  heatmap: ['fast', 'slow'],
  data: 'bench',
  enqueuedAt: 0,
};

export interface QueueRun {
  readonly processes: number;
  readonly wallMs: number;
  readonly jobsPerSecond: number;
  /** Jobs per second over the single process's. */
  readonly speedup: number;
}

export interface QueueBench {
  readonly jobs: number;
  readonly bars: number;
  readonly inProcessMs: number;
  readonly runs: readonly QueueRun[];
  /** (one worker process's wall time - the in-process sweep's) / jobs. */
  readonly overheadPerJobMs: number;
}

function sweepConfig(seed: number, sessions: number): BacktestConfig {
  return BacktestConfig.parse({
    strategy: { name: 'sma-cross', params: {} },
    contract: 'ESZ5',
    data: { source: 'synthetic', seed, sessions },
  });
}

async function sweepOf(seed: number, sessions: number, grid: Record<string, unknown[]>) {
  const config = sweepConfig(seed, sessions);
  const history = await sweepHistory(config);
  const jobs = gridCombinations(grid).map((params, index): Job => ({ index, params, sample: 'all' }));
  return { config, history, jobs, spec: (await sweepSpecOf(config, 'bench-queue', history, null, jobs)).spec };
}

async function queuedSweep(url: string, spec: Awaited<ReturnType<typeof sweepOf>>['spec']) {
  const redis = await connectQueue(url);
  const queue = new Queue(QUEUE_NAME, { connection: redis });
  try {
    const started = performance.now();
    const { id } = await enqueueSweep(redis, queue, spec, VIEW);
    const results = await collectResults(redis, url, id, spec, () => undefined);
    return { ms: performance.now() - started, results };
  } finally {
    await queue.close();
    redis.disconnect();
  }
}

/** `tickline worker` with `processes` worker processes, resolved once all wait for jobs. */
async function startWorkers(url: string, processes: number): Promise<() => Promise<void>> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', CLI, 'worker', '--queue', url, '--concurrency', String(processes), '--lock-seconds', '600'],
    { cwd: REPO, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const deadline = Date.now() + 120_000;
  while (stderr.split('waiting for sweep jobs').length - 1 < processes) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`workers did not start: ${stderr}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return async () => {
    child.kill('SIGINT');
    await exited;
  };
}

export async function measureQueueSweep(options: {
  readonly processes: readonly number[];
  readonly sessions: number;
}): Promise<QueueBench> {
  const measured = await sweepOf(21, options.sessions, GRID);
  const context = { config: measured.config, name: 'bench-queue', samples: sweepSamples(measured.history, null) };
  // Warm (the whole sweep once), then timed before and after the queued sweeps: the faster of the two.
  const local = await runSweep(context, measured.jobs, { workers: 1 });
  const timeInProcess = async () => {
    const started = performance.now();
    await runSweep(context, measured.jobs, { workers: 1 });
    return performance.now() - started;
  };
  let inProcessMs = await timeInProcess();
  const redis = await startRedisServer();
  const runs: QueueRun[] = [];
  try {
    for (const [k, processes] of options.processes.entries()) {
      const url = redis.url(k + 1);
      const stop = await startWorkers(url, processes);
      try {
        // Every process loads its modules and compiles the engine on a small sweep of other data first.
        await queuedSweep(
          url,
          (await sweepOf(22, options.sessions, { fast: [5, 6, 7, 8].slice(0, Math.max(2, processes)), slow: [20, 30] }))
            .spec,
        );
        const { ms, results } = await queuedSweep(url, measured.spec);
        if (!isDeepStrictEqual(results, local))
          throw new Error(`the sweep on ${processes} worker process(es) differs from the in-process sweep`);
        const jobsPerSecond = (measured.jobs.length / ms) * 1000;
        runs.push({
          processes,
          wallMs: ms,
          jobsPerSecond,
          speedup: runs.length === 0 ? 1 : jobsPerSecond / runs[0]!.jobsPerSecond,
        });
      } finally {
        await stop();
      }
    }
  } finally {
    await redis.stop();
  }
  inProcessMs = Math.min(inProcessMs, await timeInProcess());
  const single = runs.find((r) => r.processes === 1);
  return {
    jobs: measured.jobs.length,
    bars: measured.history.bars.time.length,
    inProcessMs,
    runs,
    overheadPerJobMs: single === undefined ? Number.NaN : (single.wallMs - inProcessMs) / measured.jobs.length,
  };
}
