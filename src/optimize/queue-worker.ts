/**
 * A sweep worker on the queue: one BullMQ Worker running one job at a time (a backtest is CPU-bound, so a
 * machine runs one worker process per core). For each sweep it meets, it loads the bars itself from the
 * stored location and checks their hash against the sweep's, compiles the strategy bundle stored with the
 * sweep (after checking its hash) against its own install, and runs the same `runJob` as the in-process
 * sweep; a mismatch fails the sweep's jobs with the reason, without retries.
 */
import { UnrecoverableError, Worker, type Job as QueueJob } from 'bullmq';
import type { Redis } from 'ioredis';
import { compileBundle, type CompiledStrategy } from '../strategies/compile.ts';
import { runJob, type JobResult, type SweepContext } from './grid-sweep.ts';
import { sweepHistory, sweepSamples } from './sweep-history.ts';
import { barsHash, configFromWire, contentHash, type SweepSpec } from './queue-spec.ts';
import { cancelledKey, JobData, QUEUE_NAME, readSweep, storeResult, strategyKey } from './queue.ts';
import { TicklineError } from '../engine/errors.ts';

export class SweepDataMismatchError extends TicklineError {
  override readonly name = 'SweepDataMismatchError';
  readonly kind = 'runtime';
  readonly code = 'SWEEP_DATA_MISMATCH';
}

export interface SweepWorkerOptions {
  /** Shown in the queue as the job's `processedBy`. */
  readonly name: string;
  /**
   * How long a job's lock lasts. A backtest holds the thread, so the lock is not renewed while it runs: a
   * job longer than this is taken for stalled and given to another worker too (its result still counts once).
   */
  readonly lockMs?: number;
  /** A worker that died holding a job is noticed within about lockMs + this. */
  readonly stalledCheckMs?: number;
  readonly onJob?: (event: { readonly id: string; readonly result?: JobResult; readonly error?: string }) => void;
}

export const DEFAULT_LOCK_MS = 60_000;
/** Times a job may be found stalled (its worker gone) before it is failed. */
const MAX_STALLED = 3;
/** Sweeps whose bars a worker keeps loaded (a machine usually serves one sweep at a time). */
const KEPT_SWEEPS = 2;

export interface SweepWorker {
  close(): Promise<void>;
}

/** A sweep's context as this worker loaded it, or why it cannot run. */
type Prepared = { readonly context: SweepContext } | { readonly refusal: string };

export async function startSweepWorker(redis: Redis, options: SweepWorkerOptions): Promise<SweepWorker> {
  const prepared = new Map<string, Promise<Prepared>>();
  // Compiled strategies stay until the worker closes: a module, once imported, cannot be unloaded anyway.
  const compiled: CompiledStrategy[] = [];
  const prepare = (id: string): Promise<Prepared> => {
    let entry = prepared.get(id);
    if (entry === undefined) {
      entry = prepareSweep(redis, id, compiled);
      prepared.set(id, entry);
      for (const old of prepared.keys()) if (prepared.size > KEPT_SWEEPS && old !== id) prepared.delete(old);
    }
    return entry;
  };
  const worker = new Worker(
    QUEUE_NAME,
    async (job: QueueJob) => {
      const data = JobData.parse(job.data);
      const jid = job.id!;
      // A cancelled sweep's job leaves the queue without a result, so enqueuing the sweep again runs it.
      if ((await redis.exists(cancelledKey(data.sweepId))) === 1) return 'cancelled';
      const ready = await prepare(data.sweepId);
      if ('refusal' in ready) throw new UnrecoverableError(ready.refusal);
      const result = await runJob(ready.context, { index: data.index, params: data.params, sample: data.sample });
      await storeResult(redis, data.sweepId, jid, result);
      options.onJob?.({ id: jid, result });
      return result.error === undefined ? 'ok' : result.error;
    },
    {
      connection: redis,
      name: options.name,
      concurrency: 1,
      lockDuration: options.lockMs ?? DEFAULT_LOCK_MS,
      stalledInterval: options.stalledCheckMs ?? Math.min(30_000, options.lockMs ?? DEFAULT_LOCK_MS),
      maxStalledCount: MAX_STALLED,
    },
  );
  // A job that failed for the last time is reported with its error, once.
  worker.on('failed', (job, error) => {
    if (job === undefined || job.id === undefined) return;
    const final =
      error instanceof UnrecoverableError ||
      error.name === 'UnrecoverableError' ||
      job.attemptsMade >= (job.opts.attempts ?? 1);
    if (!final) return;
    const parsed = JobData.safeParse(job.data);
    if (!parsed.success) return;
    const { sweepId, ...rest } = parsed.data;
    void storeResult(redis, sweepId, job.id, { ...rest, error: error.message }).then(
      () => options.onJob?.({ id: job.id!, error: error.message }),
      () => undefined,
    );
  });
  worker.on('error', () => undefined);
  await worker.waitUntilReady();
  return {
    // Finishes the running job (a backtest cannot be interrupted mid-run), then leaves the queue.
    close: () => worker.close(),
  };
}

async function prepareSweep(redis: Redis, id: string, compiled: CompiledStrategy[]): Promise<Prepared> {
  try {
    const { spec } = await readSweep(redis, id);
    return { context: await loadSweepContext(spec, id, (hash) => redis.get(strategyKey(hash)), compiled) };
  } catch (error) {
    return { refusal: error instanceof Error ? error.message : String(error) };
  }
}

/**
 * The sweep's bars as this machine loads them and its strategy from the bundle stored with it, both checked
 * against the hashes it was enqueued with. The strategy file need not exist here: the bundle is what runs.
 */
export async function loadSweepContext(
  spec: SweepSpec,
  id: string,
  storedBundle: (hash: string) => Promise<string | null>,
  compiled: CompiledStrategy[],
): Promise<SweepContext> {
  let config = configFromWire(spec.config);
  if (spec.strategyHash !== null) {
    const code = await storedBundle(spec.strategyHash);
    if (code === null)
      throw new SweepDataMismatchError(
        `sweep ${id}: no strategy bundle ${spec.strategyHash.slice(0, 12)} on the queue`,
      );
    const actual = contentHash(code);
    if (actual !== spec.strategyHash) {
      throw new SweepDataMismatchError(
        `sweep ${id}: the strategy bundle of ${config.strategy.name} on the queue has sha256 ${actual.slice(0, 12)}, the sweep was enqueued with ${spec.strategyHash.slice(0, 12)}`,
      );
    }
    const module = await compileBundle(code, `strategy-${actual.slice(0, 12)}`);
    compiled.push(module);
    config = { ...config, strategy: { ...config.strategy, name: module.file } };
  }
  const history = await sweepHistory(config);
  const actual = barsHash(history.bars);
  if (actual !== spec.barsHash) {
    throw new SweepDataMismatchError(
      `sweep ${id}: the bars of ${history.description} have sha256 ${actual.slice(0, 12)}, the sweep was enqueued with ${spec.barsHash.slice(0, 12)}`,
    );
  }
  return { config, name: spec.name, samples: sweepSamples(history, spec.walkForward) };
}
