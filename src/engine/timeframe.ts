/**
 * Bar buckets for every unit of the gateway (second to month), in UTC. The simulator's retrieveBars, the
 * engine's multi-timeframe operator and the backtest all aggregate with these, so a 15-minute bar means
 * the same thing everywhere. Weeks start on Sunday 00:00 UTC; months on the 1st.
 */
import type { BarUnit, Timeframe } from './types.ts';

const MS: Record<'second' | 'minute' | 'hour' | 'day', number> = {
  second: 1_000,
  minute: 60_000,
  hour: 3_600_000,
  day: 86_400_000,
};
const WEEK_MS = 7 * MS.day;
/** 1970-01-04 was a Sunday: the origin of week buckets. */
const FIRST_SUNDAY_MS = 3 * MS.day;

/** The gateway's integer bar units (spec 4.1) by name and back. */
export const BAR_UNIT_CODES: Record<BarUnit, number> = { second: 1, minute: 2, hour: 3, day: 4, week: 5, month: 6 };
const UNIT_BY_CODE = new Map(Object.entries(BAR_UNIT_CODES).map(([name, code]) => [code, name as BarUnit]));

export function barUnitFromCode(code: number): BarUnit | undefined {
  return UNIT_BY_CODE.get(code);
}

export function timeframe(unit: BarUnit, unitNumber = 1): Timeframe {
  if (!Number.isInteger(unitNumber) || unitNumber < 1)
    throw new RangeError(`unitNumber must be a positive integer, got ${unitNumber}`);
  return { unit, unitNumber };
}

export function timeframeLabel(tf: Timeframe): string {
  return `${tf.unitNumber}${{ second: 's', minute: 'm', hour: 'h', day: 'd', week: 'w', month: 'mo' }[tf.unit]}`;
}

/** Start (epoch ms) of the bar of `tf` that contains `time`. */
export function bucketStart(time: number, tf: Timeframe): number {
  const n = tf.unitNumber;
  switch (tf.unit) {
    case 'second':
    case 'minute':
    case 'hour':
    case 'day': {
      const size = MS[tf.unit] * n;
      return Math.floor(time / size) * size;
    }
    case 'week': {
      const size = WEEK_MS * n;
      return Math.floor((time - FIRST_SUNDAY_MS) / size) * size + FIRST_SUNDAY_MS;
    }
    case 'month': {
      const d = new Date(time);
      const months = d.getUTCFullYear() * 12 + d.getUTCMonth();
      const start = Math.floor(months / n) * n;
      return Date.UTC(Math.floor(start / 12), start % 12, 1);
    }
  }
}

/** Start of the bar after the one that starts at `start`. */
export function bucketEnd(start: number, tf: Timeframe): number {
  if (tf.unit === 'month') {
    const d = new Date(start);
    return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + tf.unitNumber, 1);
  }
  return start + (tf.unit === 'week' ? WEEK_MS : MS[tf.unit]) * tf.unitNumber;
}

/** Nominal length of a bar in ms (months count 30 days); for schedules, not for bucketing. */
export function nominalMs(tf: Timeframe): number {
  if (tf.unit === 'month') return 30 * MS.day * tf.unitNumber;
  if (tf.unit === 'week') return WEEK_MS * tf.unitNumber;
  return MS[tf.unit] * tf.unitNumber;
}
