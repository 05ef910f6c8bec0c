/** Warm-up: a strategy's declared first bars send nothing; history run through it live gives the same first decision as a backtest. */
import { describe, expect, it } from 'vitest';
import smaCross from '../../../src/strategies/sma-cross.ts';
import { sliceChunk } from '../../../src/engine/chunks.ts';
import { createEngine, type Decision } from '../../../src/engine/runner.ts';
import { warmupBars } from '../../../src/engine/strategy.ts';
import type { BarChunk } from '../../../src/engine/types.ts';
import { chunk, ES, LIVE_VENUE, SIMULATED_VENUE, TinyVenue } from './helpers.ts';

// A zig-zag long enough for several crosses of SMA(2) and SMA(5).
const closes = Array.from({ length: 80 }, (_, i) => 1000 + Math.round(20 * Math.sin(i / 3)) + (i % 7));
const params = { fast: 2, slow: 5 };

function engine(live: boolean) {
  const venue = new TinyVenue(0, live ? LIVE_VENUE : SIMULATED_VENUE);
  const decisions: Decision[] = [];
  const e = createEngine({
    strategies: [{ strategy: smaCross, params }],
    contracts: [ES],
    venue,
    account: { startingBalance: 50_000 },
  });
  e.decisions$.subscribe((d) => decisions.push(d));
  return { e, venue, decisions };
}

/** The target decisions from `from` on, as `time size`. */
function targets(decisions: readonly Decision[], from: number): string[] {
  return decisions.flatMap((d) => {
    const wish = d.origin ?? d.intent;
    return d.time >= from && wish.kind === 'target' ? [`${new Date(d.time).toISOString()} ${wish.size}`] : [];
  });
}

describe('warm-up', () => {
  it('sma-cross declares its slow period', () => {
    expect(warmupBars(smaCross, smaCross.params.parse(params))).toBe(5);
  });

  it('live with history run through the strategy decides at the first live bar as the backtest does', () => {
    const all = chunk(closes);
    const backtest = engine(false);
    backtest.e.push(all);
    for (const split of [5, 12, 30, 47]) {
      const live = engine(true);
      live.e.warmUp(sliceChunk(all, 0, split));
      expect(live.venue.placed).toEqual([]);
      for (let i = split; i < all.length; i++) live.e.push(sliceChunk(all, i, i + 1));
      const from = all.time[split]!;
      expect(targets(live.decisions, from)).toEqual(targets(backtest.decisions, from));
      expect(targets(live.decisions, from).length).toBeGreaterThan(0);
    }
  });

  it('a strategy that would trade during its warm-up is refused WARM_UP, at every bar of it and no later', () => {
    const eager = { ...smaCross, warmup: 10, name: 'eager' };
    const venue = new TinyVenue();
    const decisions: Decision[] = [];
    const e = createEngine({
      strategies: [{ strategy: eager, params }],
      contracts: [ES],
      venue,
      account: { startingBalance: 50_000 },
    });
    e.decisions$.subscribe((d) => decisions.push(d));
    const all: BarChunk = chunk(closes);
    e.push(all);
    const refused = decisions.filter((d) => !d.result.accepted && d.result.code === 'WARM_UP');
    expect(refused.length).toBeGreaterThan(0);
    for (const d of refused) expect(d.time).toBeLessThanOrEqual(all.time[9]!);
    expect(venue.placed.every((o) => o.decidedAt > all.time[9]!)).toBe(true);
  });
});
