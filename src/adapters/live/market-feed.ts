/**
 * The gateway's market hub as the engine's live quotes and market trades, prices converted to ticks on
 * each contract's grid at this edge. The session's contracts are subscribed from the start, so the guard
 * and trailing stops price against the last quote, not the last bar's close; a strategy's `ctx.quotes()`
 * shares that one subscription. Without a connection the last price falls back to the bars (the poller's).
 */
import { map, share, tap, type Observable, type Subscription } from 'rxjs';
import type { Logger } from '../../engine/log.ts';
import { connectInBackground, type BackgroundConnection } from './hub-connect.ts';
import type { ContractSpec, MarketTrade, Quote } from '../../engine/types.ts';
import type { PriceGrid } from '../../engine/ticks.ts';
import type { GatewayQuote, GatewayTrade } from '../../protocol/hub-schemas.ts';
import type { MarketHubClient } from '../gateway/realtime.ts';
import { parseDateTime } from '../../protocol/schemas.ts';

export type MarketHub = Pick<MarketHubClient, 'quotes' | 'marketTrades' | 'start' | 'stop' | 'state$'>;

export interface MarketFeedOptions {
  readonly hub: MarketHub;
  readonly contracts: ReadonlyMap<string, ContractSpec>;
  readonly logger: Logger;
  /** Wall ms between attempts when the first connection fails. */
  readonly retryStartMs?: number;
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
  private readonly subscriptions = new Map<string, Subscription>();
  private connection: BackgroundConnection | undefined;

  constructor(options: MarketFeedOptions) {
    this.o = options;
  }

  /** Subscribe the contracts' quotes (the guard's last price) and connect, retrying in the background. */
  start(): void {
    for (const contractId of new Set([...this.o.contracts.keys()].map((id) => this.route(id)))) this.watch(contractId);
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
    if (!this.subscriptions.has(to)) this.watch(to);
  }

  private route(id: string): string {
    return this.o.route?.(id) ?? id;
  }

  async stop(): Promise<void> {
    this.connection?.cancel();
    for (const subscription of this.subscriptions.values()) subscription.unsubscribe();
    await this.o.hub
      .stop()
      .catch((error: unknown) => this.o.logger.warn({ err: error }, 'market hub did not close cleanly'));
  }

  /** The last traded price from the hub (ticks) while connected, else undefined (the bars decide). */
  lastPrice(contractId: string): number | undefined {
    return this.o.hub.state$.value === 'connected' ? this.last.get(this.route(contractId)) : undefined;
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
        tap((quote) => this.last.set(contractId, quote.last)),
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
