/**
 * Growable columns in blocks: what a run keeps of each order, fill or closed trade, as numbers in typed
 * arrays and strings in plain arrays, instead of one object each (see order-columns.ts and
 * trade-columns.ts for why).
 */
import type { BlockLease, Borrower } from './block-stock.ts';
import { objectArray } from './object-array.ts';
import { NumberedText } from './numbered-text.ts';
/**
 * The columns go in blocks of 1,024 items, added and never copied: copying grown arrays of references
 * element by element was 2% of a run's CPU, and typed arrays grown by doubling allocated (and zeroed) twice
 * what they held, outside the heap, where V8 counts it towards its next full collection.
 */
export const BLOCK_SHIFT = 10;
export const BLOCK_MASK = (1 << BLOCK_SHIFT) - 1;

/**
 * Where full blocks can be parked outside the heap and read back (a file: src/adapters/backtest/file-spill.ts),
 * so that a long run's columns stop growing its memory. A parked block is never written again.
 */
export interface BlockSpill {
  /** Keeps a full block's numbers and references; returns where it went. */
  park(numbers: Float64Array, refs: readonly unknown[]): number;
  /** The block parked at `ticket`: its numbers copied into `numbers`, its references returned. */
  fetch(ticket: number, numbers: Float64Array): unknown[];
}

const NO_NUMBERS = new Float64Array(0);
/** A block without references (none of its items had one, or it was let go): every slot reads undefined. */
const NO_REFS: never[] = [];

/**
 * The blocks of one set of columns: `width` numbers and `refWidth` references an item. Items are added in
 * order (`numbersFor`/`setRef` of the next item start a block); with a spill, each block is parked once the
 * next one starts, and read back (two blocks cached) when an item of it is read. With a lease (and no spill),
 * the blocks are taken from it, holding an earlier run's numbers, and the columns are emptied when it ends:
 * the columns on a lease (orders, fills, trades) write every number of an item when they add it.
 */
export class ColumnBlocks<R> implements Borrower {
  private readonly numbers: Float64Array[] = objectArray();
  private readonly refs: R[][] = objectArray();
  /** Per block: where the spill parked it, or -1 while it is here. */
  private readonly tickets: number[] = [];
  private readonly cached: { block: number; numbers: Float64Array; refs: R[] }[] = [];
  /** Where new blocks come from: none with a spill, whose parked blocks leave the columns before the run ends. */
  private readonly lease: BlockLease | undefined;

  constructor(
    private readonly width: number,
    private readonly refWidth: number,
    private readonly spill?: BlockSpill,
    lease?: BlockLease,
  ) {
    this.lease = spill === undefined ? lease : undefined;
  }

  /** The numbers of item `k`, the block it starts added (and the full one before it parked). */
  numbersFor(k: number): Float64Array {
    const b = k >> BLOCK_SHIFT;
    if (b === this.numbers.length) this.start(b);
    return this.numbers[b]!;
  }

  /**
   * Reference `at` (0 .. refWidth - 1) of item `k` (its block added by `numbersFor` or here). None (null or
   * undefined) is not written: a block gets its array of references only when one of its items has one, and
   * a slot never written reads as none (undefined, or null once a spill has read its block back).
   */
  setRef(k: number, at: number, value: R | null | undefined): void {
    if (value === null || value === undefined) return;
    const b = k >> BLOCK_SHIFT;
    if (b === this.numbers.length) this.start(b);
    let refs = this.refs[b]!;
    if (refs === NO_REFS) {
      refs = new Array<R>((BLOCK_MASK + 1) * this.refWidth);
      this.refs[b] = refs;
    }
    refs[(k & BLOCK_MASK) * this.refWidth + at] = value;
  }

  /** The numbers of block `b`, read back when parked. */
  numbersOf(b: number): Float64Array {
    return this.tickets[b]! < 0 ? this.numbers[b]! : this.fetched(b).numbers;
  }

  /**
   * The references of block `b` (read back when parked), to read: empty when none of its items had one (every
   * slot undefined). Readonly: a block without references shares one empty array.
   */
  refsOf(b: number): readonly R[] {
    return this.tickets[b]! < 0 ? this.refs[b]! : this.fetched(b).refs;
  }

  /** Lets the blocks before block `b` go (a live session's window of trades). */
  dropBefore(b: number): void {
    for (let k = 0; k < b && k < this.numbers.length; k++) {
      this.numbers[k] = NO_NUMBERS;
      this.refs[k] = NO_REFS;
      this.tickets[k] = -1;
    }
  }

  private start(b: number): void {
    const spill = this.spill;
    if (spill !== undefined && b > 0 && this.tickets[b - 1]! < 0 && this.numbers[b - 1] !== NO_NUMBERS) {
      this.tickets[b - 1] = spill.park(this.numbers[b - 1]!, this.refs[b - 1]!);
      this.numbers[b - 1] = NO_NUMBERS;
      this.refs[b - 1] = NO_REFS;
    }
    const size = (BLOCK_MASK + 1) * this.width;
    this.numbers.push(this.lease === undefined ? new Float64Array(size) : this.lease.take(size, this));
    // An array of references is made when the block's first is written (`setRef`): in the usual run no
    // item has one, and each array made per block survived to the run's end, copied by every scavenge.
    this.refs.push(NO_REFS);
    this.tickets.push(-1);
  }

  /** Every block let go (their lease ended): a read of an item fails from now on. */
  forget(): void {
    this.numbers.length = 0;
    this.refs.length = 0;
    this.tickets.length = 0;
    this.cached.length = 0;
  }

  private fetched(b: number): { block: number; numbers: Float64Array; refs: R[] } {
    const cached = this.cached;
    const last = cached[cached.length - 1];
    if (last !== undefined && last.block === b) return last;
    if (cached.length === 2 && cached[0]!.block === b) {
      cached.push(cached.shift()!);
      return cached[1]!;
    }
    // Two blocks kept: reading one block's items, or two neighbours' in turn, reads each block once.
    const entry =
      cached.length < 2
        ? { block: b, numbers: new Float64Array((BLOCK_MASK + 1) * this.width), refs: NO_REFS as R[] }
        : cached.shift()!;
    entry.block = b;
    entry.refs = this.spill!.fetch(this.tickets[b]!, entry.numbers) as R[];
    cached.push(entry);
    return entry;
  }
}

/**
 * A number read from the columns as the objects the run made held it: a whole number in 32 bits as a small
 * integer, anything else (fractions, -0, large or non-finite values) as it is. V8 gives a value read from a
 * Float64Array as a heap number even when it is whole; stored in an object of a shape the engine also makes
 * on its hot path (the same keys in the same order: the venue's records and fills, the router's intents),
 * it widened that field for every later object of the process, and each backtest after a run's orders were
 * read ran up to three times slower. Every reader that makes such objects from columns goes through here.
 */
export function asStored(value: number): number {
  const whole = value | 0;
  return whole === value && (whole !== 0 || 1 / value > 0) ? whole : value;
}

/**
 * The fill id `F<n>` (the simulated venue's numbering), made here so that `isSequenceId` knows it without
 * reading it: the fill columns and the trade columns each check a fill's id, one after the other.
 */
export function sequenceFillId(n: number): string {
  const id = fillIds.text(n);
  lastFillId = id;
  lastFillNumber = n;
  return id;
}

/** The fill id of number `n`, `F<n>`, as read back from the columns. */
export function fillIdText(n: number): string {
  return fillIds.text(n);
}

/**
 * Whether `id` is `F<n>` (checked without making the string). The id made or read last answers at once:
 * reading its digits again was 1.7% of a backtest with an order every 28 bars.
 */
export function isSequenceId(id: string, n: number): boolean {
  if (id === lastFillId) return lastFillNumber === n;
  if (id.length < 2 || id.length > 17 || id.charCodeAt(0) !== 0x46 || id.charCodeAt(1) === 0x30) return false;
  let value = 0;
  for (let k = 1; k < id.length; k++) {
    const digit = id.charCodeAt(k) - 0x30;
    if (digit < 0 || digit > 9) return false;
    value = value * 10 + digit;
  }
  lastFillId = id;
  lastFillNumber = value;
  return value === n;
}

const fillIds = new NumberedText('F');
let lastFillId = '';
let lastFillNumber = -1;

/** A few strings that repeat (contract ids, trading days, strategy ids): each kept once, a column holds its number. */
export class Interned {
  private readonly values: string[] = objectArray();
  private readonly codes = new Map<string, number>();
  private last: string | undefined;
  private lastCode = -1;

  code(value: string): number {
    if (value === this.last) return this.lastCode;
    let code = this.codes.get(value);
    if (code === undefined) {
      code = this.values.length;
      this.values.push(value);
      this.codes.set(value, code);
    }
    this.last = value;
    this.lastCode = code;
    return code;
  }

  value(code: number): string {
    return this.values[code]!;
  }
}

/**
 * Ids of the form `<prefix><n>` (the engine's client ids, `sma-cross-12`) kept as the prefix's code and the
 * number, so the order and fill columns hold no string made per order: kept to a run's end, each was
 * copied by the collector out of the young generation. Any other id (no number at its end, a leading zero,
 * more than 15 digits, a prefix beyond the first MAX_PREFIXES) is not encoded. One table for the process:
 * a fill's order id is the id its order was encoded with just before, found again without parsing, and the
 * id the engine made last (`made`) is known without parsing it at all.
 */
export const sequenceIds = {
  /** The number of the id `encode` last returned a code for. */
  number: 0,

  /** The id's prefix code (its number in `number`), or -1 when the id is not of that form. */
  encode(id: string): number {
    if (id === lastId) {
      this.number = lastNumber;
      return lastCode;
    }
    const code = encodeId(id);
    if (code < 0) return -1;
    lastId = id;
    lastCode = code;
    lastNumber = this.number = parsedNumber;
    return code;
  },

  /**
   * `id` was just made as `prefix` followed by `n` (the engine's next client id): the next `encode` of it
   * answers without reading the string. Ignored when the id could not be encoded (`encode` then says so).
   */
  made(id: string, prefix: string, n: number): void {
    if (!(Number.isInteger(n) && n >= 0 && n <= MAX_NUMBER)) return;
    if (prefix.length > 0 && isDigit(prefix.charCodeAt(prefix.length - 1))) return;
    const code = prefix === lastPrefix ? lastPrefixCode : prefixCode(prefix);
    if (code < 0) return;
    lastPrefix = prefix;
    lastPrefixCode = code;
    lastId = id;
    lastCode = code;
    // -0 as 0: the id reads "0".
    lastNumber = n + 0;
  },

  decode(code: number, n: number): string {
    return prefixes[code]!.text(n);
  },

  /** The prefix of a code `encode` returned. */
  prefix(code: number): string {
    return prefixes[code]!.prefix;
  },
};

const MAX_PREFIXES = 4_096;
/** The largest number of 15 digits, the most an encoded id has. */
const MAX_NUMBER = 999_999_999_999_999;
/** Each prefix met so far, by its code, with the texts of its ids. */
const prefixes: NumberedText[] = [];
const prefixCodes = new Map<string, number>();
let lastId = '';
let lastCode = -1;
let lastNumber = 0;
let lastPrefix = '';
let lastPrefixCode = -1;
let parsedNumber = 0;

function encodeId(id: string): number {
  // The usual case, the prefix of the last id: no string is made to look it up.
  if (lastPrefixCode >= 0 && id.length > lastPrefix.length && id.startsWith(lastPrefix)) {
    const n = digitsFrom(id, lastPrefix.length);
    if (n >= 0) {
      parsedNumber = n;
      return lastPrefixCode;
    }
  }
  let start = id.length;
  while (start > 0 && isDigit(id.charCodeAt(start - 1))) start--;
  const n = digitsFrom(id, start);
  if (n < 0) return -1;
  const prefix = id.slice(0, start);
  const code = prefixCode(prefix);
  if (code < 0) return -1;
  lastPrefix = prefix;
  lastPrefixCode = code;
  parsedNumber = n;
  return code;
}

/** The code of `prefix`, a new one for a prefix not seen yet; -1 once MAX_PREFIXES are taken. */
function prefixCode(prefix: string): number {
  let code = prefixCodes.get(prefix);
  if (code === undefined) {
    if (prefixes.length >= MAX_PREFIXES) return -1;
    code = prefixes.length;
    prefixes.push(new NumberedText(prefix));
    prefixCodes.set(prefix, code);
  }
  return code;
}

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

/** The number written from `start` to the end of `id` exactly as `String(n)` writes it, or -1. */
function digitsFrom(id: string, start: number): number {
  const length = id.length - start;
  if (length < 1 || length > 15) return -1;
  if (id.charCodeAt(start) === 0x30 && length > 1) return -1;
  let n = 0;
  for (let k = start; k < id.length; k++) {
    const c = id.charCodeAt(k);
    if (!isDigit(c)) return -1;
    n = n * 10 + (c - 0x30);
  }
  return n;
}
