/**
 * Per-caller request budgets (gateway-extras.md: retrieveBars 30 per 30 s, everything else 200 per 60 s),
 * as sliding windows over a wall clock. Over budget, the caller learns how many seconds to wait.
 */
import { Limits, type RateBucket } from '../protocol/endpoints.ts';

export interface RateBudget {
  requests: number;
  windowMs: number;
}
export type RateLimits = Record<RateBucket, RateBudget>;

export const DEFAULT_RATE_LIMITS: RateLimits = {
  bars: { ...Limits.rate.bars },
  default: { ...Limits.rate.default },
};

export class RateLimiter {
  private readonly windows = new Map<string, number[]>();

  constructor(
    private readonly limits: RateLimits,
    private readonly now: () => number = Date.now,
  ) {}

  /** Records a request; returns 0 when allowed, else the seconds until one more would be. */
  take(caller: string, bucket: RateBucket): number {
    const { requests, windowMs } = this.limits[bucket];
    const key = `${bucket}:${caller}`;
    const now = this.now();
    const times = (this.windows.get(key) ?? []).filter((t) => t > now - windowMs);
    if (times.length >= requests) {
      this.windows.set(key, times);
      return Math.max(1, Math.ceil(((times[0] as number) + windowMs - now) / 1000));
    }
    times.push(now);
    this.windows.set(key, times);
    return 0;
  }
}
