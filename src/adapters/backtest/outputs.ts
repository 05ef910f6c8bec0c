/**
 * Result files written as streams: rows are appended to a bounded buffer and flushed to the file, so no
 * output is ever one whole-file string, and the time column is formatted incrementally (the date part once
 * per UTC day, the time of day from integer arithmetic) instead of a Date and toISOString per row.
 */
import { open, type FileHandle } from 'node:fs/promises';
import { TradingCalendar, type TradingDayConfig } from '../../engine/calendar.ts';
import type { EquityCurve } from '../../report/types.ts';
import { cents } from '../../report/statistics.ts';

/** How much of the equity curve `equity.csv` holds. */
export type EquityOutput = 'per-bar' | 'per-trade' | 'daily';

const FLUSH_CHARS = 1 << 20;
const DAY_MS = 86_400_000;

/** Appends text to a file through a buffer of about 1 MB. */
export class StreamedTextFile {
  private pending: string[] = [];
  private pendingChars = 0;

  private constructor(private readonly handle: FileHandle) {}

  static async create(file: string): Promise<StreamedTextFile> {
    return new StreamedTextFile(await open(file, 'w'));
  }

  /** Adds text; resolves at once unless the buffer is full and had to be written. */
  async write(text: string): Promise<void> {
    this.pending.push(text);
    this.pendingChars += text.length;
    if (this.pendingChars >= FLUSH_CHARS) await this.flush();
  }

  async close(): Promise<void> {
    try {
      await this.flush();
    } finally {
      await this.handle.close();
    }
  }

  private async flush(): Promise<void> {
    if (this.pending.length === 0) return;
    const text = this.pending.join('');
    this.pending = [];
    this.pendingChars = 0;
    await this.handle.write(text, null, 'utf8');
  }
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
 * Indices of the equity rows to write. per-bar: every bar. per-trade: the first bar, each bar at which a
 * trade ended, and the last bar. daily: the last bar of each trading day (the engine's calendar).
 */
export function equityRows(curve: EquityCurve, mode: EquityOutput, tradeExits: readonly number[], tradingDay?: TradingDayConfig): Iterable<number> {
  const length = Math.min(curve.time.length, curve.equity.length);
  switch (mode) {
    case 'per-bar':
      return range(length);
    case 'per-trade':
      return perTradeRows(curve.time, length, tradeExits);
    case 'daily':
      return dailyRows(curve.time, length, new TradingCalendar(tradingDay));
  }
}

function* range(length: number): Generator<number> {
  for (let i = 0; i < length; i++) yield i;
}

function* perTradeRows(time: ArrayLike<number>, length: number, exits: readonly number[]): Generator<number> {
  if (length === 0) return;
  const sorted = [...exits].sort((a, b) => a - b);
  let next = 0;
  let last = -1;
  for (let i = 0; i < length; i++) {
    const barEnd = i + 1 < length ? time[i + 1]! : Number.POSITIVE_INFINITY;
    let exitsHere = false;
    while (next < sorted.length && sorted[next]! < barEnd) {
      exitsHere = true;
      next++;
    }
    if (i === 0 || i === length - 1 || exitsHere) {
      if (i !== last) yield i;
      last = i;
    }
  }
}

function* dailyRows(time: ArrayLike<number>, length: number, calendar: TradingCalendar): Generator<number> {
  let previousDay = '';
  for (let i = 0; i < length; i++) {
    const day = calendar.dayOf(time[i]!);
    if (i > 0 && day !== previousDay) yield i - 1;
    previousDay = day;
  }
  if (length > 0) yield length - 1;
}

/** `equity.csv`: `time,equity` with the chosen rows, streamed. */
export async function writeEquityCsv(file: string, curve: EquityCurve, rows: Iterable<number>): Promise<void> {
  const out = await StreamedTextFile.create(file);
  try {
    const iso = new IsoTimeFormatter();
    let block = 'time,equity\n';
    for (const i of rows) {
      block += `${iso.format(curve.time[i]!)},${cents(curve.equity[i]!)}\n`;
      if (block.length >= 65_536) {
        await out.write(block);
        block = '';
      }
    }
    await out.write(block);
  } finally {
    await out.close();
  }
}
