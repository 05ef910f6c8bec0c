/**
 * Trade days of the simulator: a session runs from 22:00 UTC to 22:00 UTC the next day (the CME Globex
 * evening open, fixed in UTC, daylight saving ignored) and is labelled by the UTC date on which it ends.
 */
const DAY_MS = 86_400_000;
const SESSION_OFFSET_MS = 2 * 3_600_000;

/** UTC midnight of the date that labels the trade day containing `t`. */
export function tradeDayLabel(t: number): number {
  return Math.floor((t + SESSION_OFFSET_MS) / DAY_MS) * DAY_MS;
}

/** Epoch ms at which the trade day containing `t` began. */
export function tradeDayStart(t: number): number {
  return tradeDayLabel(t) - SESSION_OFFSET_MS;
}

export function nextTradeDayStart(t: number): number {
  return tradeDayStart(t) + DAY_MS;
}

/** Expiry written on permanent violations: they never lapse. */
export const NEVER = Date.UTC(2099, 11, 31);

/** The datetime the service writes for "no date" where the wire field is not nullable. */
export const NO_DATE = Date.parse('0001-01-01T00:00:00Z');

export function iso(t: number): string {
  return new Date(t).toISOString();
}

export function round2(value: number): number {
  return Math.round(value * 100) / 100;
}
