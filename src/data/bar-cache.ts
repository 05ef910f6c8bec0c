/**
 * The local bar cache (SQLite through better-sqlite3). Bars are keyed by contract, unit, unitNumber, the
 * data subscription (live or sim) and bar time; they are stored as one BLOB per time chunk (a UTC day of
 * minute bars, for example) holding the six columns as little-endian float64, because reading a million
 * bars row by row costs seconds while copying a few hundred BLOBs into typed arrays costs milliseconds.
 * A second table records which time ranges were fetched completely, so a range asked for again is served
 * without a request, and a range that had no bars (a weekend) is not asked for twice.
 */
import { createRequire } from 'node:module';
import type Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { PriceGrid } from '../engine/ticks.ts';
import { BAR_UNIT_CODES, bucketStart } from '../engine/timeframe.ts';
import type { BarColumns, Timeframe } from '../engine/types.ts';
import { allocateColumns, lowerBound, sliceByTime } from './columns.ts';
import { TicklineError } from '../engine/errors.ts';

export interface CacheKey {
  readonly contractId: string;
  readonly timeframe: Timeframe;
  /** The live data subscription (true) or the sim one (false), as `retrieveBars` distinguishes them. */
  readonly live: boolean;
}

export class BarCacheError extends TicklineError {
  override readonly name = 'BarCacheError';
  // A cache file out of step with what is asked of it: delete or re-import it, then run again.
  readonly kind = 'environment';
  readonly code = 'BAR_CACHE';
}

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** Time span of one stored chunk: a few thousand bars at most, whatever the unit. */
function chunkSpan(tf: Timeframe): number {
  switch (tf.unit) {
    case 'second':
      return HOUR;
    case 'minute':
      return DAY;
    case 'hour':
      return 64 * DAY;
    default:
      return 4096 * DAY;
  }
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS bar_chunks (
  contract TEXT NOT NULL,
  unit INTEGER NOT NULL,
  unit_number INTEGER NOT NULL,
  live INTEGER NOT NULL,
  chunk_start INTEGER NOT NULL,
  tick_nanos INTEGER NOT NULL,
  count INTEGER NOT NULL,
  data BLOB NOT NULL,
  PRIMARY KEY (contract, unit, unit_number, live, chunk_start)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS covered_ranges (
  contract TEXT NOT NULL,
  unit INTEGER NOT NULL,
  unit_number INTEGER NOT NULL,
  live INTEGER NOT NULL,
  start_ms INTEGER NOT NULL,
  end_ms INTEGER NOT NULL,
  PRIMARY KEY (contract, unit, unit_number, live, start_ms)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS imported_files (
  source TEXT NOT NULL PRIMARY KEY,
  signature TEXT NOT NULL,
  count INTEGER NOT NULL,
  segments TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS imported_chunks (
  source TEXT NOT NULL,
  chunk INTEGER NOT NULL,
  count INTEGER NOT NULL,
  data BLOB NOT NULL,
  PRIMARY KEY (source, chunk)
) WITHOUT ROWID;
`;

/** Bars per stored chunk of an imported file (about 12 MB a BLOB). */
const IMPORT_CHUNK_BARS = 1 << 18;

/** A file's bars as `tickline import` stored them: its columns and where its contract column changes. */
export interface ImportedBars {
  readonly bars: BarColumns;
  readonly segments: readonly { readonly contract: string; readonly from: number }[];
}

/** An import's size and contract column changes, without its bars. */
export interface ImportInfo {
  readonly count: number;
  readonly segments: ImportedBars['segments'];
}

export type TimeRange = readonly [start: number, end: number];

/**
 * better-sqlite3, loaded when the first cache opens: the modules that import this one (every whole run's)
 * load in a sweep's pool threads, which never open a cache.
 */
function sqlite(): typeof Database {
  loadedSqlite ??= createRequire(import.meta.url)('better-sqlite3') as typeof Database;
  return loadedSqlite;
}

let loadedSqlite: typeof Database | undefined;

export class BarCache {
  private readonly db: Database.Database;

  constructor(readonly file: string) {
    if (file !== ':memory:') mkdirSync(path.dirname(file), { recursive: true });
    this.db = new (sqlite())(file);
    this.db.pragma('journal_mode = WAL');
    this.db.exec(SCHEMA);
  }

  close(): void {
    this.db.close();
  }

  /** Sub-ranges of [from, to) not yet fetched completely, oldest first. */
  missing(key: CacheKey, from: number, to: number): TimeRange[] {
    const gaps: [number, number][] = [];
    let cursor = from;
    for (const [start, end] of this.covered(key)) {
      if (end <= cursor) continue;
      if (start >= to) break;
      if (start > cursor) gaps.push([cursor, Math.min(start, to)]);
      cursor = Math.max(cursor, end);
      if (cursor >= to) break;
    }
    if (cursor < to) gaps.push([cursor, to]);
    return gaps;
  }

  /** Covered ranges, merged and oldest first. */
  covered(key: CacheKey): TimeRange[] {
    const rows = this.db
      .prepare(
        'SELECT start_ms, end_ms FROM covered_ranges WHERE contract = ? AND unit = ? AND unit_number = ? AND live = ? ORDER BY start_ms',
      )
      .raw()
      .all(...keyParams(key)) as [number, number][];
    return rows;
  }

  /**
   * Store the bars fetched for [from, to) (every bar of that range: an absent bar means none traded) and
   * mark the range covered. Bars already stored at the same times are replaced.
   */
  store(key: CacheKey, grid: PriceGrid, bars: BarColumns, from: number, to: number): void {
    const span = chunkSpan(key.timeframe);
    const params = keyParams(key);
    const read = this.db.prepare(
      'SELECT tick_nanos, count, data FROM bar_chunks WHERE contract = ? AND unit = ? AND unit_number = ? AND live = ? AND chunk_start = ?',
    );
    const write = this.db.prepare(
      'INSERT OR REPLACE INTO bar_chunks (contract, unit, unit_number, live, chunk_start, tick_nanos, count, data) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
    );
    const n = bars.time.length;
    this.db.transaction(() => {
      let i = 0;
      while (i < n) {
        const chunkStart = Math.floor(bars.time[i]! / span) * span;
        let j = i;
        while (j < n && bars.time[j]! < chunkStart + span) j++;
        const merged = new Map<number, number[]>();
        const existing = read.get(...params, chunkStart) as
          | { tick_nanos: number; count: number; data: Buffer }
          | undefined;
        if (existing) {
          if (existing.tick_nanos !== grid.tickNanos)
            throw new BarCacheError(
              `cached bars of ${key.contractId} use another tick size; delete ${this.file} to refetch`,
            );
          const old = decode(existing.data, existing.count);
          for (let k = 0; k < existing.count; k++)
            merged.set(old.time[k]!, [old.open[k]!, old.high[k]!, old.low[k]!, old.close[k]!, old.volume[k]!]);
        }
        for (let k = i; k < j; k++)
          merged.set(bars.time[k]!, [bars.open[k]!, bars.high[k]!, bars.low[k]!, bars.close[k]!, bars.volume[k]!]);
        const times = [...merged.keys()].sort((a, b) => a - b);
        const out = allocateColumns(times.length);
        times.forEach((t, k) => {
          const row = merged.get(t)!;
          out.time[k] = t;
          out.open[k] = row[0]!;
          out.high[k] = row[1]!;
          out.low[k] = row[2]!;
          out.close[k] = row[3]!;
          out.volume[k] = row[4]!;
        });
        write.run(
          ...params,
          chunkStart,
          grid.tickNanos,
          times.length,
          Buffer.from(out.time.buffer, out.time.byteOffset, times.length * 6 * 8),
        );
        i = j;
      }
      this.addCovered(key, from, to);
    })();
  }

  /**
   * Store a parsed file (`tickline import`) under its absolute path, replacing an earlier import of it.
   * `signature` says what it was parsed from (size, modification time, tick size, column map, zone): a
   * load with another signature finds nothing, so a changed file or config is parsed again.
   */
  storeImport(source: string, signature: string, imported: ImportedBars): void {
    const { bars, segments } = imported;
    const n = bars.time.length;
    this.db.transaction(() => {
      this.db.prepare('DELETE FROM imported_chunks WHERE source = ?').run(source);
      const write = this.db.prepare('INSERT INTO imported_chunks (source, chunk, count, data) VALUES (?, ?, ?, ?)');
      for (let chunk = 0, from = 0; from < n; chunk++, from += IMPORT_CHUNK_BARS) {
        const to = Math.min(n, from + IMPORT_CHUNK_BARS);
        const out = allocateColumns(to - from);
        out.time.set(bars.time.subarray(from, to));
        out.open.set(bars.open.subarray(from, to));
        out.high.set(bars.high.subarray(from, to));
        out.low.set(bars.low.subarray(from, to));
        out.close.set(bars.close.subarray(from, to));
        out.volume.set(bars.volume.subarray(from, to));
        write.run(source, chunk, to - from, Buffer.from(out.time.buffer, out.time.byteOffset, (to - from) * 48));
      }
      this.db
        .prepare('INSERT OR REPLACE INTO imported_files (source, signature, count, segments) VALUES (?, ?, ?, ?)')
        .run(source, signature, n, JSON.stringify(segments));
    })();
  }

  /** An imported file's bars, when it was imported with this signature. */
  loadImport(source: string, signature: string): ImportedBars | undefined {
    const info = this.importInfo(source, signature);
    if (info === undefined) return undefined;
    const out = allocateColumns(info.count);
    const bytes = new Uint8Array(out.time.buffer);
    let at = 0;
    // Straight from each BLOB into the columns: one copy, where a chunk's own columns first would be two.
    for (const [count, data] of this.storedChunks(source, info.count)) {
      for (let c = 0; c < 6; c++)
        bytes.set(data.subarray(c * count * 8, (c + 1) * count * 8), (c * info.count + at) * 8);
      at += count;
    }
    return { bars: out, segments: info.segments };
  }

  /**
   * What an import holds (bar count and contract column changes), when it was imported with this
   * signature: a streamed run decides from it before reading any bar.
   */
  importInfo(source: string, signature: string): ImportInfo | undefined {
    const file = this.db
      .prepare('SELECT signature, count, segments FROM imported_files WHERE source = ?')
      .get(source) as { signature: string; count: number; segments: string } | undefined;
    if (file === undefined || file.signature !== signature) return undefined;
    return { count: file.count, segments: JSON.parse(file.segments) as ImportedBars['segments'] };
  }

  /**
   * An import's bars one stored chunk at a time, oldest first, each in columns of its own: only the
   * chunk being read and the one handed out are alive, whatever the import's size. The cache must stay
   * open until the iteration ends.
   */
  *importChunks(source: string, expected: number): Generator<BarColumns> {
    for (const [count, data] of this.storedChunks(source, expected)) yield viewOrDecode(data, count);
  }

  /** An import's stored chunks (bar count, BLOB) in order; an error when they do not hold `expected` bars. */
  private *storedChunks(source: string, expected: number): Generator<[number, Buffer]> {
    let at = 0;
    for (const row of this.db
      .prepare('SELECT count, data FROM imported_chunks WHERE source = ? ORDER BY chunk')
      .raw()
      .iterate(source)) {
      const chunk = row as [number, Buffer];
      at += chunk[0];
      yield chunk;
    }
    if (at !== expected)
      throw new BarCacheError(`the import of ${source} in ${this.file} is incomplete; run tickline import again`);
  }

  /** The start time of an import's bar `index` (its stored chunks hold IMPORT_CHUNK_BARS bars each). */
  importTimeAt(source: string, index: number): number {
    const chunk = Math.floor(index / IMPORT_CHUNK_BARS);
    const at = index % IMPORT_CHUNK_BARS;
    const row = this.db
      .prepare('SELECT count, substr(data, ? * 8 + 1, 8) FROM imported_chunks WHERE source = ? AND chunk = ?')
      .raw()
      .get(at, source, chunk) as [number, Buffer] | undefined;
    if (row === undefined || at >= row[0])
      throw new BarCacheError(`the import of ${source} in ${this.file} has no bar ${index}; run tickline import again`);
    return Buffer.from(row[1]).readDoubleLE(0);
  }

  /**
   * How many of an import's bars start in [from, to), reading only the stored time columns; with a
   * timeframe, how many bars of it they aggregate to (one per bucket that has bars).
   */
  importCountIn(source: string, from: number, to: number, timeframe?: Timeframe): number {
    let inside = 0;
    let bucket = Number.NaN;
    for (const row of this.db
      .prepare('SELECT count, substr(data, 1, count * 8) FROM imported_chunks WHERE source = ? ORDER BY chunk')
      .raw()
      .iterate(source)) {
      const [count, data] = row as [number, Buffer];
      // Copied, not viewed: a BLOB's bytes need not be 8-byte aligned.
      const time = new Float64Array(count);
      new Uint8Array(time.buffer).set(data);
      const start = lowerBound(time, from);
      const end = lowerBound(time, to);
      if (timeframe === undefined) {
        inside += end - start;
        continue;
      }
      for (let i = start; i < end; i++) {
        const b = bucketStart(time[i]!, timeframe);
        if (b !== bucket) inside++;
        bucket = b;
      }
    }
    return inside;
  }

  /** Bars with start in [from, to) from the cache, as columns (whatever is stored; check `missing` first). */
  load(key: CacheKey, grid: PriceGrid, from: number, to: number): BarColumns {
    const span = chunkSpan(key.timeframe);
    const range = [...keyParams(key), Math.floor(from / span) * span, to] as const;
    const where = 'contract = ? AND unit = ? AND unit_number = ? AND live = ? AND chunk_start >= ? AND chunk_start < ?';
    const sizes = this.db
      .prepare(
        `SELECT COALESCE(SUM(count), 0), COUNT(*), COALESCE(MIN(tick_nanos), 0), COALESCE(MAX(tick_nanos), 0) FROM bar_chunks WHERE ${where}`,
      )
      .raw()
      .get(...range) as [number, number, number, number];
    const [total, chunks, minNanos, maxNanos] = sizes;
    if (chunks > 0 && (minNanos !== grid.tickNanos || maxNanos !== grid.tickNanos)) {
      throw new BarCacheError(`cached bars of ${key.contractId} use another tick size; delete ${this.file} to refetch`);
    }
    const out = allocateColumns(total);
    const bytes = new Uint8Array(out.time.buffer);
    let at = 0;
    // Row by row, so only one chunk's BLOB is alive at a time next to the columns.
    for (const row of this.db
      .prepare(`SELECT count, data FROM bar_chunks WHERE ${where} ORDER BY chunk_start`)
      .raw()
      .iterate(...range)) {
      const [count, data] = row as [number, Buffer];
      for (let c = 0; c < 6; c++) {
        bytes.set(data.subarray(c * count * 8, (c + 1) * count * 8), (c * total + at) * 8);
      }
      at += count;
    }
    return sliceByTime(out, from, to);
  }

  private addCovered(key: CacheKey, from: number, to: number): void {
    let start = from;
    let end = to;
    const keep: [number, number][] = [];
    for (const [s, e] of this.covered(key)) {
      if (e < start || s > end) keep.push([s, e]);
      else {
        start = Math.min(start, s);
        end = Math.max(end, e);
      }
    }
    const params = keyParams(key);
    this.db
      .prepare('DELETE FROM covered_ranges WHERE contract = ? AND unit = ? AND unit_number = ? AND live = ?')
      .run(...params);
    const insert = this.db.prepare(
      'INSERT INTO covered_ranges (contract, unit, unit_number, live, start_ms, end_ms) VALUES (?, ?, ?, ?, ?, ?)',
    );
    for (const [s, e] of [...keep, [start, end] as [number, number]]) insert.run(...params, s, e);
  }
}

function keyParams(key: CacheKey): [string, number, number, number] {
  return [key.contractId, BAR_UNIT_CODES[key.timeframe.unit], key.timeframe.unitNumber, key.live ? 1 : 0];
}

/**
 * A chunk's columns as views of the BLOB's own buffer when it is 8-byte aligned (a large BLOB has a buffer
 * of its own), else a copy. One allocation a chunk, not two: while a streamed run holds a long run's trades,
 * every allocation outside the JavaScript heap brings the next full collection of that heap nearer.
 */
function viewOrDecode(data: Buffer, count: number): BarColumns {
  if (data.byteOffset % 8 !== 0 || data.byteLength < count * 48) return decode(data, count);
  const column = (k: number) => new Float64Array(data.buffer, data.byteOffset + k * count * 8, count);
  return { time: column(0), open: column(1), high: column(2), low: column(3), close: column(4), volume: column(5) };
}

function decode(data: Buffer, count: number): BarColumns {
  const out = allocateColumns(count);
  new Uint8Array(out.time.buffer).set(data.subarray(0, count * 48));
  return out;
}
