/**
 * The gateway's market hub as the engine's live quotes and market trades, prices converted to ticks on
 * each contract's grid at this edge. The session's contracts are subscribed from the start, so the guard
 * and trailing stops price against the last quote, not the last bar's close; a strategy's `ctx.quotes()`
 * shares that one subscription. Without a connection the last price falls back to the bars (the poller's).
 *
 * A watchdog catches a hub that stays connected while its quotes stop: no quote of a contract for
 * `quoteSilenceMs` (gateway ms) while its market is open (the exchange calendar) and bars closed after
 * the last quote. The contract is then *silent*: it is logged, the guard and trailing stops price from
 * the last bar (as without a connection), and the hub is reconnected and subscribed again; the first
 * quote after that ends the silence. A reconnect that brings no quote is tried again after the same bound.
 */
import { map, share, tap, type Observable, type Subscription } from 'rxjs';
import type { Logger } from '../../engine/log.ts';
import { connectInBackground, restartInBackground, type BackgroundConnection } from './hub-connect.ts';
import type { ContractSpec, MarketTrade, Quote } from '../../engine/types.ts';
import type { PriceGrid } from '../../engine/ticks.ts';
import type { GatewayQuote, GatewayTrade } from '../../protocol/hub-schemas.ts';
import type { MarketHubClient, RealtimeState } from '../gateway/realtime.ts';
import { parseDateTime } from '../../protocol/schemas.ts';
import { contractMarketOpen } from '../../market/contract-hours.ts';

export type MarketHub = Pick<MarketHubClient, 'quotes' | 'marketTrades' | 'start' | 'stop' | 'state$' | 'restart'>;

/** Default bound of quote silence (gateway ms) before the hub is taken as silent. */
export const DEFAULT_QUOTE_SILENCE_MS = 60_000;
/** The bound is never shorter than this much wall time. */
const MIN_SILENCE_WALL_MS = 1_000;

export interface MarketFeedOptions {
  readonly hub: MarketHub;
  readonly contracts: ReadonlyMap<string, ContractSpec>;
  readonly logger: Logger;
  /** Wall ms between attempts when the first connection fails. */
  readonly retryStartMs?: number;
  /** The gateway's clock and its speed (gateway ms per wall ms), for the silence bound. */
  readonly now?: () => number;
  readonly speed?: number;
  /** Gateway ms without a quote (market open, bars advancing) after which the hub is silent. */
  readonly quoteSilenceMs?: number;
  /** Whether the contract's market is open (the exchange calendar by default). */
  readonly isOpen?: (contractId: string, t: number) => boolean;
  /** Hears each silence and its end (the session journals them). */
  readonly onSilence?: (event: { contractId: string; state: 'silent' | 'back'; silentMs: number }) => void;
  /** Hears each change of the hub's connection (the session journals them, as the user hub's). */
  readonly onState?: (state: RealtimeState) => void;
  /** The month a contract of `contracts` stands for now (a followed symbol's); the hub subscribes months only. */
  readonly route?: (contractId: string) => string;
}

/** A price on the contract's grid in ticks; an off-grid price (a bad record) is rounded and logged. */
function ticksOf(grid: PriceGrid, price: number, logger: Logger, contractId: string): number {
  const exact = grid.toTicks(price);
  if (Number.isInteger(exact)) return exact;
  logger.warn({ contractId, price }, 'market hub price off the tick grid; rounded');
  return grid.roundToTicks(price);
}

export class MarketFeed {
  private readonly o: MarketFeedOptions;
  private readonly quoteStreams = new Map<string, Observable<Quote>>();
  private readonly tradeStreams = new Map<string, Observable<MarketTrade>>();
  private readonly last = new Map<string, number>();
  /** The guard's quote subscription of each month watched (a followed symbol's current month). */
  private readonly subscriptions = new Map<string, Subscription>();
  private stateSubscription: Subscription | undefined;
  private connection: BackgroundConnection | undefined;
  private readonly now: () => number;
  private readonly silenceMs: number;
  /** Gateway time of the last quote of each contract, of the last connection, of the last closed bar's arrival. */
  private readonly lastQuoteAt = new Map<string, number>();
  private connectedAt = Number.NaN;
  private readonly lastBarAt = new Map<string, number>();
  /** Contracts whose quotes are silent now (their last price comes from the bars), with when it began. */
  private readonly silentSince = new Map<string, number>();
  private watchdog: NodeJS.Timeout | undefined;
  private restarting = false;
  private stopped = false;
  /** Reconnects made by the watchdog (for the status and tests). */
  restarts = 0;

  private readonly isOpen: (contractId: string, t: number) => boolean;

  constructor(options: MarketFeedOptions) {
    this.o = options;
    this.isOpen = options.isOpen ?? contractMarketOpen();
    this.now = options.now ?? Date.now;
    // At least a second of wall time: an accelerated simulator sends its quotes at wall-clock ticks, so
    // at a high speed a minute of gateway time between two quotes is no silence.
    this.silenceMs = Math.max(
      options.quoteSilenceMs ?? DEFAULT_QUOTE_SILENCE_MS,
      MIN_SILENCE_WALL_MS * (options.speed ?? 1),
    );
  }

  /** A closed bar of the contract arrived: the market is moving, so quotes should be too. */
  noteBar(contractId: string): void {
    this.lastBarAt.set(this.route(contractId), this.now());
  }

  /** The hub's connection state now. */
  get state(): RealtimeState {
    return this.o.hub.state$.value;
  }

  /** Contracts whose quotes are silent now. */
  get silent(): readonly string[] {
    return [...this.silentSince.keys()];
  }

  /** Subscribe the contracts' quotes (the guard's last price) and connect, retrying in the background. */
  start(): void {
    for (const contractId of new Set([...this.o.contracts.keys()].map((id) => this.route(id)))) this.watch(contractId);
    this.stateSubscription = this.o.hub.state$.subscribe((state) => {
      if (state === 'connected') this.connectedAt = this.now();
      this.o.onState?.(state);
    });
    this.connect();
    // Checked a few times per bound of wall time (the gateway's clock may run faster than the wall's).
    const everyWallMs = Math.min(5_000, Math.max(50, this.silenceMs / (this.o.speed ?? 1) / 4));
    this.watchdog = setInterval(() => this.check(), everyWallMs);
    this.watchdog.unref();
  }

  private connect(): void {
    this.connection?.cancel();
    this.connection = connectInBackground(() => this.o.hub.start(), {
      logger: this.o.logger,
      what: 'market hub',
      retryMs: this.o.retryStartMs ?? 5_000,
    });
  }

  /** The guard's quotes of one month (its last price). */
  private watch(contractId: string): void {
    this.subscriptions.set(
      contractId,
      this.quotes(contractId).subscribe({
        error: (error: unknown) =>
          this.o.logger.warn(
            { err: error, contractId },
            'market hub quotes failed; the last price comes from the bars',
          ),
      }),
    );
  }

  /** A followed symbol rolled: the guard's quotes move from the old month to the new. */
  follow(from: string, to: string): void {
    this.subscriptions.get(from)?.unsubscribe();
    this.subscriptions.delete(from);
    this.silentSince.delete(from);
    this.lastQuoteAt.delete(from);
    if (!this.subscriptions.has(to)) this.watch(to);
  }

  private route(id: string): string {
    return this.o.route?.(id) ?? id;
  }

  /** The watchdog: a connected hub whose quotes stopped while the market is open and bars advance. */
  check(): void {
    if (this.stopped || this.restarting || this.o.hub.state$.value !== 'connected') return;
    const now = this.now();
    const newly: Array<{ contractId: string; silentMs: number }> = [];
    for (const contractId of this.subscriptions.keys()) {
      const reference = Math.max(this.lastQuoteAt.get(contractId) ?? -Infinity, this.connectedAt);
      if (!(now - reference >= this.silenceMs)) continue;
      if (!((this.lastBarAt.get(contractId) ?? -Infinity) > reference)) continue;
      if (!this.isOpen(contractId, now)) continue;
      const since = this.silentSince.get(contractId);
      if (since === undefined) {
        const from = this.lastQuoteAt.get(contractId) ?? this.connectedAt;
        this.silentSince.set(contractId, from);
        newly.push({ contractId, silentMs: now - from });
      }
    }
    const silent = this.silent;
    if (silent.length === 0) return;
    for (const { contractId, silentMs } of newly) {
      this.o.logger.warn(
        { contractId, silentMs, boundMs: this.silenceMs },
        'market hub connected but its quotes stopped while the market is open; the guard and trailing stops price from the last bar; reconnecting',
      );
      this.o.onSilence?.({ contractId, state: 'silent', silentMs });
    }
    if (newly.length === 0)
      this.o.logger.warn({ contracts: silent }, 'market hub quotes still silent after a reconnect; reconnecting again');
    this.restart();
  }

  private restart(): void {
    this.restarting = true;
    this.restarts++;
    restartInBackground(this.o.hub, {
      logger: this.o.logger,
      what: 'market hub',
      stopped: () => this.stopped,
      reconnect: () => this.connect(),
      settled: () => {
        this.restarting = false;
      },
    });
  }

  private onQuote(contractId: string): void {
    const now = this.now();
    this.lastQuoteAt.set(contractId, now);
    const since = this.silentSince.get(contractId);
    if (since === undefined) return;
    this.silentSince.delete(contractId);
    this.o.logger.info(
      { contractId, silentMs: now - since },
      'market hub quotes back; the guard prices from the quotes again',
    );
    this.o.onSilence?.({ contractId, state: 'back', silentMs: now - since });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.watchdog) clearInterval(this.watchdog);
    this.connection?.cancel();
    for (const subscription of this.subscriptions.values()) subscription.unsubscribe();
    this.stateSubscription?.unsubscribe();
    await this.o.hub
      .stop()
      .catch((error: unknown) => this.o.logger.warn({ err: error }, 'market hub did not close cleanly'));
  }

  /** The last traded price from the hub (ticks) while connected and not silent, else undefined (the bars decide). */
  lastPrice(contractId: string): number | undefined {
    const month = this.route(contractId);
    if (this.o.hub.state$.value !== 'connected' || this.silentSince.has(month)) return undefined;
    return this.last.get(month);
  }

  quotes(contractId: string): Observable<Quote> {
    return this.sharedFor(this.quoteStreams, contractId, (ticks) =>
      this.o.hub.quotes(contractId).pipe(
        map(
          (q: GatewayQuote): Quote => ({
            contractId,
            time: parseDateTime(q.timestamp),
            bid: ticks(q.bestBid),
            ask: ticks(q.bestAsk),
            last: ticks(q.lastPrice),
          }),
        ),
        tap((quote) => {
          this.last.set(contractId, quote.last);
          this.onQuote(contractId);
        }),
      ),
    );
  }

  marketTrades(contractId: string): Observable<MarketTrade> {
    return this.sharedFor(this.tradeStreams, contractId, (ticks) =>
      this.o.hub.marketTrades(contractId).pipe(
        map(
          (t: GatewayTrade): MarketTrade => ({
            contractId,
            time: parseDateTime(t.timestamp),
            price: ticks(t.price),
            size: t.volume,
            side: t.type === 0 ? 'buy' : 'sell',
          }),
        ),
      ),
    );
  }

  /** One hub subscription per contract and stream, shared by the guard and the strategy; prices in the contract's ticks. */
  private sharedFor<T>(
    cache: Map<string, Observable<T>>,
    contractId: string,
    make: (ticks: (price: number) => number) => Observable<T>,
  ): Observable<T> {
    let stream = cache.get(contractId);
    if (stream === undefined) {
      const grid = this.grid(contractId);
      stream = make((price) => ticksOf(grid, price, this.o.logger, contractId)).pipe(share());
      cache.set(contractId, stream);
    }
    return stream;
  }

  private grid(contractId: string): PriceGrid {
    const spec = this.o.contracts.get(contractId);
    if (spec === undefined) throw new RangeError(`market feed: contract ${contractId} is not one of the session's`);
    return spec.grid;
  }
}
