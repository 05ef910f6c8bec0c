import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  RateBudget,
  assertPlan,
  barSchedules,
  nextDue,
  planPolls,
  RatePlanError,
  type BarSubscription,
  type PollIntervals,
  type Schedule,
} from '../../../src/adapters/live/rate-plan.ts';
import { Limits } from '../../../src/protocol/endpoints.ts';
import type { BarUnit } from '../../../src/engine/types.ts';

/** Every time a schedule fires in [from, to). */
function fireTimes(schedule: Schedule, from: number, to: number): number[] {
  const out: number[] = [];
  for (let t = nextDue(schedule, from - 1); t < to; t = nextDue(schedule, t)) out.push(t);
  return out;
}

/** The most events in any half-open window of the given length. */
function maxInWindow(times: number[], windowMs: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  let best = 0;
  let lo = 0;
  for (let hi = 0; hi < sorted.length; hi++) {
    while (sorted[hi]! - sorted[lo]! >= windowMs) lo++;
    best = Math.max(best, hi - lo + 1);
  }
  return best;
}

const unitArb = fc.constantFrom<BarUnit>('second', 'minute', 'hour');
const subArb: fc.Arbitrary<BarSubscription> = fc.record(
  {
    contractId: fc.constantFrom('CON.F.US.EP.Z25', 'CON.F.US.ENQ.Z25', 'CON.F.US.GCE.Z25', 'CON.F.US.CLE.Z25'),
    timeframe: fc.record({ unit: unitArb, unitNumber: fc.integer({ min: 1, max: 30 }) }),
    partialEveryMs: fc.integer({ min: 1_000, max: 120_000 }),
  },
  { requiredKeys: ['contractId', 'timeframe'] },
);
const intervalsArb: fc.Arbitrary<PollIntervals> = fc.record({
  openOrdersMs: fc.integer({ min: 500, max: 30_000 }),
  ordersMs: fc.integer({ min: 500, max: 30_000 }),
  tradesMs: fc.integer({ min: 500, max: 30_000 }),
  positionsMs: fc.integer({ min: 500, max: 30_000 }),
  accountMs: fc.integer({ min: 500, max: 60_000 }),
});

describe('poll plan', () => {
  it('accepted plans never exceed either budget (minus the reserve) in any window, with several contracts', () => {
    fc.assert(
      fc.property(
        fc.array(subArb, { minLength: 1, maxLength: 5 }),
        intervalsArb,
        fc.integer({ min: 0, max: 10 ** 9 }),
        (subs, intervals, start) => {
          const plan = planPolls(subs, intervals);
          fc.pre(plan.ok);
          const [bars, other] = plan.buckets;
          const horizon = start + 4 * 60_000;
          const barTimes = subs.flatMap((s) => barSchedules(s, 250).flatMap((sch) => fireTimes(sch, start, horizon)));
          expect(maxInWindow(barTimes, bars.windowMs)).toBeLessThanOrEqual(bars.budget - bars.reserved);
          const otherTimes = Object.values(intervals).flatMap((ms) =>
            fireTimes({ kind: 'every', periodMs: ms, offsetMs: 0 }, start, horizon),
          );
          expect(maxInWindow(otherTimes, other.windowMs)).toBeLessThanOrEqual(other.budget - other.reserved);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('refuses a schedule over the budget and names the numbers', () => {
    const subs: BarSubscription[] = ['A', 'B', 'C'].map((c) => ({
      contractId: c,
      timeframe: { unit: 'second', unitNumber: 2 },
    }));
    const intervals: PollIntervals = {
      openOrdersMs: 1_000,
      ordersMs: 5_000,
      tradesMs: 2_000,
      positionsMs: 2_000,
      accountMs: 10_000,
    };
    expect(() => assertPlan(subs, intervals)).toThrow(RatePlanError);
    const plan = planPolls(subs, intervals);
    expect(plan.problems.some((p) => p.startsWith('bars:'))).toBe(true);
    expect(plan.problems.some((p) => p.startsWith('default:'))).toBe(true);
  });

  it('accepts the shipped defaults for four 1-minute contracts', () => {
    const subs: BarSubscription[] = ['A', 'B', 'C', 'D'].map((c) => ({
      contractId: c,
      timeframe: { unit: 'minute', unitNumber: 1 },
    }));
    const intervals: PollIntervals = {
      openOrdersMs: 3_000,
      ordersMs: 10_000,
      tradesMs: 3_000,
      positionsMs: 3_000,
      accountMs: 15_000,
    };
    expect(planPolls(subs, intervals).ok).toBe(true);
  });

  it('fires bar polls just after each bar closes', () => {
    const t0 = Date.UTC(2025, 0, 2, 14, 30, 10);
    expect(nextDue({ kind: 'barClose', timeframe: { unit: 'minute', unitNumber: 1 }, delayMs: 300 }, t0)).toBe(
      Date.UTC(2025, 0, 2, 14, 31, 0, 300),
    );
    expect(
      nextDue(
        { kind: 'barClose', timeframe: { unit: 'minute', unitNumber: 5 }, delayMs: 300 },
        Date.UTC(2025, 0, 2, 14, 35, 0, 300),
      ),
    ).toBe(Date.UTC(2025, 0, 2, 14, 40, 0, 300));
  });

  it('the run-time budget skips reads once a window is full and frees them as it slides', () => {
    let now = 0;
    const budget = new RateBudget(Limits.rate, () => now);
    let taken = 0;
    for (let i = 0; i < 40; i++) if (budget.tryTake('bars')) taken++;
    expect(taken).toBe(30);
    now = 30_001;
    expect(budget.tryTake('bars')).toBe(true);
    for (let i = 0; i < 200; i++) budget.tryTake('default', 40);
    expect(budget.room('default')).toBe(40);
  });
});
