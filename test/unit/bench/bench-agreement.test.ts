/**
 * The benchmark's paths agree (issue 7): the reference strategy through the real engine and as a plain
 * loop give the identical list of fills and the same PnL, whatever the chunking. That the engine's
 * incremental indicators equal technicalindicators' own values across chunk edges is proven by the
 * engine's test (test/unit/engine/indicators.test.ts), not repeated here.
 * No timings here: `npm run bench` measures, this proves the measured paths compute the same thing.
 */
import { describe, expect, it } from 'vitest';
import { SimulatedVenue } from '../../../src/adapters/backtest/simulated-venue.ts';
import { sliceByIndex } from '../../../src/data/columns.ts';
import { createEngine } from '../../../src/engine/runner.ts';
import type { BarChunk, BarColumns, Fill } from '../../../src/engine/types.ts';
import smaCross from '../../../src/strategies/sma-cross.ts';
import { checkIntent } from '../../../src/engine/risk.ts';
import { guardBench, runGuardChecks } from '../../../bench/guard.ts';
import {
  CONTRACT,
  MINUTE,
  compareRuns,
  fullPathBacktest,
  fullPathResult,
  plainLoop,
  quietPathBacktest,
  referenceBars,
  type PathResult,
  withOrderListHash,
} from '../../../bench/reference.ts';

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
  const venue = new SimulatedVenue({ slippageTicks: 0, feePerContractPerSide: 0 });
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
  const orders = venue.orders();
  const last = orders.at(-1);
  return {
    decidedAt: orders.map((o) => o.placedAt),
    workingAtEnd: last === undefined || last.state !== 'working' ? 0 : last.side === 'buy' ? last.size : -last.size,
    orderListHash: venue.orderListHash(),
    fills: {
      time: fills.map((f) => f.time),
      size: fills.map((f) => (f.side === 'buy' ? f.size : -f.size)),
      price: fills.map((f) => f.price),
    },
    realizedPnl: snapshot.realizedPnl,
    endingEquity: snapshot.equity,
  };
}

describe('bench: full path and plain loop', () => {
  it(`produce the identical fills and PnL on ${BARS.toLocaleString('en-US')} synthetic bars`, () => {
    const run = fullPathBacktest(bars);
    const engine = fullPathResult(run);
    const loop = withOrderListHash(plainLoop(bars));
    expect(loop.fills.time.length).toBeGreaterThan(1000);
    expect(compareRuns(engine, loop)).toBeUndefined();
    // The loop's own orders hash to the engine's value, and both to the one recorded (docs/backtest.md).
    expect(loop.orderListHash).toBe(run.orderListHash);
    expect(run.orderListHash).toBe('1befdaa4169f7700e9ca259364760a0fbd7be21aea3a860154df88dc89695207');
  });

  it('the engine without orders (the bar path of the bench) runs every bar, places nothing and ends where it began', () => {
    const quiet = quietPathBacktest(bars);
    expect(quiet.bars).toBe(BARS);
    expect(quiet.orders).toHaveLength(0);
    expect(quiet.fills).toHaveLength(0);
    expect(quiet.endingEquity).toBe(quiet.startingBalance);
  });

  it('agree whatever the chunking and for other parameters', () => {
    const part = sliceByIndex(bars, 0, 12_000);
    for (const [fast, slow] of [
      [10, 30],
      [3, 7],
      [20, 60],
    ] as const) {
      const loop = withOrderListHash(plainLoop(part, { fast, slow }));
      for (const sizes of [[1], [7, 1, 29, 2], [4096]]) {
        expect(
          compareRuns(engineWithChunks(part, sizes, fast, slow), loop),
          `SMA(${fast})/SMA(${slow}) in chunks of ${sizes.join(',')}`,
        ).toBeUndefined();
      }
    }
  });

  it('the comparison notices a changed fill, a missing fill and a different PnL', () => {
    const loop = plainLoop(sliceByIndex(bars, 0, 5_000));
    const moved = { ...loop, fills: { ...loop.fills, price: loop.fills.price.map((p, k) => (k === 3 ? p + 1 : p)) } };
    expect(compareRuns(loop, moved)).toMatch(/fill #4 differs/);
    const shorter = {
      ...loop,
      fills: { time: loop.fills.time.slice(1), size: loop.fills.size.slice(1), price: loop.fills.price.slice(1) },
    };
    expect(compareRuns(loop, shorter)).toBeDefined();
    expect(compareRuns(loop, { ...loop, realizedPnl: loop.realizedPnl + 12.5 })).toMatch(/realized PnL/);
    const hashed = withOrderListHash(loop);
    const later = withOrderListHash({ ...loop, decidedAt: loop.decidedAt.map((t, k) => (k === 2 ? t + 60_000 : t)) });
    expect(compareRuns(hashed, later)).toMatch(/order list hash differs/);
  });
});

describe('bench: the risk guard figure checks realistic intents', () => {
  it('accepts the six sound intents and rejects the distance-as-trailPrice and the misaligned price with their codes', () => {
    const bench = guardBench();
    const results = bench.intents.map((intent) => checkIntent(intent, bench.state, bench.limits));
    expect(results.map((r) => (r.accepted ? 'ok' : r.code))).toEqual([
      'ok',
      'ok',
      'ok',
      'ok',
      'ok',
      'TRAIL_TOO_FAR',
      'TICK_MISALIGNED',
      'ok',
    ]);
    expect(runGuardChecks(bench, bench.intents.length * 3)).toBe(18);
  });
});
