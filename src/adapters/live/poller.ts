/**
 * The live `MarketData` and account watcher: everything the bot knows about the gateway comes from
 * polls run here on schedules checked against the rate budgets (`rate-plan.ts`).
 *
 * - Bars: History/retrieveBars just after each bar of a subscription closes (and every `partialEveryMs`
 *   with `includePartialBar` where asked). Bars arrive newest first; they are sorted, converted to ticks
 *   with the contract's `PriceGrid`, de-duplicated by start time, and each closed bar is emitted once.
 * - Orders (Order/searchOpen and Order/search), trades (Trade/search from a cursor), positions
 *   (Position/searchOpen) and the account (Account/search), handed to the executor; the account as
 *   `AccountUpdate` events. Personal limits and rules through the admin client when one is configured.
 * - Visibility: while positions or open orders cannot be read (faults, malformed answers, budget
 *   exhausted), `onVisibility` is told why, so the session stops opening risk until they can be again.
 * - Realtime: while a realtime hub delivers the account's events (`setRealtime(true)`), the account-state
 *   polls slow down to `realtimePollMs`, a safety net that catches whatever the hub missed; when it drops,
 *   they are due at once and run on their own intervals again.
 */
import { Subject, type Observable } from 'rxjs';
import type { Subject as SubjectType } from 'rxjs';
import { GatewayError } from '../gateway/gateway-errors.ts';
import type * as S from '../../protocol/schemas.ts';
import type { TradingClient } from '../gateway/trading.ts';
import type { AdminClient } from '../gateway/admin-client.ts';
import type { Logger } from '../../engine/log.ts';
import type { BarChunk, ContractSpec, MarketData, Timeframe, VenueEvent } from '../../engine/types.ts';
import { BAR_UNIT_CODES, bucketEnd, bucketStart, nominalMs } from '../../engine/timeframe.ts';
import type { LiveExecutor } from './executor.ts';
import type { Journal } from './journal.ts';
import {
  RateBudget,
  assertPlan,
  barSchedules,
  nextDue,
  type BarSubscription,
  type PlanOptions,
  type PollIntervals,
  type Schedule,
} from './rate-plan.ts';

export type PollClient = Pick<
  TradingClient,
  'retrieveBars' | 'searchOrders' | 'searchOpenOrders' | 'searchTrades' | 'searchOpenPositions' | 'searchAccounts'
>;

export interface PollerOptions {
  readonly client: PollClient;
  readonly executor: LiveExecutor;
  readonly journal: Journal;
  readonly venueEvents: SubjectType<VenueEvent>;
  readonly accountId: number;
  readonly contracts: ReadonlyMap<string, ContractSpec>;
  readonly intervals: PollIntervals;
  readonly subscriptions: readonly BarSubscription[];
  readonly logger: Logger;
  /** The gateway's clock (epoch ms): real time, or the simulator's accelerated clock. */
  readonly now: () => number;
  /** Gateway milliseconds per wall millisecond (1 in real time; the simulator's speed when accelerated). */
  readonly speed?: number;
  /** `live` flag of retrieveBars (live or sim data subscription). */
  readonly liveData?: boolean;
  /** Wait this long after a bar's end before asking for it, so the gateway has aggregated it (default 500 ms). */
  readonly closeDelayMs?: number;
  /** Positions or open orders older than this count as not visible (default 3 × the slower interval). */
  readonly staleAfterMs?: number;
  /** Trade/search looks back this far before its cursor, to catch late-stamped trades (default 60 s). */
  readonly tradeOverlapMs?: number;
  readonly plan?: PlanOptions;
  /**
   * The run-time read budget, when several pollers share one user's (a trading node); its own otherwise.
   * A shared one counts bar requests where they are sent (the shared bar requests answer several pollers
   * with one), so this poller counts only its account-state reads against it.
   */
  readonly budget?: RateBudget;
  /** Interval of the account-state polls while a realtime hub is connected (default 30 s). */
  readonly realtimePollMs?: number;
  readonly admin?: {
    readonly client: Pick<AdminClient, 'findTradingAccount'>;
    readonly accountName: string;
    readonly everyMs: number;
  };
  readonly onVisibility?: (reason: string | undefined) => void;
  readonly onPositions?: (positions: readonly S.Position[]) => void;
  readonly onTradingAccount?: (account: S.TradingAccount) => void;
  readonly onAccount?: (account: S.Account) => void;
  /** The gateway id a bar subscription's contract stands for now (a followed symbol's current month). */
  readonly route?: (contractId: string) => string;
  /** Called before and after every poll round (the session looks for a roll or an expiry there). */
  readonly onRound?: () => Promise<void>;
  /** Each trade poll's result, after it was applied (the realtime feed's watchdog compares it with the hub's). */
  readonly onTrades?: (trades: readonly S.Trade[]) => void;
}

interface Job {
  readonly name: string;
  readonly schedule: Schedule;
  /** The slower schedule while a realtime hub delivers what this job reads. */
  readonly realtime?: Schedule;
  readonly bucket: 'bars' | 'default';
  due: number;
  readonly run: () => Promise<void>;
}

interface BarFeed {
  readonly sub: BarSubscription;
  readonly subject: Subject<BarChunk>;
  lastClosed: number | undefined;
  lastPartialKey: string | undefined;
}

/** Default interval of the account-state polls while a realtime hub is connected. */
export const REALTIME_POLL_MS = 30_000;

/** Requests per default window reads must leave free for writes and lookups. */
const WRITE_ROOM = 20;

export class Poller implements MarketData {
  private readonly o: PollerOptions;
  private readonly budget: RateBudget;
  private readonly feeds = new Map<string, BarFeed>();
  private readonly jobs: Job[] = [];
  private readonly lastPrices = new Map<string, number>();
  private readonly okAt: { positions: number; openOrders: number };
  private readonly failing = new Map<string, string>();
  private visibilityReason: string | undefined;
  private tradeCursor: number;
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  private realtime = false;
  private positions = new Map<string, S.Position>();
  /** Gateway time the poller was made: bars that closed before it are history (warm-up), after it live. */
  readonly startedAt: number;
  private readonly staleAfterMs: number;

  constructor(options: PollerOptions) {
    this.o = options;
    assertPlan(options.subscriptions, options.intervals, options.plan);
    this.budget = options.budget ?? new RateBudget(undefined, options.now);
    this.startedAt = options.now();
    // The session reads positions and open orders while reconciling, just before the poller exists.
    this.okAt = { positions: this.startedAt, openOrders: this.startedAt };
    const saved = options.journal.getMeta('tradeCursor');
    this.tradeCursor = saved === undefined ? this.startedAt - 24 * 3_600_000 : Number(saved);
    const slowest = Math.max(options.intervals.positionsMs, options.intervals.openOrdersMs);
    this.staleAfterMs = options.staleAfterMs ?? 3 * slowest;
    const delay = options.closeDelayMs ?? 500;
    for (const sub of options.subscriptions) {
      const feed: BarFeed = { sub, subject: new Subject<BarChunk>(), lastClosed: undefined, lastPartialKey: undefined };
      this.feeds.set(feedKey(sub.contractId, sub.timeframe), feed);
      for (const schedule of barSchedules(sub, delay)) {
        this.addJob(
          `bars ${feedKey(sub.contractId, sub.timeframe)}${schedule.kind === 'every' ? ' partial' : ''}`,
          schedule,
          'bars',
          () => this.pollBars(feed, schedule.kind === 'every'),
        );
      }
    }
    const every = (periodMs: number): Schedule => ({ kind: 'every', periodMs, offsetMs: 0 });
    const iv = options.intervals;
    const slow = (periodMs: number): Schedule => every(Math.max(periodMs, options.realtimePollMs ?? REALTIME_POLL_MS));
    this.addJob('positions', every(iv.positionsMs), 'default', () => this.pollPositions(), slow(iv.positionsMs));
    this.addJob('openOrders', every(iv.openOrdersMs), 'default', () => this.pollOpenOrders(), slow(iv.openOrdersMs));
    this.addJob('orders', every(iv.ordersMs), 'default', () => this.pollOrders(), slow(iv.ordersMs));
    this.addJob('trades', every(iv.tradesMs), 'default', () => this.pollTrades(), slow(iv.tradesMs));
    this.addJob('account', every(iv.accountMs), 'default', () => this.pollAccount(), slow(iv.accountMs));
    if (options.admin) {
      const admin = options.admin;
      this.addJob('tradingAccount', every(admin.everyMs), 'default', async () => {
        const account = await admin.client.findTradingAccount(admin.accountName);
        this.o.onTradingAccount?.(account);
      });
    }
  }

  // ------------------------------------------------------------------ MarketData

  bars(contractId: string, timeframe: Timeframe): Observable<BarChunk> {
    const feed = this.feeds.get(feedKey(contractId, timeframe));
    if (!feed) {
      throw new Error(
        `no bar subscription for ${feedKey(contractId, timeframe)}: add it to the config's subscriptions so the poll plan can check it against the rate budget`,
      );
    }
    return feed.subject.asObservable();
  }

  lastPrice(contractId: string): number | undefined {
    return this.lastPrices.get(contractId);
  }

  // ------------------------------------------------------------------ realtime

  /**
   * A realtime hub started or stopped delivering the account's events. Turning it off makes every
   * account-state poll due at once (the hub may have missed something) and restores their intervals.
   */
  setRealtime(on: boolean): void {
    if (on === this.realtime) return;
    this.realtime = on;
    const now = this.o.now();
    for (const job of this.jobs) {
      if (job.realtime === undefined) continue;
      job.due = on ? nextDue(job.realtime, now) : now;
    }
    if (on) {
      // The reconciliation that preceded this call read both just now.
      this.okAt.positions = Math.max(this.okAt.positions, now);
      this.okAt.openOrders = Math.max(this.okAt.openOrders, now);
    }
    this.o.logger.info(
      { realtime: on },
      on
        ? 'realtime hub connected: account polls slowed to a safety net'
        : 'realtime hub not delivering: polling on the normal schedule',
    );
    if (this.running) this.reschedule();
  }

  get realtimeOn(): boolean {
    return this.realtime;
  }

  /** A position record from the realtime hub (size 0: the position closed). */
  applyPosition(position: S.Position): void {
    if (position.accountId !== this.o.accountId) return;
    if (position.size === 0) this.positions.delete(position.contractId);
    else this.positions.set(position.contractId, position);
    const list = [...this.positions.values()];
    this.o.executor.setPositions(list);
    this.o.onPositions?.(list);
  }

  /** An account record, polled or from the realtime hub. */
  applyAccount(account: S.Account): void {
    if (account.id !== this.o.accountId) return;
    this.o.onAccount?.(account);
    this.o.venueEvents.next({
      kind: 'account',
      time: this.o.now(),
      balance: account.balance,
      canTrade: account.canTrade,
    });
  }

  // ------------------------------------------------------------------ running

  /** Poll positions, open orders, orders and trades once, now (start-up and after a restart). */
  async refreshAccountState(): Promise<void> {
    await this.pollPositions();
    await this.pollOpenOrders();
    await this.pollOrders();
    await this.pollTrades();
    await this.pollAccount();
  }

  /** Run every job that is due at the gateway's current time. Tests with a manual clock call this directly. */
  async tick(): Promise<void> {
    this.ticking = true;
    try {
      // Before the round too (found by test/integration/live/weeks.test.ts): a roll due at this instant
      // happens before the round's bar poll, so a decision on the bar that closes at the roll date goes to
      // the new month; looking only after the round sent it to the old month, which the roll then closed
      // in the same round (a wasted round trip at every roll).
      await this.o.onRound?.();
      await this.round();
      await this.o.onRound?.();
    } finally {
      this.ticking = false;
    }
  }

  private async round(): Promise<void> {
    const now = this.o.now();
    // An unresolved place is looked up at every round, not only at the slower Order/search cadence.
    if (this.o.executor.unresolvedCount() > 0) {
      const orders = this.jobs.find((j) => j.name === 'orders');
      if (orders !== undefined && orders.due > now) orders.due = now;
    }
    for (const job of this.jobs) {
      if (job.due > now) continue;
      job.due = nextDue(this.realtime && job.realtime ? job.realtime : job.schedule, now);
      // Reads keep room for writes in the default bucket; a skipped read runs at its next due time.
      const counted = job.bucket === 'default' || this.o.budget === undefined;
      if (counted && !this.budget.tryTake(job.bucket, job.bucket === 'default' ? WRITE_ROOM : 0)) {
        this.o.logger.warn({ job: job.name }, 'poll skipped: rate budget window full');
        this.noteFailure(job.name, 'rate budget window full');
        continue;
      }
      try {
        await job.run();
        this.failing.delete(job.name);
        this.okTimes.set(job.name, this.o.now());
      } catch (error) {
        this.noteFailure(job.name, error instanceof Error ? error.message : String(error));
        const endpoint = error instanceof GatewayError ? error.endpoint : undefined;
        this.o.logger.warn({ job: job.name, endpoint, err: error }, 'poll failed; will retry at the next due time');
      }
    }
    this.updateVisibility();
  }

  /** Poll on the schedule until `stop()`. */
  start(): void {
    if (this.running) return;
    this.running = true;
    const loop = async (): Promise<void> => {
      this.timer = undefined;
      if (!this.running) return;
      try {
        await this.tick();
      } catch (error) {
        // A listener failed (not a poll: those are caught per job); keep polling, the bot must keep seeing.
        this.o.logger.error({ err: error }, 'poll round failed');
      }
      if (!this.running) return;
      this.schedule(loop);
    };
    this.loop = loop;
    void loop();
  }

  private loop: (() => Promise<void>) | undefined;
  private ticking = false;

  private schedule(loop: () => Promise<void>): void {
    const next = Math.min(...this.jobs.map((j) => j.due));
    const wallMs = Math.max(1, (next - this.o.now()) / (this.o.speed ?? 1));
    this.timer = setTimeout(() => void loop(), Math.min(wallMs, 60_000));
  }

  /** Due times changed outside a round: wake the loop for the earliest one (a round in progress will itself). */
  private reschedule(): void {
    if (this.ticking || this.loop === undefined || this.timer === undefined) return;
    clearTimeout(this.timer);
    this.schedule(this.loop);
  }

  stop(): void {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    for (const feed of this.feeds.values()) feed.subject.complete();
  }

  get visibility(): string | undefined {
    return this.visibilityReason;
  }

  private readonly okTimes = new Map<string, number>();

  /** Each poll job's last success (gateway ms) and its current failure, for what watches the bot. */
  health(): { name: string; lastOkAt: number | undefined; error: string | undefined }[] {
    return this.jobs.map((job) => ({
      name: job.name,
      lastOkAt: this.okTimes.get(job.name),
      error: this.failing.get(job.name),
    }));
  }

  // ------------------------------------------------------------------ jobs

  private addJob(
    name: string,
    schedule: Schedule,
    bucket: 'bars' | 'default',
    run: () => Promise<void>,
    realtime?: Schedule,
  ): void {
    // Account-state polls run at once; bar polls wait for the next close.
    const due = schedule.kind === 'every' ? this.o.now() : nextDue(schedule, this.o.now() - 1);
    this.jobs.push({ name, schedule, bucket, due, run, ...(realtime ? { realtime } : {}) });
  }

  private async pollBars(feed: BarFeed, partial: boolean): Promise<void> {
    const { contractId, timeframe } = feed.sub;
    const spec = this.o.contracts.get(contractId);
    if (!spec) throw new Error(`contract ${contractId} is not configured`);
    const now = this.o.now();
    const barMs = nominalMs(timeframe);
    const from = feed.lastClosed === undefined ? bucketStart(now, timeframe) - 2 * barMs : feed.lastClosed + 1;
    const raw = await this.o.client.retrieveBars({
      // A followed symbol's bars are its current month's; the feed (and its chunks) keep the symbol's id.
      contractId: this.o.route?.(contractId) ?? contractId,
      live: this.o.liveData ?? false,
      startTime: new Date(from).toISOString(),
      endTime: new Date(now).toISOString(),
      unit: BAR_UNIT_CODES[timeframe.unit],
      unitNumber: timeframe.unitNumber,
      limit: Math.min(20_000, Math.ceil((now - from) / barMs) + 2),
      includePartialBar: partial,
    });
    const bars = dedupeAscending(raw);
    const closed: S.Bar[] = [];
    let forming: S.Bar | undefined;
    for (const bar of bars) {
      const t = Date.parse(bar.t);
      if (bucketEnd(t, timeframe) <= now) {
        // The first poll only establishes where the live session starts: older bars are history.
        if (feed.lastClosed === undefined ? bucketEnd(t, timeframe) > this.startedAt : t > feed.lastClosed)
          closed.push(bar);
      } else {
        forming = bar;
      }
    }
    if (closed.length > 0) {
      // Bars missed during an outage arrive as one chunk, so the engine sends only the last decision.
      const chunk = toChunk(contractId, timeframe, spec, closed, false);
      feed.lastClosed = chunk.time[chunk.length - 1]!;
      this.lastPrices.set(contractId, chunk.close[chunk.length - 1]!);
      this.o.journal.setMeta(`lastBar ${feedKey(contractId, timeframe)}`, String(feed.lastClosed));
      if (closed.length > 1)
        this.o.logger.warn(
          { contractId, bars: closed.length },
          'several closed bars at once (catching up after a gap); only the last decision per strategy is sent',
        );
      feed.subject.next(chunk);
    }
    if (feed.lastClosed === undefined) feed.lastClosed = bucketStart(now, timeframe) - barMs;
    if (partial && forming) {
      const chunk = toChunk(contractId, timeframe, spec, [forming], true);
      const key = `${forming.t}|${chunk.high[0]}|${chunk.low[0]}|${chunk.close[0]}|${chunk.volume[0]}`;
      this.lastPrices.set(contractId, chunk.close[0]!);
      if (key !== feed.lastPartialKey) {
        feed.lastPartialKey = key;
        feed.subject.next(chunk);
      }
    }
  }

  private async pollPositions(): Promise<void> {
    const positions = await this.o.client.searchOpenPositions(this.o.accountId);
    this.positions = new Map(positions.map((p) => [p.contractId, p]));
    this.o.executor.setPositions(positions);
    this.okAt.positions = this.o.now();
    this.o.onPositions?.(positions);
  }

  private async pollOpenOrders(): Promise<void> {
    const open = await this.o.client.searchOpenOrders(this.o.accountId);
    this.o.executor.applyOpenOrders(open);
    this.okAt.openOrders = this.o.now();
  }

  private async pollOrders(): Promise<void> {
    const now = this.o.now();
    const live = this.o.journal.orders({ states: ['submitting', 'unknown', 'working', 'cancelling'] });
    const foreign = this.o.executor.oldestForeignWorking();
    const from = Math.min(
      now - 10 * 60_000,
      ...live.map((o) => o.createdAt - 120_000),
      ...(foreign === undefined ? [] : [foreign - 120_000]),
    );
    const orders = await this.o.client.searchOrders({
      accountId: this.o.accountId,
      startTimestamp: new Date(from).toISOString(),
    });
    this.o.executor.applyOrderSearch(orders, from);
  }

  private async pollTrades(): Promise<void> {
    const from = this.tradeCursor - (this.o.tradeOverlapMs ?? 60_000);
    const trades = await this.o.client.searchTrades({
      accountId: this.o.accountId,
      startTimestamp: new Date(from).toISOString(),
    });
    const { newest, heldBack } = this.o.executor.applyTrades(trades);
    this.o.onTrades?.(trades);
    const next = heldBack !== undefined ? Math.min(heldBack, newest ?? heldBack) : newest;
    if (next !== undefined && next > this.tradeCursor) {
      this.tradeCursor = next;
      this.o.journal.setMeta('tradeCursor', String(next));
    }
  }

  private async pollAccount(): Promise<void> {
    const accounts = await this.o.client.searchAccounts(true);
    const account = accounts.find((a) => a.id === this.o.accountId);
    if (!account)
      throw new GatewayError('MALFORMED_RESPONSE', `Account/search: account ${this.o.accountId} not listed`, {
        endpoint: 'Account/search',
        outcome: 'rejected',
      });
    this.applyAccount(account);
  }

  private noteFailure(job: string, message: string): void {
    this.failing.set(job, message);
  }

  private updateVisibility(): void {
    const now = this.o.now();
    let reason: string | undefined;
    // With the hub connected the polls are a slower safety net, and so is their staleness.
    const staleAfterMs = this.realtime
      ? Math.max(this.staleAfterMs, 3 * (this.o.realtimePollMs ?? REALTIME_POLL_MS))
      : this.staleAfterMs;
    for (const job of ['positions', 'openOrders'] as const) {
      const failure = this.failing.get(job);
      if (failure !== undefined) reason = `${job}: ${failure}`;
      else if (now - this.okAt[job] > staleAfterMs)
        reason = `${job} not read for ${Math.round((now - this.okAt[job]) / 1000)} s`;
      if (reason) break;
    }
    if (reason !== this.visibilityReason) {
      this.visibilityReason = reason;
      if (reason) this.o.logger.warn({ reason }, 'positions not visible: not opening risk');
      else this.o.logger.info('positions visible again');
      this.o.onVisibility?.(reason);
    }
  }
}

export function feedKey(contractId: string, tf: Timeframe): string {
  return `${contractId} ${tf.unitNumber}${tf.unit}`;
}

/** Oldest first, one bar per start time (the last one seen wins: a later answer is fresher). */
export function dedupeAscending(bars: readonly S.Bar[]): S.Bar[] {
  const byTime = new Map<number, S.Bar>();
  for (const bar of bars) byTime.set(Date.parse(bar.t), bar);
  return [...byTime.entries()].sort((a, b) => a[0] - b[0]).map(([, bar]) => bar);
}

/**
 * The `count` bars of a subscription that closed by `before` (gateway ms), oldest first, as one chunk:
 * the history a strategy warms up on before the first live bar. Looks back far enough to cross a weekend.
 */
export async function historyBefore(
  client: Pick<PollClient, 'retrieveBars'>,
  spec: ContractSpec,
  timeframe: Timeframe,
  before: number,
  count: number,
  liveData: boolean,
): Promise<BarChunk | undefined> {
  const barMs = nominalMs(timeframe);
  const end = bucketStart(before, timeframe);
  const lookback = Math.max(count * barMs * 3, 4 * 86_400_000);
  const raw = await client.retrieveBars({
    contractId: spec.id,
    live: liveData,
    startTime: new Date(end - lookback).toISOString(),
    endTime: new Date(end).toISOString(),
    unit: BAR_UNIT_CODES[timeframe.unit],
    unitNumber: timeframe.unitNumber,
    limit: Math.min(20_000, count),
    includePartialBar: false,
  });
  const closed = dedupeAscending(raw).filter((bar) => bucketEnd(Date.parse(bar.t), timeframe) <= before);
  const last = closed.slice(-count);
  return last.length === 0 ? undefined : toChunk(spec.id, timeframe, spec, last, false);
}

/** Gateway bars (oldest first) as one chunk, prices in ticks (off-grid prices are rounded to the grid). */
export function toChunk(
  contractId: string,
  timeframe: Timeframe,
  spec: ContractSpec,
  bars: readonly S.Bar[],
  partial: boolean,
): BarChunk {
  const g = spec.grid;
  const ticks = (p: number): number => {
    const t = g.toTicks(p);
    return Number.isInteger(t) ? t : g.roundToTicks(p);
  };
  const column = (value: (bar: S.Bar) => number): Float64Array => Float64Array.from(bars, value);
  return {
    contractId,
    timeframe,
    length: bars.length,
    time: column((b) => Date.parse(b.t)),
    open: column((b) => ticks(b.o)),
    high: column((b) => ticks(b.h)),
    low: column((b) => ticks(b.l)),
    close: column((b) => ticks(b.c)),
    volume: column((b) => b.v),
    ...(partial ? { partial: true } : {}),
  };
}
