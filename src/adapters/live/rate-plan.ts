/**
 * Poll planning against the gateway's documented rate budgets (retrieveBars 30 per 30 s, every other
 * endpoint 200 per 60 s). The plan is checked before the bot starts: the worst case of every configured
 * schedule in any window, plus a reserve for order writes, retries and reconciliation lookups, must fit
 * the budget, or the configuration is refused with the numbers. At run time `RateBudget` keeps a sliding
 * window per bucket so that reads are skipped (never queued up into a burst) when a window is full.
 */
import { Limits } from '../../protocol/endpoints.ts';
import type { Timeframe } from '../../engine/types.ts';
import { bucketEnd, bucketStart, nominalMs } from '../../engine/timeframe.ts';
import { TicklineError } from '../../engine/errors.ts';

export interface BarSubscription {
  readonly contractId: string;
  readonly timeframe: Timeframe;
  /** Poll the forming bar this often (ms) for partial updates; absent: closed bars only. */
  readonly partialEveryMs?: number;
}

export interface PollIntervals {
  /** Order/searchOpen. */
  readonly openOrdersMs: number;
  /** Order/search (terminal states, fill volumes). */
  readonly ordersMs: number;
  /** Trade/search since the last seen trade. */
  readonly tradesMs: number;
  /** Position/searchOpen. */
  readonly positionsMs: number;
  /** Account/search (balance, canTrade). */
  readonly accountMs: number;
}

export interface RateBudgets {
  readonly bars: { readonly requests: number; readonly windowMs: number };
  readonly default: { readonly requests: number; readonly windowMs: number };
}

export interface PlanOptions {
  readonly budgets?: RateBudgets;
  /** Requests per default window kept free for place/modify/cancel, lookups and login (default 40). */
  readonly writeReserve?: number;
  /** Share of each bucket kept free for read retries after faults (default 0.2). */
  readonly retryShare?: number;
}

export interface BucketUse {
  readonly bucket: 'bars' | 'default';
  /** Worst-case scheduled requests in any window of the bucket. */
  readonly scheduled: number;
  readonly reserved: number;
  readonly budget: number;
  readonly windowMs: number;
  readonly items: ReadonlyArray<{ readonly what: string; readonly requests: number }>;
}

export interface RatePlan {
  readonly ok: boolean;
  readonly buckets: readonly [BucketUse, BucketUse];
  readonly problems: readonly string[];
}

export class RatePlanError extends TicklineError {
  override readonly name = 'RatePlanError';
  readonly kind = 'config';
  readonly code = 'RATE_PLAN';
  constructor(readonly plan: RatePlan) {
    super(`poll schedule exceeds the gateway's rate budget: ${plan.problems.join('; ')}`);
  }
}

/** The most requests a fixed-period schedule can make in any window: one per period, plus the edge. */
export function worstCaseInWindow(periodMs: number, windowMs: number): number {
  if (!(periodMs > 0)) throw new RangeError(`poll period must be positive, got ${periodMs}`);
  return Math.floor(windowMs / periodMs) + 1;
}

/** When a poll runs: every period (from an offset), or just after each bar of a timeframe closes. */
export type Schedule =
  | { readonly kind: 'every'; readonly periodMs: number; readonly offsetMs: number }
  | { readonly kind: 'barClose'; readonly timeframe: Timeframe; readonly delayMs: number };

/** The first time strictly after `after` at which the schedule is due. The poller and the plan's test share it. */
export function nextDue(schedule: Schedule, after: number): number {
  if (schedule.kind === 'every') {
    const { periodMs, offsetMs } = schedule;
    return (Math.floor((after - offsetMs) / periodMs) + 1) * periodMs + offsetMs;
  }
  return bucketEnd(bucketStart(after - schedule.delayMs, schedule.timeframe), schedule.timeframe) + schedule.delayMs;
}

/** The schedules one bar subscription runs: each close, plus partial updates when asked. */
export function barSchedules(sub: BarSubscription, closeDelayMs: number): Schedule[] {
  const list: Schedule[] = [{ kind: 'barClose', timeframe: sub.timeframe, delayMs: closeDelayMs }];
  if (sub.partialEveryMs !== undefined) list.push({ kind: 'every', periodMs: sub.partialEveryMs, offsetMs: 0 });
  return list;
}

function barRequestsInWindow(sub: BarSubscription, windowMs: number): number {
  const closes = worstCaseInWindow(nominalMs(sub.timeframe), windowMs);
  return sub.partialEveryMs === undefined ? closes : closes + worstCaseInWindow(sub.partialEveryMs, windowMs);
}

/** One account's polls in a plan of several (a trading node: one user's budget for every account). */
export interface AccountPolls {
  readonly account: string;
  readonly intervals: PollIntervals;
}

/**
 * The plan of one session (`intervals`), or of every account of a node: each account's polls count, and each
 * bar subscription counts once however many accounts read it (they share the answer).
 */
export function planPolls(
  subs: readonly BarSubscription[],
  intervals: PollIntervals | readonly AccountPolls[],
  options: PlanOptions = {},
): RatePlan {
  const budgets = options.budgets ?? Limits.rate;
  const retryShare = options.retryShare ?? 0.2;
  const writeReserve = options.writeReserve ?? 40;

  const barItems = subs.map((s) => ({
    what: `retrieveBars ${s.contractId} ${s.timeframe.unitNumber}${s.timeframe.unit}${s.partialEveryMs === undefined ? '' : ` partial/${s.partialEveryMs}ms`}`,
    requests: barRequestsInWindow(s, budgets.bars.windowMs),
  }));
  const accounts: readonly AccountPolls[] = Array.isArray(intervals)
    ? intervals
    : [{ account: '', intervals: intervals as PollIntervals }];
  const defaultItems = accounts.flatMap(({ account, intervals: each }) =>
    (Object.entries(each) as [keyof PollIntervals, number][]).map(([name, ms]) => ({
      what: `${account === '' ? '' : `${account} `}${name.replace(/Ms$/, '')}`,
      requests: worstCaseInWindow(ms, budgets.default.windowMs),
    })),
  );

  const bucket = (
    name: 'bars' | 'default',
    items: { what: string; requests: number }[],
    fixedReserve: number,
  ): BucketUse => {
    const b = budgets[name];
    return {
      bucket: name,
      scheduled: items.reduce((a, i) => a + i.requests, 0),
      reserved: fixedReserve + Math.ceil(b.requests * retryShare),
      budget: b.requests,
      windowMs: b.windowMs,
      items,
    };
  };
  const buckets = [bucket('bars', barItems, 0), bucket('default', defaultItems, writeReserve)] as const;
  const problems = buckets
    .filter((b) => b.scheduled + b.reserved > b.budget)
    .map(
      (b) =>
        `${b.bucket}: ${b.scheduled} scheduled + ${b.reserved} reserved requests per ${b.windowMs / 1000} s exceed ${b.budget} (${b.items
          .map((i) => `${i.what} ${i.requests}`)
          .join(', ')})`,
    );
  return { ok: problems.length === 0, buckets, problems };
}

export function assertPlan(
  subs: readonly BarSubscription[],
  intervals: PollIntervals | readonly AccountPolls[],
  options: PlanOptions = {},
): RatePlan {
  const plan = planPolls(subs, intervals, options);
  if (!plan.ok) throw new RatePlanError(plan);
  return plan;
}

/** Sliding-window counter per bucket: the run-time guard behind the plan. */
export class RateBudget {
  private readonly sent: Record<'bars' | 'default', number[]> = { bars: [], default: [] };
  constructor(
    private readonly budgets: RateBudgets = Limits.rate,
    private readonly now: () => number = Date.now,
  ) {}

  /** Room left in the bucket's current window. */
  room(bucket: 'bars' | 'default'): number {
    const b = this.budgets[bucket];
    const cutoff = this.now() - b.windowMs;
    const list = this.sent[bucket];
    while (list.length > 0 && list[0]! <= cutoff) list.shift();
    return b.requests - list.length;
  }

  /**
   * Take one request from the bucket if more than `keep` remain (reads keep room for writes); false
   * means skip this poll round.
   */
  tryTake(bucket: 'bars' | 'default', keep = 0): boolean {
    if (this.room(bucket) <= keep) return false;
    this.sent[bucket].push(this.now());
    return true;
  }

  /** Count a request that had to go regardless (a write, a lookup that must precede anything else). */
  take(bucket: 'bars' | 'default'): void {
    this.room(bucket);
    this.sent[bucket].push(this.now());
  }
}
