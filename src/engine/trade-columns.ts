/**
 * The account's closed trades as columns. A backtest closes a trade on most fills and keeps every one to
 * its end: as objects each was allocated straight into the old generation (V8 pretenures a site whose
 * objects all survive), the slowest allocation of the run, then marked by every full collection. The
 * objects the report and the API read are made from the columns when asked for, equal field for field.
 */
import type { ClosedTrade } from './accounting.ts';
import type { Side } from './types.ts';
import type { BlockLease } from './block-stock.ts';
import {
  asStored,
  BLOCK_MASK,
  BLOCK_SHIFT,
  ColumnBlocks,
  Interned,
  fillIdText,
  isSequenceId,
  type BlockSpill,
} from './column-blocks.ts';

/**
 * contract, 1 for a short, size, entry price, exit price, entry time, exit time, pnl, fees, n when the
 * exit fill's id is `F<n>` (0: the id is in the refs), and the trading day's code.
 */
const TRADE_NUMBERS = 11;
/** exitFillId (unless it is `F<n>`) and label, written only for a trade with one of them. */
const TRADE_REFS = 2;

export class TradeColumns {
  /** Trades closed so far, dropped ones included: the next trade's index. */
  length = 0;
  /** Index of the oldest trade still kept (`dropBefore`). */
  first = 0;
  private readonly blocks: ColumnBlocks<string | undefined>;
  private readonly contracts = new Interned();
  /** A day's trades share its name: kept once, a column holds its code. */
  private readonly days = new Interned();

  /** `spill`: where full blocks go (a long backtest's), none keeps every block in memory; `lease`: where they come from. */
  constructor(spill?: BlockSpill, lease?: BlockLease) {
    this.blocks = new ColumnBlocks(TRADE_NUMBERS, TRADE_REFS, spill, lease);
  }

  /**
   * Adds a closed trade; returns its index. `direction` is the closed position's sign; `fillNumber` the
   * exit fill's number in the account's fills (the simulated venue names fill n `F<n>`: such an id is
   * made again when asked for, not kept, a string a trade fewer for the collector to copy).
   */
  push(
    contractId: string,
    direction: number,
    size: number,
    entryPrice: number,
    exitPrice: number,
    entryTime: number,
    exitTime: number,
    pnl: number,
    fees: number,
    exitFillId: string,
    fillNumber: number,
    tradingDay: string,
    label: string | undefined,
  ): number {
    const k = this.length;
    const n = this.blocks.numbersFor(k);
    const slot = (k & BLOCK_MASK) * TRADE_NUMBERS;
    n[slot] = this.contracts.code(contractId);
    n[slot + 1] = direction > 0 ? 0 : 1;
    n[slot + 2] = size;
    n[slot + 3] = entryPrice;
    n[slot + 4] = exitPrice;
    n[slot + 5] = entryTime;
    n[slot + 6] = exitTime;
    n[slot + 7] = pnl;
    n[slot + 8] = fees;
    const numbered = isSequenceId(exitFillId, fillNumber);
    n[slot + 9] = numbered ? fillNumber : 0;
    n[slot + 10] = this.days.code(tradingDay);
    this.blocks.setRef(k, 0, numbered ? undefined : exitFillId);
    this.blocks.setRef(k, 1, label);
    this.length = k + 1;
    return k;
  }

  /**
   * The k-th trade (`first <= k < length`) as an object, made now; its numbers `asStored`, as the strategy
   * ledger's own trades of the same shape hold them.
   */
  trade(k: number): ClosedTrade {
    const n = this.blocks.numbersOf(k >> BLOCK_SHIFT);
    const slot = (k & BLOCK_MASK) * TRADE_NUMBERS;
    const refs = this.blocks.refsOf(k >> BLOCK_SHIFT);
    const ref = (k & BLOCK_MASK) * TRADE_REFS;
    return {
      contractId: this.contracts.value(n[slot]!),
      side: n[slot + 1] === 0 ? 'buy' : 'sell',
      size: asStored(n[slot + 2]!),
      entryPrice: asStored(n[slot + 3]!),
      exitPrice: asStored(n[slot + 4]!),
      entryTime: n[slot + 5]!,
      exitTime: n[slot + 6]!,
      pnl: asStored(n[slot + 7]!),
      fees: asStored(n[slot + 8]!),
      exitFillId: n[slot + 9] === 0 ? refs[ref]! : fillIdText(n[slot + 9]!),
      tradingDay: this.days.value(n[slot + 10]!),
      // A hole (a trade without references in a block with some) comes back from a spill as null.
      label: refs[ref + 1] ?? undefined,
    };
  }

  /** The k-th trade's numbers and side into `row` (`first <= k < length`), no object made. */
  readRow(k: number, row: TradeRow): void {
    const n = this.blocks.numbersOf(k >> BLOCK_SHIFT);
    const slot = (k & BLOCK_MASK) * TRADE_NUMBERS;
    row.side = n[slot + 1] === 0 ? 'buy' : 'sell';
    row.size = n[slot + 2]!;
    row.entryPrice = n[slot + 3]!;
    row.exitPrice = n[slot + 4]!;
    row.entryTime = n[slot + 5]!;
    row.exitTime = n[slot + 6]!;
    row.pnl = n[slot + 7]!;
    row.fees = n[slot + 8]!;
  }

  /** The trades kept (`first` on), each made as it is read and none kept: what a long run's outputs read. */
  list(): TradeList {
    return new TradeColumnsList(this);
  }

  /** Forgets the trades before index `k` (a live session keeps a window); whole blocks are let go. */
  dropBefore(k: number): void {
    if (k <= this.first) return;
    this.first = Math.min(k, this.length);
    this.blocks.dropBefore(this.first >> BLOCK_SHIFT);
  }
}

/**
 * Closed trades read by index or in order. An array of them is one; a run's columns are another
 * (`TradeColumns.list`), which make each trade when it is read, so a run of millions of trades never
 * holds them all as objects.
 */
export interface TradeList<T = ClosedTrade> extends Iterable<T> {
  readonly length: number;
  /** As an array's `at`: a negative index counts from the end; undefined outside the list. */
  at(index: number): T | undefined;
}

class TradeColumnsList implements TradeList {
  constructor(readonly columns: TradeColumns) {}

  get length(): number {
    return this.columns.length - this.columns.first;
  }

  at(index: number): ClosedTrade | undefined {
    const n = this.length;
    const i = Math.trunc(index) || 0;
    const k = i < 0 ? i + n : i;
    return k >= 0 && k < n ? this.columns.trade(this.columns.first + k) : undefined;
  }

  [Symbol.iterator](): Iterator<ClosedTrade> {
    const columns = this.columns;
    let k = columns.first;
    return {
      next: (): IteratorResult<ClosedTrade> =>
        k < columns.length ? { value: columns.trade(k++), done: false } : { value: undefined, done: true },
    };
  }
}

/** `list` with each trade passed through `map` as it is read (nothing made ahead, nothing kept). */
export function mappedTradeList<T, U>(list: TradeList<T>, map: (trade: T) => U): TradeList<U> {
  return {
    get length() {
      return list.length;
    },
    at(index: number): U | undefined {
      const trade = list.at(index);
      return trade === undefined ? undefined : map(trade);
    },
    *[Symbol.iterator]() {
      for (const trade of list) yield map(trade);
    },
  };
}

/** One closed trade's numbers and side, filled again for each trade a `TradeReader` reads. */
export class TradeRow implements TradeNumbers {
  side: Side = 'buy';
  size = 0;
  entryPrice = 0;
  exitPrice = 0;
  entryTime = 0;
  exitTime = 0;
  pnl = 0;
  fees = 0;
}

/**
 * A list's trades read one at a time into the reader's one `row`, for a pass that needs their numbers
 * only: over a run's columns no object is made for a trade (a sweep's run read its trades twice as
 * objects, its checks and its statistics: 11 MB for 38,000 trades); over any other list each trade's
 * fields are copied as they are, whatever they hold, for the checks to find.
 */
export interface TradeReader {
  readonly row: TradeRow;
  /** Reads the next trade into `row`; false after the last. */
  next(): boolean;
}

/** What a `TradeReader` reads of a trade. */
export type TradeNumbers = Pick<
  ClosedTrade,
  'side' | 'size' | 'entryPrice' | 'exitPrice' | 'entryTime' | 'exitTime' | 'pnl' | 'fees'
>;

export function tradeReader(list: TradeList<TradeNumbers>): TradeReader {
  return list instanceof TradeColumnsList ? new ColumnTradeReader(list.columns) : new ObjectTradeReader(list);
}

class ColumnTradeReader implements TradeReader {
  readonly row = new TradeRow();
  private k: number;

  constructor(private readonly columns: TradeColumns) {
    this.k = columns.first;
  }

  next(): boolean {
    const k = this.k;
    if (k >= this.columns.length) return false;
    this.columns.readRow(k, this.row);
    this.k = k + 1;
    return true;
  }
}

class ObjectTradeReader implements TradeReader {
  readonly row = new TradeRow();
  private readonly trades: Iterator<TradeNumbers>;

  constructor(list: TradeList<TradeNumbers>) {
    this.trades = list[Symbol.iterator]();
  }

  next(): boolean {
    const next = this.trades.next();
    if (next.done === true) return false;
    const trade = next.value;
    const row = this.row;
    row.side = trade.side;
    row.size = trade.size;
    row.entryPrice = trade.entryPrice;
    row.exitPrice = trade.exitPrice;
    row.entryTime = trade.entryTime;
    row.exitTime = trade.exitTime;
    row.pnl = trade.pnl;
    row.fees = trade.fees;
    return true;
  }
}
