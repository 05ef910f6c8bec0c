/**
 * The simulator's clock. Market time, token lifetimes, order timestamps and trade days all read it, so a
 * test can step a manual clock and see the market move, orders fill and tokens expire without waiting.
 */
export type ClockMode = 'realtime' | { speed: number } | 'manual';

export interface SimClock {
  readonly mode: ClockMode;
  now(): number;
  /** Jump forward by `ms` of simulated time (any mode). */
  advance(ms: number): void;
}

export function createClock(mode: ClockMode, startTime: number, realNow: () => number = Date.now): SimClock {
  if (typeof mode === 'object' && !(mode.speed > 0 && Number.isFinite(mode.speed))) {
    throw new RangeError(`clock speed must be a positive number, got ${mode.speed}`);
  }
  const speed = mode === 'manual' ? 0 : mode === 'realtime' ? 1 : mode.speed;
  const realStart = realNow();
  const base = mode === 'realtime' ? realStart : startTime;
  let offset = 0;
  return {
    mode,
    now: () => Math.floor(base + (realNow() - realStart) * speed + offset),
    advance(ms: number) {
      if (!(ms >= 0) || !Number.isFinite(ms))
        throw new RangeError(`advance takes a non-negative number of ms, got ${ms}`);
      offset += ms;
    },
  };
}
