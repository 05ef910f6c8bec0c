/**
 * The benchmark's paths agree (issue 7): the reference strategy through the real engine and as a plain
 * loop give the identical list of fills and the same PnL, whatever the chunking; and the engine's
 * incremental indicators equal technicalindicators' own values on the same input across chunk edges.
 * No timings here: `npm run bench` measures, this proves the measured paths compute the same thing.
 */
import { ATR, BollingerBands, EMA, MACD, RSI, SMA } from 'technicalindicators';
import { describe, expect, it } from 'vitest';
import { FillModel } from '../../../src/adapters/backtest/fill-model.ts';
import { sliceByIndex, type BarColumns } from '../../../src/adapters/backtest/sources/columns.ts';
import { atr, bollinger, ema, macd, rsi, sma, type SeriesSpec } from '../../../src/engine/indicators.ts';
import { createEngine } from '../../../src/engine/runner.ts';
import type { BarChunk, Fill } from '../../../src/engine/types.ts';
import smaCross from '../../../src/strategies/sma-cross.ts';
import { CONTRACT, MINUTE, compareRuns, fullPathBacktest, fullPathResult, plainLoop, referenceBars, type PathResult } from '../../../bench/reference.ts';

const BARS = 50_000;
const bars = referenceBars(BARS);

/** Chunks of the given sizes in turn (views into the columns), to put chunk edges everywhere. */
function chunks(columns: BarColumns, sizes: readonly number[]): BarChunk[] {
  const out: BarChunk[] = [];
  const n = columns.time.length;
  for (let from = 0, k = 0; from < n; k++) {
    const to = Math.min(n, from + sizes[k % sizes.length]!);
    out.push({ contractId: CONTRACT.id, timeframe: MINUTE, length: to - from, ...sliceByIndex(columns, from, to) });
    from = to;
  }
  return out;
}

/** The full path driven chunk by chunk with chosen sizes (runBacktest always uses the replay's size). */
function engineWithChunks(columns: BarColumns, sizes: readonly number[], fast: number, slow: number): PathResult {
  const venue = new FillModel({ slippageTicks: 0, feePerContractPerSide: 0 });
  const engine = createEngine({
    strategies: [{ strategy: smaCross, params: { fast, slow } }],
    contracts: [CONTRACT],
    venue,
    account: { startingBalance: 50_000 },
  });
  const fills: Fill[] = [];
  engine.fills$.subscribe((fill) => fills.push(fill));
  for (const chunk of chunks(columns, sizes)) engine.push(chunk);
  const snapshot = engine.snapshot();
  engine.close();
  return {
    fills: { time: fills.map((f) => f.time), size: fills.map((f) => (f.side === 'buy' ? f.size : -f.size)), price: fills.map((f) => f.price) },
    realizedPnl: snapshot.realizedPnl,
    endingEquity: snapshot.equity,
  };
}

describe('bench: full path and plain loop', () => {
  it(`produce the identical fills and PnL on ${BARS.toLocaleString('en-US')} synthetic bars`, () => {
    const engine = fullPathResult(fullPathBacktest(bars));
    const loop = plainLoop(bars);
    expect(loop.fills.time.length).toBeGreaterThan(1000);
    expect(compareRuns(engine, loop)).toBeUndefined();
  });

  it('agree whatever the chunking and for other parameters', () => {
    const part = sliceByIndex(bars, 0, 12_000);
    for (const [fast, slow] of [
      [10, 30],
      [3, 7],
      [20, 60],
    ] as const) {
      const loop = plainLoop(part, { fast, slow });
      for (const sizes of [[1], [7, 1, 29, 2], [4096]]) {
        expect(compareRuns(engineWithChunks(part, sizes, fast, slow), loop), `SMA(${fast})/SMA(${slow}) in chunks of ${sizes.join(',')}`).toBeUndefined();
      }
    }
  });

  it('the comparison notices a changed fill, a missing fill and a different PnL', () => {
    const loop = plainLoop(sliceByIndex(bars, 0, 5_000));
    const moved = { ...loop, fills: { ...loop.fills, price: loop.fills.price.map((p, k) => (k === 3 ? p + 1 : p)) } };
    expect(compareRuns(loop, moved)).toMatch(/fill #4 differs/);
    const shorter = { ...loop, fills: { time: loop.fills.time.slice(1), size: loop.fills.size.slice(1), price: loop.fills.price.slice(1) } };
    expect(compareRuns(loop, shorter)).toBeDefined();
    expect(compareRuns(loop, { ...loop, realizedPnl: loop.realizedPnl + 12.5 })).toMatch(/realized PnL/);
  });
});

describe('bench: incremental indicators equal technicalindicators across chunk edges', () => {
  const n = 3_000;
  const part = sliceByIndex(bars, 0, n);
  const close = Array.from(part.close);
  const high = Array.from(part.high);
  const low = Array.from(part.low);
  const sizes = [1, 13, 256, 2, 97];

  /** Run a series over the chunks and concatenate its per-bar values. */
  function columns<T>(spec: SeriesSpec<T>, pick: (value: T) => Record<string, Float64Array>): Record<string, number[]> {
    const series = spec();
    const out: Record<string, number[]> = {};
    for (const chunk of chunks(part, sizes)) {
      for (const [name, values] of Object.entries(pick(series.update(chunk)))) (out[name] ??= []).push(...values);
    }
    return out;
  }

  /** The defined values (technicalindicators leaves out the warm-up) and how many bars were warm-up. */
  function defined(values: number[]): { warmup: number; values: number[] } {
    const warmup = values.findIndex((v) => !Number.isNaN(v));
    return { warmup, values: values.slice(warmup) };
  }

  it.each([10, 30, 1])('SMA(%i)', (period) => {
    const ours = defined(columns(sma(period), (v) => ({ v })).v!);
    expect(ours.warmup).toBe(period - 1);
    expect(ours.values).toEqual(SMA.calculate({ period, values: close }));
  });

  it('EMA(12)', () => {
    expect(defined(columns(ema(12), (v) => ({ v })).v!).values).toEqual(EMA.calculate({ period: 12, values: close }));
  });

  it('RSI(14)', () => {
    expect(defined(columns(rsi(14), (v) => ({ v })).v!).values).toEqual(RSI.calculate({ period: 14, values: close }));
  });

  it('ATR(14)', () => {
    expect(defined(columns(atr(14), (v) => ({ v })).v!).values).toEqual(ATR.calculate({ period: 14, high, low, close }));
  });

  it('Bollinger(20, 2)', () => {
    const ours = columns(bollinger(20, 2), (v) => ({ middle: v.middle, upper: v.upper, lower: v.lower, pb: v.pb }));
    const theirs = BollingerBands.calculate({ period: 20, stdDev: 2, values: close });
    const from = ours.middle!.length - theirs.length;
    expect(ours.middle!.slice(from)).toEqual(theirs.map((b) => b.middle));
    expect(ours.upper!.slice(from)).toEqual(theirs.map((b) => b.upper));
    expect(ours.lower!.slice(from)).toEqual(theirs.map((b) => b.lower));
    expect(ours.pb!.slice(from)).toEqual(theirs.map((b) => b.pb));
  });

  it('MACD(12, 26, 9)', () => {
    const ours = columns(macd({ fast: 12, slow: 26, signal: 9 }), (v) => ({ macd: v.macd, signal: v.signal, histogram: v.histogram }));
    const theirs = MACD.calculate({ fastPeriod: 12, slowPeriod: 26, signalPeriod: 9, values: close, SimpleMAOscillator: false, SimpleMASignal: false });
    const from = ours.macd!.length - theirs.length;
    expect(ours.macd!.slice(from)).toEqual(theirs.map((m) => m.MACD));
    const withSignal = theirs.findIndex((m) => m.signal !== undefined);
    expect(ours.signal!.slice(from + withSignal)).toEqual(theirs.slice(withSignal).map((m) => m.signal));
    expect(ours.histogram!.slice(from + withSignal)).toEqual(theirs.slice(withSignal).map((m) => m.histogram));
  });
});
