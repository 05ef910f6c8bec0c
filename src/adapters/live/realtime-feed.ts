/**
 * The account's realtime events (the gateway's user hub) fed into the same paths the polls use: orders
 * to the executor's status handling, trades to its fill handling (one fill per trade id, whichever way it
 * came), positions and the account to the poller's records. The hub makes fills reach the engine as they
 * happen; it is never the only source of truth:
 *
 * - after every (re)connect, a full REST reconciliation runs before the polls slow down to a safety net;
 * - while the hub is down or reconnecting, the polls run on their normal schedule;
 * - a trade of an order the journal cannot name yet (its place answer still in flight) is held and
 *   applied again after the next event, or by the trade poll at the latest;
 * - a watchdog: a hub that stays connected while its events stop shows up in the trade polls, which
 *   confirm every fill anyway. A trade the poll found, made after the connection and older than
 *   `silenceMs`, that the hub never delivered means the hub went silent: it is logged and journaled,
 *   and the hub reconnected and subscribed again (the polls ran on their safety-net schedule meanwhile).
 */
import type { Subscription } from 'rxjs';
import type { Logger } from '../../engine/log.ts';
import { connectInBackground, restartInBackground, type BackgroundConnection } from './hub-connect.ts';
import type * as S from '../../protocol/schemas.ts';
import type { RealtimeState, UserEvent, UserHubClient } from '../gateway/realtime.ts';
import type { LiveExecutor } from './executor.ts';
import type { Journal } from './journal.ts';
import type { Poller } from './poller.ts';

export type UserHub = Pick<UserHubClient, 'userEvents' | 'state$' | 'start' | 'stop' | 'restart'>;

/** Default bound (gateway ms) after which a trade the polls found and the hub did not deliver means a silent hub. */
export const DEFAULT_USER_SILENCE_MS = 60_000;

export interface RealtimeFeedOptions {
  readonly hub: UserHub;
  readonly poller: Pick<Poller, 'setRealtime' | 'refreshAccountState' | 'applyPosition' | 'applyAccount'>;
  readonly executor: Pick<LiveExecutor, 'applyOrderEvents' | 'applyTrades'>;
  readonly journal: Pick<Journal, 'record'>;
  readonly accountId: number;
  readonly logger: Logger;
  /** Wall ms between attempts when the first connection fails (the client reconnects by itself after that). */
  readonly retryStartMs?: number;
  /** The gateway's clock (trade timestamps are on it). */
  readonly now?: () => number;
  /** Gateway ms a trade may go undelivered by a connected hub before the hub is taken as silent. */
  readonly silenceMs?: number;
}

/** Held trades kept at most; older ones are left to the trade poll. */
const MAX_HELD = 1_000;
/** Wall ms between retries of held trades while no event comes. */
const HELD_RETRY_MS = 250;
/** Trade ids the hub delivered (or the watchdog accounted for) that are remembered: a window, not the whole run. */
const SEEN_TRADES = 4_096;

export class RealtimeFeed {
  private readonly o: RealtimeFeedOptions;
  private readonly subscriptions: Subscription[] = [];
  private held: S.Trade[] = [];
  private heldTimer: NodeJS.Timeout | undefined;
  private connection: BackgroundConnection | undefined;
  private stopped = false;
  /** Bumped at each connection, so a reconciliation that finishes after a drop does not turn polling down. */
  private epoch = 0;
  /** Events applied, by kind (for the status line and tests). */
  readonly counts = { order: 0, trade: 0, position: 0, account: 0 };
  /** Trade ids delivered by the hub, oldest first (bounded). */
  private readonly seenTrades = new Set<number>();
  private connectedAt = Number.NaN;
  private restarting = false;
  /** Reconnects made by the watchdog. */
  restarts = 0;

  constructor(options: RealtimeFeedOptions) {
    this.o = options;
  }

  /** The hub's connection state now. */
  get state(): RealtimeState {
    return this.o.hub.state$.value;
  }

  /** Subscribe and connect. A connection that cannot be made now is retried in the background. */
  start(): void {
    this.subscriptions.push(
      this.o.hub.state$.subscribe((state) => this.onState(state)),
      this.o.hub.userEvents(this.o.accountId).subscribe({
        next: (event) => this.onEvent(event),
        error: (error: unknown) =>
          this.o.logger.error({ err: error }, 'realtime event stream failed; polling continues'),
      }),
    );
    this.connection = connectInBackground(() => this.o.hub.start(), {
      logger: this.o.logger,
      what: 'realtime user hub',
      retryMs: this.o.retryStartMs ?? 5_000,
    });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.connection?.cancel();
    if (this.heldTimer) clearTimeout(this.heldTimer);
    for (const subscription of this.subscriptions) subscription.unsubscribe();
    await this.o.hub
      .stop()
      .catch((error: unknown) => this.o.logger.warn({ err: error }, 'realtime hub did not close cleanly'));
  }

  private onState(state: RealtimeState): void {
    if (this.stopped) return;
    this.o.journal.record('realtime', 'event', null, { state });
    if (state !== 'connected') {
      this.connectedAt = Number.NaN;
      this.epoch++;
      this.o.poller.setRealtime(false);
      return;
    }
    this.connectedAt = (this.o.now ?? Date.now)();
    const epoch = ++this.epoch;
    // Whatever happened while the hub was away is read in full before the polls slow down.
    void this.o.poller.refreshAccountState().then(
      () => {
        if (epoch === this.epoch && !this.stopped) this.o.poller.setRealtime(true);
      },
      (error: unknown) =>
        this.o.logger.warn(
          { err: error },
          'reconciliation after the realtime connection failed; polling stays on its normal schedule',
        ),
    );
  }

  private onEvent(event: UserEvent): void {
    if (this.stopped) return;
    try {
      switch (event.kind) {
        case 'order':
          if (event.order.accountId !== this.o.accountId) return;
          this.o.executor.applyOrderEvents([event.order]);
          break;
        case 'trade':
          if (event.trade.accountId !== this.o.accountId) return;
          this.remember(event.trade.id);
          this.hold(event.trade);
          break;
        case 'position':
          this.o.poller.applyPosition(event.position);
          break;
        case 'account':
          this.o.poller.applyAccount(event.account);
          break;
      }
      this.counts[event.kind]++;
      this.retryHeld();
    } catch (error) {
      // The same record reaches the executor again through the polls; losing the event loses nothing.
      this.o.logger.error({ err: error, kind: event.kind }, 'realtime event could not be applied; the next poll will');
    }
  }

  /**
   * The trades a poll found: one the connected hub should have delivered long ago and did not means the
   * hub is silent. Logged, journaled, and the hub is reconnected (its subscriptions made again).
   */
  notePolledTrades(trades: readonly S.Trade[]): void {
    if (this.stopped || this.restarting || Number.isNaN(this.connectedAt)) return;
    const now = (this.o.now ?? Date.now)();
    const bound = this.o.silenceMs ?? DEFAULT_USER_SILENCE_MS;
    const missed: number[] = [];
    for (const trade of trades) {
      if (trade.accountId !== this.o.accountId || this.seenTrades.has(trade.id)) continue;
      const created = Date.parse(trade.creationTimestamp);
      if (!(created >= this.connectedAt && now - created >= bound)) continue;
      missed.push(trade.id);
      this.remember(trade.id);
    }
    if (missed.length === 0) return;
    this.o.logger.warn(
      { trades: missed, boundMs: bound },
      'user hub connected but it did not deliver trades the poll found; reconnecting (the polls confirmed them)',
    );
    this.o.journal.record('realtime', 'event', null, { state: 'silent', trades: missed });
    this.restarting = true;
    this.restarts++;
    restartInBackground(this.o.hub, {
      logger: this.o.logger,
      what: 'user hub',
      stopped: () => this.stopped,
      reconnect: () => {
        this.connection?.cancel();
        this.connection = connectInBackground(() => this.o.hub.start(), {
          logger: this.o.logger,
          what: 'realtime user hub',
          retryMs: this.o.retryStartMs ?? 5_000,
        });
      },
      settled: () => {
        this.restarting = false;
      },
    });
  }

  private remember(tradeId: number): void {
    this.seenTrades.delete(tradeId);
    this.seenTrades.add(tradeId);
    if (this.seenTrades.size > SEEN_TRADES) this.seenTrades.delete(this.seenTrades.values().next().value!);
  }

  private hold(trade: S.Trade): void {
    this.held.push(trade);
    if (this.held.length > MAX_HELD) this.held.splice(0, this.held.length - MAX_HELD);
  }

  /** Apply held trades; those still unnamed stay held (applying a journaled trade again does nothing). */
  private retryHeld(): void {
    if (this.held.length === 0) return;
    const { heldBack } = this.o.executor.applyTrades(this.held);
    if (heldBack === undefined) {
      this.held = [];
      if (this.heldTimer) clearTimeout(this.heldTimer);
      this.heldTimer = undefined;
      return;
    }
    this.held = this.held.filter((t) => Date.parse(t.creationTimestamp) >= heldBack);
    if (this.heldTimer === undefined) {
      this.heldTimer = setTimeout(() => {
        this.heldTimer = undefined;
        if (!this.stopped) this.retryHeld();
      }, HELD_RETRY_MS);
      this.heldTimer.unref();
    }
  }
}
