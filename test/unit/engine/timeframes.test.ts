import { describe, expect, it } from 'vitest';
import { EMPTY, map, merge } from 'rxjs';
import { z } from 'zod';
import { Resampler } from '../../../src/engine/resample.ts';
import { signals, sma } from '../../../src/engine/indicators.ts';
import { target } from '../../../src/engine/intents.ts';
import { createEngine } from '../../../src/engine/runner.ts';
import { defineStrategy } from '../../../src/engine/strategy.ts';
import { timeframe } from '../../../src/engine/timeframe.ts';
import { ES, T0, TinyVenue, chunk, split } from './helpers.ts';

const FIVE = timeframe('minute', 5);

describe('multi-timeframe bars from one base stream', () => {
  const bars = Array.from({ length: 12 }, (_, i) => ({ open: 100 + i, high: 110 + i, low: 90 - i, close: 101 + i }));

  it('aggregates with the shared buckets and emits a bar at the base bar that completes it', () => {
    const resampler = new Resampler(FIVE);
    const out = resampler.update(chunk(bars));
    expect(out.length).toBe(2);
    expect(Array.from(out.time)).toEqual([T0, T0 + 5 * 60_000]);
    expect(Array.from(out.baseIndex!)).toEqual([4, 9]);
    expect([out.open[0], out.high[0], out.low[0], out.close[0], out.volume[0]]).toEqual([100, 114, 86, 105, 5]);
  });

  it('is the same whatever the chunking, and emits after a gap only when a later bar proves the bucket closed', () => {
    const whole = new Resampler(FIVE).update(chunk(bars));
    const r = new Resampler(FIVE);
    const pieces = split(chunk(bars), [3, 1, 4]).map((p) => r.update(p));
    expect(pieces.flatMap((p) => Array.from(p.close))).toEqual(Array.from(whole.close));
    // bars at minutes 0,1,2 then a gap to minute 7: the first 5-minute bar is known at the minute-7 bar
    const gap = chunk([1, 2, 3]);
    const later = chunk([4, 5, 6], T0 + 7 * 60_000);
    const g = new Resampler(FIVE);
    expect(g.update(gap).length).toBe(0);
    const second = g.update(later);
    expect(Array.from(second.close)).toEqual([3, 6]);
    expect(Array.from(second.baseIndex!)).toEqual([0, 2]);
  });

  it('a strategy sees 1-minute and 5-minute records interleaved without look-ahead', () => {
    const seen: string[] = [];
    const strategy = defineStrategy({
      name: 'mtf',
      params: z.object({}),
      run: ({ barRecords }) => {
        merge(
          barRecords().pipe(map((b) => `1m ${(b.time - T0) / 60_000}`)),
          barRecords(undefined, FIVE).pipe(map((b) => `5m ${(b.time - T0) / 60_000}`)),
        ).subscribe((line) => seen.push(line));
        return EMPTY;
      },
    });
    const engine = createEngine({
      strategies: [{ strategy }],
      contracts: [ES],
      venue: new TinyVenue(),
      account: { startingBalance: 1 },
    });
    for (const piece of split(chunk(bars), [7, 5])) engine.push(piece);
    expect(seen).toEqual([
      '1m 0',
      '1m 1',
      '1m 2',
      '1m 3',
      '1m 4',
      '5m 0',
      '1m 5',
      '1m 6',
      '1m 7',
      '1m 8',
      '1m 9',
      '5m 5',
      '1m 10',
      '1m 11',
    ]);
  });

  it('chunked higher-timeframe streams act at the base bar that completed the bar', () => {
    const strategy = defineStrategy({
      name: 'mtf-chunks',
      params: z.object({}),
      run: ({ bars: barsOf }) =>
        barsOf(undefined, FIVE).pipe(signals(sma(1), (c, i) => target(c.time[i]! === T0 ? 1 : -1))),
    });
    const venue = new TinyVenue();
    const engine = createEngine({
      strategies: [{ strategy }],
      contracts: [ES],
      venue,
      account: { startingBalance: 1 },
    });
    engine.push(chunk(bars));
    // the 5-minute bars complete at base bars 4 and 9: the targets are decided there
    expect(venue.placed.map((o) => [(o.decidedAt - T0) / 60_000, o.side, o.size])).toEqual([
      [4, 'buy', 1],
      [9, 'sell', 2],
    ]);
  });
});
