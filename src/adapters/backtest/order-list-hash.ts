/**
 * The order list hash: one sha256 over every order of a run (its prices in ticks, final state and fill) in
 * placement order. Two runs with the same hash placed, modified and filled the same orders.
 *
 * What is hashed is a binary record of each order (layout version 1, docs/backtest.md, "The order list
 * hash"), after a header naming the version, so a hash of another layout can never be mistaken for one of
 * this. Up to version 0 it was text lines; the text's number formatting was most of the hash's time.
 */
import { createHash, type Hash } from 'node:crypto';
import { sequenceIds } from '../../engine/column-blocks.ts';
import { TicklineError } from '../../engine/errors.ts';
import type { OrderRecord } from './venue-book.ts';

/** The layout's version, also the first bytes hashed: `tickline order list v1\n` and a zero to 24 bytes. */
export const ORDER_LIST_LAYOUT = 1;
const HEADER = Buffer.alloc(24);
HEADER.write(`tickline order list v${ORDER_LIST_LAYOUT}\n`, 'ascii');

/** Bytes of a record before its strings: 8 of codes and flags, 8 numbers of 8, 3 string lengths of 4, 4 zero. */
export const RECORD_FIXED_BYTES = 88;

/** An order the layout has no code for: a caller built a record by hand outside the types. */
export class OrderListHashError extends TicklineError {
  override readonly name = 'OrderListHashError';
  readonly kind = 'runtime';
  readonly code = 'ORDER_LIST_UNHASHABLE';
}

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
const HAS_LIMIT = 1;
const HAS_STOP = 2;
const HAS_TRAIL = 4;
const HAS_FILL_PRICE = 8;
const HAS_FILL_TIME = 16;
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
  private used: number;
  /** UTF-8 of each id prefix (`sequenceIds`) met so far, by its code. */
  private readonly prefixBytes: (Buffer | undefined)[] = [];
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

  add(o: OrderRecord): void {
    this.count++;
    const parentId = o.parentId;
    const texts = o.id.length + o.contractId.length + (parentId === null ? 0 : parentId.length);
    if (this.used + RECORD_ROOM > HASH_BUFFER_BYTES) this.flush();
    const b = this.buffer;
    const at = this.used;
    const d = this.doubles;
    const slot = at >> 3;
    let present = 0;
    d[slot + 1] = number(o.size);
    if (o.limitPrice !== null) {
      present |= HAS_LIMIT;
      d[slot + 2] = number(o.limitPrice);
    } else d[slot + 2] = 0;
    if (o.stopPrice !== null) {
      present |= HAS_STOP;
      d[slot + 3] = number(o.stopPrice);
    } else d[slot + 3] = 0;
    if (o.trailPrice !== null) {
      present |= HAS_TRAIL;
      d[slot + 4] = number(o.trailPrice);
    } else d[slot + 4] = 0;
    d[slot + 5] = number(o.placedAt);
    if (o.fillPrice !== null) {
      present |= HAS_FILL_PRICE;
      d[slot + 6] = number(o.fillPrice);
    } else d[slot + 6] = 0;
    if (o.fillTime !== null) {
      present |= HAS_FILL_TIME;
      d[slot + 7] = number(o.fillTime);
    } else d[slot + 7] = 0;
    d[slot + 8] = number(o.modifies);
    if (parentId !== null) present |= HAS_PARENT;
    // The first 8 bytes after the doubles: a double written over them would have left other bytes there.
    b[at] = sideCode(o.side);
    b[at + 1] = typeCode(o.type);
    b[at + 2] = roleCode(o.role);
    b[at + 3] = stateCode(o.state);
    b[at + 4] = present;
    b[at + 5] = 0;
    b[at + 6] = 0;
    b[at + 7] = 0;
    const w = (at + 72) >> 2;
    if (texts > SHORT_TEXT) {
      this.longStrings(w, o.id, o.contractId, parentId ?? '');
      return;
    }
    const start = at + RECORD_FIXED_BYTES;
    // An id the columns keep as a prefix and a number is written from those (its prefix's bytes and the
    // number's digits, the same bytes as its text): the engine's ids are concatenations, which V8 reads a
    // character at a time only through the pieces they are made of.
    const idCode = sequenceIds.encode(o.id);
    const idEnd =
      idCode < 0 ? writeText(b, start, o.id) : writeSequenceId(b, start, this.prefixOf(idCode), sequenceIds.number);
    const contractEnd = writeText(b, idEnd, o.contractId);
    const end = parentId === null ? contractEnd : writeText(b, contractEnd, parentId);
    const words = this.words;
    words[w] = idEnd - start;
    words[w + 1] = contractEnd - idEnd;
    words[w + 2] = end - contractEnd;
    words[w + 3] = 0;
    this.used = pad(b, end);
  }

  private prefixOf(code: number): Buffer {
    let bytes = this.prefixBytes[code];
    if (bytes === undefined) {
      bytes = Buffer.from(sequenceIds.prefix(code), 'utf8');
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

function sideCode(side: string): number {
  if (side === 'buy') return 0;
  if (side === 'sell') return 1;
  return unknown('side', side);
}

function typeCode(type: string): number {
  switch (type) {
    case 'market':
      return 0;
    case 'limit':
      return 1;
    case 'stop':
      return 2;
    case 'stopLimit':
      return 3;
    case 'trailingStop':
      return 4;
  }
  return unknown('type', type);
}

function roleCode(role: string): number {
  switch (role) {
    case 'entry':
      return 0;
    case 'stopLoss':
      return 1;
    case 'takeProfit':
      return 2;
  }
  return unknown('role', role);
}

function stateCode(state: string): number {
  switch (state) {
    case 'pending':
      return 0;
    case 'working':
      return 1;
    case 'filled':
      return 2;
    case 'cancelled':
      return 3;
    case 'rejected':
      return 4;
    case 'expired':
      return 5;
  }
  return unknown('state', state);
}

function unknown(field: string, value: string): never {
  throw new OrderListHashError(`order ${field} ${JSON.stringify(value)} has no code in layout ${ORDER_LIST_LAYOUT}`);
}

/** `prefix`, then `n` in decimal digits, at `at`; returns the end. */
function writeSequenceId(b: Buffer, at: number, prefix: Buffer, n: number): number {
  for (let k = 0; k < prefix.length; k++) b[at + k] = prefix[k]!;
  let digits = 1;
  for (let rest = n; rest >= 10; rest = Math.floor(rest / 10)) digits++;
  const end = at + prefix.length + digits;
  let rest = n;
  for (let k = end - 1; rest >= 10; k--) {
    b[k] = 0x30 + (rest % 10);
    rest = Math.floor(rest / 10);
  }
  b[end - digits] = 0x30 + rest;
  return end;
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
