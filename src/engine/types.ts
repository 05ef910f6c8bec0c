/**
 * The engine's core vocabulary. Adapters (backtest, live, paper) translate to and from these types at
 * their edges; nothing here knows HTTP or the gateway's wire shapes. Prices are integers of ticks.
 */
import type { Observable } from 'rxjs';
import type { PriceGrid } from './ticks.ts';

// ------------------------------------------------------------------ instruments and time

export type BarUnit = 'second' | 'minute' | 'hour' | 'day' | 'week' | 'month';

export interface Timeframe {
  readonly unit: BarUnit;
  readonly unitNumber: number;
}

export interface ContractSpec {
  /** The gateway's contract id, for example `CON.F.US.EP.Z25`. */
  readonly id: string;
  /** Short code, for example `ESZ5`. */
  readonly name: string;
  readonly symbolId: string;
  readonly description: string;
  readonly grid: PriceGrid;
}

// ------------------------------------------------------------------ bars

/**
 * Bars as typed-array columns, one entry per bar: prices in ticks, times the bar's start in epoch ms
 * (UTC). About 48 bytes a bar and no object per bar: the form every history source produces.
 */
export interface BarColumns {
  readonly time: Float64Array;
  readonly open: Float64Array;
  readonly high: Float64Array;
  readonly low: Float64Array;
  readonly close: Float64Array;
  readonly volume: Float64Array;
}

/**
 * A run of consecutive closed bars of one contract and timeframe, as typed-array columns. Prices are
 * ticks (integers stored in Float64Array), times are the bar's start in epoch milliseconds (UTC).
 * Columns may be views into larger arrays; a chunk is never mutated after it is emitted.
 * Live adapters emit chunks of one bar; the backtest emits large chunks so that per-bar costs stay low.
 */
export interface BarChunk extends BarColumns {
  readonly contractId: string;
  readonly timeframe: Timeframe;
  readonly length: number;
  /** True when the last bar is still forming (live, `includePartialBar`); it is re-sent when it closes. */
  readonly partial?: boolean;
  /**
   * For a chunk derived from a finer base stream (multi-timeframe): for each bar, the index in the base
   * chunk at whose close this bar became known. Absent on base chunks (bar i is known at index i).
   */
  readonly baseIndex?: Int32Array;
}

/** One bar as an object, for strategies that prefer per-bar callbacks to columns. */
export interface BarRecord {
  readonly contractId: string;
  readonly time: number;
  readonly open: number;
  readonly high: number;
  readonly low: number;
  readonly close: number;
  readonly volume: number;
}

// ------------------------------------------------------------------ intents

export type Side = 'buy' | 'sell';

/** What kind of order, with exactly the prices it needs (ticks). A limit without a price cannot be written. */
export type OrderSpec =
  | { readonly type: 'market' }
  | { readonly type: 'limit'; readonly limitPrice: number }
  | { readonly type: 'stop'; readonly stopPrice: number }
  | { readonly type: 'stopLimit'; readonly stopPrice: number; readonly limitPrice: number }
  /**
   * `trailPrice` is an absolute price level in ticks, as the gateway reads it (spec 4.1): the trail
   * distance becomes |last traded price - trailPrice| in whole ticks at the moment the order is accepted.
   */
  | { readonly type: 'trailingStop'; readonly trailPrice: number };

/** Protective orders attached to an entry, as unsigned distances in ticks from the entry's fill. */
export interface BracketSpec {
  readonly stopLossTicks?: number;
  readonly takeProfitTicks?: number;
}

interface IntentBase {
  /**
   * Unique client id, stamped by the runner when the strategy leaves it out (`<strategyId>-<sequence>`).
   * For a place it becomes the order's `customTag`, and modify/cancel name their order by it.
   */
  readonly id?: string;
  /** Index of the bar (in the chunk being processed) at whose close this intent was decided. */
  readonly at?: number;
}

/**
 * What the numbers of an intent's limit, stop and trail prices are: `'price'`, decimal prices as quoted
 * (what the intent constructors make), converted exactly to ticks where the intent enters the engine; or
 * ticks, when left out (the engine's own intents, and strategies that compute in ticks from bar fields).
 */
export type PriceUnit = 'price' | 'ticks';

export interface PlaceIntent extends IntentBase {
  readonly kind: 'place';
  readonly contractId: string;
  readonly side: Side;
  readonly size: number;
  readonly order: OrderSpec;
  readonly bracket?: BracketSpec;
  readonly unit?: PriceUnit;
  /**
   * Why the strategy enters (`'breakout'`, `'fade'`): carried to the trade this order opens (its entry's
   * label in the report's trade analysis and in trades.csv). An order that only reduces a position leaves
   * the trade's label as its entry set it.
   */
  readonly label?: string;
}

export interface ModifyIntent extends IntentBase {
  readonly kind: 'modify';
  /** Client id of the working order to change. */
  readonly orderId: string;
  readonly size?: number;
  readonly limitPrice?: number;
  readonly stopPrice?: number;
  readonly trailPrice?: number;
  readonly unit?: PriceUnit;
}

export interface CancelIntent extends IntentBase {
  readonly kind: 'cancel';
  readonly orderId: string;
}

/** Cancel working orders and close positions: of one contract, or of everything. */
export interface FlattenIntent extends IntentBase {
  readonly kind: 'flatten';
  readonly contractId?: string;
}

/** Desired signed position; the engine orders only the difference from position plus working orders. */
export interface TargetIntent extends IntentBase {
  readonly kind: 'target';
  readonly contractId: string;
  readonly size: number;
  /** Why: the label of the trade the order it becomes opens (see `PlaceIntent.label`). */
  readonly label?: string;
}

export type Intent = PlaceIntent | ModifyIntent | CancelIntent | FlattenIntent | TargetIntent;
export type IntentKind = Intent['kind'];

// ------------------------------------------------------------------ venue (what an adapter executes)

/** An order the risk guard accepted, with its id fixed; what a venue places. */
export interface OrderCommand {
  readonly id: string;
  readonly contractId: string;
  readonly side: Side;
  readonly size: number;
  readonly order: OrderSpec;
  readonly bracket?: BracketSpec;
  /** Bar time (epoch ms) at which it was decided. */
  readonly decidedAt: number;
}

export interface ModifyCommand {
  readonly orderId: string;
  readonly size?: number;
  readonly limitPrice?: number;
  readonly stopPrice?: number;
  readonly trailPrice?: number;
}

export type OrderState = 'pending' | 'working' | 'filled' | 'cancelled' | 'rejected' | 'expired';

export interface OrderUpdate {
  readonly kind: 'order';
  readonly orderId: string;
  readonly state: OrderState;
  readonly time: number;
  readonly contractId: string;
  readonly side: Side;
  readonly size: number;
  /** Filled size confirmed by fills delivered on `events`. */
  readonly filledSize: number;
  /**
   * Filled size as the venue's order record reports it, when that is ahead of the fills delivered (a live
   * gateway's order search can show a fill before its trade search does): provisional until they arrive.
   */
  readonly reportedFilledSize?: number;
  readonly order: OrderSpec;
  /**
   * When the order was created (a live session: the journal's time of its place, or the gateway's creation
   * timestamp of an order the bot did not place), where the venue knows it; `time` is when this update
   * was seen. The readable `placed` line is dated by it, never after the order's fills.
   */
  readonly createdAt?: number;
  /** Venue's own id (the gateway's integer order id), where it has one. */
  readonly venueOrderId?: number;
  readonly reason?: string;
  /**
   * The venue holds an order of ours that had been given up (its place outcome stayed unknown past the
   * window and it was taken as lost): the engine cancels it if it still works and re-asserts its target.
   */
  readonly adopted?: boolean;
}

/** One execution. `fillId` is unique per venue, so a fill seen twice is recognised. */
export interface Fill {
  readonly kind: 'fill';
  readonly fillId: string;
  readonly orderId: string;
  readonly contractId: string;
  readonly side: Side;
  readonly size: number;
  /** Ticks. */
  readonly price: number;
  /** Money, this fill's fees. */
  readonly fees: number;
  readonly time: number;
}

export interface AccountUpdate {
  readonly kind: 'account';
  readonly time: number;
  readonly balance: number;
  readonly canTrade: boolean;
}

export type VenueEvent = OrderUpdate | Fill | AccountUpdate;

/**
 * What a venue is, as the engine needs to know it: the venue declares it and the engine reads it once,
 * when it is created. Each field decides how the engine treats the venue's answers.
 */
export interface VenueTraits {
  /**
   * `live`: the venue answers later, on its own time, as a gateway does: paper and live trading (a paper
   * account on the simulator too). An order's outcome may stay pending or unknown for a while, so the
   * engine runs in live mode: a target counts pending orders only in the direction that cannot overshoot
   * it and takes fills the venue reported before their trades as provisional; a push of several bars at
   * once (catching up after an outage) sends only each strategy's last target per contract (`SUPERSEDED`
   * for the others); when a pending or adopted order turns out to execute, the strategy's last target is
   * re-asserted. `simulated`: the venue answers at once, inside `onBar` and `place` (a backtest), and every
   * decision of every bar is sent as it is made.
   */
  readonly kind: 'live' | 'simulated';
  /**
   * The venue may report a fill twice, or after a later one (a gateway's realtime event and its trade
   * search): accounting remembers fill ids to drop a repeat (`fills$` never sees it) and books a late fill
   * in execution order. `false`: every fill comes once and in order (a simulator filling from its own
   * book), and accounting keeps no fill memory, which costs a hash insert per fill: a fill id reported
   * twice would be booked twice.
   */
  readonly fillsCanRepeat: boolean;
  /**
   * How the venue's account books a closed trade's PnL: `cents`, rounded to cents as the gateway does
   * (paper and live), which the engine then does too so that its balance stays the account's; `none`:
   * exact (a backtest).
   */
  readonly pnlRounding: 'cents' | 'none';
  /**
   * `true`: the venue may keep a place command past the call (its own records, a journal, a request in
   * flight). `false`: it copies what it needs of a command during `place`, so the engine lends it one
   * object it fills again for every order (a backtest then makes none per order).
   */
  readonly keepsCommands: boolean;
}

/**
 * What the backtest and the live adapter both implement. The engine calls `place`, `modify` and `cancel`
 * only for intents the risk guard accepted, and learns what happened only from `events`.
 */
export interface Venue {
  /** What this venue is (live or simulated, whether fills can repeat, how PnL is rounded). */
  readonly traits: VenueTraits;
  readonly events: Observable<VenueEvent>;
  /**
   * The same events to one plain function, called synchronously in subscription order with `events`'
   * subscribers (a simulated venue's own stream). The runner prefers it: an RxJS subscriber costs several
   * calls per event, three events an order. A throw in the listener reaches the venue's caller. An order
   * update or a fill is the listener's to read during the call only: the venue may pass one object it
   * rewrites for the next (a listener that keeps one copies it). Account updates are its own to keep.
   */
  listen?(listener: (event: VenueEvent) => void): { unsubscribe(): void };
  /**
   * Called by the runner before bar `index` of `chunk` reaches the strategies. A simulated venue matches
   * its working orders against the bar and emits fills synchronously; a live venue ignores it.
   */
  onBar?(chunk: BarChunk, index: number): void;
  /**
   * False while `onBar` would only note the bar (nothing works that a bar could fill). The runner then
   * passes over the bars nothing else needs either and calls `onBar` for the last of them alone.
   */
  matchesBars?(): boolean;
  place(command: OrderCommand): void;
  modify(command: ModifyCommand): void;
  cancel(orderId: string): void;
}

/** Where bars come from: a replayed history or a live poller. */
export interface MarketData {
  bars(contractId: string, timeframe: Timeframe): Observable<BarChunk>;
  /** Last traded price in ticks where the adapter knows one (live quotes); the runner otherwise uses the last close. */
  lastPrice?(contractId: string): number | undefined;
  /** Live quotes where the adapter has them (the market hub); strategies otherwise get one per bar. */
  quotes?(contractId: string): Observable<Quote>;
  /** Live market trades where the adapter has them; strategies otherwise get one print per bar. */
  marketTrades?(contractId: string): Observable<MarketTrade>;
}

/** Best bid and ask with the last trade, prices in ticks: a live quote, or one made from a bar's close. */
export interface Quote {
  readonly contractId: string;
  readonly time: number;
  readonly bid: number;
  readonly ask: number;
  /** Sizes at the top of the book, where the source tells them (bars and the simulator's book do; a live quote does not). */
  readonly bidSize?: number;
  readonly askSize?: number;
  readonly last: number;
}

/** A trade of the market (anyone's), price in ticks; `side` is the aggressor's where known. */
export interface MarketTrade {
  readonly contractId: string;
  readonly time: number;
  readonly price: number;
  readonly size: number;
  readonly side?: Side;
}

/**
 * How a bar's close becomes a quote where there are no live quotes: the backtest's spread model, given
 * the bar, the bar before it and the direction of the last price change (1 up, -1 down).
 */
export type BarQuoteModel = (
  bar: BarRecord,
  previous: BarRecord | undefined,
  direction: 1 | -1,
) => { bid: number; ask: number; bidSize: number; askSize: number };

/** An object of `T` whose fields its owner fills again (an object lent for one call, then made over). */
export type Writable<T> = { -readonly [K in keyof T]: T[K] };
