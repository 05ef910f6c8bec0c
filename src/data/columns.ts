/**
 * Bar history as typed-array columns (ticks, bar-start epoch ms), the one in-memory form every source
 * produces and the replay reads: about 48 bytes a bar, no object per bar.
 */
import { bucketStart } from '../engine/timeframe.ts';
import type { BarColumns, Timeframe } from '../engine/types.ts';

export function allocateColumns(count: number): BarColumns {
  // One buffer for all six columns: one allocation, and views stay cheap.
  const buffer = new ArrayBuffer(count * 6 * 8);
  const column = (k: number) => new Float64Array(buffer, k * count * 8, count);
  return { time: column(0), open: column(1), high: column(2), low: column(3), close: column(4), volume: column(5) };
}

/** Views (no copy) of the bars whose start lies in [from, to). Times must increase. */
export function sliceByTime(
  bars: BarColumns,
  from = Number.NEGATIVE_INFINITY,
  to = Number.POSITIVE_INFINITY,
): BarColumns {
  const start = lowerBound(bars.time, from);
  const end = lowerBound(bars.time, to);
  return sliceByIndex(bars, start, end);
}

export function sliceByIndex(bars: BarColumns, start: number, end: number): BarColumns {
  return {
    time: bars.time.subarray(start, end),
    open: bars.open.subarray(start, end),
    high: bars.high.subarray(start, end),
    low: bars.low.subarray(start, end),
    close: bars.close.subarray(start, end),
    volume: bars.volume.subarray(start, end),
  };
}

/** First index whose value is > `value` in an increasing array. */
export function upperBound(values: Float64Array, value: number): number {
  let lo = 0;
  let hi = values.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (values[mid]! <= value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** First index whose value is >= `value` in an increasing array. */
export function lowerBound(values: Float64Array, value: number): number {
  let lo = 0;
  let hi = values.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (values[mid]! < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * Bars of a coarser timeframe built from finer ones with the engine's UTC buckets. Only bars that exist
 * are aggregated: a session gap never produces a synthetic bar. The last bucket is kept even when the data
 * ends inside it (the data is history: its last bar has closed).
 */
export function aggregate(bars: BarColumns, tf: Timeframe): BarColumns {
  const n = bars.time.length;
  if (n === 0) return bars;
  let buckets = 0;
  let current = Number.NaN;
  for (let i = 0; i < n; i++) {
    const b = bucketStart(bars.time[i]!, tf);
    if (b !== current) {
      buckets++;
      current = b;
    }
  }
  const out = allocateColumns(buckets);
  let k = -1;
  current = Number.NaN;
  for (let i = 0; i < n; i++) {
    const b = bucketStart(bars.time[i]!, tf);
    if (b !== current) {
      k++;
      current = b;
      out.time[k] = b;
      out.open[k] = bars.open[i]!;
      out.high[k] = bars.high[i]!;
      out.low[k] = bars.low[i]!;
      out.close[k] = bars.close[i]!;
      out.volume[k] = bars.volume[i]!;
    } else {
      if (bars.high[i]! > out.high[k]!) out.high[k] = bars.high[i]!;
      if (bars.low[i]! < out.low[k]!) out.low[k] = bars.low[i]!;
      out.close[k] = bars.close[i]!;
      out.volume[k] = out.volume[k]! + bars.volume[i]!;
    }
  }
  return out;
}

/** One set of columns holding the given ones in order (their times must increase across them). */
export function concatColumns(parts: readonly BarColumns[]): BarColumns {
  const n = parts.reduce((sum, p) => sum + p.time.length, 0);
  const out = allocateColumns(n);
  let at = 0;
  for (const p of parts) {
    out.time.set(p.time, at);
    out.open.set(p.open, at);
    out.high.set(p.high, at);
    out.low.set(p.low, at);
    out.close.set(p.close, at);
    out.volume.set(p.volume, at);
    at += p.time.length;
  }
  return out;
}
