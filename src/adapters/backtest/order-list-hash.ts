/**
 * The order list hash: one sha256 over every order of a run (its prices in ticks, final state and fill) in
 * placement order. Two runs with the same hash placed, modified and filled the same orders.
 *
 * What is hashed is a binary record of each order (layout version 1, docs/backtest.md, "The order list
 * hash"), after a header naming the version, so a hash of another layout can never be mistaken for one of
 * this. Up to version 0 it was text lines; the text's number formatting was most of the hash's time.
 */
import { createHash, type Hash } from 'node:crypto';
import { BLOCK_MASK, BLOCK_SHIFT, sequenceIds } from '../../engine/column-blocks.ts';
import {
  HAS_FILL_PRICE,
  HAS_FILL_TIME,
  HAS_LIMIT,
  HAS_STOP,
  HAS_TRAIL,
  ORDER_NUMBERS,
  ORDER_REFS,
  writeOrderRow,
  type OrderColumns,
} from './order-columns.ts';
import type { OrderRecord } from './venue-book.ts';

/** The layout's version, also the first bytes hashed: `tickline order list v1\n` and a zero to 24 bytes. */
export const ORDER_LIST_LAYOUT = 1;
const HEADER = Buffer.alloc(24);
HEADER.write(`tickline order list v${ORDER_LIST_LAYOUT}\n`, 'ascii');

/** Bytes of a record before its strings: 8 of codes and flags, 8 numbers of 8, 3 string lengths of 4, 4 zero. */
export const RECORD_FIXED_BYTES = 88;

/** sha256 of the order list (every order, its prices in ticks, final state and fill), in placement order. */
export function orderListHash(orders: readonly OrderRecord[]): string {
  const hasher = new OrderListHasher();
  for (let k = 0; k < orders.length; k++) hasher.add(orders[k]!);
  return hasher.digest();
}

const HASH_BUFFER_BYTES = 65_536;
/** A record whose strings take more UTF-16 units than this (3 bytes each at most) is hashed in parts. */
const SHORT_TEXT = 1_024;
/** The fixed part, the strings at 3 bytes a unit, and 7 bytes of padding. */
const RECORD_ROOM = RECORD_FIXED_BYTES + 3 * SHORT_TEXT + 8;

const ZEROS = Buffer.alloc(8);
/** The bit after the row's price flags (order-columns.ts): the order has a parent. */
const HAS_PARENT = 32;

/**
 * The order list hashed order by order, as the orders become final (the venue feeds it) or all at the end:
 * the digest depends only on the records' bytes in order, never on how the adds were spread out.
 * Every record starts and ends on 8 bytes, so its numbers are written straight into the buffer as doubles.
 */
export class OrderListHasher {
  private hash: Hash;
  private readonly buffer = Buffer.from(new ArrayBuffer(HASH_BUFFER_BYTES));
  private readonly doubles = new Float64Array(this.buffer.buffer, this.buffer.byteOffset, HASH_BUFFER_BYTES / 8);
  private readonly words = new Uint32Array(this.buffer.buffer, this.buffer.byteOffset, HASH_BUFFER_BYTES / 4);
  private readonly view = new DataView(this.buffer.buffer, this.buffer.byteOffset, HASH_BUFFER_BYTES);
  private used: number;
  /** UTF-8 of each id prefix (`sequenceIds`) met so far, by its code. */
  private readonly prefixBytes: (Utf8Words | undefined)[] = [];
  /** The row `add` writes a record into (its contract code unused: `addRow` takes the contract id). */
  private readonly row = new Float64Array(ORDER_NUMBERS);
  private lastContract = '';
  private lastContractBytes = utf8Words('');
  /** Orders added so far. */
  count = 0;

  constructor(from?: OrderListHasher) {
    if (from === undefined) {
      this.hash = createHash('sha256');
      HEADER.copy(this.buffer, 0);
      this.used = HEADER.length;
      return;
    }
    this.hash = from.hash.copy();
    from.buffer.copy(this.buffer, 0, 0, from.used);
    this.used = from.used;
    this.count = from.count;
  }

  /** A hasher that goes on from where this one is, leaving this one as it is. */
  copy(): OrderListHasher {
    return new OrderListHasher(this);
  }

  /** An order hashed from its record (one the columns do not hold yet: a run's working orders, a test's list). */
  add(o: OrderRecord): void {
    const idCode = writeOrderRow(o, this.row, 0, -1);
    this.addRow(this.row, 0, idCode < 0 ? o.id : null, o.contractId, o.parentId);
  }

  /**
   * The orders of `columns` not hashed yet (from `count` to the columns' end), from their rows, as `add` would
   * hash their records: a hasher fed from columns takes every order from them, in their order.
   */
  addRows(columns: OrderColumns): void {
    const to = columns.length;
    let k = this.count;
    while (k < to) {
      const b = k >> BLOCK_SHIFT;
      const numbers = columns.numbersOf(b);
      const refs = columns.refsOf(b);
      const end = Math.min(to, (b + 1) << BLOCK_SHIFT);
      for (; k < end; k++) {
        const slot = (k & BLOCK_MASK) * ORDER_NUMBERS;
        const ref = (k & BLOCK_MASK) * ORDER_REFS;
        const contractId = columns.contractOf(numbers[slot + 9]!);
        this.addRow(
          numbers,
          slot,
          (refs[ref] as string | null | undefined) ?? null,
          contractId,
          (refs[ref + 1] as string | null | undefined) ?? null,
        );
      }
    }
  }

  /**
   * One order's record from its row (writeOrderRow's layout at `n[s]`): `idText` its id when the row does not
   * hold it as a prefix code and number.
   */
  private addRow(n: Float64Array, s: number, idText: string | null, contractId: string, parentId: string | null): void {
    this.count++;
    const idCode = n[s + 11]!;
    // An id held as a prefix and a number is at most 15 digits past its prefix.
    const idUnits = idCode < 0 ? idText!.length : sequenceIds.prefix(idCode).length + 15;
    const texts = idUnits + contractId.length + (parentId === null ? 0 : parentId.length);
    if (this.used + RECORD_ROOM > HASH_BUFFER_BYTES) this.flush();
    const b = this.buffer;
    const at = this.used;
    const d = this.doubles;
    const slot = at >> 3;
    const codes = n[s + 10]!;
    const flags = (codes >> 9) & 31;
    d[slot + 1] = number(n[s]!);
    d[slot + 2] = (flags & HAS_LIMIT) === 0 ? 0 : number(n[s + 1]!);
    d[slot + 3] = (flags & HAS_STOP) === 0 ? 0 : number(n[s + 2]!);
    d[slot + 4] = (flags & HAS_TRAIL) === 0 ? 0 : number(n[s + 3]!);
    d[slot + 5] = number(n[s + 4]!);
    d[slot + 6] = (flags & HAS_FILL_PRICE) === 0 ? 0 : number(n[s + 5]!);
    d[slot + 7] = (flags & HAS_FILL_TIME) === 0 ? 0 : number(n[s + 6]!);
    d[slot + 8] = number(n[s + 8]!);
    // The first 8 bytes after the doubles: a double written over them would have left other bytes there.
    // The row's codes are the layout's: side, type, role and state, then which prices are present.
    b[at] = codes & 1;
    b[at + 1] = (codes >> 1) & 7;
    b[at + 2] = (codes >> 4) & 3;
    b[at + 3] = (codes >> 6) & 7;
    b[at + 4] = parentId === null ? flags : flags | HAS_PARENT;
    b[at + 5] = 0;
    b[at + 6] = 0;
    b[at + 7] = 0;
    const w = (at + 72) >> 2;
    if (texts > SHORT_TEXT) {
      const id = idCode < 0 ? idText! : sequenceIds.decode(idCode, n[s + 12]!);
      this.longStrings(w, id, contractId, parentId ?? '');
      return;
    }
    const start = at + RECORD_FIXED_BYTES;
    // An id the row keeps as a prefix and a number is written from those (its prefix's bytes and the
    // number's digits, the same bytes as its text): the engine's ids are concatenations, which V8 reads a
    // character at a time only through the pieces they are made of.
    const idEnd =
      idCode < 0
        ? writeText(b, start, idText!)
        : writeSequenceId(b, writeWords(this.view, start, this.prefixOf(idCode)), n[s + 12]!);
    const contractEnd = writeWords(this.view, idEnd, this.contractBytes(contractId));
    const end = parentId === null ? contractEnd : writeText(b, contractEnd, parentId);
    const words = this.words;
    words[w] = idEnd - start;
    words[w + 1] = contractEnd - idEnd;
    words[w + 2] = end - contractEnd;
    words[w + 3] = 0;
    this.used = pad(b, end);
  }

  /** UTF-8 of a contract id, kept for the last one met: a run's orders nearly all name the same contract. */
  private contractBytes(contractId: string): Utf8Words {
    if (contractId !== this.lastContract) {
      this.lastContract = contractId;
      this.lastContractBytes = utf8Words(contractId);
    }
    return this.lastContractBytes;
  }

  private prefixOf(code: number): Utf8Words {
    let bytes = this.prefixBytes[code];
    if (bytes === undefined) {
      bytes = utf8Words(sequenceIds.prefix(code));
      this.prefixBytes[code] = bytes;
    }
    return bytes;
  }

  /** Strings too long for the record's room: their lengths, then each string, hashed as they are, then padding. */
  private longStrings(w: number, id: string, contractId: string, parentId: string): void {
    const parts = [Buffer.from(id, 'utf8'), Buffer.from(contractId, 'utf8'), Buffer.from(parentId, 'utf8')];
    const words = this.words;
    words[w] = parts[0]!.length;
    words[w + 1] = parts[1]!.length;
    words[w + 2] = parts[2]!.length;
    words[w + 3] = 0;
    this.used = (w + 4) * 4;
    let total = 0;
    for (const part of parts) {
      this.flush();
      this.hash.update(part);
      total += part.length;
    }
    // Hashed at once, so the buffer starts the next record on 8 bytes again.
    const zeros = (8 - (total & 7)) & 7;
    if (zeros > 0) this.hash.update(ZEROS.subarray(0, zeros));
  }

  private flush(): void {
    if (this.used > 0) this.hash.update(this.buffer.subarray(0, this.used));
    this.used = 0;
  }

  /** The digest of the orders added so far; adding may go on after it. */
  digest(): string {
    const copy = this.hash.copy();
    if (this.used > 0) copy.update(this.buffer.subarray(0, this.used));
    return copy.digest('hex');
  }
}

if (new Uint8Array(new Uint16Array([1]).buffer)[0] !== 1) {
  // The layout is little-endian and the record is written through typed arrays, which use the machine's order.
  throw new Error('the order list hash needs a little-endian machine');
}

/** -0 as 0 and every NaN as one NaN, as the text lines of layout 0 printed them: the same order, the same bytes. */
function number(v: number): number {
  return v === v ? v + 0 : Number.NaN;
}

/** Zero bytes from `at` to the next multiple of 8; returns it. */
function pad(b: Buffer, at: number): number {
  while ((at & 7) !== 0) b[at++] = 0;
  return at;
}

/** `n` in decimal digits at `start` (right after an id's prefix); returns the end. */
function writeSequenceId(b: Buffer, start: number, n: number): number {
  let digits = 1;
  // Powers of ten are exact doubles up to 1e22, past the 15 digits an encoded id has at most.
  for (let power = 10; power <= n; power *= 10) digits++;
  const end = start + digits;
  let k = end - 1;
  let rest = n;
  // Below 2^31 the digits come from integer arithmetic, which the compiler turns into multiplications.
  for (; rest > 0x7fffffff; k--) {
    const next = Math.floor(rest / 10);
    b[k] = 0x30 + (rest - next * 10);
    rest = next;
  }
  let small = rest | 0;
  for (; k > start; k--) {
    const next = (small / 10) | 0;
    b[k] = 0x30 + (small - next * 10);
    small = next;
  }
  b[start] = 0x30 + small;
  return end;
}

/** A string's UTF-8 bytes, as little-endian 32-bit words (the last one zero-padded), and their count. */
interface Utf8Words {
  readonly length: number;
  readonly words: Uint32Array;
}

function utf8Words(text: string): Utf8Words {
  const bytes = Buffer.from(text, 'utf8');
  const words = new Uint32Array(Math.ceil(bytes.length / 4));
  new Uint8Array(words.buffer).set(bytes);
  return { length: bytes.length, words };
}

/**
 * `text`'s bytes at `at`, four at a time (a byte at a time was 1.9% of a backtest: an id's prefix and the
 * contract id are copied for every order); returns the end. Up to three bytes past the end are written
 * too: what follows in the record is written over them, and a record's last bytes are its padding, so they
 * are never hashed as they are left here.
 */
function writeWords(view: DataView, at: number, text: Utf8Words): number {
  const words = text.words;
  for (let j = 0; j < words.length; j++) view.setUint32(at + 4 * j, words[j]!, true);
  return at + text.length;
}

/** `value` as UTF-8 at `at` (room for 3 bytes per unit assumed); returns the end. */
function writeText(b: Buffer, at: number, value: string): number {
  const n = value.length;
  for (let k = 0; k < n; k++) {
    const c = value.charCodeAt(k);
    // Not ASCII: let the buffer encode the whole string.
    if (c >= 0x80) return at + b.write(value, at, 'utf8');
    b[at + k] = c;
  }
  return at + n;
}
