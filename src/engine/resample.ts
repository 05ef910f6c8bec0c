/**
 * Multi-timeframe bars derived from one base stream with the shared `bucketStart` buckets. No look-ahead:
 * a coarser bar is emitted at the base bar that completes it (the base bar ending at the bucket's end) or,
 * after a gap, at the first base bar of a later bucket. `baseIndex` of the derived chunk records at which
 * base bar each derived bar became known, so operators and the runner act on it at that bar.
 */
import { Observable, type OperatorFunction } from 'rxjs';
import { barCursor } from './indicators.ts';
import { bucketEnd, bucketStart, nominalMs, timeframeLabel } from './timeframe.ts';
import type { BarChunk, Timeframe } from './types.ts';
import { EngineError } from './errors.ts';

export function sameTimeframe(a: Timeframe, b: Timeframe): boolean {
  return a.unit === b.unit && a.unitNumber === b.unitNumber;
}

export class Resampler {
  private open = false;
  private start = 0;
  private end = 0;
  private o = 0;
  private h = 0;
  private l = 0;
  private c = 0;
  private v = 0;

  constructor(readonly timeframe: Timeframe) {}

  /** The derived bars completed by this chunk (possibly none). Base chunks of the target timeframe pass through. */
  update(chunk: BarChunk): BarChunk {
    const tf = this.timeframe;
    if (sameTimeframe(chunk.timeframe, tf)) return chunk;
    if (nominalMs(chunk.timeframe) > nominalMs(tf)) {
      throw new EngineError(
        'INVALID_TIMEFRAME',
        `cannot derive ${timeframeLabel(tf)} bars from coarser ${timeframeLabel(chunk.timeframe)} bars`,
      );
    }
    const capacity = chunk.length + 1;
    const time = new Float64Array(capacity);
    const open = new Float64Array(capacity);
    const high = new Float64Array(capacity);
    const low = new Float64Array(capacity);
    const close = new Float64Array(capacity);
    const volume = new Float64Array(capacity);
    const baseIndex = new Int32Array(capacity);
    let count = 0;
    const emit = (at: number) => {
      time[count] = this.start;
      open[count] = this.o;
      high[count] = this.h;
      low[count] = this.l;
      close[count] = this.c;
      volume[count] = this.v;
      baseIndex[count] = at;
      count++;
      this.open = false;
    };
    for (let i = 0; i < chunk.length; i++) {
      const t = chunk.time[i]!;
      if (this.open && t >= this.end) emit(i);
      if (!this.open) {
        this.open = true;
        this.start = bucketStart(t, tf);
        this.end = bucketEnd(this.start, tf);
        this.o = chunk.open[i]!;
        this.h = chunk.high[i]!;
        this.l = chunk.low[i]!;
        this.c = chunk.close[i]!;
        this.v = chunk.volume[i]!;
      } else {
        if (chunk.high[i]! > this.h) this.h = chunk.high[i]!;
        if (chunk.low[i]! < this.l) this.l = chunk.low[i]!;
        this.c = chunk.close[i]!;
        this.v += chunk.volume[i]!;
      }
      if (bucketEnd(bucketStart(t, chunk.timeframe), chunk.timeframe) >= this.end) emit(i);
    }
    return {
      contractId: chunk.contractId,
      timeframe: tf,
      length: count,
      time: time.subarray(0, count),
      open: open.subarray(0, count),
      high: high.subarray(0, count),
      low: low.subarray(0, count),
      close: close.subarray(0, count),
      volume: volume.subarray(0, count),
      baseIndex: baseIndex.subarray(0, count),
    };
  }
}

/** Derive `timeframe` bars from a base chunk stream; chunks without a completed bar are not emitted. */
export function resample(timeframe: Timeframe): OperatorFunction<BarChunk, BarChunk> {
  return (source) =>
    new Observable<BarChunk>((subscriber) => {
      const resampler = new Resampler(timeframe);
      return source.subscribe({
        next: (chunk) => {
          const derived = resampler.update(chunk);
          if (derived.length === 0) return;
          // A plain `map` downstream then decides at the bar that completed the last derived bar;
          // per-bar operators (crossover, signals) set the cursor for each of their own emissions.
          if (derived.baseIndex !== undefined) barCursor.at = derived.baseIndex[derived.length - 1]!;
          subscriber.next(derived);
        },
        error: (error: unknown) => subscriber.error(error),
        complete: () => subscriber.complete(),
      });
    });
}
