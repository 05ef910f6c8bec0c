/**
 * What the sessions of one user share when they run in one process (the trading node): one logged-in
 * client (one token, one client-side rate limiter, so one request budget), one connection to each
 * realtime hub carrying every session's subscriptions, one run-time read budget, and bar requests that
 * several sessions make for the same contract and timeframe answered once.
 *
 * A session given these does not log in again and does not close what it did not open; the node that
 * made them closes them after the last session stopped.
 */
import type { TradingClient } from '../gateway/trading.ts';
import type * as S from '../../protocol/schemas.ts';
import type { Logger } from '../../engine/log.ts';
import type { MarketHub } from './market-feed.ts';
import type { UserHub } from './realtime-feed.ts';
import { RateBudget } from './rate-plan.ts';
import { barUnitFromCode, bucketStart } from '../../engine/timeframe.ts';
import { TicklineError } from '../../engine/errors.ts';

export interface SharedConnections {
  /** Logged in by the node before any session starts. */
  readonly client: TradingClient;
  /** The bar requests of every session's poller, answered once per contract and timeframe. */
  readonly bars: SharedBarRequests;
  /** The run-time read budget of every session's poller together. */
  readonly budget: RateBudget;
  readonly marketHub?: MarketHub;
  readonly userHub?: UserHub;
}

type Hub = { start(): Promise<void>; stop(): Promise<void>; restart(): Promise<void> };

/**
 * A hub several feeds start and stop: the connection opens with the first `start` and closes with the last
 * `stop`; a restart (a feed's watchdog found it silent) is one restart for everyone, however many feeds
 * ask for it at once.
 */
export class SharedHub<H extends Hub> {
  private users = 0;
  private starting: Promise<void> | undefined;
  private restarting: Promise<void> | undefined;

  constructor(readonly hub: H) {}

  /** The hub as one feed sees it: its own start and stop count, everything else is the hub's. */
  lease(): H {
    let started = false;
    const start = (): Promise<void> => {
      if (!started) {
        started = true;
        this.users++;
      }
      // A failed first connection is tried again by whichever feed calls next (each retries on its own).
      this.starting ??= this.hub.start().catch((error: unknown) => {
        this.starting = undefined;
        throw error;
      });
      return this.starting;
    };
    const stop = async (): Promise<void> => {
      if (!started) return;
      started = false;
      this.users--;
      if (this.users === 0) {
        this.starting = undefined;
        await this.hub.stop();
      }
    };
    const restart = (): Promise<void> => {
      this.restarting ??= this.hub.restart().finally(() => {
        this.restarting = undefined;
      });
      return this.restarting;
    };
    return new Proxy(this.hub, {
      get(target, key, receiver) {
        if (key === 'start') return start;
        if (key === 'stop') return stop;
        if (key === 'restart') return restart;
        const value: unknown = Reflect.get(target, key, receiver);
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
  }
}

/**
 * Bar requests of several pollers for one contract and timeframe, answered once. The pollers of a node's
 * accounts ask at the same bar closes (the schedule is the bar's end plus the close delay), each from the
 * bar after its last one to its now. A request for the same contract, timeframe and data kind as one asked
 * earlier in the same bar (no bar of the timeframe closed between the two, so the earlier answer holds
 * every closed bar the later one could get) and from no earlier a start gets the earlier answer, filtered
 * to its start; each poller then drops the bars it already had. A request with the forming bar shares only
 * an answer at most `shareMs` of gateway time old, since the forming bar changes. Anything else goes to the
 * gateway.
 */
export class SharedBarRequests implements Pick<TradingClient, 'retrieveBars'> {
  private readonly recent = new Map<string, { from: number; at: number; answer: Promise<S.Bar[]> }>();
  /** Requests sent to the gateway and requests answered from another's answer (for the node's figures). */
  readonly counts = { sent: 0, shared: 0 };

  constructor(
    private readonly client: Pick<TradingClient, 'retrieveBars'>,
    private readonly now: () => number,
    /** Counts each request sent; a full window skips the poll round (the pollers retry at their next close). */
    private readonly budget: RateBudget,
    private readonly shareMs = 1_000,
    private readonly logger?: Logger,
  ) {}

  retrieveBars(request: S.RetrieveBarsRequest): Promise<S.Bar[]> {
    const key = JSON.stringify([
      request.contractId,
      request.unit,
      request.unitNumber,
      request.live,
      request.includePartialBar,
    ]);
    const from = Date.parse(request.startTime);
    const now = this.now();
    const held = this.recent.get(key);
    const unit = barUnitFromCode(request.unit);
    const sameBar =
      held !== undefined &&
      unit !== undefined &&
      bucketStart(held.at, { unit, unitNumber: request.unitNumber }) ===
        bucketStart(now, { unit, unitNumber: request.unitNumber });
    if (
      held !== undefined &&
      sameBar &&
      held.from <= from &&
      (!request.includePartialBar || now - held.at <= this.shareMs)
    ) {
      this.counts.shared++;
      return held.answer.then((bars) => bars.filter((b) => Date.parse(b.t) >= from));
    }
    if (!this.budget.tryTake('bars'))
      return Promise.reject(
        new BarBudgetFull(`bar request budget window full: ${request.contractId} skipped this round`),
      );
    this.counts.sent++;
    const answer = this.client.retrieveBars(request);
    const entry = { from, at: now, answer };
    this.recent.set(key, entry);
    // A failed answer is nobody's to share: the next poller asks again.
    answer.catch((error: unknown) => {
      if (this.recent.get(key) === entry) this.recent.delete(key);
      this.logger?.debug({ err: error, contractId: request.contractId }, 'shared bar request failed');
    });
    return answer;
  }
}

export class BarBudgetFull extends TicklineError {
  override readonly name = 'BarBudgetFull';
  // The gateway was not asked: a skipped poll, retried at the next close like any failed read.
  readonly kind = 'runtime';
  readonly code = 'BAR_BUDGET_FULL';
}

/** The shared parts of one user's sessions over one logged-in client. */
export function shareConnections(
  client: TradingClient,
  options: {
    readonly now: () => number;
    readonly marketHub?: MarketHub;
    readonly userHub?: UserHub;
    readonly logger?: Logger;
  },
): SharedConnections {
  const budget = new RateBudget(undefined, options.now);
  const barRequests = new SharedBarRequests(client, options.now, budget, 1_000, options.logger);
  return {
    client,
    bars: barRequests,
    budget,
    ...(options.marketHub === undefined ? {} : { marketHub: options.marketHub }),
    ...(options.userHub === undefined ? {} : { userHub: options.userHub }),
  };
}
