/**
 * Positions, average prices, realized and unrealized PnL (ticks x tick value), fees, per trading day and
 * in total. The runner feeds it fills and marks; the risk guard, the rule floors and the reports all read
 * these numbers, so they cannot disagree.
 */
import { ContractMap } from './contract-map.ts';
import { objectArray } from './object-array.ts';
import { TradeColumns } from './trade-columns.ts';
import type { BlockSpill } from './column-blocks.ts';
import type { BlockLease } from './block-stock.ts';
import { gatewayCents } from './money.ts';
import type { ContractSpec, Fill, Side } from './types.ts';
import { EngineError } from './errors.ts';
import { ownFill } from './event-copies.ts';

export interface PositionView {
  readonly contractId: string;
  /** Signed size: positive long, negative short. */
  readonly size: number;
  /** Average entry price in ticks (fractional when entries were at different prices); NaN when flat. */
  readonly averagePrice: number;
  /** Last known price in ticks (NaN before the first bar). */
  readonly lastPrice: number;
  readonly unrealizedPnl: number;
  readonly realizedPnl: number;
  readonly fees: number;
}

/** A closed (part of a) position: one record per fill that reduced a position. */
export interface ClosedTrade {
  readonly contractId: string;
  /** Side of the position that was closed. */
  readonly side: Side;
  readonly size: number;
  /** Ticks. */
  readonly entryPrice: number;
  readonly exitPrice: number;
  readonly entryTime: number;
  readonly exitTime: number;
  /** Money, before fees. */
  readonly pnl: number;
  /** Money: the fees of both sides of the closed contracts (entry fees averaged like the entry price). */
  readonly fees: number;
  readonly exitFillId: string;
  readonly tradingDay: string;
  /** The label of the intent that opened the position (`PlaceIntent.label`), when it had one. */
  readonly label?: string | undefined;
}

export interface DayRecord {
  readonly tradingDay: string;
  startBalance: number;
  /** Balance at the end of the day (realized only). */
  endBalance: number;
  realizedPnl: number;
  fees: number;
  trades: number;
  winningTrades: number;
  losingTrades: number;
  contracts: number;
}

export interface AccountSnapshot {
  readonly time: number;
  readonly tradingDay: string;
  readonly startingBalance: number;
  /** Starting balance + realized - fees. */
  readonly balance: number;
  readonly equity: number;
  readonly realizedPnl: number;
  readonly unrealizedPnl: number;
  readonly fees: number;
  /** Today's realized + unrealized - fees. */
  readonly dayPnl: number;
  readonly positions: readonly PositionView[];
}

const FILL_MEMORY = 65_536;

/** The mutable position state of one contract (the runner's per-bar loop reads and marks it directly). */
export class PositionBook {
  size = 0;
  averagePrice = NaN;
  entryTime = NaN;
  /** Entry fees per open contract not yet assigned to a closed trade. */
  entryFeePerContract = 0;
  /** The label of the order that opened the position. */
  entryLabel: string | undefined = undefined;
  lastPrice = NaN;
  realizedPnl = 0;
  fees = 0;
  constructor(
    readonly contractId: string,
    readonly tickValue: number,
  ) {}
  unrealized(price: number): number {
    // Before any price is known a position is valued at its entry (a NaN would poison every total).
    return this.size === 0 || !(price === price) ? 0 : (price - this.averagePrice) * this.size * this.tickValue;
  }
}

/** A fill's size signed by its side: positive bought, negative sold. */
function signedSize(fill: Fill): number {
  return fill.side === 'buy' ? fill.size : -fill.size;
}

export interface BookState {
  size: number;
  averagePrice: number;
  entryTime: number;
  entryFeePerContract: number;
  entryLabel: string | undefined;
}

interface FillHistory {
  /** The position before the first fill recorded (a restored one, or flat; moved on as old fills are folded in). */
  base: BookState;
  readonly fills: Fill[];
  /** Realized PnL of these fills. */
  realized: number;
}

/** The order the venue executed fills in: by time, then by id (trade ids grow). */
function byExecution(a: Fill, b: Fill): number {
  return a.time - b.time || a.fillId.localeCompare(b.fillId, 'en', { numeric: true });
}

/** What a fill that reduced a position closed (one scratch record, overwritten by every such fill). */
interface ClosingStep {
  pnl: number;
  closing: number;
  direction: number;
  entryPrice: number;
  entryTime: number;
  entryFeePerContract: number;
  entryLabel: string | undefined;
}

const closingStep: ClosingStep = {
  pnl: 0,
  closing: 0,
  direction: 0,
  entryPrice: NaN,
  entryTime: NaN,
  entryFeePerContract: 0,
  entryLabel: undefined,
};

/**
 * One fill, or a signed share of one, on a position (average cost): the new size, average and entry; when it
 * reduced the position, returns what it closed and its PnL (in `closingStep`, valid until the next call),
 * else undefined. The account's books and each strategy's line (strategy-ledger.ts) move by it.
 */
export function bookFill(
  state: BookState,
  signed: number,
  fill: Pick<Fill, 'price' | 'time'>,
  fees: number,
  feePerContract: number,
  tickValue: number,
  pnlInCents: boolean,
  label: string | undefined,
): ClosingStep | undefined {
  const before = state.size;
  if (before === 0 || Math.sign(before) === Math.sign(signed)) {
    const after = before + signed;
    state.averagePrice = before === 0 ? fill.price : (state.averagePrice * before + fill.price * signed) / after;
    state.entryFeePerContract =
      before === 0 ? feePerContract : (state.entryFeePerContract * before + fees * Math.sign(signed)) / after;
    if (before === 0) {
      state.entryTime = fill.time;
      state.entryLabel = label;
    }
    state.size = after;
    return undefined;
  }
  const closing = Math.min(Math.abs(before), Math.abs(signed));
  const direction = Math.sign(before);
  const step = closingStep;
  const pnl = (fill.price - state.averagePrice) * closing * direction * tickValue;
  // The gateway books each closed trade's PnL in cents; an average entry between ticks makes an exact PnL
  // that is not, and the difference adds up to a balance a cent or more away from the account's.
  step.pnl = pnlInCents ? gatewayCents(pnl) : pnl;
  step.closing = closing;
  step.direction = direction;
  step.entryPrice = state.averagePrice;
  step.entryTime = state.entryTime;
  step.entryFeePerContract = state.entryFeePerContract;
  step.entryLabel = state.entryLabel;
  const after = before + signed;
  state.size = after;
  if (after === 0) {
    state.averagePrice = NaN;
    state.entryTime = NaN;
    state.entryFeePerContract = 0;
    state.entryLabel = undefined;
  } else if (Math.sign(after) !== Math.sign(before)) {
    // Reversed through zero: the remainder opened a new position at the fill price.
    state.averagePrice = fill.price;
    state.entryTime = fill.time;
    state.entryFeePerContract = feePerContract;
    state.entryLabel = label;
  }
  return step;
}

export interface AccountingOptions {
  /**
   * Keep every fill's id and history (default true): `false` for a venue that cannot report a fill twice
   * (the backtest's, which fills from its own book), where the id sets cost a hash insert per fill for nothing.
   */
  readonly rememberFills?: boolean;
  /** Round each closed trade's PnL to cents as the gateway does (live and paper); exact by default (a backtest). */
  readonly pnlInCents?: boolean;
  /**
   * Closed trades kept in `trades` (the latest); all by default (a backtest reports them). A live session
   * runs for weeks and its journal holds every fill, so it keeps a window.
   */
  readonly tradeMemory?: number;
  /** Where full blocks of the closed trades' columns go (a long backtest's: its memory stops growing with them). */
  readonly tradeSpill?: BlockSpill;
  /** Where the closed trades' blocks come from (a sweep's run, lent its thread's spares). */
  readonly tradeLease?: BlockLease;
}

/**
 * Fills of each contract kept to book a late one in its place (live): between FILL_HISTORY and twice that;
 * older ones are folded into the history's base position. A fill is late by a few fills, not thousands.
 */
export const FILL_HISTORY = 2_048;

/** `bookFillAt`: the fill closed no trade. */
export const NO_TRADE = -1;
/** `bookFillAt`: the fill was applied before (a venue that repeats fills) and is ignored. */
export const FILL_REPEATED = -2;

export class Accounting {
  readonly startingBalance: number;
  private readonly books: ContractMap<PositionBook>;
  private readonly bookList: PositionBook[] = [];
  // Fill ids already applied, in two generations so memory stays bounded on long runs: the last
  // FILL_MEMORY to 2 x FILL_MEMORY ids are remembered (a venue repeats a fill soon, not days later).
  private seenFills = new Set<string>();
  private olderFills = new Set<string>();
  /** Each contract's fills in execution order (where fills may come twice, i.e. live), to book a late one in its place. */
  private readonly histories = new Map<string, FillHistory>();
  realizedPnl = 0;
  fees = 0;
  /** Fills booked so far (a repeat ignored is not counted). */
  fillsBooked = 0;
  /** Closed trades in order, as columns (`trades` makes the objects). */
  readonly closedTrades: TradeColumns;
  /** Objects of the kept trades made so far, from index `tradeObjectsFrom` on. */
  private tradeObjects: ClosedTrade[] = [];
  private tradeObjectsFrom = 0;
  /** One record per trading day that had a bar or a fill. */
  readonly days: DayRecord[] = objectArray();
  private today: DayRecord | undefined;
  time = NaN;

  private readonly rememberFills: boolean;
  private readonly pnlInCents: boolean;
  private readonly tradeMemory: number;

  constructor(contracts: readonly ContractSpec[], startingBalance: number, options: AccountingOptions = {}) {
    this.rememberFills = options.rememberFills ?? true;
    this.pnlInCents = options.pnlInCents ?? false;
    this.tradeMemory = options.tradeMemory ?? Infinity;
    this.closedTrades = new TradeColumns(options.tradeSpill, options.tradeLease);
    this.startingBalance = startingBalance;
    for (const contract of contracts) this.bookList.push(new PositionBook(contract.id, contract.grid.tickValue));
    this.books = new ContractMap(this.bookList.map((book) => [book.contractId, book] as const));
  }

  /** Closed trades in order (the latest `tradeMemory`), made from the columns as far as they are read. */
  get trades(): readonly ClosedTrade[] {
    const columns = this.closedTrades;
    if (columns.first > this.tradeObjectsFrom) {
      this.tradeObjects = this.tradeObjects.slice(columns.first - this.tradeObjectsFrom);
      this.tradeObjectsFrom = columns.first;
    }
    const objects = this.tradeObjects;
    for (let k = this.tradeObjectsFrom + objects.length; k < columns.length; k++) objects.push(columns.trade(k));
    return objects;
  }

  get balance(): number {
    return this.startingBalance + this.realizedPnl - this.fees;
  }

  /** Sum of the open positions' PnL at their last prices. */
  unrealizedPnl(): number {
    let total = 0;
    for (const book of this.bookList) if (book.size !== 0) total += book.unrealized(book.lastPrice);
    return total;
  }

  /** Unrealized PnL with one contract valued at `price` and the others at their last prices. */
  unrealizedWith(contractId: string, price: number): number {
    let total = 0;
    for (const book of this.bookList) {
      if (book.size !== 0) total += book.unrealized(book.contractId === contractId ? price : book.lastPrice);
    }
    return total;
  }

  equity(): number {
    return this.balance + this.unrealizedPnl();
  }

  /** Today's realized + unrealized - fees. */
  dayPnl(): number {
    return this.today === undefined
      ? this.unrealizedPnl()
      : this.balance + this.unrealizedPnl() - this.today.startBalance;
  }

  get tradingDay(): string {
    return this.today?.tradingDay ?? '';
  }

  /** Open a new trading day (the runner calls it at the day boundary). Returns the day that ended, if any. */
  startDay(tradingDay: string): DayRecord | undefined {
    const ended = this.today;
    if (ended !== undefined) ended.endBalance = this.balance;
    this.today = {
      tradingDay,
      startBalance: this.balance,
      endBalance: this.balance,
      realizedPnl: 0,
      fees: 0,
      trades: 0,
      winningTrades: 0,
      losingTrades: 0,
      contracts: 0,
    };
    this.days.push(this.today);
    return ended;
  }

  private book(contractId: string): PositionBook {
    const book = this.books.get(contractId);
    if (book === undefined)
      throw new EngineError('UNKNOWN_CONTRACT', `unknown contract '${contractId}' (not among the engine's contracts)`);
    return book;
  }

  /**
   * Start from a known state instead of flat (a live restart): the balance (realized so far counts as
   * realized PnL) and open positions with their average prices. Call before the first bar.
   */
  restore(
    balance: number,
    positions: ReadonlyArray<{ contractId: string; size: number; averagePrice: number }> = [],
  ): void {
    this.realizedPnl = balance - this.startingBalance + this.fees;
    for (const position of positions) {
      const book = this.book(position.contractId);
      if (!Number.isInteger(position.size))
        throw new EngineError('INVALID_RESTORE', `restore: position size ${position.size} is not a whole number`);
      book.size = position.size;
      book.averagePrice = position.size === 0 ? NaN : position.averagePrice;
      book.entryTime = NaN;
      book.entryFeePerContract = 0;
      book.entryLabel = undefined;
      if (!(book.lastPrice === book.lastPrice)) book.lastPrice = book.averagePrice;
    }
    if (this.today !== undefined) this.today.endBalance = this.balance;
  }

  /** Correct today's starting balance (a restart in the middle of a trading day). */
  restoreDayStart(balance: number): void {
    if (this.today !== undefined) this.today.startBalance = balance;
  }

  /** The live position state of a contract, for hot loops that must not look it up per bar. */
  bookOf(contractId: string): PositionBook {
    return this.book(contractId);
  }

  mark(contractId: string, price: number): void {
    this.book(contractId).lastPrice = price;
  }

  lastPrice(contractId: string): number {
    return this.books.get(contractId)?.lastPrice ?? NaN;
  }

  position(contractId: string): number {
    return this.books.get(contractId)?.size ?? 0;
  }

  averagePrice(contractId: string): number {
    return this.books.get(contractId)?.averagePrice ?? NaN;
  }

  /** True when this fill id was already applied (a venue may report a fill twice). */
  hasFill(fillId: string): boolean {
    return this.seenFills.has(fillId) || this.olderFills.has(fillId);
  }

  /**
   * Apply a fill; returns the closed trade when it reduced a position, undefined when it did not, and
   * null when this fill id was already applied (it is then ignored).
   */
  /**
   * Books a fill: the closed trade it made, undefined when it closed none, null for a fill already applied.
   * The engine's own path calls `bookFillAt`, which makes no object.
   */
  applyFill(fill: Fill, tradingDay: string, label?: string): ClosedTrade | undefined | null {
    const k = this.bookFillAt(fill, tradingDay, label);
    return k === FILL_REPEATED ? null : k === NO_TRADE ? undefined : this.closedTrades.trade(k);
  }

  /** Books a fill: the index of the trade it closed in `closedTrades`, `NO_TRADE`, or `FILL_REPEATED`. */
  bookFillAt(fill: Fill, tradingDay: string, label?: string): number {
    if (this.rememberFills) {
      if (this.hasFill(fill.fillId)) return FILL_REPEATED;
      if (this.seenFills.size >= FILL_MEMORY) {
        this.olderFills = this.seenFills;
        this.seenFills = new Set();
      }
      this.seenFills.add(fill.fillId);
    }
    this.fillsBooked++;
    const book = this.book(fill.contractId);
    book.fees += fill.fees;
    this.fees += fill.fees;
    book.lastPrice = book.lastPrice === book.lastPrice ? book.lastPrice : fill.price;
    if (!(fill.time < this.time)) this.time = fill.time;
    const day = this.today;
    if (day !== undefined) {
      day.fees += fill.fees;
      day.contracts += fill.size;
    }
    const feePerContract = fill.size === 0 ? 0 : fill.fees / fill.size;
    const late = this.rememberFills && this.isLate(book, fill);
    if (late) {
      // A fill older than one already applied (a realtime event overtook it): the position's cost basis
      // depends on the order, so the contract is booked again in time order, as the gateway did.
      this.rebook(book, ownFill(fill));
      if (day !== undefined) day.endBalance = this.balance;
      return NO_TRADE;
    }
    // Kept here and by `rebook`: a copy, as the fill may be the venue's view (event-copies.ts).
    if (this.rememberFills) this.historyOf(book).fills.push(ownFill(fill));
    const step = bookFill(
      book,
      signedSize(fill),
      fill,
      fill.fees,
      feePerContract,
      book.tickValue,
      this.pnlInCents,
      label,
    );
    let closed = NO_TRADE;
    if (step !== undefined) {
      book.realizedPnl += step.pnl;
      this.realizedPnl += step.pnl;
      if (this.rememberFills) this.historyOf(book).realized += step.pnl;
      const trades = this.closedTrades;
      closed = trades.push(
        fill.contractId,
        step.direction,
        step.closing,
        step.entryPrice,
        fill.price,
        step.entryTime,
        fill.time,
        step.pnl,
        (step.entryFeePerContract + feePerContract) * step.closing,
        fill.fillId,
        this.fillsBooked,
        tradingDay,
        step.entryLabel,
      );
      if (trades.length - trades.first > this.tradeMemory) trades.dropBefore(trades.length - this.tradeMemory);
      if (day !== undefined) {
        day.realizedPnl += step.pnl;
        day.trades++;
        if (step.pnl > 0) day.winningTrades++;
        else if (step.pnl < 0) day.losingTrades++;
      }
    }
    if (this.rememberFills) this.trimHistory(book);
    if (day !== undefined) day.endBalance = this.balance;
    return closed;
  }

  /** Fold a contract's oldest remembered fills into its history's base once there are too many. */
  private trimHistory(book: PositionBook): void {
    const history = this.histories.get(book.contractId);
    if (history === undefined || history.fills.length <= 2 * FILL_HISTORY) return;
    const folded = history.fills.splice(0, history.fills.length - FILL_HISTORY);
    const state = { ...history.base };
    let realized = 0;
    for (const fill of folded)
      realized +=
        // Only the sums and the base position matter here; labels live on the book, as in a re-booking.
        bookFill(
          state,
          signedSize(fill),
          fill,
          fill.fees,
          fill.size === 0 ? 0 : fill.fees / fill.size,
          book.tickValue,
          this.pnlInCents,
          book.entryLabel,
        )?.pnl ?? 0;
    history.base = state;
    history.realized -= realized;
  }

  /** Fills of a contract remembered to book a late one in its place (bounded). */
  rememberedFills(contractId: string): number {
    return this.histories.get(contractId)?.fills.length ?? 0;
  }

  private historyOf(book: PositionBook): FillHistory {
    let history = this.histories.get(book.contractId);
    if (history === undefined) {
      history = {
        base: {
          size: book.size,
          averagePrice: book.averagePrice,
          entryTime: book.entryTime,
          entryFeePerContract: book.entryFeePerContract,
          entryLabel: book.entryLabel,
        },
        fills: [],
        realized: 0,
      };
      this.histories.set(book.contractId, history);
    }
    return history;
  }

  private isLate(book: PositionBook, fill: Fill): boolean {
    const fills = this.histories.get(book.contractId)?.fills;
    return fills !== undefined && fills.length > 0 && byExecution(fill, fills[fills.length - 1]!) < 0;
  }

  /** Book a contract's fills again in execution order with a late one among them; the realized PnL moves by the difference. */
  private rebook(book: PositionBook, late: Fill): void {
    const history = this.historyOf(book);
    history.fills.push(late);
    history.fills.sort(byExecution);
    const state = { ...history.base };
    let realized = 0;
    for (const fill of history.fills)
      realized +=
        bookFill(
          state,
          signedSize(fill),
          fill,
          fill.fees,
          fill.size === 0 ? 0 : fill.fees / fill.size,
          book.tickValue,
          this.pnlInCents,
          fill === late ? undefined : book.entryLabel,
        )?.pnl ?? 0;
    const delta = realized - history.realized;
    history.realized = realized;
    book.size = state.size;
    book.averagePrice = state.averagePrice;
    book.entryTime = state.entryTime;
    book.entryFeePerContract = state.entryFeePerContract;
    book.entryLabel = state.entryLabel;
    book.realizedPnl += delta;
    this.realizedPnl += delta;
    if (this.today !== undefined) this.today.realizedPnl += delta;
  }

  positions(): PositionView[] {
    return this.bookList.map((book) => this.view(book));
  }

  positionView(contractId: string): PositionView {
    return this.view(this.book(contractId));
  }

  private view(book: PositionBook): PositionView {
    return {
      contractId: book.contractId,
      size: book.size,
      averagePrice: book.averagePrice,
      lastPrice: book.lastPrice,
      unrealizedPnl: book.unrealized(book.lastPrice),
      realizedPnl: book.realizedPnl,
      fees: book.fees,
    };
  }

  snapshot(): AccountSnapshot {
    const unrealized = this.unrealizedPnl();
    return {
      time: this.time,
      tradingDay: this.tradingDay,
      startingBalance: this.startingBalance,
      balance: this.balance,
      equity: this.balance + unrealized,
      realizedPnl: this.realizedPnl,
      unrealizedPnl: unrealized,
      fees: this.fees,
      dayPnl: this.dayPnl(),
      positions: this.positions(),
    };
  }
}
