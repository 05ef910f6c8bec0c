/**
 * Bar history from a CSV file: header `t,o,h,l,c,v[,contract]` (any order), `t` the bar start in ISO 8601
 * with an offset, prices decimals that must lie exactly on the contract's grid (no rounding). Every bad
 * cell is reported at once, naming the file, the line and the column.
 *
 * The file is read in chunks straight into typed columns (memory bounded by the bars, never by the text:
 * a 570 MB file is more than V8 can hold as one string). Each line first goes through a byte-level fast
 * path, one pass over its bytes with no string or object made, that accepts only the plain forms
 * (`2024-01-02T15:00:00Z` or `-05:00`, `1676.75`, `-0.5`, `1884`) whose value it can compute exactly; any
 * other line, and every line with a problem, goes through the general path (decode, split, Number,
 * Date.parse), which alone decides what is an error and what it says.
 */
import { closeSync, fstatSync, openSync, readFileSync, readSync } from 'node:fs';
import { ZoneClock } from '../engine/trading-day.ts';
import type { PriceGrid } from '../engine/ticks.ts';
import type { BarColumns } from '../engine/types.ts';
import { allocateColumns, sliceByIndex } from './columns.ts';
import { TicklineError } from '../engine/errors.ts';

export interface CsvProblem {
  readonly file: string;
  /** 1-based line number in the file. */
  readonly line: number;
  /** Column name from the header, or empty for a whole-line problem. */
  readonly column: string;
  readonly message: string;
}

export class CsvBarsError extends TicklineError {
  override readonly name = 'CsvBarsError';
  readonly kind = 'input';
  readonly code = 'CSV_INVALID';
  constructor(readonly problems: readonly CsvProblem[]) {
    const shown = problems
      .slice(0, 20)
      .map((p) => `${p.file}${p.line > 0 ? `:${p.line}` : ''}${p.column ? ` column ${p.column}` : ''}: ${p.message}`);
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
export const DEFAULT_COLUMNS: CsvColumns = {
  time: 't',
  open: 'o',
  high: 'h',
  low: 'l',
  close: 'c',
  volume: 'v',
  contract: 'contract',
};

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
const _NANOS = 1_000_000_000;

const FIELDS = ['time', 'open', 'high', 'low', 'close', 'volume'] as const;

/** The layout named by a header line, or the problems with it. */
export function layoutFromHeader(
  headerLine: string,
  file: string,
  mapping: Partial<CsvColumns> = {},
): CsvLayout | CsvProblem[] {
  const header = headerLine
    .replace(/\r$/, '')
    .replace(/^\ufeff/, '')
    .split(',')
    .map((h) => h.trim().toLowerCase());
  const columns = { ...DEFAULT_COLUMNS, ...mapping };
  const mapped = Object.keys(mapping).length > 0;
  const problems: CsvProblem[] = [];
  const index: Record<string, number> = {};
  for (const field of FIELDS) {
    const name = columns[field].toLowerCase();
    index[field] = header.indexOf(name);
    if (index[field] >= 0) continue;
    const hint = mapped ? ` for ${field}` : '';
    problems.push({
      file,
      line: 1,
      column: name,
      message: `header lacks the column "${name}"${hint} (found: ${header.join(',')})${mapped || field !== 'time' ? '' : "; name the file's columns in data.columns"}`,
    });
  }
  if (problems.length > 0) return problems;
  return {
    time: index.time!,
    open: index.open!,
    high: index.high!,
    low: index.low!,
    close: index.close!,
    volume: index.volume!,
    contract: header.indexOf(columns.contract.toLowerCase()),
    cells: header.length,
  };
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
  const [year, month, day, hour, minute, second] = [m[1], m[2], m[3], m[4] ?? '0', m[5] ?? '0', m[6] ?? '0'].map(
    Number,
  ) as [number, number, number, number, number, number];
  const ms = Number((m[7] ?? '0').padEnd(3, '0'));
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month) || hour > 23 || minute > 59 || second > 59)
    return Number.NaN;
  return zone.instantOf(Date.UTC(year, month - 1, day, hour, minute, second, ms));
}

export function readCsvBars(file: string, grid: PriceGrid, displayName = file, options: CsvOptions = {}): CsvBars {
  const fd = openCsv(file, displayName);
  try {
    const size = fstatSync(fd).size;
    const reader = new CsvBarsReader(grid, displayName, undefined, options);
    readRange(fd, reader, 0, size, size);
    return reader.end();
  } finally {
    closeSync(fd);
  }
}

/**
 * Every contract month of a file that holds several at once (each month's rows in time order, the months'
 * rows interleaved, as a full export of a root has them): one set of columns per `contract` label, each
 * read by the same reader as a one-month file, so problems name the same lines and columns. The whole file
 * is held in memory while it is split.
 */
export function readCsvMonths(
  file: string,
  grid: PriceGrid,
  displayName = file,
  options: CsvOptions = {},
): Map<string, BarColumns> {
  const fd = openCsv(file, displayName);
  let text: Buffer;
  try {
    text = readFileSync(fd);
  } finally {
    closeSync(fd);
  }
  const headerEnd = text.indexOf(10);
  const header = text.subarray(0, headerEnd < 0 ? text.length : headerEnd + 1);
  const layout = layoutFromHeader(header.toString('utf8'), displayName, options.columns);
  if (Array.isArray(layout)) throw new CsvBarsError(layout);
  if (layout.contract < 0) {
    const name = options.columns?.contract ?? DEFAULT_COLUMNS.contract;
    throw new CsvBarsError([
      {
        file: displayName,
        line: 1,
        column: name,
        message: `rolling by volume reads every month's rows: the header lacks the column "${name}"`,
      },
    ]);
  }
  // Each month's text keeps every line of the file in place, other months' lines left empty, so the
  // reader counts the file's own line numbers.
  const parts = new Map<string, Buffer[]>();
  const lines: Buffer[] = [];
  for (let p = headerEnd + 1; headerEnd >= 0 && p < text.length; ) {
    const nl = text.indexOf(10, p);
    const end = nl < 0 ? text.length : nl + 1;
    const line = text.subarray(p, end);
    lines.push(line);
    const label = cellText(line, layout.contract);
    if (label !== '' && !parts.has(label)) parts.set(label, []);
    p = end;
  }
  const problems: CsvProblem[] = [];
  const months = new Map<string, BarColumns>();
  for (const label of parts.keys()) {
    const reader = new CsvBarsReader(grid, displayName, undefined, options);
    reader.push(header.at(-1) === 10 ? header : Buffer.concat([header, NEWLINE]));
    for (const line of lines) reader.push(cellText(line, layout.contract) === label ? line : NEWLINE);
    try {
      months.set(label, reader.end().bars);
    } catch (error) {
      if (!(error instanceof CsvBarsError)) throw error;
      problems.push(...error.problems);
    }
  }
  lines.forEach((line, k) => {
    if (line.toString('utf8').trim() !== '' && cellText(line, layout.contract) === '')
      problems.push({
        file: displayName,
        line: k + 2,
        column: options.columns?.contract ?? DEFAULT_COLUMNS.contract,
        message: 'rolling by volume needs the contract month of every row',
      });
  });
  if (problems.length > 0) throw new CsvBarsError(problems.sort((a, b) => a.line - b.line));
  if (months.size === 0) throw new CsvBarsError([{ file: displayName, line: 1, column: '', message: 'no bars' }]);
  return months;
}

/** The trimmed text of cell `index` of a line ('' when the line has fewer cells). */
function cellText(line: Buffer, index: number): string {
  let start = 0;
  for (let k = 0; k < index; k++) {
    const comma = line.indexOf(44, start);
    if (comma < 0) return '';
    start = comma + 1;
  }
  let end = line.indexOf(44, start);
  if (end < 0) end = line.length;
  return line.toString('utf8', start, end).trim();
}

/** The file open for reading; a missing file is a problem of the file, in the reader's words. */
export function openCsv(file: string, displayName: string): number {
  try {
    return openSync(file, 'r');
  } catch (error) {
    throw new CsvBarsError([
      {
        file: displayName,
        line: 0,
        column: '',
        message: (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'file not found' : (error as Error).message,
      },
    ]);
  }
}

/**
 * Bytes [start, end) of the file through the reader, in chunks. `expectedBytes`: how much text the reader's
 * columns should have room for in the end, sized once from the first chunk's bytes per bar so that a large
 * file is neither copied on every growth nor held at twice its size.
 */
export function readRange(fd: number, reader: CsvBarsReader, start: number, end: number, expectedBytes: number): void {
  const chunk = Buffer.allocUnsafe(CHUNK_BYTES);
  let position = start;
  while (position < end) {
    const read = readSync(fd, chunk, 0, Math.min(CHUNK_BYTES, end - position), position);
    if (read === 0) break;
    const first = position === start;
    position += read;
    reader.push(chunk.subarray(0, read));
    if (first && expectedBytes > read && reader.count > 0)
      reader.reserve(Math.ceil((expectedBytes / read) * reader.count * 1.02) + 16);
    if (reader.full) break;
  }
}

export function parseCsvBars(text: string, grid: PriceGrid, file: string, options: CsvOptions = {}): CsvBars {
  const reader = new CsvBarsReader(grid, file, undefined, options);
  reader.push(Buffer.from(text, 'utf8'));
  return reader.end();
}

/** What a cell of the row holds, by the cell's index (the fast path's view of a `CsvLayout`). */
const enum Cell {
  Ignored,
  Time,
  Open,
  High,
  Low,
  Close,
  Volume,
  Contract,
}

const POW10 = [1, 10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000, 100_000_000, 1_000_000_000];
const EMPTY = Buffer.alloc(0);
const NEWLINE = Buffer.from('\n');

/**
 * Incremental reader: `push` chunks split anywhere (even inside a line or a UTF-8 character), then `end`.
 * Only the unfinished last line is kept between chunks.
 */
export class CsvBarsReader {
  private layout: CsvLayout | undefined;
  /** The layout as one kind per cell, for the fast path's single pass over a line. */
  private kinds: Uint8Array = new Uint8Array(0);
  /** The layout is exactly `t,o,h,l,c,v`: lines go through `plainLines`, which needs no per-cell dispatch. */
  private plain = false;
  /** The values of the row being read, by `Cell` kind. */
  private readonly row = new Float64Array(8);
  private readonly problems: CsvProblem[] = [];
  private readonly segments: ContractSegment[] = [];
  private bars: BarColumns;
  private n = 0;
  private lineNo = 0;
  private declined = 0;
  private carry: Buffer = EMPTY;
  private finished = false;
  /** Where the fast path's last cell parser stopped (the byte after the cell). */
  private cursor = 0;
  /** The last readable time, so a row after an unreadable one is still checked for going backwards. */
  private lastTime = Number.NEGATIVE_INFINITY;
  private lastContract = '';
  private lastContractBytes: Buffer = EMPTY;
  /** Epoch ms of the last fast-parsed date (year, month and day as one key), reused while the date repeats. */
  private dayKey = -1;
  private dayMs = 0;
  /**
   * Prices are read as integers of 10^-decimals (the grid's own decimals): a tick is `tickUnits` of them, so
   * alignment and the tick count are integer arithmetic, exactly `PriceGrid.toTicks` of the decimal.
   */
  private readonly decimals: number;
  private readonly tickUnits: number;
  /** Below 1e-6 a number prints in exponent form, which the general conversion rounds its own way. */
  private readonly tinyUnits: number;
  /** The zone of times without an offset, when configured. */
  private readonly zone: ZoneClock | undefined;

  constructor(
    private readonly grid: PriceGrid,
    private readonly file: string,
    estimatedBars = 1 << 16,
    private readonly options: CsvOptions = {},
    /** Columns to read into (a parallel read's part of shared memory); they are left, not grown, when full. */
    into?: BarColumns,
  ) {
    this.zone = options.timeZone === undefined ? undefined : new ZoneClock(options.timeZone);
    this.bars = into ?? allocateColumns(Math.max(16, estimatedBars));
    this.decimals = grid.decimals;
    this.tickUnits = grid.tickNanos / POW10[9 - grid.decimals]!;
    this.tinyUnits = grid.decimals > 6 ? POW10[grid.decimals - 6]! : 0;
  }

  /** True once the problem limit is reached: further input would not be read. */
  get full(): boolean {
    return this.problems.length >= MAX_PROBLEMS;
  }

  /** Bars read so far. */
  get count(): number {
    return this.n;
  }

  /** Non-empty lines after the header that the byte-level fast path left to the general path (none in a plain file). */
  get generalLines(): number {
    return this.declined;
  }

  /** Makes room for `bars` bars in all (never shrinks). */
  reserve(bars: number): void {
    if (bars > this.bars.time.length) this.resize(bars);
  }

  push(chunk: Uint8Array): void {
    const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    let start = 0;
    if (this.carry.length > 0) {
      // Only the line cut by the previous chunk is joined; the rest is read where it lies.
      const nl = buf.indexOf(10);
      if (nl < 0) {
        this.carry = Buffer.concat([this.carry, buf]);
        return;
      }
      const joined = Buffer.concat([this.carry, buf.subarray(0, nl + 1)]);
      this.carry = EMPTY;
      this.completeLines(joined, 0);
      start = nl + 1;
    }
    start = this.completeLines(buf, start);
    // Copy the tail: the caller may reuse its chunk buffer.
    this.carry = start < buf.length ? Buffer.from(buf.subarray(start)) : EMPTY;
  }

  /** Reads every line ended by a newline from `start`; returns where the unfinished rest starts. */
  private completeLines(buf: Buffer, start: number): number {
    // Every line read here ends with a newline at or before `last`, so the fast path's scans stop there.
    const last = buf.lastIndexOf(10);
    let p = start;
    while (p <= last) {
      // A plain file's lines all go through `plainLines`, which stops only at a line it leaves to the general path.
      if (this.plain) p = this.plainLines(buf, p, last);
      const next = p > last ? p : this.plain || this.kinds.length === 0 ? -1 : this.fastLine(buf, p);
      if (next > 0) {
        p = next;
      } else {
        const nl = buf.indexOf(10, p);
        this.line(buf, p, nl);
        p = nl + 1;
      }
    }
    return p;
  }

  end(): CsvBars {
    const { problems, file } = this.finish();
    if (problems.length === 0 && this.n === 0) problems.push({ file, line: 1, column: '', message: 'no bars' });
    if (problems.length > 0) throw new CsvBarsError(problems);
    return { bars: this.trimmedColumns(), segments: this.segments };
  }

  /** Reads what is left (the text after the last newline is a line too, as `split('\n')` gives), once. */
  finish(): { readonly problems: CsvProblem[]; readonly file: string } {
    if (!this.finished) {
      this.finished = true;
      const tail = Buffer.concat([this.carry, NEWLINE]);
      this.carry = EMPTY;
      this.completeLines(tail, 0);
    }
    return { problems: this.problems, file: this.file };
  }

  /** The bars read so far as they stand in the columns (no copy) and the contract changes among them. */
  part(): { readonly bars: BarColumns; readonly count: number; readonly segments: readonly ContractSegment[] } {
    return { bars: this.bars, count: this.n, segments: this.segments };
  }

  /** The time of the last bar read; -Infinity before the first. */
  get lastBarTime(): number {
    return this.n === 0 ? Number.NEGATIVE_INFINITY : this.bars.time[this.n - 1]!;
  }

  /** One line through the general path (the header, or a row the fast path declined). */
  private line(buf: Buffer, start: number, end: number): void {
    this.lineNo++;
    if (this.layout === undefined) {
      const layout = layoutFromHeader(buf.toString('utf8', start, end), this.file, this.options.columns);
      if (Array.isArray(layout)) throw new CsvBarsError(layout);
      this.layout = layout;
      this.kinds = cellKinds(layout);
      this.plain = isPlainLayout(this.kinds);
      return;
    }
    if (this.problems.length >= MAX_PROBLEMS) return;
    if (end > start && buf[end - 1] === 13) end--;
    if (end === start) return;
    this.declined++;
    this.generalRow(buf.toString('utf8', start, end));
  }

  /**
   * Reads the line at `p` in one pass and commits it when every cell is in a plain form and the row is
   * valid; returns where the next line starts, or -1 to leave the line to the general path. The line must
   * end with a newline inside `buf`.
   */
  private fastLine(buf: Buffer, p: number): number {
    if (this.problems.length >= MAX_PROBLEMS) return -1;
    const { kinds, row } = this;
    let contractFrom = -1;
    let contractTo = -1;
    for (let k = 0; k < kinds.length; k++) {
      if (k > 0) {
        if (buf[p] !== 44) return -1;
        p++;
      }
      const kind = kinds[k]!;
      let value = 0;
      if (kind === Cell.Time) value = this.fastTime(buf, p);
      else if (kind === Cell.Volume) value = this.fastWhole(buf, p);
      else if (kind === Cell.Ignored) this.cursor = skipCell(buf, p);
      else if (kind === Cell.Contract) {
        contractFrom = p;
        contractTo = this.contractEnd(buf, p);
        if (contractTo < 0) return -1;
      } else value = this.fastTicks(buf, p);
      if (Number.isNaN(value)) return -1;
      row[kind] = value;
      p = this.cursor;
    }
    p = nextLineAfterCells(buf, p);
    if (p < 0) return -1;
    const t = row[Cell.Time]!;
    const o = row[Cell.Open]!;
    const h = row[Cell.High]!;
    const l = row[Cell.Low]!;
    const c = row[Cell.Close]!;
    if (t <= this.lastTime || h < Math.max(o, c, l) || l > Math.min(o, c)) return -1;
    if (contractFrom >= 0) this.fastContract(buf, contractFrom, contractTo);
    this.lineNo++;
    this.commit(t, o, h, l, c, row[Cell.Volume]!);
    return p;
  }

  /**
   * `fastLine` for the layout `t,o,h,l,c,v`, line after line from `p` while every line ends at or before
   * `last`: the same cells accepted, the same values; returns the start of the first line it leaves to the
   * general path (or the position after `last`). About a fifth of a plain file's reading time went to
   * `fastLine`'s dispatch and to storing and reloading the row's values; a quarter of what was left to the
   * calls V8 did not inline (five a line: the four prices and the volume, then one for each line), so the
   * prices and the volume are read here, as `fastTicks` and `fastWhole` read them, in one loop over the
   * lines (2.5 M lines, fastest of 7, alternated: 286-324 ms before, 268-277 ms with the prices written
   * out in a call a line, 246-249 ms in one loop; 235-260 ms with V8's inlining limit raised instead).
   */
  private plainLines(buf: Buffer, p: number, last: number): number {
    if (this.problems.length >= MAX_PROBLEMS) return p;
    const { decimals, tickUnits, tinyUnits } = this;
    while (p <= last) {
      const lineStart = p;
      const t = this.fastTime(buf, p);
      p = this.cursor;
      if (Number.isNaN(t) || buf[p] !== 44) return lineStart;
      let o = 0;
      let h = 0;
      let l = 0;
      let c = 0;
      for (let k = 0; k < 4; k++) {
        p++;
        const negative = buf[p] === 45;
        if (negative) p++;
        const first = p;
        let units = 0;
        for (let d = buf[p]! - 48; d >= 0 && d <= 9; d = buf[++p]! - 48) units = units * 10 + d;
        if (p === first || p - first > 6) return lineStart;
        if (buf[p] === 46) {
          const dot = ++p;
          for (let d = buf[p]! - 48; d >= 0 && d <= 9; d = buf[++p]! - 48) units = units * 10 + d;
          if (p === dot || p - dot > decimals) return lineStart;
          units *= POW10[decimals - (p - dot)]!;
        } else {
          units *= POW10[decimals]!;
        }
        if (units < tinyUnits && units !== 0) return lineStart;
        const ticks = units / tickUnits;
        if (ticks !== Math.floor(ticks) || buf[p] !== 44) return lineStart;
        const price = negative ? 0 - ticks : ticks;
        if (k === 0) o = price;
        else if (k === 1) h = price;
        else if (k === 2) l = price;
        else c = price;
      }
      const first = ++p;
      let v = 0;
      for (let d = buf[p]! - 48; d >= 0 && d <= 9; d = buf[++p]! - 48) v = v * 10 + d;
      if (p === first || p - first > 15) return lineStart;
      p = nextLineAfterCells(buf, p);
      if (p < 0) return lineStart;
      // The high at least open, close and low, the low at most open and close (h >= l follows).
      if (t <= this.lastTime || h < o || h < c || l > o || l > c) return lineStart;
      this.lineNo++;
      this.commit(t, o, h, l, c, v);
    }
    return p;
  }

  /**
   * `YYYY-MM-DDTHH:MM:SS` then `Z` or `+hh:mm`/`-hh:mm` (or nothing, with a zone), every field in range;
   * NaN for anything else. Sets `cursor` after the cell.
   */
  private fastTime(buf: Buffer, p: number): number {
    if (p + 20 > buf.length) return Number.NaN;
    if (buf[p + 4] !== 45 || buf[p + 7] !== 45 || buf[p + 10] !== 84 || buf[p + 13] !== 58 || buf[p + 16] !== 58)
      return Number.NaN;
    const century = twoDigits(buf, p);
    const yearOfCentury = twoDigits(buf, p + 2);
    if (century > 99 || yearOfCentury > 99) return Number.NaN;
    const year = century * 100 + yearOfCentury;
    const month = twoDigits(buf, p + 5);
    const day = twoDigits(buf, p + 8);
    const hour = twoDigits(buf, p + 11);
    const minute = twoDigits(buf, p + 14);
    const second = twoDigits(buf, p + 17);
    if (hour > 23 || minute > 59 || second > 59) return Number.NaN;
    const key = (year * 100 + month) * 100 + day;
    if (key !== this.dayKey && !this.newDay(key, year, month, day)) return Number.NaN;
    const clock = this.dayMs + ((hour * 60 + minute) * 60 + second) * 1000;
    const mark = buf[p + 19];
    if (mark === 90) {
      this.cursor = p + 20;
      return clock;
    }
    return this.offsetTime(buf, p, clock, mark);
  }

  /** Caches the epoch of a new date; false when the date does not exist. */
  private newDay(key: number, year: number, month: number, day: number): boolean {
    if (year < 1000 || month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return false;
    this.dayKey = key;
    this.dayMs = Date.UTC(year, month - 1, day);
    return true;
  }

  /** The rest of a time cell after the seconds: `+hh:mm`/`-hh:mm`, or nothing with a zone. */
  private offsetTime(buf: Buffer, p: number, clock: number, mark: number | undefined): number {
    if (mark === 43 || mark === 45) {
      if (p + 25 > buf.length || buf[p + 22] !== 58) return Number.NaN;
      const oh = twoDigits(buf, p + 20);
      const om = twoDigits(buf, p + 23);
      if (oh > 23 || om > 59) return Number.NaN;
      this.cursor = p + 25;
      return clock - (mark === 43 ? 1 : -1) * (oh * 60 + om) * 60_000;
    }
    // No offset: a wall-clock time of the configured zone.
    if (this.zone === undefined) return Number.NaN;
    this.cursor = p + 19;
    return this.zone.instantOf(clock);
  }

  /**
   * Ticks of a plain decimal `[-]digits[.digits]` on the grid, computed in integers exactly as
   * `PriceGrid.toTicks(Number(cell))` would; NaN for any other form or an off-grid price. Sets `cursor`.
   */
  private fastTicks(buf: Buffer, p: number): number {
    const negative = buf[p] === 45;
    if (negative) p++;
    const first = p;
    let units = 0;
    for (let d = buf[p]! - 48; d >= 0 && d <= 9; d = buf[++p]! - 48) units = units * 10 + d;
    // At most 6 whole digits and the grid's decimals (9 at most): the decimal is then its own shortest
    // double, and the units a safe integer.
    if (p === first || p - first > 6) return Number.NaN;
    let decimals = 0;
    if (buf[p] === 46) {
      const dot = ++p;
      for (let d = buf[p]! - 48; d >= 0 && d <= 9; d = buf[++p]! - 48) units = units * 10 + d;
      decimals = p - dot;
      if (decimals === 0 || decimals > this.decimals) return Number.NaN;
      units *= POW10[this.decimals - decimals]!;
    } else {
      units *= POW10[this.decimals]!;
    }
    if (units < this.tinyUnits && units !== 0) return Number.NaN;
    const ticks = units / this.tickUnits;
    if (ticks !== Math.floor(ticks)) return Number.NaN;
    this.cursor = p;
    // 0 - 0 is +0, as the general conversion gives for "-0".
    return negative ? 0 - ticks : ticks;
  }

  /** A whole number of at most 15 plain digits; NaN for any other form. Sets `cursor`. */
  private fastWhole(buf: Buffer, p: number): number {
    const first = p;
    let value = 0;
    for (let d = buf[p]! - 48; d >= 0 && d <= 9; d = buf[++p]! - 48) value = value * 10 + d;
    if (p === first || p - first > 15) return Number.NaN;
    this.cursor = p;
    return value;
  }

  /** Where a contract cell of printable ASCII without spaces ends; -1 for any other byte in it. */
  private contractEnd(buf: Buffer, p: number): number {
    for (let b = buf[p]!; b !== 44 && b !== 10 && b !== 13; b = buf[++p]!) {
      if (b <= 32 || b >= 127) return -1;
    }
    this.cursor = p;
    return p;
  }

  private fastContract(buf: Buffer, from: number, to: number): void {
    const last = this.lastContractBytes;
    if (this.segments.length > 0 && to - from === last.length && buf.compare(last, 0, last.length, from, to) === 0)
      return;
    this.noteContract(buf.toString('latin1', from, to));
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
      problem(
        't',
        zone === undefined
          ? `"${tText}" is not an ISO 8601 time with an offset (Z or +hh:mm)`
          : `"${tText}" is not a time (YYYY-MM-DD HH:MM[:SS], in ${zone.timeZone} without an offset)`,
      );
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
      problem(
        '',
        `high ${grid.toPrice(h)} and low ${grid.toPrice(l)} do not contain open ${grid.toPrice(o)} and close ${grid.toPrice(c)}`,
      );
    }
    if (!Number.isNaN(t) && t <= this.lastTime)
      problem('t', `time ${tText} is not after the previous bar's (bars must be oldest first, one per time)`);
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

/** The two-digit number at `at`; 100 (out of range of every field) when either byte is not a digit. */
function twoDigits(buf: Buffer, at: number): number {
  const tens = buf[at]! - 48;
  const ones = buf[at + 1]! - 48;
  // Both are in 0-9 exactly when none of these four is negative (the or keeps any sign bit).
  return (tens | ones | (9 - tens) | (9 - ones)) < 0 ? 100 : tens * 10 + ones;
}

/**
 * Where the next line starts when the row's cells end at `p` (a line break, or more cells, which are
 * ignored as the general path ignores them); -1 when something else follows the last cell.
 */
function nextLineAfterCells(buf: Buffer, p: number): number {
  const b = buf[p];
  if (b === 10) return p + 1;
  if (b === 13 && buf[p + 1] === 10) return p + 2;
  if (b === 44) return buf.indexOf(10, p) + 1;
  return -1;
}

/** Where a cell the layout does not use ends: its comma, or the line's end. */
function skipCell(buf: Buffer, p: number): number {
  for (let b = buf[p]!; b !== 44 && b !== 10; b = buf[++p]!);
  return p;
}

/** One kind per cell; empty (every row to the general path) when two fields share a cell. */
function cellKinds(layout: CsvLayout): Uint8Array {
  const used = [layout.time, layout.open, layout.high, layout.low, layout.close, layout.volume, layout.contract].filter(
    (i) => i >= 0,
  );
  if (new Set(used).size !== used.length) return new Uint8Array(0);
  const kinds = new Uint8Array(layout.cells);
  kinds[layout.time] = Cell.Time;
  kinds[layout.open] = Cell.Open;
  kinds[layout.high] = Cell.High;
  kinds[layout.low] = Cell.Low;
  kinds[layout.close] = Cell.Close;
  kinds[layout.volume] = Cell.Volume;
  if (layout.contract >= 0) kinds[layout.contract] = Cell.Contract;
  return kinds;
}

/** The project's own header, `t,o,h,l,c,v`, in that order and nothing else. */
function isPlainLayout(kinds: Uint8Array): boolean {
  const plain = [Cell.Time, Cell.Open, Cell.High, Cell.Low, Cell.Close, Cell.Volume];
  return kinds.length === plain.length && plain.every((kind, k) => kinds[k] === kind);
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}
