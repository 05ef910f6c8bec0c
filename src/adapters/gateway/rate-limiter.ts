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

/** What a request does: a write (place, modify, cancel, close) is served before any read that waits. */
export type RequestEffect = 'read' | 'write';

export class SlidingWindowLimiter {
  readonly budget: RateBudget;
  private readonly clock: Clock;
  /** Send times inside the current window, oldest first. */
  private readonly sent: number[] = [];
  /**
   * Callers waiting for a slot, in arrival order per effect: when the window is full, the next free slot
   * goes to the oldest waiting write, then to the oldest waiting read, so a burst of polls of several
   * accounts never holds an order back (the trading node's "writes first").
   */
  private readonly waiting: Record<RequestEffect, Array<() => void>> = { write: [], read: [] };
  private sleeping = false;

  constructor(budget: RateBudget, clock: Clock) {
    if (!Number.isInteger(budget.requests) || budget.requests < 1) {
      throw new RangeError(`rate budget requests must be a positive integer, got ${budget.requests}`);
    }
    if (!(budget.windowMs > 0)) throw new RangeError(`rate budget windowMs must be positive, got ${budget.windowMs}`);
    this.budget = budget;
    this.clock = clock;
  }

  /** Resolves when one more request may be sent now; records it as sent at that moment. */
  acquire(effect: RequestEffect = 'read'): Promise<void> {
    return new Promise((resolve) => {
      this.waiting[effect].push(resolve);
      this.serve();
    });
  }

  /** Send times still inside the window (for tests and diagnostics). */
  inWindow(): number {
    this.expire(this.clock.now());
    return this.sent.length;
  }

  private expire(now: number): void {
    while (this.sent.length > 0 && (this.sent[0] as number) <= now - this.budget.windowMs) this.sent.shift();
  }

  /** Hand free slots to waiting callers, writes first; sleep until the oldest send leaves the window if any wait on. */
  private serve(): void {
    if (this.sleeping) return;
    const now = this.clock.now();
    this.expire(now);
    while (this.sent.length < this.budget.requests) {
      const next = this.waiting.write.shift() ?? this.waiting.read.shift();
      if (next === undefined) return;
      this.sent.push(now);
      next();
    }
    if (this.waiting.write.length + this.waiting.read.length === 0) return;
    this.sleeping = true;
    const wait = Math.max(1, (this.sent[0] as number) + this.budget.windowMs - now);
    // After the callers just served have run (a microtask later), as a chained wait would.
    queueMicrotask(() => {
      void this.clock.sleep(wait).then(() => {
        this.sleeping = false;
        this.serve();
      });
    });
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

  acquire(bucket: RateBucket, effect: RequestEffect = 'read'): Promise<void> {
    return this.buckets[bucket].acquire(effect);
  }

  bucket(bucket: RateBucket): SlidingWindowLimiter {
    return this.buckets[bucket];
  }
}
