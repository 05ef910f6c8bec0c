/**
 * The simulator's market hub (`/hubs/market`, gateway extras): `SubscribeContractQuotes/Trades/
 * MarketDepth(contractId)` and their `Unsubscribe…` twins; events `GatewayQuote`, `GatewayTrade` and
 * `GatewayDepth`, each with two arguments `(contractId, data)`.
 *
 * Like the user hub, the events are read from the market after every change (a request handled, the
 * market stepped), never from inside the matching, so subscribers cost the matching nothing:
 * - a quote is sent when any of its prices or figures changed, at most `quotesPerSecond` times a second
 *   per contract (wall clock); the latest one is sent when the throttle window ends;
 * - trades are the market's prints along the price path since the last publish (a print at every new
 *   price, the aggressor from the direction of the move, the volume one price level of the bar trades)
 *   and every fill of the simulated accounts in the contract, oldest first, as one batch;
 * - depth is the book's levels (`book.levels` each side): the levels whose size or type changed, a
 *   level that left the book with volume 0, as one batch; a new subscriber first gets Reset and the book.
 */
import { DomType, TradeSide } from '../../protocol/codes.ts';
import type { GatewayDepth, GatewayQuote, GatewayTrade } from '../../protocol/hub-schemas.ts';
import type { FuturesContract } from '../../market/contract-months.ts';
import { depthOf, levelVolume } from '../../market/quotes.ts';
import type { SimEngine } from '../sim-core.ts';
import type { ContractMarket } from '../market/market.ts';
import { HubMethodError, type HubConnection, type HubDefinition, type HubHost } from './hub-host.ts';
import { SessionStats } from './session-stats.ts';
import type { Statement } from 'better-sqlite3';
import type { UserRow } from '../store.ts';

export const MARKET_HUB = '/hubs/market';

export interface MarketHubOptions {
  /** The most quotes a second one contract's subscribers receive. Default 20. */
  readonly quotesPerSecond?: number;
  /** Market time a publish looks back for prints (a clock that jumped far prints only its last stretch). Default 5 minutes. */
  readonly printLookbackMs?: number;
  /** The wall clock the throttle reads. */
  readonly wallClock?: () => number;
}

type Feed = 'Quotes' | 'Trades' | 'MarketDepth';
const FEEDS: readonly Feed[] = ['Quotes', 'Trades', 'MarketDepth'];

export interface DepthLevel {
  readonly type: number;
  readonly volume: number;
}

interface Watched {
  readonly contract: FuturesContract;
  readonly market: ContractMarket;
  readonly stats: SessionStats;
  lastQuote: string | undefined;
  quoteSentAt: number;
  quoteTimer: NodeJS.Timeout | undefined;
  /** Market time up to which prints were sent. */
  printedThrough: number;
  lastPrintPrice: number | undefined;
  lastFillId: number;
  /** Price (ticks) to level, as last sent. */
  book: Map<number, DepthLevel>;
}

interface FillRow {
  id: number;
  side: number;
  size: number;
  price_ticks: number;
  created_at: number;
}

export class MarketHub {
  readonly definition: HubDefinition<UserRow>;
  private readonly watched = new Map<string, Watched>();
  private readonly intervalMs: number;
  private readonly lookbackMs: number;
  private readonly wallClock: () => number;
  private host: HubHost | undefined;
  private readonly lastFillQuery: Statement<[string], { id: number | null }>;
  private readonly fillsQuery: Statement<[string, number], FillRow>;

  constructor(
    private readonly engine: SimEngine,
    options: MarketHubOptions = {},
  ) {
    const perSecond = options.quotesPerSecond ?? 20;
    if (!(perSecond > 0)) throw new RangeError(`quotesPerSecond must be positive, got ${perSecond}`);
    this.intervalMs = 1000 / perSecond;
    this.lookbackMs = options.printLookbackMs ?? 5 * 60_000;
    this.wallClock = options.wallClock ?? (() => performance.now());
    this.lastFillQuery = engine.db.prepare('SELECT MAX(id) AS id FROM trades WHERE contract_id = ?');
    this.fillsQuery = engine.db.prepare(
      'SELECT id, side, size, price_ticks, created_at FROM trades WHERE contract_id = ? AND id > ? AND voided = 0 ORDER BY id',
    );
    const methods: Record<string, (c: HubConnection<UserRow>, args: readonly unknown[]) => unknown> = {};
    for (const feed of FEEDS) {
      methods[`SubscribeContract${feed}`] = (c, args) =>
        this.subscribe(c, feed, this.tradedContract(args, `SubscribeContract${feed}`));
      methods[`UnsubscribeContract${feed}`] = (c, args) =>
        void c.groups.delete(group(feed, this.contractIdOf(args, `UnsubscribeContract${feed}`)));
    }
    this.definition = { path: MARKET_HUB, authenticate: (token) => engine.authenticate(token), methods };
  }

  attach(host: HubHost): void {
    this.host = host;
  }

  /** Send what changed since the last call to the connections that subscribed to it. */
  publish(): void {
    const host = this.host;
    if (host === undefined) return;
    for (const [contractId, watched] of this.watched) {
      if (host.hasListeners(MARKET_HUB, group('Quotes', contractId))) this.publishQuote(host, contractId, watched);
      if (host.hasListeners(MARKET_HUB, group('Trades', contractId))) this.publishTrades(host, contractId, watched);
      else this.skipTrades(watched);
      if (host.hasListeners(MARKET_HUB, group('MarketDepth', contractId))) this.publishDepth(host, contractId, watched);
    }
  }

  close(): void {
    for (const watched of this.watched.values()) clearTimeout(watched.quoteTimer);
  }

  // ------------------------------------------------------------------ subscriptions

  private contractIdOf(args: readonly unknown[], method: string): string {
    const contractId = args[0];
    if (typeof contractId !== 'string' || contractId === '') throw new HubMethodError(`${method} takes a contract id`);
    return contractId;
  }

  /** A contract listed now: an unknown, unlisted or expired one is refused by name. */
  private tradedContract(args: readonly unknown[], method: string): string {
    const contractId = this.contractIdOf(args, method);
    const contract = this.engine.contracts.byId(contractId);
    const status = contract === undefined ? 'unlisted' : this.engine.contracts.status(contract);
    if (status === 'unlisted') throw new HubMethodError(`Contract ${contractId} not found`);
    if (status === 'expired') throw new HubMethodError(`Contract ${contractId} has expired`);
    return contractId;
  }

  private subscribe(c: HubConnection<UserRow>, feed: Feed, contractId: string): void {
    const watched = this.watch(contractId);
    const host = this.host;
    // biome-ignore lint/complexity/useOptionalChain: the `&&` narrows `host` for the publishes below
    const listened = host !== undefined && host.hasListeners(MARKET_HUB, group(feed, contractId));
    // Bring the subscribers there are up to now (or, with none, the cursors), so the newcomer's starting
    // point is the state everyone else has.
    if (feed === 'Trades') {
      if (listened) this.publishTrades(host, contractId, watched);
      else this.skipTrades(watched);
    }
    if (feed === 'MarketDepth') {
      if (listened) this.publishDepth(host, contractId, watched);
      else watched.book = this.bookLevels(watched, this.engine.clock.now());
    }
    c.groups.add(group(feed, contractId));
    // A new subscriber starts from the current state: the quote and the whole book, sent to it alone.
    if (feed === 'Quotes') {
      const quote = this.quoteRecord(watched);
      if (quote !== undefined) c.send('GatewayQuote', [contractId, quote]);
    }
    if (feed === 'MarketDepth') c.send('GatewayDepth', [contractId, this.fullBook(watched)]);
  }

  private fullBook(watched: Watched): GatewayDepth[] {
    const timestamp = new Date(this.engine.clock.now()).toISOString();
    const price = (ticks: number) => watched.contract.grid.toPrice(ticks);
    const reset: GatewayDepth = { timestamp, type: DomType.Reset, price: 0, volume: 0, currentVolume: 0 };
    const book = [...watched.book].map(
      ([ticks, level]): GatewayDepth => ({
        timestamp,
        type: level.type,
        price: price(ticks),
        volume: level.volume,
        currentVolume: level.volume,
      }),
    );
    return [reset, ...book];
  }

  private watch(contractId: string): Watched {
    let watched = this.watched.get(contractId);
    if (watched !== undefined) return watched;
    const contract = this.engine.contracts.byId(contractId) as FuturesContract;
    const market = this.engine.market(contractId) as ContractMarket;
    const now = this.engine.clock.now();
    const lastFill = this.lastFillQuery.get(contractId)!;
    watched = {
      contract,
      market,
      stats: new SessionStats(market),
      lastQuote: undefined,
      quoteSentAt: Number.NEGATIVE_INFINITY,
      quoteTimer: undefined,
      printedThrough: now,
      lastPrintPrice: market.lastPrice(now),
      lastFillId: lastFill.id ?? 0,
      book: this.bookLevels({ contract, market }, now),
    };
    this.watched.set(contractId, watched);
    return watched;
  }

  // ------------------------------------------------------------------ quotes

  private quoteRecord(watched: Watched): GatewayQuote | undefined {
    const now = this.engine.clock.now();
    const { contract } = watched;
    const quote = this.engine.quote(contract.id, now);
    const last = this.engine.lastPrice(contract.id, now);
    const session = watched.stats.at(this.engine.calendar.dayStart(now), now);
    if (quote === undefined || last === undefined || session === undefined) return undefined;
    const price = (ticks: number) => contract.grid.toPrice(ticks);
    const previousClose = price(session.previousClose);
    const change = price(last - session.previousClose);
    const timestamp = new Date(now).toISOString();
    return {
      symbol: contract.symbolId,
      symbolName: `/${contract.spec.root}`,
      lastPrice: price(last),
      bestBid: price(quote.bid),
      bestAsk: price(quote.ask),
      change,
      changePercent: previousClose === 0 ? 0 : Math.round((change / previousClose) * 1_000_000) / 10_000,
      open: price(session.open),
      high: price(session.high),
      low: price(session.low),
      volume: session.volume,
      lastUpdated: timestamp,
      timestamp,
    };
  }

  private publishQuote(host: HubHost, contractId: string, watched: Watched): void {
    if (watched.quoteTimer !== undefined) return;
    const quote = this.quoteRecord(watched);
    if (quote === undefined) return;
    const { lastUpdated: _lastUpdated, timestamp: _timestamp, ...figures } = quote;
    const key = JSON.stringify(figures);
    if (key === watched.lastQuote) return;
    const wait = watched.quoteSentAt + this.intervalMs - this.wallClock();
    if (wait > 0) {
      // Throttled: the quote as it is when the window ends goes out then.
      watched.quoteTimer = setTimeout(() => {
        watched.quoteTimer = undefined;
        if (this.host?.hasListeners(MARKET_HUB, group('Quotes', contractId)))
          this.publishQuote(host, contractId, watched);
      }, wait);
      watched.quoteTimer.unref();
      return;
    }
    watched.lastQuote = key;
    watched.quoteSentAt = this.wallClock();
    host.publish(MARKET_HUB, group('Quotes', contractId), 'GatewayQuote', [contractId, quote]);
  }

  // ------------------------------------------------------------------ trades

  private publishTrades(host: HubHost, contractId: string, watched: Watched): void {
    const now = this.engine.clock.now();
    const prints = this.marketPrints(watched, now);
    const fills = this.accountFills(contractId, watched);
    watched.printedThrough = Math.max(watched.printedThrough, now);
    if (prints.length === 0 && fills.length === 0) return;
    const batch = [...prints, ...fills].sort((a, b) => a.time - b.time).map((t) => t.trade);
    host.publish(MARKET_HUB, group('Trades', contractId), 'GatewayTrade', [contractId, batch]);
  }

  /** Nobody listens: move the cursors so a later subscriber gets what happens from then on. */
  private skipTrades(watched: Watched): void {
    const now = this.engine.clock.now();
    if (now <= watched.printedThrough) return;
    watched.printedThrough = now;
    watched.lastPrintPrice = watched.market.lastPrice(now);
    watched.lastFillId = this.lastFillQuery.get(watched.contract.id)?.id ?? watched.lastFillId;
  }

  private marketPrints(watched: Watched, now: number): Array<{ time: number; trade: GatewayTrade }> {
    const { market, contract } = watched;
    const from = Math.max(watched.printedThrough, now - this.lookbackMs);
    const prints: Array<{ time: number; trade: GatewayTrade }> = [];
    for (const point of market.pointsBetween(from, now)) {
      const previous = watched.lastPrintPrice;
      watched.lastPrintPrice = point.price;
      if (previous === point.price) continue;
      const bar = market.barAt(point.time);
      const volume = bar < 0 ? 1 : levelVolume(market.barFacts(bar));
      const type = previous === undefined || point.price > previous ? TradeSide.Buy : TradeSide.Sell;
      prints.push({
        time: point.time,
        trade: {
          symbolId: contract.symbolId,
          price: contract.grid.toPrice(point.price),
          timestamp: new Date(point.time).toISOString(),
          type,
          volume,
        },
      });
    }
    return prints;
  }

  private accountFills(contractId: string, watched: Watched): Array<{ time: number; trade: GatewayTrade }> {
    const rows = this.fillsQuery.all(contractId, watched.lastFillId);
    const contract = watched.contract;
    return rows.map((row) => {
      watched.lastFillId = Math.max(watched.lastFillId, row.id);
      // The order's side is the aggressor's: a buy order (side 0, Bid) lifted the offer.
      const type = row.side === 0 ? TradeSide.Buy : TradeSide.Sell;
      return {
        time: row.created_at,
        trade: {
          symbolId: contract.symbolId,
          price: contract.grid.toPrice(row.price_ticks),
          timestamp: new Date(row.created_at).toISOString(),
          type,
          volume: row.size,
        },
      };
    });
  }

  // ------------------------------------------------------------------ depth

  private bookLevels(watched: Pick<Watched, 'contract' | 'market'>, now: number): Map<number, DepthLevel> {
    const levels = new Map<number, DepthLevel>();
    const quote = this.engine.quote(watched.contract.id, now);
    if (quote === undefined) return levels;
    const { bids, asks } = depthOf(quote, watched.market.fills.book.levels);
    bids.forEach((level, k) => {
      levels.set(level.price, { type: k === 0 ? DomType.BestBid : DomType.Bid, volume: level.size });
    });
    asks.forEach((level, k) => {
      levels.set(level.price, { type: k === 0 ? DomType.BestAsk : DomType.Ask, volume: level.size });
    });
    return levels;
  }

  private publishDepth(host: HubHost, contractId: string, watched: Watched): void {
    const now = this.engine.clock.now();
    const levels = this.bookLevels(watched, now);
    const timestamp = new Date(now).toISOString();
    const changes = bookChanges(watched.book, levels).map(
      ([ticks, level]): GatewayDepth => ({
        timestamp,
        type: level.type,
        price: watched.contract.grid.toPrice(ticks),
        volume: level.volume,
        currentVolume: level.volume,
      }),
    );
    watched.book = levels;
    if (changes.length > 0)
      host.publish(MARKET_HUB, group('MarketDepth', contractId), 'GatewayDepth', [contractId, changes]);
  }
}

/**
 * What turns the book `before` into `after` (price in ticks to level): every level new or different, and
 * every level gone with volume 0 (its old type). A client that sets each level it is sent and drops the
 * ones sent with volume 0 holds `after`.
 */
export function bookChanges(
  before: ReadonlyMap<number, DepthLevel>,
  after: ReadonlyMap<number, DepthLevel>,
): Array<[number, DepthLevel]> {
  const changes: Array<[number, DepthLevel]> = [];
  for (const [ticks, level] of after) {
    const was = before.get(ticks);
    if (was?.type !== level.type || was.volume !== level.volume) changes.push([ticks, level]);
  }
  for (const [ticks, was] of before) if (!after.has(ticks)) changes.push([ticks, { type: was.type, volume: 0 }]);
  return changes;
}

function group(feed: Feed, contractId: string): string {
  return `${feed}:${contractId}`;
}
