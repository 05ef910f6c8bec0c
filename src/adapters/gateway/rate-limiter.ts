/**
 * Client-side rate limiter: a sliding-window log per budget. A request waits until sending it keeps the
 * last `windowMs` at or under `requests`; it never goes over, because the gateway answers an overrun
 * with HTTP 429 and counts login against the same budget (spec 5.9, extras "Rate limits").
 */
import { Limits, type RateBucket } from '../../protocol/endpoints.ts';

export interface RateBudget {
  requests: number;
  windowMs: number;
}

export type RateLimits = Partial<Record<RateBucket, RateBudget>>;

export interface Clock {
  /** Epoch milliseconds. */
  now: () => number;
  sleep: (ms: number) => Promise<void>;
}

export const realClock: Clock = {
  now: () => Date.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};

export class SlidingWindowLimiter {
  readonly budget: RateBudget;
  private readonly clock: Clock;
  /** Send times inside the current window, oldest first. */
  private readonly sent: number[] = [];
  /** Callers are served in arrival order, so a burst cannot starve an earlier waiter. */
  private queue: Promise<void> = Promise.resolve();

  constructor(budget: RateBudget, clock: Clock) {
    if (!Number.isInteger(budget.requests) || budget.requests < 1) {
      throw new RangeError(`rate budget requests must be a positive integer, got ${budget.requests}`);
    }
    if (!(budget.windowMs > 0)) throw new RangeError(`rate budget windowMs must be positive, got ${budget.windowMs}`);
    this.budget = budget;
    this.clock = clock;
  }

  /** Resolves when one more request may be sent now; records it as sent at that moment. */
  acquire(): Promise<void> {
    const turn = this.queue.then(() => this.waitForSlot());
    this.queue = turn.catch(() => undefined);
    return turn;
  }

  /** Send times still inside the window (for tests and diagnostics). */
  inWindow(): number {
    this.expire(this.clock.now());
    return this.sent.length;
  }

  private expire(now: number): void {
    while (this.sent.length > 0 && (this.sent[0] as number) <= now - this.budget.windowMs) this.sent.shift();
  }

  private async waitForSlot(): Promise<void> {
    for (;;) {
      const now = this.clock.now();
      this.expire(now);
      if (this.sent.length < this.budget.requests) {
        this.sent.push(now);
        return;
      }
      const oldest = this.sent[0] as number;
      await this.clock.sleep(Math.max(1, oldest + this.budget.windowMs - now));
    }
  }
}

/** One limiter per bucket, with the documented budgets unless overridden. */
export class RateLimiter {
  private readonly buckets: Record<RateBucket, SlidingWindowLimiter>;

  constructor(limits: RateLimits = {}, clock: Clock = realClock) {
    this.buckets = {
      bars: new SlidingWindowLimiter(limits.bars ?? Limits.rate.bars, clock),
      default: new SlidingWindowLimiter(limits.default ?? Limits.rate.default, clock),
    };
  }

  acquire(bucket: RateBucket): Promise<void> {
    return this.buckets[bucket].acquire();
  }

  bucket(bucket: RateBucket): SlidingWindowLimiter {
    return this.buckets[bucket];
  }
}
