/**
 * Bar history from a CSV file: header `t,o,h,l,c,v[,contract]` (any order), `t` the bar start in ISO 8601
 * with an offset, prices decimals that must lie exactly on the contract's grid (no rounding). Every bad
 * cell is reported at once, naming the file, the line and the column.
 *
 * The file is read in chunks straight into typed columns (memory bounded by the bars, never by the text:
 * a 570 MB file is more than V8 can hold as one string). Each line first goes through a byte-level fast
 * path that accepts only the plain forms (`2024-01-02T15:00:00Z`, `1676.75`, `1884`) whose value it can
 * compute exactly; any other line, and every line with a problem, goes through the general path (decode,
 * split, Number, Date.parse), which alone decides what is an error and what it says.
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import type { PriceGrid } from '../../../engine/ticks.ts';
import type { BarColumns } from '../../../engine/types.ts';
import { allocateColumns, sliceByIndex } from './columns.ts';

export interface CsvProblem {
  readonly file: string;
  /** 1-based line number in the file. */
  readonly line: number;
  /** Column name from the header, or empty for a whole-line problem. */
  readonly column: string;
  readonly message: string;
}

export class CsvBarsError extends Error {
  override readonly name = 'CsvBarsError';
  readonly code = 'CSV_INVALID';
  constructor(readonly problems: readonly CsvProblem[]) {
    const shown = problems.slice(0, 20).map((p) => `${p.file}${p.line > 0 ? `:${p.line}` : ''}${p.column ? ` column ${p.column}` : ''}: ${p.message}`);
    if (problems.length > 20) shown.push(`... and ${problems.length - 20} more`);
    super(shown.join('\n'));
  }
}

/** Where the optional `contract` column changes value (a roll to the next contract month). */
export interface ContractSegment {
  readonly contract: string;
  /** Index of the first bar of the segment. */
  readonly from: number;
}

export interface CsvBars {
  readonly bars: BarColumns;
  readonly segments: readonly ContractSegment[];
}

/** The fields of a bar file, each read from the column of this name (case-insensitive). */
export interface CsvColumns {
  readonly time: string;
  readonly open: string;
  readonly high: string;
  readonly low: string;
  readonly close: string;
  readonly volume: string;
  /** Optional in the file: the contract month of each row. */
  readonly contract: string;
}

/** The project's own header: `t,o,h,l,c,v[,contract]`. */
export const DEFAULT_COLUMNS: CsvColumns = { time: 't', open: 'o', high: 'h', low: 'l', close: 'c', volume: 'v', contract: 'contract' };

export interface CsvOptions {
  /** The file's names of the fields; those left out keep the defaults (`DEFAULT_COLUMNS`). */
  readonly columns?: Partial<CsvColumns>;
  /**
   * IANA time zone (`America/Chicago`) of times written without an offset; without it such times are
   * errors. A time with an offset (`Z`, `-05:00`) is read as written either way.
   */
  readonly timeZone?: string;
}

/**
 * Which cell of a row holds each field (0-based), and how many cells a row needs. Built from the header
 * today; a configured column map (issue 15) builds the same thing from other names.
 */
export interface CsvLayout {
  readonly time: number;
  readonly open: number;
  readonly high: number;
  readonly low: number;
  readonly close: number;
  readonly volume: number;
  /** -1 when the file has no contract column. */
  readonly contract: number;
  readonly cells: number;
}

const OFFSET = /(?:Z|[+-]\d{2}:\d{2})$/;
const MAX_PROBLEMS = 1000;
const CHUNK_BYTES = 1 << 20;
const NANOS = 1_000_000_000;

const FIELDS = ['time', 'open', 'high', 'low', 'close', 'volume'] as const;

/** The layout named by a header line, or the problems with it. */
export function layoutFromHeader(headerLine: string, file: string, mapping: Partial<CsvColumns> = {}): CsvLayout | CsvProblem[] {
  const header = headerLine.replace(/\r$/, '').replace(/^\ufeff/, '').split(',').map((h) => h.trim().toLowerCase());
  const columns = { ...DEFAULT_COLUMNS, ...mapping };
  const mapped = Object.keys(mapping).length > 0;
  const problems: CsvProblem[] = [];
  const index: Record<string, number> = {};
  for (const field of FIELDS) {
    const name = columns[field].toLowerCase();
    index[field] = header.indexOf(name);
    if (index[field] >= 0) continue;
    const hint = mapped ? ` for ${field}` : '';
    problems.push({ file, line: 1, column: name, message: `header lacks the column "${name}"${hint} (found: ${header.join(',')})${mapped || field !== 'time' ? '' : '; name the file\'s columns in data.columns'}` });
  }
  if (problems.length > 0) return problems;
  return { time: index.time!, open: index.open!, high: index.high!, low: index.low!, close: index.close!, volume: index.volume!, contract: header.indexOf(columns.contract.toLowerCase()), cells: header.length };
}

/**
 * Wall-clock times of one IANA zone to UTC. The zone's offset is looked up once per local hour (Intl is
 * slow, and offsets change on the hour). A local time a change forward skips comes out an hour earlier
 * (02:30 as 01:30 standard time); one a change back repeats is its first instant.
 */
export class ZoneClock {
  private readonly format: Intl.DateTimeFormat;
  private readonly offsets = new Map<number, number>();

  constructor(readonly zone: string) {
    this.format = new Intl.DateTimeFormat('en-US', { timeZone: zone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric' });
  }

  /** Local minus UTC at instant `utc` (ms). */
  private offsetAt(utc: number): number {
    const f: Record<string, number> = {};
    for (const part of this.format.formatToParts(utc)) if (part.type !== 'literal') f[part.type] = Number(part.value);
    const local = Date.UTC(f.year!, f.month! - 1, f.day!, f.hour!, f.minute!, f.second!);
    return local - (utc - (((utc % 1000) + 1000) % 1000));
  }

  /** UTC epoch ms of a local wall-clock time given as if it were UTC. */
  toUtc(local: number): number {
    const hour = Math.floor(local / 3_600_000);
    let offset = this.offsets.get(hour);
    if (offset === undefined) {
      offset = this.offsetAt(local - this.offsetAt(local));
      this.offsets.set(hour, offset);
    }
    return local - offset;
  }
}

/** True when `zone` is an IANA time zone this runtime knows. */
export function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

const LOCAL_TIME = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,3}))?)?)?$/;

/** `YYYY-MM-DD[( |T)HH:MM[:SS[.sss]]]` without an offset, in `zone`; NaN for anything else. */
export function parseLocalTime(text: string, zone: ZoneClock): number {
  const m = LOCAL_TIME.exec(text);
  if (!m) return Number.NaN;
  const [year, month, day, hour, minute, second] = [m[1], m[2], m[3], m[4] ?? '0', m[5] ?? '0', m[6] ?? '0'].map(Number) as [number, number, number, number, number, number];
  const ms = Number((m[7] ?? '0').padEnd(3, '0'));
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month) || hour > 23 || minute > 59 || second > 59) return Number.NaN;
  return zone.toUtc(Date.UTC(year, month - 1, day, hour, minute, second, ms));
}

export function readCsvBars(file: string, grid: PriceGrid, displayName = file, options: CsvOptions = {}): CsvBars {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch (error) {
    throw new CsvBarsError([{ file: displayName, line: 0, column: '', message: (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'file not found' : (error as Error).message }]);
  }
  try {
    const size = fstatSync(fd).size;
    const reader = new CsvBarsReader(grid, displayName, undefined, options);
    const chunk = Buffer.allocUnsafe(CHUNK_BYTES);
    let bytesRead = 0;
    for (;;) {
      const read = readSync(fd, chunk, 0, CHUNK_BYTES, null);
      if (read === 0) break;
      reader.push(chunk.subarray(0, read));
      // Size the columns once from the first chunk's bytes per bar, so a large file is neither copied
      // on every growth nor held at twice its size.
      if (bytesRead === 0 && size > read && reader.count > 0) reader.reserve(Math.ceil((size / read) * reader.count * 1.02) + 16);
      bytesRead += read;
      if (reader.full) break;
    }
    return reader.end();
  } finally {
    closeSync(fd);
  }
}

export function parseCsvBars(text: string, grid: PriceGrid, file: string, options: CsvOptions = {}): CsvBars {
  const reader = new CsvBarsReader(grid, file, undefined, options);
  reader.push(Buffer.from(text, 'utf8'));
  return reader.end();
}

/**
 * Incremental reader: `push` chunks split anywhere (even inside a line or a UTF-8 character), then `end`.
 * Only the unfinished last line is kept between chunks.
 */
export class CsvBarsReader {
  private layout: CsvLayout | undefined;
  private readonly problems: CsvProblem[] = [];
  private readonly segments: ContractSegment[] = [];
  private bars: BarColumns;
  private n = 0;
  private lineNo = 0;
  private carry: Buffer = Buffer.alloc(0);
  /** The last readable time, so a row after an unreadable one is still checked for going backwards. */
  private lastTime = Number.NEGATIVE_INFINITY;
  private lastContract = '';
  private lastContractBytes: Buffer = Buffer.alloc(0);
  /** Epoch ms of the last fast-parsed date (bytes 0-9 of the time cell), reused while the date repeats. */
  private dayKey = -1;
  private dayMs = 0;
  private readonly cellStarts: Int32Array;
  private readonly tickNanos: number;
  /** The zone of times without an offset, when configured. */
  private readonly zone: ZoneClock | undefined;

  constructor(
    private readonly grid: PriceGrid,
    private readonly file: string,
    estimatedBars = 1 << 16,
    private readonly options: CsvOptions = {},
  ) {
    this.zone = options.timeZone === undefined ? undefined : new ZoneClock(options.timeZone);
    this.bars = allocateColumns(Math.max(16, estimatedBars));
    this.cellStarts = new Int32Array(64);
    this.tickNanos = grid.tickNanos;
  }

  /** True once the problem limit is reached: further input would not be read. */
  get full(): boolean {
    return this.problems.length >= MAX_PROBLEMS;
  }

  /** Bars read so far. */
  get count(): number {
    return this.n;
  }

  /** Makes room for `bars` bars in all (never shrinks). */
  reserve(bars: number): void {
    if (bars > this.bars.time.length) this.resize(bars);
  }

  push(chunk: Uint8Array): void {
    let buf: Buffer;
    if (this.carry.length > 0) {
      buf = Buffer.concat([this.carry, chunk]);
    } else {
      buf = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    }
    const start = this.completeLines(buf);
    // Copy the tail: the caller may reuse its chunk buffer.
    this.carry = Buffer.from(buf.subarray(start));
  }

  /** Reads every line ended by a newline; returns where the unfinished rest starts. */
  private completeLines(buf: Buffer): number {
    // Kept apart from push so the optimised loop has no cold code after it to deoptimise on each chunk.
    let start = 0;
    for (let nl = buf.indexOf(10, start); nl >= 0; nl = buf.indexOf(10, start)) {
      this.line(buf, start, nl);
      start = nl + 1;
    }
    return start;
  }

  end(): CsvBars {
    // The text after the last newline is a line too (possibly empty), as `split('\n')` would give.
    const tail = this.carry;
    this.carry = Buffer.alloc(0);
    this.line(tail, 0, tail.length);
    const { problems, file } = this;
    if (problems.length === 0 && this.n === 0) problems.push({ file, line: 1, column: '', message: 'no bars' });
    if (problems.length > 0) throw new CsvBarsError(problems);
    return { bars: this.trimmedColumns(), segments: this.segments };
  }

  private line(buf: Buffer, start: number, end: number): void {
    this.lineNo++;
    if (this.layout === undefined) {
      const layout = layoutFromHeader(buf.toString('utf8', start, end), this.file, this.options.columns);
      if (Array.isArray(layout)) throw new CsvBarsError(layout);
      this.layout = layout;
      return;
    }
    if (this.problems.length >= MAX_PROBLEMS) return;
    if (end > start && buf[end - 1] === 13) end--;
    if (!this.fastRow(buf, start, end)) this.generalRow(buf.toString('utf8', start, end));
  }

  /** Splits the cells and commits the row when every cell is in a plain form and the row is valid. */
  private fastRow(buf: Buffer, start: number, end: number): boolean {
    const layout = this.layout!;
    const starts = this.cellStarts;
    if (layout.cells + 1 > starts.length) return false;
    let cells = 1;
    let lastEnd = end;
    starts[0] = start;
    for (let i = start; i < end; i++) {
      if (buf[i] === 44) {
        // Cells after the header's count are ignored, as the general path ignores them.
        if (cells === layout.cells) {
          lastEnd = i;
          break;
        }
        starts[cells++] = i + 1;
      }
    }
    if (cells < layout.cells) return false;
    // Cell k ends before starts[k + 1]; this sentinel closes the last one.
    starts[cells] = lastEnd + 1;
    const t = this.fastTime(buf, starts[layout.time]!, starts[layout.time + 1]! - 1);
    if (Number.isNaN(t) || t <= this.lastTime) return false;
    const o = this.fastTicks(buf, starts[layout.open]!, starts[layout.open + 1]! - 1);
    const h = this.fastTicks(buf, starts[layout.high]!, starts[layout.high + 1]! - 1);
    const l = this.fastTicks(buf, starts[layout.low]!, starts[layout.low + 1]! - 1);
    const c = this.fastTicks(buf, starts[layout.close]!, starts[layout.close + 1]! - 1);
    if (Number.isNaN(o + h + l + c)) return false;
    if (h < Math.max(o, c, l) || l > Math.min(o, c)) return false;
    const v = fastWhole(buf, starts[layout.volume]!, starts[layout.volume + 1]! - 1);
    if (Number.isNaN(v)) return false;
    if (layout.contract >= 0 && !this.fastContract(buf, starts[layout.contract]!, starts[layout.contract + 1]! - 1)) return false;
    this.commit(t, o, h, l, c, v);
    return true;
  }

  /** `YYYY-MM-DDTHH:MM:SS` then `Z` or `+hh:mm`/`-hh:mm`, every field in range; NaN for anything else. */
  private fastTime(buf: Buffer, from: number, to: number): number {
    const length = to - from;
    if (length !== 20 && length !== 25 && (length !== 19 || this.zone === undefined)) return Number.NaN;
    if (buf[from + 4] !== 45 || buf[from + 7] !== 45 || buf[from + 10] !== 84 || buf[from + 13] !== 58 || buf[from + 16] !== 58) return Number.NaN;
    const year = digits(buf, from, 4);
    const month = digits(buf, from + 5, 2);
    const day = digits(buf, from + 8, 2);
    const hour = digits(buf, from + 11, 2);
    const minute = digits(buf, from + 14, 2);
    const second = digits(buf, from + 17, 2);
    if (year < 1000 || month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month) || hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 59) return Number.NaN;
    let offsetMs = 0;
    if (length === 19) {
      // No offset: a wall-clock time of the configured zone.
    } else if (length === 20) {
      if (buf[from + 19] !== 90) return Number.NaN;
    } else {
      const sign = buf[from + 19];
      if ((sign !== 43 && sign !== 45) || buf[from + 22] !== 58) return Number.NaN;
      const oh = digits(buf, from + 20, 2);
      const om = digits(buf, from + 23, 2);
      if (oh < 0 || oh > 23 || om < 0 || om > 59) return Number.NaN;
      offsetMs = (sign === 43 ? 1 : -1) * (oh * 60 + om) * 60_000;
    }
    const key = (year * 100 + month) * 100 + day;
    if (key !== this.dayKey) {
      this.dayKey = key;
      this.dayMs = Date.UTC(year, month - 1, day);
    }
    const clock = this.dayMs + ((hour * 60 + minute) * 60 + second) * 1000;
    return length === 19 ? this.zone!.toUtc(clock) : clock - offsetMs;
  }

  /**
   * Ticks of a plain decimal `digits[.digits]` on the grid, computed in integers of 1e-9 exactly as
   * `PriceGrid.toTicks(Number(cell))` would; NaN for any other form or an off-grid price.
   */
  private fastTicks(buf: Buffer, from: number, to: number): number {
    let whole = 0;
    let i = from;
    while (i < to) {
      const d = buf[i]! - 48;
      if (d < 0 || d > 9) break;
      whole = whole * 10 + d;
      i++;
    }
    // At most 6 whole digits and 9 decimals: the decimal is then its own shortest double, and the nanos safe.
    if (i === from || i - from > 6) return Number.NaN;
    let fraction = 0;
    let scale = NANOS;
    if (i < to) {
      if (buf[i] !== 46 || i + 1 === to || to - i - 1 > 9) return Number.NaN;
      for (i++; i < to; i++) {
        const d = buf[i]! - 48;
        if (d < 0 || d > 9) return Number.NaN;
        fraction = fraction * 10 + d;
        scale /= 10;
      }
      // Tiny values print in exponent form, which the general conversion rounds differently.
      if (whole === 0 && fraction !== 0 && fraction * scale < 1000) return Number.NaN;
    }
    const nanos = whole * NANOS + fraction * scale;
    const ticks = nanos / this.tickNanos;
    return nanos % this.tickNanos === 0 ? ticks : Number.NaN;
  }

  private fastContract(buf: Buffer, from: number, to: number): boolean {
    for (let i = from; i < to; i++) {
      const b = buf[i]!;
      if (b <= 32 || b >= 127) return false;
    }
    const last = this.lastContractBytes;
    if (this.segments.length > 0 && to - from === last.length && buf.compare(last, 0, last.length, from, to) === 0) return true;
    this.noteContract(buf.toString('latin1', from, to));
    return true;
  }

  private noteContract(contract: string): void {
    if (this.segments.length === 0 || this.lastContract !== contract) {
      this.segments.push({ contract, from: this.n });
      this.lastContract = contract;
      this.lastContractBytes = Buffer.from(contract, 'utf8');
    }
  }

  private commit(t: number, o: number, h: number, l: number, c: number, v: number): void {
    if (this.n === this.bars.time.length) this.grow();
    const { bars, n } = this;
    bars.time[n] = t;
    bars.open[n] = o;
    bars.high[n] = h;
    bars.low[n] = l;
    bars.close[n] = c;
    bars.volume[n] = v;
    if (!Number.isNaN(t)) this.lastTime = t;
    this.n = n + 1;
  }

  /** Any row the fast path declined: the original per-line rules, which word every problem. */
  private generalRow(line: string): void {
    const layout = this.layout!;
    const { file, grid, problems } = this;
    if (line.trim() === '') return;
    const cells = line.split(',');
    const lineNo = this.lineNo;
    const problem = (column: string, message: string) => problems.push({ file, line: lineNo, column, message });
    if (cells.length < layout.cells) {
      problem('', `expected ${layout.cells} columns, found ${cells.length}`);
      return;
    }
    const tText = cells[layout.time]!.trim();
    const zone = this.zone;
    const t = OFFSET.test(tText) ? Date.parse(tText) : zone === undefined ? Number.NaN : parseLocalTime(tText, zone);
    if (Number.isNaN(t)) {
      problem('t', zone === undefined ? `"${tText}" is not an ISO 8601 time with an offset (Z or +hh:mm)` : `"${tText}" is not a time (YYYY-MM-DD HH:MM[:SS], in ${zone.zone} without an offset)`);
    }
    const price = (column: string, at: number): number => {
      const cell = cells[at]!.trim();
      const value = cell === '' ? Number.NaN : Number(cell);
      if (!Number.isFinite(value)) {
        problem(column, `"${cell}" is not a number`);
        return Number.NaN;
      }
      const ticks = grid.toTicks(value);
      if (!Number.isInteger(ticks)) {
        problem(column, `price ${cell} is not a multiple of the tick size ${grid.tickSize}`);
        return Number.NaN;
      }
      return ticks;
    };
    const o = price('o', layout.open);
    const h = price('h', layout.high);
    const l = price('l', layout.low);
    const c = price('c', layout.close);
    const vText = cells[layout.volume]!.trim();
    const v = vText === '' ? Number.NaN : Number(vText);
    if (!Number.isInteger(v) || v < 0) problem('v', `volume "${vText}" is not a whole number >= 0`);
    if (!Number.isNaN(o + h + l + c) && (h < Math.max(o, c, l) || l > Math.min(o, c))) {
      problem('', `high ${grid.toPrice(h)} and low ${grid.toPrice(l)} do not contain open ${grid.toPrice(o)} and close ${grid.toPrice(c)}`);
    }
    if (!Number.isNaN(t) && t <= this.lastTime) problem('t', `time ${tText} is not after the previous bar's (bars must be oldest first, one per time)`);
    if (layout.contract >= 0) this.noteContract((cells[layout.contract] ?? '').trim());
    this.commit(t, o, h, l, c, v);
  }

  private grow(): void {
    this.resize(Math.ceil(this.bars.time.length * 1.5));
  }

  private resize(capacity: number): void {
    const old = sliceByIndex(this.bars, 0, this.n);
    const next = allocateColumns(capacity);
    next.time.set(old.time);
    next.open.set(old.open);
    next.high.set(old.high);
    next.low.set(old.low);
    next.close.set(old.close);
    next.volume.set(old.volume);
    this.bars = next;
  }

  /** Columns of exactly the bars read: a view when little is wasted, else a compact copy. */
  private trimmedColumns(): BarColumns {
    const { bars, n } = this;
    if (n >= bars.time.length * 0.9) return sliceByIndex(bars, 0, n);
    const out = allocateColumns(n);
    out.time.set(bars.time.subarray(0, n));
    out.open.set(bars.open.subarray(0, n));
    out.high.set(bars.high.subarray(0, n));
    out.low.set(bars.low.subarray(0, n));
    out.close.set(bars.close.subarray(0, n));
    out.volume.set(bars.volume.subarray(0, n));
    return out;
  }
}

function digits(buf: Buffer, from: number, count: number): number {
  let value = 0;
  for (let i = from; i < from + count; i++) {
    const d = buf[i]! - 48;
    if (d < 0 || d > 9) return -1_000_000;
    value = value * 10 + d;
  }
  return value;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

/** A whole number of at most 15 plain digits; NaN for any other form. */
function fastWhole(buf: Buffer, from: number, to: number): number {
  if (to === from || to - from > 15) return Number.NaN;
  let value = 0;
  for (let i = from; i < to; i++) {
    const d = buf[i]! - 48;
    if (d < 0 || d > 9) return Number.NaN;
    value = value * 10 + d;
  }
  return value;
}
