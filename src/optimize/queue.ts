/**
 * The sweep queue on Redis: one BullMQ queue shared by every sweep (a worker serves whichever sweep comes),
 * and beside it, per sweep, its stored definition and a hash of results written once per job id.
 *
 *   tickline:sweep:<id>            the StoredSweep (spec and view), JSON, written once
 *   tickline:sweep:<id>:results    job id -> JobResult JSON (HSETNX: a retried or re-run job never adds a row)
 *   tickline:sweep:<id>:cancelled  set by `sweep cancel`
 *   tickline:strategy:<sha256>     a strategy file's bundle (compile.ts), written once, named by its hash
 */
import { type Queue, QueueEvents } from 'bullmq';
import { Redis } from 'ioredis';
import { z } from 'zod';
import type { JobResult } from './grid-sweep.ts';
import { contentHash, jobId, StoredSweep, SweepJob, sweepId, type SweepSpec, type SweepView } from './queue-spec.ts';
import { TicklineError } from '../engine/errors.ts';
import { checkQueueUrl, DEFAULT_RETRIES, redactUrl } from './queue-url.ts';

export const QUEUE_NAME = 'tickline-sweeps';

export class QueueUnreachableError extends TicklineError {
  override readonly name = 'QueueUnreachableError';
  readonly kind = 'environment';
  readonly code = 'QUEUE_UNREACHABLE';
}

export class SweepNotFoundError extends TicklineError {
  override readonly name = 'SweepNotFoundError';
  // The id given on the command line names no sweep.
  readonly kind = 'usage';
  readonly code = 'SWEEP_NOT_FOUND';
}

export class SweepCancelledError extends TicklineError {
  override readonly name = 'SweepCancelledError';
  readonly kind = 'runtime';
  readonly code = 'SWEEP_CANCELLED';
}

export class StrategyBundleError extends TicklineError {
  override readonly name = 'StrategyBundleError';
  readonly kind = 'runtime';
  readonly code = 'STRATEGY_BUNDLE';
}

/** What a job carries: which sweep and which of its jobs; everything else is in the stored sweep. */
export const JobData = SweepJob.extend({ sweepId: z.string().regex(/^[0-9a-f]{16}$/) });
export type JobData = z.infer<typeof JobData>;

export const StoredResult = z.strictObject({
  index: z.number().int(),
  params: z.record(z.string(), z.unknown()),
  sample: z.enum(['all', 'in', 'out']),
  summary: z.record(z.string(), z.unknown()).optional(),
  error: z.string().optional(),
  /** Bars that ran before the strategy failed (a failed row; JobResult.failedAfter). */
  failedAfter: z.number().int().nonnegative().optional(),
});

export const sweepKey = (id: string) => `tickline:sweep:${id}`;
export const resultsKey = (id: string) => `${sweepKey(id)}:results`;
export const cancelledKey = (id: string) => `${sweepKey(id)}:cancelled`;
export const strategyKey = (hash: string) => `tickline:strategy:${hash}`;

/**
 * A connection for BullMQ (commands wait for a reconnection rather than fail, as BullMQ requires), after
 * one ping that must answer: an unreachable Redis at start is an error, not a silent wait.
 */
export async function connectQueue(url: string): Promise<Redis> {
  checkQueueUrl(url);
  const probe = new Redis(url, {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    connectTimeout: 5_000,
    enableOfflineQueue: false,
  });
  probe.on('error', () => undefined);
  try {
    await probe.connect();
    await probe.ping();
  } catch (error) {
    throw new QueueUnreachableError(`Redis at ${redactUrl(url)} is unreachable: ${(error as Error).message}`);
  } finally {
    probe.disconnect();
  }
  const redis = new Redis(url, { maxRetriesPerRequest: null });
  redis.on('error', () => undefined);
  return redis;
}

export interface EnqueueOptions {
  readonly retries?: number;
  /** The bundle the spec's strategyHash names, stored beside the sweep (omitted: already on the queue). */
  readonly bundle?: string | null;
}

export interface Enqueued {
  readonly id: string;
  /** Jobs added now (those already queued or with a result are not added again). */
  readonly added: number;
  readonly total: number;
}

export async function readSweep(redis: Redis, id: string): Promise<StoredSweep> {
  const text = await redis.get(sweepKey(id));
  if (text === null) throw new SweepNotFoundError(`no sweep ${id} on this queue`);
  return StoredSweep.parse(JSON.parse(text));
}

/**
 * Store the sweep (once) and add its jobs under their deterministic ids. BullMQ ignores an add whose id is
 * already in the queue; a job already answered is not added, so a second enqueue runs nothing again.
 */
export async function enqueueSweep(
  redis: Redis,
  queue: Queue,
  spec: SweepSpec,
  view: SweepView,
  options: EnqueueOptions = {},
): Promise<Enqueued> {
  const id = sweepId(spec);
  const bundle = options.bundle ?? null;
  if (bundle !== null) {
    const hash = contentHash(bundle);
    if (hash !== spec.strategyHash)
      throw new StrategyBundleError(
        `sweep ${id}: the strategy bundle has sha256 ${hash.slice(0, 12)}, the sweep names ${spec.strategyHash?.slice(0, 12) ?? 'no strategy file'}`,
      );
    // Before the sweep: a worker that meets the sweep finds its strategy.
    await redis.set(strategyKey(hash), bundle, 'NX');
  }
  await redis.set(sweepKey(id), JSON.stringify({ spec, view } satisfies StoredSweep), 'NX');
  await redis.del(cancelledKey(id));
  const answered = new Set(await redis.hkeys(resultsKey(id)));
  const seen = new Set<string>();
  const fresh = spec.jobs.filter((job) => {
    const jid = jobId(id, job);
    if (answered.has(jid) || seen.has(jid)) return false;
    seen.add(jid);
    return true;
  });
  const attempts = 1 + (options.retries ?? DEFAULT_RETRIES);
  const existing = await Promise.all(fresh.map((job) => queue.getJobState(jobId(id, job))));
  const toAdd = fresh.filter((_job, k) => existing[k] === 'unknown');
  await queue.addBulk(
    toAdd.map((job) => ({
      name: 'backtest',
      data: { sweepId: id, index: job.index, params: job.params, sample: job.sample } satisfies JobData,
      // Results live in the sweep's own hash; the queue keeps failed jobs for inspection only.
      opts: { jobId: jobId(id, job), attempts, removeOnComplete: true, removeOnFail: { count: 10_000 } },
    })),
  );
  return { id, added: toAdd.length, total: spec.jobs.length };
}

/** Write a job's result unless one is there already; true when this call wrote it. */
export async function storeResult(redis: Redis, id: string, jid: string, result: JobResult): Promise<boolean> {
  return (await redis.hsetnx(resultsKey(id), jid, JSON.stringify(result))) === 1;
}

/** The sweep's results in job order; a job without a result yet is undefined. */
export async function readResults(redis: Redis, id: string, spec: SweepSpec): Promise<(JobResult | undefined)[]> {
  const stored = await redis.hgetall(resultsKey(id));
  return spec.jobs.map((job) => {
    const text = stored[jobId(id, job)];
    if (text === undefined) return undefined;
    const result = StoredResult.parse(JSON.parse(text));
    // Two jobs with the same parameters share one id and one result; each keeps its own index.
    return { ...result, index: job.index, params: job.params, sample: job.sample } as JobResult;
  });
}

export interface SweepStatus {
  readonly id: string;
  readonly total: number;
  readonly done: number;
  readonly failed: number;
  readonly waiting: number;
  readonly active: number;
  readonly cancelled: boolean;
}

export async function sweepStatus(redis: Redis, queue: Queue, id: string): Promise<SweepStatus> {
  const { spec } = await readSweep(redis, id);
  const results = await readResults(redis, id, spec);
  const ids = [...new Set(spec.jobs.map((job) => jobId(id, job)))];
  const states = await Promise.all(ids.map((jid) => queue.getJobState(jid)));
  return {
    id,
    total: spec.jobs.length,
    done: results.filter((r) => r !== undefined).length,
    failed: results.filter((r) => r?.error !== undefined).length,
    waiting: states.filter((s) => s === 'waiting' || s === 'delayed' || s === 'prioritized' || s === 'waiting-children')
      .length,
    active: states.filter((s) => s === 'active').length,
    cancelled: (await redis.exists(cancelledKey(id))) === 1,
  };
}

/** Stop a sweep: its waiting jobs leave the queue and workers refuse the rest; running jobs finish. */
export async function cancelSweep(redis: Redis, queue: Queue, id: string): Promise<number> {
  const { spec } = await readSweep(redis, id);
  await redis.set(cancelledKey(id), '1');
  let removed = 0;
  for (const jid of new Set(spec.jobs.map((job) => jobId(id, job)))) {
    const state = await queue.getJobState(jid);
    if (state === 'waiting' || state === 'delayed' || state === 'prioritized') {
      const job = await queue.getJob(jid);
      if (job !== undefined) {
        await job.remove().then(
          () => removed++,
          // A worker took it between the two calls: it will see the cancellation.
          () => undefined,
        );
      }
    }
  }
  return removed;
}

/**
 * Wait until every job of the sweep has a result, calling `onProgress` as the queue reports completions
 * (`total` counts distinct parameter sets: two jobs with the same parameters share one run).
 */
export async function collectResults(
  redis: Redis,
  url: string,
  id: string,
  spec: SweepSpec,
  onProgress: (done: number, total: number) => void,
): Promise<JobResult[]> {
  // QueueEvents blocks on its connection, so it has its own (BullMQ leaves a given connection open).
  const subscriber = new Redis(url, { maxRetriesPerRequest: null });
  subscriber.on('error', () => undefined);
  const events = new QueueEvents(QUEUE_NAME, { connection: subscriber });
  const byId = new Map(spec.jobs.map((job) => [jobId(id, job), job]));
  // A job BullMQ failed on its own (stalled more often than allowed) gets its failure as its result here.
  let wake: () => void = () => undefined;
  const woken = () => new Promise<void>((resolve) => (wake = resolve));
  events.on('completed', ({ jobId: jid }) => {
    if (byId.has(jid)) wake();
  });
  events.on('failed', ({ jobId: jid, failedReason }) => {
    const job = byId.get(jid);
    if (job === undefined) return;
    void storeResult(redis, id, jid, { ...job, error: failedReason }).finally(wake);
  });
  try {
    await events.waitUntilReady();
    for (;;) {
      const next = woken();
      // Counted, not read: reading every result at each completion would cost a sweep quadratic time.
      const done = await redis.hlen(resultsKey(id));
      onProgress(done, byId.size);
      if (done >= byId.size) return (await readResults(redis, id, spec)) as JobResult[];
      if ((await redis.exists(cancelledKey(id))) === 1)
        throw new SweepCancelledError(`sweep ${id} was cancelled with ${done} of ${byId.size} runs done`);
      // Events wake the loop; the timer covers a completion that happened before the subscription.
      await Promise.race([next, new Promise((resolve) => setTimeout(resolve, 2_000).unref())]);
    }
  } finally {
    await events.close();
    subscriber.disconnect();
  }
}
