/**
 * Result files written as streams: rows are appended to a bounded buffer and flushed to the file, so no
 * output is ever one whole-file string, and the time column is formatted incrementally (the date part once
 * per UTC day, the time of day from integer arithmetic) instead of a Date and toISOString per row.
 */
import { closeSync, mkdirSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import path from 'node:path';
import type fastJson from 'fast-json-stringify';
import { createRequire } from 'node:module';
import { z } from 'zod';
import { TradingCalendar, type TradingDayConfig } from '../../engine/trading-day.ts';
import type { EquityCurve } from '../../report/report-types.ts';
import { cents } from '../../report/statistics.ts';
import type { OutputsConfig } from './backtest-config.ts';

const BUFFER_BYTES = 1 << 20;
const DAY_MS = 86_400_000;

/**
 * Appends text to a file through one reused byte buffer (no whole-file string, no joined blocks). The rows
 * go to `<file>.partial` and the file takes its name only when complete: an output is either whole or
 * absent, never a prefix that looks like a result. Writes are synchronous: the output phase is the
 * command's last step and nothing else waits on the event loop meanwhile.
 */
export class StreamedTextFile {
  private readonly buffer = Buffer.allocUnsafe(BUFFER_BYTES);
  private used = 0;
  private readonly partial: string;
  private readonly fd: number;

  constructor(private readonly file: string) {
    this.partial = `${file}.partial`;
    this.fd = openSync(this.partial, 'w');
  }

  write(text: string): void {
    // A UTF-16 unit takes at most 3 bytes in UTF-8.
    if (this.used + text.length * 3 > BUFFER_BYTES) {
      this.flush();
      if (text.length * 3 > BUFFER_BYTES) {
        this.writeAll(Buffer.from(text, 'utf8'));
        return;
      }
    }
    this.used += this.buffer.write(text, this.used, 'utf8');
  }

  /** Flushes, closes and gives the file its name. */
  close(): void {
    try {
      this.flush();
    } finally {
      closeSync(this.fd);
    }
    renameSync(this.partial, this.file);
  }

  /** Closes and removes what was written (a writer that failed half way). */
  discard(): void {
    closeSync(this.fd);
    rmSync(this.partial, { force: true });
  }

  private flush(): void {
    this.writeAll(this.buffer.subarray(0, this.used));
    this.used = 0;
  }

  private writeAll(bytes: Buffer): void {
    let offset = 0;
    while (offset < bytes.length) offset += writeSync(this.fd, bytes, offset, bytes.length - offset);
  }
}

/** Writes a file through `fill`; on an error the partial file is removed and the error passes on. */
export function writeStreamed(file: string, fill: (out: StreamedTextFile) => void): void {
  const out = new StreamedTextFile(file);
  try {
    fill(out);
  } catch (error) {
    out.discard();
    throw error;
  }
  out.close();
}

/** How JSON outputs are laid out: one line (the default), or indented by two spaces as people read it. */
export type JsonLayout = 'compact' | 'pretty';

/** A whole JSON value as a file, in the layout's text (`JSON.stringify`'s, with a final newline). */
export function writeJson(file: string, value: unknown, layout: JsonLayout): void {
  writeStreamed(file, (out) =>
    out.write(`${layout === 'pretty' ? JSON.stringify(value, null, 2) : JSON.stringify(value)}\n`),
  );
}

/**
 * A JSON array written element by element: the same text as `JSON.stringify(array)` (or with `null, 2`)
 * of the whole array, without ever holding the array or its text. `compact` writes one row on one line
 * (a compiled serializer for a known row shape; `JSON.stringify` by default).
 */
export function writeJsonArray<T, R>(
  file: string,
  items: Iterable<T>,
  toRow: (item: T) => R,
  layout: JsonLayout,
  compact: (row: R) => string = JSON.stringify,
): void {
  writeStreamed(file, (out) => {
    const array = new JsonArrayText(out, layout, compact);
    for (const item of items) array.add(toRow(item));
    array.end();
  });
}

/** The text of one JSON array written into a file element by element (see `writeJsonArray`). */
export class JsonArrayText<R> {
  private first = true;

  constructor(
    private readonly out: StreamedTextFile,
    private readonly layout: JsonLayout,
    private readonly compact: (row: R) => string = JSON.stringify,
  ) {}

  add(row: R): void {
    if (this.layout === 'pretty')
      this.out.write(`${this.first ? '[\n  ' : ',\n  '}${JSON.stringify(row, null, 2).replaceAll('\n', '\n  ')}`);
    else this.out.write(`${this.first ? '[' : ','}${this.compact(row)}`);
    this.first = false;
  }

  end(): void {
    this.out.write(this.first ? '[]\n' : this.layout === 'pretty' ? '\n]\n' : ']\n');
  }
}

/**
 * `JSON.stringify` of rows of one flat shape, compiled from the row's schema (fast-json-stringify): the
 * same text about twice as fast, which is most of writing a 10 M-bar run's orders and trades. Compiled on
 * the first row, so a command that writes no file does not load the compiler (about 0.1 s).
 */
export function rowSerializer<S extends z.ZodObject>(schema: S): (row: z.infer<S>) => string {
  let compiled: ((row: z.infer<S>) => string) | undefined;
  return (row) => {
    compiled ??= loadFastJson()(z.toJSONSchema(schema, { target: 'draft-7' }) as Parameters<typeof fastJson>[0]) as (
      row: z.infer<S>,
    ) => string;
    return compiled(row);
  };
}

function loadFastJson(): typeof fastJson {
  return createRequire(import.meta.url)('fast-json-stringify') as typeof fastJson;
}

/** `Date.prototype.toISOString` of epoch ms, the date part computed once per UTC day. */
export class IsoTimeFormatter {
  private dayStart = Number.NaN;
  private datePrefix = '';

  format(ms: number): string {
    if (!(ms >= this.dayStart && ms < this.dayStart + DAY_MS)) {
      this.dayStart = Math.floor(ms / DAY_MS) * DAY_MS;
      // Outside the four-digit years toISOString prints a signed six-digit year; keep its exact text.
      this.datePrefix = new Date(this.dayStart).toISOString().slice(0, -13);
    }
    const inDay = ms - this.dayStart;
    if (!Number.isInteger(inDay)) return new Date(ms).toISOString();
    const hours = Math.floor(inDay / 3_600_000);
    const minutes = Math.floor(inDay / 60_000) % 60;
    const seconds = Math.floor(inDay / 1000) % 60;
    const millis = inDay % 1000;
    return `${this.datePrefix}${two(hours)}:${two(minutes)}:${two(seconds)}.${millis < 10 ? '00' : millis < 100 ? '0' : ''}${millis}Z`;
  }
}

function two(value: number): string {
  return value < 10 ? `0${value}` : `${value}`;
}

/**
 * The rows of `equity.csv`. per-bar: every point. per-trade: the first point, the last one of each bar in
 * which a trade ended, and the last point. daily: the last point of each trading day (the engine's
 * calendar). Chosen by the `EquityRowPicker` a streamed run feeds as its points pass.
 */
export function equityRows(
  curve: EquityCurve,
  mode: OutputsConfig['equity'],
  tradeExits: readonly number[],
  tradingDay?: TradingDayConfig,
): EquityCurve {
  if (mode === 'per-bar') return curve;
  const picker = new EquityRowPicker(mode, tradingDay);
  for (const exit of tradeExits) picker.addExit(exit);
  picker.add(curve);
  return picker.finish();
}

/**
 * The rows `equityRows` chooses (daily or per-trade), picked while the equity points pass (all of a
 * curve, or a streamed run's as they come) and kept with their values: as many rows as days or trades, never one a bar.
 * A row is decided when the
 * next point arrives (per-trade: the trades that ended before it; daily: whether it starts another day),
 * the last one at `finish`. Trades are given by `addExit` as they close, before the points that follow.
 */
export class EquityRowPicker {
  private readonly times: number[] = [];
  private readonly values: number[] = [];
  private readonly exits: number[] = [];
  private nextExit = 0;
  private pending = false;
  private pendingTime = 0;
  private pendingValue = 0;
  private pendingDay = '';
  private points = 0;
  private readonly calendar: TradingCalendar;

  constructor(
    private readonly mode: Exclude<OutputsConfig['equity'], 'per-bar'>,
    tradingDay?: TradingDayConfig,
  ) {
    this.calendar = new TradingCalendar(tradingDay);
  }

  addExit(time: number): void {
    if (this.mode === 'daily') return;
    // Exits come in closing order, so in time order; the sort keeps an out-of-order one where it belongs.
    let at = this.exits.length;
    while (at > this.nextExit && this.exits[at - 1]! > time) at--;
    this.exits.splice(at, 0, time);
  }

  add(curve: EquityCurve): void {
    const length = Math.min(curve.time.length, curve.equity.length);
    for (let i = 0; i < length; i++) {
      const t = curve.time[i]!;
      const day = this.mode === 'daily' ? this.calendar.dayOf(t) : '';
      if (this.pending) {
        if (this.mode === 'daily') {
          if (day !== this.pendingDay) this.keep();
        } else {
          let exitsHere = false;
          while (this.nextExit < this.exits.length && this.exits[this.nextExit]! < t) {
            exitsHere = true;
            this.nextExit++;
          }
          if (this.points === 1 || exitsHere) this.keep();
        }
      }
      this.pending = true;
      this.pendingTime = t;
      this.pendingValue = curve.equity[i]!;
      this.pendingDay = day;
      this.points++;
    }
  }

  /** Nothing was written. */
  discard(): void {}

  /** The chosen rows as a curve (the last point is always one). */
  finish(): EquityCurve {
    if (this.pending) this.keep();
    return { time: this.times, equity: this.values };
  }

  private keep(): void {
    this.times.push(this.pendingTime);
    this.values.push(this.pendingValue);
    this.pending = false;
  }
}

/**
 * A per-bar `equity.csv` written while a streamed run's points pass, the same text `writeEquityCsv` writes
 * of the whole curve; the file takes its name at `finish` (`discard` removes it when the run fails).
 */
export class EquityCsvRows {
  private readonly out: StreamedTextFile;
  private readonly iso = new IsoTimeFormatter();

  constructor(readonly file: string) {
    mkdirSync(path.dirname(file), { recursive: true });
    this.out = new StreamedTextFile(file);
    this.out.write('time,equity\n');
  }

  addExit(_time: number): void {}

  add(curve: EquityCurve): void {
    const length = Math.min(curve.time.length, curve.equity.length);
    for (let i = 0; i < length; i++) this.out.write(`${this.iso.format(curve.time[i]!)},${cents(curve.equity[i]!)}\n`);
  }

  finish(): undefined {
    this.out.close();
    return undefined;
  }

  discard(): void {
    this.out.discard();
  }
}

/** `equity.csv`: `time,equity` for each of the chosen rows (`equityRows`), streamed. */
export function writeEquityCsv(file: string, rows: EquityCurve): void {
  writeStreamed(file, (out) => {
    const iso = new IsoTimeFormatter();
    out.write('time,equity\n');
    const length = Math.min(rows.time.length, rows.equity.length);
    for (let i = 0; i < length; i++) out.write(`${iso.format(rows.time[i]!)},${cents(rows.equity[i]!)}\n`);
  });
}
