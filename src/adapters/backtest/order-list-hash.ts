/**
 * The order list hash: one sha256 over every order of a run (its prices in ticks, final state and fill) in
 * placement order. Two runs with the same hash placed, modified and filled the same orders.
 */
import { createHash } from 'node:crypto';
import type { OrderRecord } from './venue-book.ts';

/** sha256 of the order list (every order, its prices in ticks, final state and fill), in placement order. */
export function orderListHash(orders: readonly OrderRecord[]): string {
  // The lines are written as UTF-8 straight into one reused buffer and hashed a buffer at a time. Building
  // them as strings (a template per order, then hashing the text in ~64 KB pieces) allocated ~1 KB per order
  // (number-to-string conversions, concatenations, the flattened piece): a fifth of all the garbage of the
  // bench's 1M-bar run. The bytes hashed are the same: `${o.id},${o.contractId},...,${o.modifies}\n`.
  // A line is written by module functions into local positions (one room check a line, integers two
  // digits an int32 division): 40% less time than a method call and a room check per field, and
  // floating-point divisions for the 13-digit timestamps.
  const out = new LineHasher();
  for (let k = 0; k < orders.length; k++) out.line(orders[k]!);
  return out.digest();
}

const HASH_BUFFER_BYTES = 65_536;
/** Room kept for one line of short fields; a line with a longer string is written field by field. */
const LINE_ROOM = 1_024;
/**
 * Strings of a line up to this many UTF-16 units in all (3 bytes each at most) fit its room with the rest:
 * 8 numbers of at most 25 characters (String(-1.2345678901234567e-300)) and 15 separators.
 */
const SHORT_TEXT = 256;
const COMMA = 0x2c;
const NEWLINE = 0x0a;
const ZERO = 0x30;
/** Numbers below 10^8 fit an int32, where a division by 100 is a multiply (a timestamp is written as two of them). */
const LOW_DIGITS = 100_000_000;

/** Bytes of the order list's lines, hashed as they fill a buffer; numbers and strings written as `${}` would print them. */
class LineHasher {
  private readonly hash = createHash('sha256');
  private readonly buffer = Buffer.allocUnsafe(HASH_BUFFER_BYTES);
  private used = 0;

  line(o: OrderRecord): void {
    const parentId = o.parentId ?? '';
    const texts =
      o.id.length +
      o.contractId.length +
      o.side.length +
      o.type.length +
      o.role.length +
      parentId.length +
      o.state.length;
    if (texts > SHORT_TEXT) return this.longLine(o);
    if (this.used + LINE_ROOM > HASH_BUFFER_BYTES) this.flush();
    const b = this.buffer;
    let at = this.used;
    at = writeText(b, at, o.id);
    b[at++] = COMMA;
    at = writeText(b, at, o.contractId);
    b[at++] = COMMA;
    at = writeText(b, at, o.side);
    b[at++] = COMMA;
    at = writeNumber(b, at, o.size);
    b[at++] = COMMA;
    at = writeText(b, at, o.type);
    b[at++] = COMMA;
    if (o.limitPrice !== null) at = writeNumber(b, at, o.limitPrice);
    b[at++] = COMMA;
    if (o.stopPrice !== null) at = writeNumber(b, at, o.stopPrice);
    b[at++] = COMMA;
    if (o.trailPrice !== null) at = writeNumber(b, at, o.trailPrice);
    b[at++] = COMMA;
    at = writeText(b, at, o.role);
    b[at++] = COMMA;
    at = writeText(b, at, parentId);
    b[at++] = COMMA;
    at = writeNumber(b, at, o.placedAt);
    b[at++] = COMMA;
    at = writeText(b, at, o.state);
    b[at++] = COMMA;
    if (o.fillPrice !== null) at = writeNumber(b, at, o.fillPrice);
    b[at++] = COMMA;
    if (o.fillTime !== null) at = writeNumber(b, at, o.fillTime);
    b[at++] = COMMA;
    at = writeNumber(b, at, o.modifies);
    b[at++] = NEWLINE;
    this.used = at;
  }

  /** A line with long strings (ids): the same bytes, its parts hashed one by one. */
  private longLine(o: OrderRecord): void {
    this.field(o.id);
    this.field(
      `,${o.contractId},${o.side},${o.size},${o.type},${o.limitPrice ?? ''},${o.stopPrice ?? ''},${o.trailPrice ?? ''},${o.role},`,
    );
    this.field(o.parentId ?? '');
    this.field(`,${o.placedAt},${o.state},${o.fillPrice ?? ''},${o.fillTime ?? ''},${o.modifies}\n`);
  }

  private field(value: string): void {
    if (value.length > SHORT_TEXT) {
      this.flush();
      this.hash.update(value, 'utf8');
      return;
    }
    if (this.used + LINE_ROOM > HASH_BUFFER_BYTES) this.flush();
    this.used = writeText(this.buffer, this.used, value);
  }

  private flush(): void {
    if (this.used > 0) this.hash.update(this.buffer.subarray(0, this.used));
    this.used = 0;
  }

  digest(): string {
    this.flush();
    return this.hash.digest('hex');
  }
}

/** `value` as UTF-8 at `at` (room for 3 bytes per unit assumed); returns the end. */
function writeText(b: Buffer, at: number, value: string): number {
  const n = value.length;
  for (let k = 0; k < n; k++) {
    const code = value.charCodeAt(k);
    // Not ASCII: let the buffer encode the whole string.
    if (code >= 0x80) return at + b.write(value, at, 'utf8');
    b[at + k] = code;
  }
  return at + n;
}

/** `${value}` at `at`: safe integers digit by digit (no string), anything else through String(). */
function writeNumber(b: Buffer, at: number, value: number): number {
  if (!Number.isSafeInteger(value)) return writeText(b, at, String(value));
  let n = value;
  if (n < 0) {
    b[at++] = 0x2d;
    n = -n;
  }
  if (n < LOW_DIGITS) return writeDigits(b, at, n, 0);
  const high = Math.floor(n / LOW_DIGITS);
  at = writeDigits(b, at, high, 0);
  return writeDigits(b, at, n - high * LOW_DIGITS, 8);
}

/** Two ASCII digits for every 0 <= n < 100, so a number is written two digits a division. */
const PAIRS = (() => {
  const pairs = new Uint8Array(200);
  for (let n = 0; n < 100; n++) {
    pairs[2 * n] = ZERO + Math.floor(n / 10);
    pairs[2 * n + 1] = ZERO + (n % 10);
  }
  return pairs;
})();

/** How many decimal digits 0 <= n < 10^8 has. */
function digitCount(n: number): number {
  if (n < 10_000) return n < 100 ? (n < 10 ? 1 : 2) : n < 1_000 ? 3 : 4;
  return n < 1_000_000 ? (n < 100_000 ? 5 : 6) : n < 10_000_000 ? 7 : 8;
}

/** The decimal digits of 0 <= n < 10^8, at least `width` of them (leading zeros). */
function writeDigits(b: Buffer, at: number, n: number, width: number): number {
  let v = n | 0;
  const digits = digitCount(v);
  for (let k = digits; k < width; k++) b[at++] = ZERO;
  const stop = at + digits;
  let end = stop;
  while (v >= 100) {
    const next = (v / 100) | 0;
    const pair = (v - next * 100) * 2;
    b[--end] = PAIRS[pair + 1]!;
    b[--end] = PAIRS[pair]!;
    v = next;
  }
  if (v >= 10) {
    b[--end] = PAIRS[v * 2 + 1]!;
    b[--end] = PAIRS[v * 2]!;
  } else {
    b[--end] = ZERO + v;
  }
  return stop;
}
