/**
 * Indicators over bar chunks. One RxJS event per bar or technicalindicators' generator-based `nextValue`
 * costs more than the whole backtest budget (issue 7), so each indicator is an incremental kernel whose
 * state (running sums, previous averages, look-back window) survives from one chunk to the next: the
 * values are the same whatever the chunking. The arithmetic follows technicalindicators 3.1 operation by
 * operation, and a test proves the columns equal its own `calculate` output. During warm-up a value is NaN.
 */
import { Observable, type OperatorFunction } from 'rxjs';
import type { BarChunk } from './types.ts';
import { EngineError } from './errors.ts';

export type PriceField = 'open' | 'high' | 'low' | 'close' | 'volume';

/** A stateful indicator over consecutive chunks: returns one value per bar of the chunk. */
export interface Series<T> {
  /**
   * Advance over the chunk. Single-column series write into `into` when it is given and long enough
   * (operators that consume the values at once reuse one buffer; the first `chunk.length` entries count).
   */
  update(chunk: BarChunk, into?: Float64Array): T;
}

/** A recipe for a fresh `Series` (so one description can be used by several subscriptions). */
export type SeriesSpec<T = Float64Array> = () => Series<T>;

// ------------------------------------------------------------------ scalar kernels

/** Simple moving average, as technicalindicators' SMA: a running sum, first value at bar `period - 1`. */
export class SmaKernel {
  private readonly window: Float64Array;
  /**
   * The running sum, the window's head and count. In a typed array rather than fields: V8 compiles the
   * loop of `fill` on the stack during a long first chunk, and a field store after the loop that changed
   * representation (a whole number, then a fraction) made that code deoptimize at the end of every chunk.
   */
  private readonly state = new Float64Array(3);
  constructor(readonly period: number) {
    assertPeriod(period);
    this.window = new Float64Array(period);
  }
  next(value: number): number {
    const period = this.period;
    const state = this.state;
    const count = state[COUNT]!;
    if (count < period) {
      state[SUM] = state[SUM]! + value;
      this.window[count] = value;
      state[COUNT] = count + 1;
      return count + 1 === period ? state[SUM]! / period : NaN;
    }
    const head = state[HEAD]!;
    state[SUM] = state[SUM]! - this.window[head]! + value;
    this.window[head] = value;
    state[HEAD] = head + 1 === period ? 0 : head + 1;
    return state[SUM]! / period;
  }
  /**
   * `next` over the first `n` values of `input`, into `out`: the same arithmetic in the same order, with
   * the running sum and positions in locals for the loop (a chunk's column costs half of calling `next`
   * per value, which loads and stores them on the object every time).
   */
  fill(input: Float64Array, out: Float64Array, n: number): void {
    const period = this.period;
    const window = this.window;
    const state = this.state;
    let sum = state[SUM]!;
    let head = state[HEAD]!;
    let count = state[COUNT]!;
    let i = 0;
    for (; i < n && count < period; i++) {
      const value = input[i]!;
      sum = sum + value;
      window[count] = value;
      count++;
      out[i] = count === period ? sum / period : NaN;
    }
    for (; i < n; i++) {
      const value = input[i]!;
      sum = sum - window[head]! + value;
      window[head] = value;
      head = head + 1 === period ? 0 : head + 1;
      out[i] = sum / period;
    }
    state[SUM] = sum;
    state[HEAD] = head;
    state[COUNT] = count;
  }
  /** The values now in the window, oldest first (for the standard deviation). */
  forEachInWindow(visit: (value: number) => void): void {
    const head = this.state[HEAD]!;
    const count = this.state[COUNT]!;
    for (let k = 0; k < count; k++) visit(this.window[(head + k) % this.period]!);
  }
}

const SUM = 0;
const HEAD = 1;
const COUNT = 2;

/**
 * Exponential average seeded with the SMA of the first `period` values (technicalindicators' EMA with
 * `factor = 2 / (period + 1)`, or its WEMA / Wilder smoothing with `factor = 1 / period`).
 */
export class EmaKernel {
  private readonly seed: SmaKernel;
  private previous = NaN;
  constructor(
    readonly period: number,
    private readonly factor = 2 / (period + 1),
  ) {
    this.seed = new SmaKernel(period);
  }
  next(value: number): number {
    if (this.previous === this.previous) {
      this.previous = (value - this.previous) * this.factor + this.previous;
      return this.previous;
    }
    this.previous = this.seed.next(value);
    return this.previous;
  }
}

/** Population standard deviation over the last `period` values (technicalindicators' SD). */
export class StdDevKernel {
  private readonly mean: SmaKernel;
  constructor(readonly period: number) {
    this.mean = new SmaKernel(period);
  }
  /** Returns the standard deviation; `lastMean` holds the SMA of the same window. */
  lastMean = NaN;
  next(value: number): number {
    const mean = this.mean.next(value);
    this.lastMean = mean;
    if (!(mean === mean)) return NaN;
    let sum = 0;
    // Same order of summation as technicalindicators, so the results are identical, not merely close.
    this.mean.forEachInWindow((x) => {
      sum = sum + (x - mean) ** 2;
    });
    return Math.sqrt(sum / this.period);
  }
}

/** Wilder's RSI rounded to 2 decimals, as technicalindicators' RSI: first value at bar `period`. */
export class RsiKernel {
  private last = NaN;
  private counter = 1;
  private gainSum = 0;
  private lossSum = 0;
  private avgGain = NaN;
  private avgLoss = NaN;
  constructor(readonly period: number) {
    assertPeriod(period);
  }
  next(value: number): number {
    if (!(this.last === this.last)) {
      this.last = value;
      return NaN;
    }
    const change = value - this.last;
    this.last = value;
    const gain = change > 0 ? change : 0;
    const loss = change < 0 ? -change : 0;
    const period = this.period;
    this.gainSum += gain;
    this.lossSum += loss;
    if (this.counter < period) {
      this.counter++;
      return NaN;
    }
    if (!(this.avgGain === this.avgGain)) {
      this.avgGain = this.gainSum / period;
      this.avgLoss = this.lossSum / period;
    } else {
      this.avgGain = (this.avgGain * (period - 1) + gain) / period;
      this.avgLoss = (this.avgLoss * (period - 1) + loss) / period;
    }
    if (this.avgLoss === 0) return 100;
    if (this.avgGain === 0) return 0;
    const rs = this.avgGain / this.avgLoss;
    return parseFloat((100 - 100 / (1 + rs)).toFixed(2));
  }
}

/** Average true range with Wilder smoothing, as technicalindicators' ATR: first value at bar `period`. */
export class AtrKernel {
  private previousClose = NaN;
  private readonly smoothing: EmaKernel;
  constructor(readonly period: number) {
    this.smoothing = new EmaKernel(period, 1 / period);
  }
  next(high: number, low: number, close: number): number {
    const previous = this.previousClose;
    this.previousClose = close;
    if (!(previous === previous)) return NaN;
    const range = Math.max(high - low, Math.abs(high - previous), Math.abs(low - previous));
    return this.smoothing.next(range);
  }
}

function assertPeriod(period: number): void {
  if (!Number.isInteger(period) || period < 1)
    throw new EngineError('INVALID_PERIOD', `indicator period must be a positive integer, got ${period}`);
}

// ------------------------------------------------------------------ column series

function columnSeries(field: PriceField, makeKernel: () => { next(value: number): number }): SeriesSpec {
  return () => {
    const kernel = makeKernel();
    return {
      update(chunk, into) {
        const input = chunk[field];
        const n = chunk.length;
        const out = into !== undefined && into.length >= n ? into : new Float64Array(n);
        for (let i = 0; i < n; i++) out[i] = kernel.next(input[i]!);
        return out;
      },
    };
  };
}

export function sma(period: number, field: PriceField = 'close'): SeriesSpec {
  assertPeriod(period);
  return () => {
    const kernel = new SmaKernel(period);
    return {
      update(chunk, into) {
        const n = chunk.length;
        const out = into !== undefined && into.length >= n ? into : new Float64Array(n);
        kernel.fill(chunk[field], out, n);
        return out;
      },
    };
  };
}

export function ema(period: number, field: PriceField = 'close'): SeriesSpec {
  assertPeriod(period);
  return columnSeries(field, () => new EmaKernel(period));
}

export function rsi(period = 14, field: PriceField = 'close'): SeriesSpec {
  assertPeriod(period);
  return columnSeries(field, () => new RsiKernel(period));
}

export function atr(period = 14): SeriesSpec {
  assertPeriod(period);
  return () => {
    const kernel = new AtrKernel(period);
    return {
      update(chunk, into) {
        const n = chunk.length;
        const out = into !== undefined && into.length >= n ? into : new Float64Array(n);
        for (let i = 0; i < n; i++) out[i] = kernel.next(chunk.high[i]!, chunk.low[i]!, chunk.close[i]!);
        return out;
      },
    };
  };
}

export interface BollingerColumns {
  readonly middle: Float64Array;
  readonly upper: Float64Array;
  readonly lower: Float64Array;
  /** %B: where the price sits between the bands (0 = lower, 1 = upper). */
  readonly pb: Float64Array;
}

export function bollinger(period = 20, stdDev = 2, field: PriceField = 'close'): SeriesSpec<BollingerColumns> {
  assertPeriod(period);
  return () => {
    const kernel = new StdDevKernel(period);
    return {
      update(chunk) {
        const n = chunk.length;
        const input = chunk[field];
        const middle = new Float64Array(n);
        const upper = new Float64Array(n);
        const lower = new Float64Array(n);
        const pb = new Float64Array(n);
        for (let i = 0; i < n; i++) {
          const value = input[i]!;
          const sd = kernel.next(value);
          const mean = kernel.lastMean;
          middle[i] = mean;
          upper[i] = mean + sd * stdDev;
          lower[i] = mean - sd * stdDev;
          pb[i] = (value - lower[i]!) / (upper[i]! - lower[i]!);
        }
        return { middle, upper, lower, pb };
      },
    };
  };
}

export interface MacdOptions {
  fast?: number;
  slow?: number;
  signal?: number;
  /** Simple instead of exponential averages for the oscillator / the signal line (technicalindicators' flags). */
  simpleOscillator?: boolean;
  simpleSignal?: boolean;
}

export interface MacdColumns {
  readonly macd: Float64Array;
  readonly signal: Float64Array;
  readonly histogram: Float64Array;
}

/** MACD: defined from bar `slow - 1`; signal and histogram from bar `slow + signal - 2`. */
export function macd(options: MacdOptions = {}, field: PriceField = 'close'): SeriesSpec<MacdColumns> {
  const fastPeriod = options.fast ?? 12;
  const slowPeriod = options.slow ?? 26;
  const signalPeriod = options.signal ?? 9;
  [fastPeriod, slowPeriod, signalPeriod].forEach(assertPeriod);
  const average = (simple: boolean | undefined, period: number) =>
    simple ? new SmaKernel(period) : new EmaKernel(period);
  return () => {
    const fastKernel = average(options.simpleOscillator, fastPeriod);
    const slowKernel = average(options.simpleOscillator, slowPeriod);
    const signalKernel = average(options.simpleSignal, signalPeriod);
    return {
      update(chunk) {
        const n = chunk.length;
        const input = chunk[field];
        const macdOut = new Float64Array(n);
        const signalOut = new Float64Array(n);
        const histogram = new Float64Array(n);
        for (let i = 0; i < n; i++) {
          const fast = fastKernel.next(input[i]!);
          const slow = slowKernel.next(input[i]!);
          const line = fast - slow;
          const signal = line === line ? signalKernel.next(line) : NaN;
          macdOut[i] = line;
          signalOut[i] = signal;
          histogram[i] = line - signal;
        }
        return { macd: macdOut, signal: signalOut, histogram };
      },
    };
  };
}

// ------------------------------------------------------------------ bar cursor and operators

/**
 * The bar (index in the base chunk being pushed) at which the runner is deciding. Chunk operators that
 * emit per-bar signals set it before each emission, so an intent built downstream by a plain `map` is
 * stamped with the right bar even though it was emitted while the whole chunk was being processed.
 */
export const barCursor = { at: -1 };

/** Index in the base chunk at which bar `i` of `chunk` became known (derived timeframes differ). */
export function baseIndexOf(chunk: BarChunk, i: number): number {
  return chunk.baseIndex === undefined ? i : chunk.baseIndex[i]!;
}

/** Emit `value` as decided at bar `i` of `chunk`. */
export function emitAt<T>(subscriber: { next(value: T): void }, chunk: BarChunk, i: number, value: T): void {
  barCursor.at = baseIndexOf(chunk, i);
  subscriber.next(value);
}

export interface IndicatorChunk<T> {
  readonly chunk: BarChunk;
  readonly values: T;
}

/** Pair every chunk with the indicator's values for its bars. */
export function indicator<T>(spec: SeriesSpec<T>): OperatorFunction<BarChunk, IndicatorChunk<T>> {
  return (source) =>
    new Observable<IndicatorChunk<T>>((subscriber) => {
      const series = spec();
      return source.subscribe({
        next: (chunk) => subscriber.next({ chunk, values: series.update(chunk) }),
        error: (error: unknown) => subscriber.error(error),
        complete: () => subscriber.complete(),
      });
    });
}

export type CrossDirection = 'up' | 'down';

export interface Cross {
  readonly direction: CrossDirection;
  /** Index of the bar in the base chunk; the runner acts on it at that bar. */
  readonly at: number;
  /** Start time of the bar (epoch ms). */
  readonly time: number;
}

/**
 * Crossings of two series. The side is the sign of `fast - slow`, a tie keeps the previous side; the
 * first defined side is only remembered, and every later change of side is a cross. Emits only on
 * crossings, so a chunk without one costs no event.
 */
export function crossover(fast: SeriesSpec, slow: SeriesSpec): OperatorFunction<BarChunk, Cross> {
  return (source) =>
    new Observable<Cross>((subscriber) => {
      const fastSeries = fast();
      const slowSeries = slow();
      // The values are consumed at once, so two buffers serve every chunk (no garbage per chunk).
      let fastBuffer = new Float64Array(0);
      let slowBuffer = new Float64Array(0);
      let side = 0;
      return source.subscribe({
        next: (chunk) => {
          if (fastBuffer.length < chunk.length) {
            fastBuffer = new Float64Array(chunk.length);
            slowBuffer = new Float64Array(chunk.length);
          }
          const f = fastSeries.update(chunk, fastBuffer);
          const s = slowSeries.update(chunk, slowBuffer);
          for (let i = 0; i < chunk.length; i++) {
            const a = f[i]!;
            const b = s[i]!;
            // NaN compares false both ways, so warm-up bars keep the side at 0.
            const now = a > b ? 1 : a < b ? -1 : side;
            if (now !== side) {
              if (side !== 0) {
                emitAt(subscriber, chunk, i, {
                  direction: now > 0 ? 'up' : 'down',
                  at: baseIndexOf(chunk, i),
                  time: chunk.time[i]!,
                } as Cross);
              }
              side = now;
            }
          }
        },
        error: (error: unknown) => subscriber.error(error),
        complete: () => subscriber.complete(),
      });
    });
}

/**
 * Per-bar signals from a chunk function: `decide(chunk, i, values)` returns a value to emit at bar i or
 * undefined. For strategies whose rule is a few lines over indicator columns.
 */
export function signals<T, R>(
  spec: SeriesSpec<T>,
  decide: (chunk: BarChunk, i: number, values: T) => R | undefined,
): OperatorFunction<BarChunk, R> {
  return (source) =>
    new Observable<R>((subscriber) => {
      const series = spec();
      return source.subscribe({
        next: (chunk) => {
          const values = series.update(chunk);
          for (let i = 0; i < chunk.length; i++) {
            const out = decide(chunk, i, values);
            if (out !== undefined) emitAt(subscriber, chunk, i, out);
          }
        },
        error: (error: unknown) => subscriber.error(error),
        complete: () => subscriber.complete(),
      });
    });
}

/** Several series side by side, for `signals`. */
export function combine<T extends Record<string, SeriesSpec<unknown>>>(
  specs: T,
): SeriesSpec<{ [K in keyof T]: ReturnType<ReturnType<T[K]>['update']> }> {
  return () => {
    const entries = Object.entries(specs).map(([name, spec]) => [name, spec()] as const);
    return {
      update(chunk) {
        const out: Record<string, unknown> = {};
        for (const [name, series] of entries) out[name] = series.update(chunk);
        return out as { [K in keyof T]: ReturnType<ReturnType<T[K]>['update']> };
      },
    };
  };
}
