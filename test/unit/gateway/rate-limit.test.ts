/** The client-side limiter on a fake clock: it never exceeds a budget, and waits only as long as needed. */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Limits, RateLimiter, SlidingWindowLimiter, type Clock } from '../../../src/adapters/gateway/index.ts';

function fakeClock(start = 0): Clock & { slept: number[]; t: number } {
  const clock = {
    t: start,
    slept: [] as number[],
    now: () => clock.t,
    sleep: async (ms: number) => {
      clock.slept.push(ms);
      clock.t += ms;
    },
  };
  return clock;
}

describe('sliding-window limiter', () => {
  it('uses the documented budgets by default', () => {
    const limiter = new RateLimiter({}, fakeClock());
    expect(limiter.bucket('bars').budget).toEqual(Limits.rate.bars);
    expect(limiter.bucket('default').budget).toEqual({ requests: 200, windowMs: 60_000 });
    expect(Limits.rate.bars).toEqual({ requests: 30, windowMs: 30_000 });
  });

  it('lets a full budget through at once, then waits for the oldest send to leave the window', async () => {
    const clock = fakeClock(1_000);
    const limiter = new SlidingWindowLimiter({ requests: 30, windowMs: 30_000 }, clock);
    for (let i = 0; i < 30; i++) await limiter.acquire();
    expect(clock.slept).toEqual([]);
    await limiter.acquire();
    expect(clock.t).toBe(31_000);
  });

  it('never exceeds the budget in any window, for any arrival pattern (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 8 }),
        fc.integer({ min: 10, max: 1_000 }),
        fc.array(fc.integer({ min: 0, max: 400 }), { minLength: 1, maxLength: 60 }),
        async (requests, windowMs, gaps) => {
          const clock = fakeClock();
          const limiter = new SlidingWindowLimiter({ requests, windowMs }, clock);
          const sentAt: number[] = [];
          for (const gap of gaps) {
            clock.t += gap;
            await limiter.acquire();
            sentAt.push(clock.t);
          }
          for (let i = 0; i < sentAt.length; i++) {
            const inWindow = sentAt.filter(
              (t) => t > (sentAt[i] as number) - windowMs && t <= (sentAt[i] as number),
            ).length;
            expect(inWindow).toBeLessThanOrEqual(requests);
          }
        },
      ),
      { numRuns: 150 },
    );
  });

  it('serves concurrent callers in arrival order within the budget', async () => {
    const clock = fakeClock();
    const limiter = new SlidingWindowLimiter({ requests: 2, windowMs: 100 }, clock);
    const order: Array<[number, number]> = [];
    await Promise.all([0, 1, 2, 3, 4].map((i) => limiter.acquire().then(() => order.push([i, clock.t]))));
    expect(order.map(([i]) => i)).toEqual([0, 1, 2, 3, 4]);
    expect(order.map(([, t]) => t)).toEqual([0, 0, 100, 100, 200]);
  });

  it('serves a waiting write before every waiting read, each kind in arrival order', async () => {
    const clock = fakeClock();
    const limiter = new SlidingWindowLimiter({ requests: 2, windowMs: 100 }, clock);
    const order: string[] = [];
    const asks = [
      limiter.acquire('read').then(() => order.push('r0')),
      limiter.acquire('read').then(() => order.push('r1')),
      limiter.acquire('read').then(() => order.push('r2')),
      limiter.acquire('read').then(() => order.push('r3')),
      limiter.acquire('write').then(() => order.push('w0')),
      limiter.acquire('read').then(() => order.push('r4')),
      limiter.acquire('write').then(() => order.push('w1')),
    ];
    await Promise.all(asks);
    expect(order).toEqual(['r0', 'r1', 'w0', 'w1', 'r2', 'r3', 'r4']);
    expect(clock.t).toBe(300);
  });

  it('refuses a budget that is not positive', () => {
    expect(() => new SlidingWindowLimiter({ requests: 0, windowMs: 10 }, fakeClock())).toThrow(RangeError);
    expect(() => new SlidingWindowLimiter({ requests: 1, windowMs: 0 }, fakeClock())).toThrow(RangeError);
  });
});
