import { describe, expect, it } from 'vitest';
import { filter, map } from 'rxjs';
import { z } from 'zod';
import { marketOrder, modifyOrder, limitOrder, target } from '../../../src/engine/intents.ts';
import { createEngine, type Decision } from '../../../src/engine/runner.ts';
import { defineStrategy } from '../../../src/engine/strategy.ts';
import { timeframe } from '../../../src/engine/timeframe.ts';
import type { BarChunk, Intent, Timeframe } from '../../../src/engine/types.ts';
import smaCross from '../../../src/strategies/sma-cross.ts';
import { ES, T0, TinyVenue, chunk, scripted } from './helpers.ts';

const FIVE = timeframe('minute', 5);

/** Five-minute bars aggregated from one-minute closes starting at T0 (a five-minute boundary). */
function fiveMinute(closes: number[]): BarChunk {
  const n = Math.floor(closes.length / 5);
  const c = {
    contractId: ES.id,
    timeframe: FIVE,
    length: n,
    time: new Float64Array(n),
    open: new Float64Array(n),
    high: new Float64Array(n),
    low: new Float64Array(n),
    close: new Float64Array(n),
    volume: new Float64Array(n),
  };
  for (let k = 0; k < n; k++) {
    const bucket = closes.slice(5 * k, 5 * k + 5);
    c.time[k] = T0 + k * 300_000;
    c.open[k] = bucket[0]!;
    c.high[k] = Math.max(...bucket);
    c.low[k] = Math.min(...bucket);
    c.close[k] = bucket[4]!;
    c.volume[k] = 5;
  }
  return c;
}

describe('StrategyEntry.size', () => {
  it('multiplies every place, target and modify size of the instance; an invalid size stays refused', () => {
    const venue = new TinyVenue();
    const seen: number[] = [];
    const engine = createEngine({
      strategies: [
        {
          strategy: scripted(
            'x2',
            {
              0: target(1),
              2: target(-1),
              4: marketOrder('buy', 1),
              5: limitOrder('buy', 1, 90, { id: 'x2-lim', unit: 'ticks' }),
              6: modifyOrder('x2-lim', { size: 3 }),
              7: target(1.5),
            },
            seen,
          ),
          size: 2,
        },
      ],
      contracts: [ES],
      venue,
      account: { startingBalance: 50_000 },
    });
    const decisions: Decision[] = [];
    engine.decisions$.subscribe((d) => decisions.push(d));
    engine.push(chunk([100, 100, 100, 100, 100, 100, 100, 100, 100]));
    expect(venue.placed.map((o) => `${o.id} ${o.side} ${o.size}`)).toEqual([
      'x2-1 buy 2',
      'x2-2 sell 4',
      'x2-3 buy 2',
      'x2-lim buy 2',
    ]);
    expect(venue.modified).toEqual([{ orderId: 'x2-lim', size: 6 }]);
    expect(decisions.at(-1)!.result).toMatchObject({ accepted: false, code: 'INVALID_SIZE' });
    // the strategy sees real contracts
    expect(seen.slice(0, 6)).toEqual([0, 2, 2, -2, -2, 0]);
  });

  it("divides ctx.sizing's sizes by it, so a size it is told fits still fits once multiplied", () => {
    const sizes: number[] = [];
    const probe = defineStrategy({
      name: 'probe',
      params: z.object({}),
      run: ({ barRecords, sizing }) =>
        barRecords().pipe(
          map((): Intent | undefined => {
            sizes.push(sizing.maxSizeForStop(10), sizing.fromRisk(500, 10));
            return undefined;
          }),
          filter((i): i is Intent => i !== undefined),
        ),
    });
    const engine = createEngine({
      strategies: [{ strategy: probe, size: 3 }],
      contracts: [ES],
      venue: new TinyVenue(),
      account: { startingBalance: 50_000, dailyLossLimit: 1_000 },
    });
    engine.push(chunk([100]));
    // room 1000; 10 ticks x 12.5 x 3 = 375 a unit: 2 units; 500 of risk: 1 unit
    expect(sizes).toEqual([2, 1]);
  });

  it('refuses a size that is not a positive whole number', () => {
    expect(() =>
      createEngine({
        strategies: [{ strategy: smaCross, size: 0.5 }],
        contracts: [ES],
        venue: new TinyVenue(),
        account: { startingBalance: 50_000 },
      }),
    ).toThrow(expect.objectContaining({ code: 'INVALID_SIZE' }));
  });
});

describe('StrategyEntry.timeframe', () => {
  const closes = Array.from({ length: 600 }, (_, i) => 1000 + Math.round(30 * Math.sin(i / 23) + 9 * Math.cos(i / 5)));

  it('a five-minute instance fed one-minute bars trades as it does on five-minute bars', () => {
    const run = (tf: Timeframe | undefined, bars: BarChunk) => {
      const venue = new TinyVenue(1);
      const engine = createEngine({
        strategies: [
          { strategy: smaCross, params: { fast: 3, slow: 8 }, ...(tf === undefined ? {} : { timeframe: tf }) },
        ],
        contracts: [ES],
        venue,
        account: { startingBalance: 50_000 },
      });
      engine.push(bars);
      return {
        orders: venue.placed.map((o) => `${o.side} ${o.size}`),
        decided: venue.placed.map((o) => o.decidedAt),
        pnl: engine.accounting.realizedPnl,
        trades: engine.accounting.trades.map((t) => `${t.entryPrice}->${t.exitPrice}`),
      };
    };
    const native = run(undefined, fiveMinute(closes));
    const derived = run(FIVE, chunk(closes));
    expect(native.orders.length).toBeGreaterThan(4);
    expect(derived.orders).toEqual(native.orders);
    expect(derived.trades).toEqual(native.trades);
    expect(derived.pnl).toBe(native.pnl);
    // decided at the last one-minute bar of each five-minute bar
    expect(derived.decided).toEqual(native.decided.map((t) => t + 4 * 60_000));
  });

  it('instances of different timeframes share one engine fed one-minute bars', () => {
    const seen: Record<string, string[]> = { fast: [], slow: [] };
    const recorder = (name: string) =>
      defineStrategy({
        name,
        params: z.object({}),
        run: ({ bars, barRecords }) => {
          bars().subscribe((c) => seen[name]!.push(`chunk ${c.timeframe.unitNumber}m x${c.length}`));
          return barRecords().pipe(
            map((b): Intent | undefined => {
              seen[name]!.push(`bar ${(b.time - T0) / 60_000}`);
              return undefined;
            }),
            filter((i): i is Intent => i !== undefined),
          );
        },
      });
    const engine = createEngine({
      strategies: [{ strategy: recorder('fast') }, { strategy: recorder('slow'), timeframe: FIVE }],
      contracts: [ES],
      venue: new TinyVenue(),
      account: { startingBalance: 50_000 },
    });
    engine.push(chunk(closes.slice(0, 12)));
    expect(seen.fast).toEqual(['chunk 1m x12', ...Array.from({ length: 12 }, (_, i) => `bar ${i}`)]);
    expect(seen.slow).toEqual(['chunk 5m x2', 'bar 0', 'bar 5']);
  });

  it("counts a coarser instance's warm-up in its own bars", () => {
    const venue = new TinyVenue();
    const warm = defineStrategy({
      name: 'warm',
      params: z.object({}),
      warmup: 2,
      run: ({ barRecords }) => barRecords().pipe(map(() => target(1))),
    });
    const engine = createEngine({
      strategies: [{ strategy: warm, timeframe: FIVE }],
      contracts: [ES],
      venue,
      account: { startingBalance: 50_000 },
    });
    const decisions: Decision[] = [];
    engine.decisions$.subscribe((d) => decisions.push(d));
    engine.push(chunk(closes.slice(0, 16)));
    // five-minute bars complete at one-minute bars 4, 9 and 14: the first two are its warm-up
    expect(decisions.map((d) => (d.result.accepted ? 'ok' : d.result.code))).toEqual(['WARM_UP', 'WARM_UP', 'ok']);
    expect(!decisions[0]!.result.accepted && decisions[0]!.result.message).toBe(
      'bar 5 of a 10-bar warm-up (2 bars of 5m)',
    );
  });
});
