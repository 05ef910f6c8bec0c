import fc from 'fast-check';
import { ATR, BollingerBands, EMA, MACD, RSI, SMA } from 'technicalindicators';
import { describe, expect, it } from 'vitest';
import { firstValueFrom, from, toArray } from 'rxjs';
import { atr, bollinger, crossover, ema, macd, rsi, sma, type SeriesSpec } from '../../../src/engine/indicators.ts';
import type { BarChunk } from '../../../src/engine/types.ts';
import { chunk, split, type BarInput } from './helpers.ts';

/** A seeded random walk in whole ticks, as bars. */
function walk(n: number, seed: number): BarInput[] {
  let s = seed;
  const next = () => (s = (s * 1103515245 + 12345) % 2147483648) / 2147483648;
  let price = 4000;
  const bars: BarInput[] = [];
  for (let i = 0; i < n; i++) {
    const open = price;
    price += Math.round((next() - 0.5) * 12);
    const high = Math.max(open, price) + Math.round(next() * 4);
    const low = Math.min(open, price) - Math.round(next() * 4);
    bars.push({ open, high, low, close: price });
  }
  return bars;
}

/** Run a series over the pieces and glue the columns back together. */
function columns<T>(spec: SeriesSpec<T>, pieces: BarChunk[], pick: (value: T) => Float64Array): number[] {
  const series = spec();
  return pieces.flatMap((piece) => Array.from(pick(series.update(piece))));
}

/** technicalindicators drops warm-up values; we keep NaN there. Align its output to the end. */
function expectAligned(ours: number[], theirs: Array<number | undefined>, firstDefined: number): void {
  expect(ours.length).toBe(firstDefined + theirs.length);
  for (let i = 0; i < firstDefined; i++) expect(ours[i]).toBeNaN();
  theirs.forEach((value, k) => {
    const mine = ours[firstDefined + k]!;
    if (value === undefined) expect(mine).toBeNaN();
    else expect(mine).toBeCloseTo(value, 9);
  });
}

const bars = walk(300, 7);
const whole = chunk(bars);
const closes = bars.map((b) => b.close);
const highs = Array.from(whole.high);
const lows = Array.from(whole.low);
const chunkings = [[300], [1], [7, 1, 64, 3], [29, 30, 31]];

describe('indicators equal technicalindicators on the same input, whatever the chunking', () => {
  for (const sizes of chunkings) {
    const pieces = split(whole, sizes);
    it(`SMA, EMA, RSI, ATR (chunks ${sizes.join(',')})`, () => {
      expectAligned(
        columns(sma(10), pieces, (v) => v),
        SMA.calculate({ period: 10, values: closes }),
        9,
      );
      expectAligned(
        columns(ema(12), pieces, (v) => v),
        EMA.calculate({ period: 12, values: closes }),
        11,
      );
      expectAligned(
        columns(rsi(14), pieces, (v) => v),
        RSI.calculate({ period: 14, values: closes }),
        14,
      );
      expectAligned(
        columns(atr(14), pieces, (v) => v),
        ATR.calculate({ period: 14, high: highs, low: lows, close: closes }),
        14,
      );
    });
    it(`Bollinger bands and MACD (chunks ${sizes.join(',')})`, () => {
      const theirs = BollingerBands.calculate({ period: 20, stdDev: 2, values: closes });
      for (const band of ['middle', 'upper', 'lower', 'pb'] as const) {
        expectAligned(
          columns(bollinger(20, 2), pieces, (v) => v[band]),
          theirs.map((b) => b[band]),
          19,
        );
      }
      for (const simple of [false, true]) {
        const m = MACD.calculate({
          values: closes,
          fastPeriod: 12,
          slowPeriod: 26,
          signalPeriod: 9,
          SimpleMAOscillator: simple,
          SimpleMASignal: simple,
        });
        const spec = macd({ fast: 12, slow: 26, signal: 9, simpleOscillator: simple, simpleSignal: simple });
        expectAligned(
          columns(spec, pieces, (v) => v.macd),
          m.map((x) => x.MACD),
          25,
        );
        expectAligned(
          columns(spec, pieces, (v) => v.signal),
          m.map((x) => x.signal),
          25,
        );
        expectAligned(
          columns(spec, pieces, (v) => v.histogram),
          m.map((x) => x.histogram),
          25,
        );
      }
    });
  }

  it('property: SMA equals technicalindicators for any series, period and chunking', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 1, max: 100_000 }), { minLength: 1, maxLength: 120 }),
        fc.integer({ min: 1, max: 30 }),
        fc.array(fc.integer({ min: 1, max: 20 }), { minLength: 1, maxLength: 5 }),
        (values, period, sizes) => {
          const pieces = split(chunk(values), sizes);
          const ours = columns(sma(period), pieces, (v) => v);
          const theirs = SMA.calculate({ period, values });
          const defined = ours.filter((x) => !Number.isNaN(x));
          // Whole ticks: the running sums are exact, so the values are identical, not just close.
          expect(defined).toEqual(theirs);
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('crossover', () => {
  it('emits only changes of side after the first defined side, with the bar index', async () => {
    const c = chunk([10, 10, 10, 10, 12, 14, 12, 10, 8, 10, 12]);
    const crosses = await firstValueFrom(from([c]).pipe(crossover(sma(2), sma(3)), toArray()));
    expect(crosses.map((x) => [x.direction, x.at])).toEqual([
      ['down', 7],
      ['up', 10],
    ]);
  });
  it('a tie keeps the previous side', async () => {
    // fast = close, slow = SMA(2): up at 2 (first side, no cross), tie at 3, down at 4, tie at 5, up at 6
    const c = chunk([10, 10, 12, 12, 11, 11, 12]);
    const crosses = await firstValueFrom(from([c]).pipe(crossover(sma(1), sma(2)), toArray()));
    expect(crosses.map((x) => [x.direction, x.at])).toEqual([
      ['down', 4],
      ['up', 6],
    ]);
  });
});
