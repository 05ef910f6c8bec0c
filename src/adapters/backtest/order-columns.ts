/**
 * A run's orders and fills kept as columns (numbers in typed arrays, strings and specs in plain arrays, in
 * blocks of 1,024 items) instead of one object each. A backtest of a million bars keeps tens of thousands
 * of them to its end; as objects they survive the young generation, so the collector copied and then
 * marked every one, and a streamed run's memory grew by their size. Typed columns are memory the collector
 * does not look into; the objects the result files and the API need are made from them when asked for,
 * and equal the ones the run saw, field for field.
 */
import {
  asStored,
  BLOCK_MASK,
  BLOCK_SHIFT,
  ColumnBlocks,
  Interned,
  fillIdText,
  isSequenceId,
  sequenceIds,
  type BlockSpill,
} from '../../engine/column-blocks.ts';
import type { BlockLease } from '../../engine/block-stock.ts';
import { TicklineError } from '../../engine/errors.ts';
import { MARKET_ORDER } from '../../engine/intents.ts';
import type { Fill, OrderSpec, OrderState, Side } from '../../engine/types.ts';
import type { OrderRecord } from './venue-book.ts';

const SIDES: readonly Side[] = ['buy', 'sell'];
const TYPES: readonly OrderSpec['type'][] = ['market', 'limit', 'stop', 'stopLimit', 'trailingStop'];
const ROLES: readonly OrderRecord['role'][] = ['entry', 'stopLoss', 'takeProfit'];
const STATES: readonly OrderState[] = ['pending', 'working', 'filled', 'cancelled', 'rejected', 'expired'];
/**
 * Which of an order's prices are present, in its packed codes (from bit 9), the same bits as in the order
 * list hash's record (order-list-hash.ts).
 */
export const HAS_LIMIT = 1;
export const HAS_STOP = 2;
export const HAS_TRAIL = 4;
export const HAS_FILL_PRICE = 8;
export const HAS_FILL_TIME = 16;

/** Final orders (they change no more) in placement order; `record(k)` makes the k-th as an `OrderRecord`. */
export class OrderColumns {
  length = 0;
  /**
   * Numbers: size, limitPrice, stopPrice, trailPrice, placedAt, fillPrice, fillTime, filledSize, modifies,
   * contract, the codes (side, type, role, state, which prices are present) packed in one, and the id's
   * prefix code and number (`sequenceIds`; code -1: the id is in the references): 13 an order.
   * References: id (unless encoded), parentId and spec (unless the engine's `MARKET_ORDER`), 3 an order,
   * written only for an order that has one of them.
   */
  private readonly blocks: ColumnBlocks<string | OrderSpec | null>;
  private readonly contracts = new Interned();

  /** `spill`: where full blocks go (a long backtest's), none keeps every block in memory; `lease`: where they come from. */
  constructor(spill?: BlockSpill, lease?: BlockLease) {
    this.blocks = new ColumnBlocks(ORDER_NUMBERS, ORDER_REFS, spill, lease);
  }

  push(r: OrderRecord): void {
    const k = this.length;
    const n = this.blocks.numbersFor(k);
    const idCode = writeOrderRow(r, n, (k & BLOCK_MASK) * ORDER_NUMBERS, this.contracts.code(r.contractId));
    // Only what the numbers cannot say is a reference (an engine's market order under its own id has none).
    this.blocks.setRef(k, 0, idCode < 0 ? r.id : null);
    this.blocks.setRef(k, 1, r.parentId);
    this.blocks.setRef(k, 2, r.spec === MARKET_ORDER ? null : r.spec);
    this.length = k + 1;
  }

  /** The numbers of block `b` (order k's at `(k & BLOCK_MASK) * ORDER_NUMBERS` of block `k >> BLOCK_SHIFT`). */
  numbersOf(b: number): Float64Array {
    return this.blocks.numbersOf(b);
  }

  /**
   * The references of block `b`: id (null when its numbers hold it), parentId and spec (null: the engine's
   * `MARKET_ORDER`), `ORDER_REFS` an order; undefined reads as null (a block or an order without references).
   */
  refsOf(b: number): readonly (string | OrderSpec | null | undefined)[] {
    return this.blocks.refsOf(b);
  }

  /** The contract id of a contract code in the numbers. */
  contractOf(code: number): string {
    return this.contracts.value(code);
  }

  idAt(k: number): string {
    const n = this.blocks.numbersOf(k >> BLOCK_SHIFT);
    const slot = (k & BLOCK_MASK) * ORDER_NUMBERS;
    const code = n[slot + 11]!;
    return code < 0
      ? (this.blocks.refsOf(k >> BLOCK_SHIFT)[(k & BLOCK_MASK) * ORDER_REFS] as string)
      : sequenceIds.decode(code, n[slot + 12]!);
  }

  /**
   * The k-th order as the run's record of it (a new object each call, equal to the one that was pushed;
   * its numbers `asStored`, as the venue's records hold them).
   */
  record(k: number): OrderRecord {
    const n = this.blocks.numbersOf(k >> BLOCK_SHIFT);
    const slot = (k & BLOCK_MASK) * ORDER_NUMBERS;
    const codes = n[slot + 10]!;
    const flags = codes >> 9;
    const refs = this.blocks.refsOf(k >> BLOCK_SHIFT);
    const ref = (k & BLOCK_MASK) * ORDER_REFS;
    const idCode = n[slot + 11]!;
    return {
      id: idCode < 0 ? (refs[ref] as string) : sequenceIds.decode(idCode, n[slot + 12]!),
      contractId: this.contracts.value(n[slot + 9]!),
      side: SIDES[codes & 1]!,
      size: asStored(n[slot]!),
      type: TYPES[(codes >> 1) & 7]!,
      limitPrice: (flags & HAS_LIMIT) === 0 ? null : asStored(n[slot + 1]!),
      stopPrice: (flags & HAS_STOP) === 0 ? null : asStored(n[slot + 2]!),
      trailPrice: (flags & HAS_TRAIL) === 0 ? null : asStored(n[slot + 3]!),
      role: ROLES[(codes >> 4) & 3]!,
      parentId: (refs[ref + 1] as string | null | undefined) ?? null,
      placedAt: n[slot + 4]!,
      state: STATES[(codes >> 6) & 7]!,
      fillPrice: (flags & HAS_FILL_PRICE) === 0 ? null : asStored(n[slot + 5]!),
      fillTime: (flags & HAS_FILL_TIME) === 0 ? null : n[slot + 6]!,
      filledSize: asStored(n[slot + 7]!),
      modifies: asStored(n[slot + 8]!),
      spec: (refs[ref + 2] as OrderSpec | null | undefined) ?? MARKET_ORDER,
    };
  }
}

/** Every fill of a run in order, with the balance after it; `fill(k)` makes the k-th as a `Fill`. */
export class FillColumns {
  length = 0;
  /**
   * Numbers: time, size, price, fees, balance after it, 1 for a sell, contract, the orderId's prefix code
   * and number (`sequenceIds`; code -1: the id is in the references): 9 a fill. References: orderId (unless
   * encoded) and fillId, 2 a fill; the fillId null (or undefined) when it is the venue's `F<n>` for fill n.
   * A fill with neither writes none.
   */
  private readonly blocks: ColumnBlocks<string | null>;
  private readonly contracts = new Interned();

  /** `spill`: where full blocks go (a long backtest's), none keeps every block in memory; `lease`: where they come from. */
  constructor(spill?: BlockSpill, lease?: BlockLease) {
    this.blocks = new ColumnBlocks(FILL_NUMBERS, 2, spill, lease);
  }

  push(fill: Fill, balance: number): void {
    const k = this.length;
    const n = this.blocks.numbersFor(k);
    const slot = (k & BLOCK_MASK) * FILL_NUMBERS;
    n[slot] = fill.time;
    n[slot + 1] = fill.size;
    n[slot + 2] = fill.price;
    n[slot + 3] = fill.fees;
    n[slot + 4] = balance;
    n[slot + 5] = fill.side === 'sell' ? 1 : 0;
    n[slot + 6] = this.contracts.code(fill.contractId);
    const orderCode = sequenceIds.encode(fill.orderId);
    n[slot + 7] = orderCode;
    n[slot + 8] = sequenceIds.number;
    this.blocks.setRef(k, 0, orderCode < 0 ? fill.orderId : null);
    // The simulated venue numbers its fills F1, F2, ...: such an id is made again when asked for, not kept.
    this.blocks.setRef(k, 1, isSequenceId(fill.fillId, k + 1) ? null : fill.fillId);
    this.length = k + 1;
  }

  timeAt(k: number): number {
    return this.blocks.numbersOf(k >> BLOCK_SHIFT)[(k & BLOCK_MASK) * FILL_NUMBERS]!;
  }

  /** The k-th fill (a new object each call, its numbers `asStored`, as the venue's fills hold them). */
  fill(k: number): Fill {
    const n = this.blocks.numbersOf(k >> BLOCK_SHIFT);
    const slot = (k & BLOCK_MASK) * FILL_NUMBERS;
    const refs = this.blocks.refsOf(k >> BLOCK_SHIFT);
    const ref = (k & BLOCK_MASK) * 2;
    const orderCode = n[slot + 7]!;
    return {
      kind: 'fill',
      fillId: refs[ref + 1] ?? fillIdText(k + 1),
      orderId: orderCode < 0 ? refs[ref]! : sequenceIds.decode(orderCode, n[slot + 8]!),
      contractId: this.contracts.value(n[slot + 6]!),
      side: n[slot + 5] === 1 ? 'sell' : 'buy',
      size: asStored(n[slot + 1]!),
      price: asStored(n[slot + 2]!),
      fees: asStored(n[slot + 3]!),
      time: n[slot]!,
    };
  }

  toFills(): Fill[] {
    const out = new Array<Fill>(this.length);
    for (let k = 0; k < out.length; k++) out[k] = this.fill(k);
    return out;
  }

  /** Times and balances after each fill, as the run result's `balance` gives them. */
  balances(): { time: number[]; balance: number[] } {
    const time = new Array<number>(this.length);
    const balance = new Array<number>(this.length);
    for (let k = 0; k < this.length; k++) {
      const n = this.blocks.numbersOf(k >> BLOCK_SHIFT);
      const slot = (k & BLOCK_MASK) * FILL_NUMBERS;
      time[k] = n[slot]!;
      balance[k] = n[slot + 4]!;
    }
    return { time, balance };
  }
}

const FILL_NUMBERS = 9;
/** Numbers an order's row takes (OrderColumns). */
export const ORDER_NUMBERS = 13;
/** References an order's row has room for (OrderColumns): id, parentId, spec. */
export const ORDER_REFS = 3;

/**
 * `r`'s numbers at `n[slot]` .. `n[slot + 12]` (the layout OrderColumns describes; an absent price is 0),
 * its contract as `contract`, the code of the columns it goes in; returns its id's prefix code (-1: the id
 * is not `<prefix><n>` and must be kept as text).
 */
export function writeOrderRow(r: OrderRecord, n: Float64Array, slot: number, contract: number): number {
  const idCode = sequenceIds.encode(r.id);
  n[slot] = r.size;
  n[slot + 4] = r.placedAt;
  const flags =
    present(n, slot + 1, r.limitPrice, HAS_LIMIT) |
    present(n, slot + 2, r.stopPrice, HAS_STOP) |
    present(n, slot + 3, r.trailPrice, HAS_TRAIL) |
    present(n, slot + 5, r.fillPrice, HAS_FILL_PRICE) |
    present(n, slot + 6, r.fillTime, HAS_FILL_TIME);
  n[slot + 7] = r.filledSize;
  n[slot + 8] = r.modifies;
  n[slot + 9] = contract;
  const side = r.side === 'buy' ? 0 : r.side === 'sell' ? 1 : codeOf(SIDES, r.side);
  const type = r.type === 'market' ? 0 : codeOf(TYPES, r.type);
  const role = r.role === 'entry' ? 0 : codeOf(ROLES, r.role);
  const state = r.state === 'filled' ? 2 : codeOf(STATES, r.state);
  n[slot + 10] = side | (type << 1) | (role << 4) | (state << 6) | (flags << 9);
  n[slot + 11] = idCode;
  n[slot + 12] = sequenceIds.number;
  return idCode;
}

/** `value` at `n[at]` and its flag, or 0 and no flag when it is absent (null). */
function present(n: Float64Array, at: number, value: number | null, flag: number): number {
  if (value === null) {
    n[at] = 0;
    return 0;
  }
  n[at] = value;
  return flag;
}

function codeOf<T>(values: readonly T[], value: T): number {
  const code = values.indexOf(value);
  if (code < 0) throw new OrderColumnsError(`an order's ${JSON.stringify(value)} has no column code`);
  return code;
}

/** A record built by hand outside the types (a side, type, role or state the columns have no code for). */
export class OrderColumnsError extends TicklineError {
  override readonly name = 'OrderColumnsError';
  readonly kind = 'runtime';
  readonly code = 'ORDER_COLUMNS_UNKNOWN_CODE';
}
