/**
 * A distributed sweep's definition as it is stored once in Redis: the backtest config, the jobs, and the
 * data and strategy by reference (where to load them and the hash of their content), never the bars
 * themselves. Its hash is the sweep's id, and each job's id is the sweep id and the hash of its
 * parameters, so enqueuing the same sweep twice finds the same ids.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { BarColumns } from '../engine/types.ts';
import { BacktestConfig, SEARCHES } from '../adapters/backtest/backtest-config.ts';
import type { Job } from './grid-sweep.ts';

export const SweepJob = z.strictObject({
  index: z.number().int().nonnegative(),
  params: z.record(z.string(), z.unknown()),
  sample: z.enum(['all', 'in', 'out']),
});

/** What every worker needs to run the sweep's jobs exactly as the enqueuing process would. */
export const SweepSpec = z.strictObject({
  name: z.string().min(1),
  /** The BacktestConfig with its times as epoch ms (configFromWire turns it back). */
  config: z.record(z.string(), z.unknown()),
  walkForward: z.number().gt(0).lt(1).nullable(),
  /** sha256 of the history's columns, after aggregation to the config's timeframe. */
  barsHash: z.string().regex(/^[0-9a-f]{64}$/),
  /** sha256 of the strategy file (null for a built-in strategy). */
  strategyHash: z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .nullable(),
  jobs: z.array(SweepJob).min(1),
});
export type SweepSpec = z.infer<typeof SweepSpec>;

/** How the table is shown: not part of the sweep's identity (a second look may sort by another metric). */
export const SweepView = z.strictObject({
  metric: z.string(),
  top: z.number().int().positive(),
  /** The parameters the jobs vary, in column order, and their values. */
  grid: z.record(z.string(), z.array(z.unknown())),
  heatmap: z.array(z.string()),
  /** Where the bars came from, in one line. */
  data: z.string(),
  enqueuedAt: z.number(),
  /** How the parameter sets were chosen (absent: every combination of the grid). */
  search: z
    .strictObject({
      method: z.enum(SEARCHES),
      trials: z.number().int().positive().optional(),
      seed: z.number().int().optional(),
      of: z.number().int().positive().optional(),
    })
    .optional(),
});
export type SweepView = z.infer<typeof SweepView>;

export const StoredSweep = z.strictObject({ spec: SweepSpec, view: SweepView });
export type StoredSweep = z.infer<typeof StoredSweep>;

/** JSON with object keys sorted, so equal values hash alike whatever order their keys were built in. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(
          Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
        )
      : v,
  );
}

const sha256 = (data: string | Uint8Array): string => createHash('sha256').update(data).digest('hex');

export function sweepId(spec: SweepSpec): string {
  return sha256(canonicalJson(spec)).slice(0, 16);
}

/** BullMQ job ids may hold neither ':' nor a bare integer. */
export function jobId(sweep: string, job: Pick<Job, 'params' | 'sample'>): string {
  return `${sweep}-${sha256(canonicalJson(job.params)).slice(0, 16)}-${job.sample}`;
}

export function barsHash(bars: BarColumns): string {
  const hash = createHash('sha256');
  for (const column of [bars.time, bars.open, bars.high, bars.low, bars.close, bars.volume]) {
    hash.update(new Uint8Array(column.buffer, column.byteOffset, column.byteLength));
  }
  return hash.digest('hex');
}

export function contentHash(bytes: Uint8Array | string): string {
  return sha256(bytes);
}

/** The config as JSON carries it: its times are already epoch ms numbers. */
export function configToWire(config: BacktestConfig): Record<string, unknown> {
  return JSON.parse(JSON.stringify(config)) as Record<string, unknown>;
}

/** Parse a stored config back, strictly: its epoch ms times become Dates, which the schema accepts. */
export function configFromWire(wire: Record<string, unknown>): BacktestConfig {
  const asDate = (v: unknown) => (typeof v === 'number' ? new Date(v) : v);
  const data = wire.data as Record<string, unknown> | undefined;
  return BacktestConfig.parse({
    ...wire,
    ...('from' in wire ? { from: asDate(wire.from) } : {}),
    ...('to' in wire ? { to: asDate(wire.to) } : {}),
    ...(data !== undefined && 'start' in data ? { data: { ...data, start: asDate(data.start) } } : {}),
  });
}
