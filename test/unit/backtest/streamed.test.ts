import { afterAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  configuredContract,
  importSignature,
  type BacktestOutcome,
} from '../../../src/adapters/backtest/definition-run.ts';
import { executeBacktest } from '../../../src/adapters/backtest/execute.ts';
import { BacktestConfig } from '../../../src/adapters/backtest/backtest-config.ts';
import { resolveContract } from '../../../src/adapters/backtest/contract.ts';
import { writeBacktestOutputs } from '../../../src/adapters/backtest/result-files.ts';
import { BarCache } from '../../../src/data/bar-cache.ts';
import { aggregate, allocateColumns, sliceByTime } from '../../../src/data/columns.ts';
import { syntheticBars } from '../../../src/data/synthetic-bars.ts';
import { runStreamedDefinition, streamChoice, STREAM_AUTO_BARS } from '../../../src/adapters/backtest/streamed.ts';
import type { BarColumns } from '../../../src/engine/types.ts';
import { chartData } from '../../../src/report/chart-data.ts';
import { summarizeRunDecisions } from '../../../src/report/decisions.ts';
import { PriceGrid } from '../../../src/engine/ticks.ts';

const dir = mkdtempSync(path.join(tmpdir(), 'tickline-streamed-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const contract = resolveContract('ESZ5');
let imports = 0;

/** The bars stored as a `tickline import` of a stand-in file, in a bar cache of its own. */
function imported(
  bars: BarColumns,
  segments: readonly { contract: string; from: number }[] = [],
): { file: string; cache: string } {
  const at = path.join(dir, `import-${imports++}`);
  const file = `${at}.csv`;
  const cache = `${at}.sqlite`;
  writeFileSync(file, 't,o,h,l,c,v\n');
  const store = new BarCache(cache);
  try {
    store.storeImport(file, importSignature(file, contract.grid, {}), { bars, segments });
  } finally {
    store.close();
  }
  return { file, cache };
}

/** The bars without the stretches [from, to) of bar indices given (gaps cut into the history). */
function withoutStretches(bars: BarColumns, cuts: readonly (readonly [number, number])[]): BarColumns {
  const keep = new Uint8Array(bars.time.length).fill(1);
  for (const [from, to] of cuts) keep.fill(0, from, to);
  const count = keep.reduce((n, k) => n + k, 0);
  const out = allocateColumns(count);
  let at = 0;
  for (let i = 0; i < bars.time.length; i++) {
    if (keep[i] === 0) continue;
    for (const key of ['time', 'open', 'high', 'low', 'close', 'volume'] as const) out[key][at] = bars[key][i]!;
    at++;
  }
  return out;
}

const STRATEGIES = [
  {
    name: 'sma-cross',
    params: fc.record({ fast: fc.integer({ min: 2, max: 6 }), slow: fc.integer({ min: 8, max: 20 }) }),
  },
  {
    name: 'breakout',
    params: fc.record({ channel: fc.integer({ min: 5, max: 30 }), trailTicks: fc.integer({ min: 7, max: 16 }) }),
  },
  {
    name: 'mean-reversion',
    params: fc.record({ period: fc.integer({ min: 5, max: 30 }), rsiPeriod: fc.integer({ min: 3, max: 14 }) }),
  },
] as const;

function configOf(
  files: { file: string; cache: string },
  strategy: { name: string; params: Record<string, unknown> },
  extra: Record<string, unknown>,
  stream: boolean,
): BacktestConfig {
  return BacktestConfig.parse({
    strategy,
    contract: 'ESZ5',
    data: { source: 'csv', file: files.file, cache: files.cache, stream },
    account: { startingBalance: 50_000 },
    fills: { slippageTicks: 1, feePerContractPerSide: 1.4 },
    ...extra,
  });
}

const FILES = [
  'trades.csv',
  'trades.json',
  'orders.json',
  'violations.json',
  'statistics.json',
  'daily.json',
  'daystats.json',
  'decisions.csv',
  'gaps.json',
  'rolls.json',
  'equity.csv',
];

/** Writes both outcomes' files and expects them byte-identical (summary.json differs by its data line only). */
async function expectSameFiles(whole: BacktestOutcome, streamed: BacktestOutcome): Promise<void> {
  const out = mkdtempSync(path.join(dir, 'out-'));
  await writeBacktestOutputs(path.join(out, 'whole'), whole);
  await writeBacktestOutputs(path.join(out, 'streamed'), streamed);
  for (const name of FILES)
    expect(readFileSync(path.join(out, 'streamed', name), 'utf8'), name).toBe(
      readFileSync(path.join(out, 'whole', name), 'utf8'),
    );
  const summary = (which: string) => ({
    ...JSON.parse(readFileSync(path.join(out, which, 'summary.json'), 'utf8')),
    data: null,
  });
  expect(summary('streamed')).toEqual(summary('whole'));
  rmSync(out, { recursive: true, force: true });
}

function expectSameRun(whole: BacktestOutcome, streamed: BacktestOutcome): void {
  expect(streamed.result.bars).toBe(whole.result.bars);
  expect(streamed.result.fills).toEqual(whole.result.fills);
  expect(streamed.result.trades).toEqual(whole.result.trades);
  // The list the report and the files read makes the same trades from the columns.
  expect([...streamed.result.tradeList]).toEqual(whole.result.trades);
  expect([...whole.result.tradeList]).toEqual(whole.result.trades);
  expect(streamed.result.orderListHash).toBe(whole.result.orderListHash);
  expect(streamed.result.violations).toEqual(whole.result.violations);
  expect(streamed.result.gaps).toEqual(whole.result.gaps);
  expect(streamed.statistics).toEqual(whole.statistics);
}

describe('a backtest streamed from the bar cache', () => {
  it('equals the whole-history run of the same bars: fills, trades, hash, violations, every statistic and the files', async () => {
    const bars = withoutStretches(
      syntheticBars({ seed: 5, grid: contract.grid, startPrice: 5000, start: Date.UTC(2025, 2, 2), sessions: 12 }),
      [[3000, 9000]],
    );
    const files = imported(bars);
    const strategy = { name: 'sma-cross', params: { fast: 3, slow: 12 } };
    const extra = { account: { startingBalance: 50_000, dailyLossLimit: 300 }, outputs: { equity: 'per-trade' } };
    const whole = await executeBacktest(configOf(files, strategy, extra, false), 'run');
    const streamed = await executeBacktest(configOf(files, strategy, extra, true), 'run');
    expect(whole.report.streamed).toBeUndefined();
    expect(streamed.report.streamed?.count).toBe(bars.time.length);
    expect(streamed.history.description).toContain('streamed');
    expect(streamed.result.gaps.length).toBeGreaterThan(0);
    expect(streamed.result.violations.length).toBeGreaterThan(0);
    expect(streamed.report.notes?.[0]).toMatch(/plots .* left out/);
    expectSameRun(whole, streamed);
    await expectSameFiles(whole, streamed);
  });

  it('equals the whole run when its orders, fills and trades fill many blocks of columns, parked in a file as the run goes', async () => {
    const bars = syntheticBars({
      seed: 3,
      grid: contract.grid,
      startPrice: 5000,
      start: Date.UTC(2025, 0, 6),
      sessions: 8,
    });
    const files = imported(bars);
    // A cross every few bars: several blocks of 1,024 orders, fills and trades.
    const strategy = { name: 'sma-cross', params: { fast: 2, slow: 3 } };
    const extra = { account: { startingBalance: 1_000_000 } };
    const whole = await executeBacktest(configOf(files, strategy, extra, false), 'run');
    const streamed = await executeBacktest(configOf(files, strategy, extra, true), 'run');
    expect(streamed.report.streamed?.count).toBe(bars.time.length);
    expect(whole.result.trades.length).toBeGreaterThan(3 * 1_024);
    expectSameRun(whole, streamed);
    expect(streamed.result.orders).toEqual(whole.result.orders);
    await expectSameFiles(whole, streamed);
  });

  it('equals the whole run for random histories, gaps, chunk sizes, timeframes, strategies and outputs', async () => {
    const base = syntheticBars({
      seed: 9,
      grid: contract.grid,
      startPrice: 5000,
      start: Date.UTC(2025, 5, 1),
      sessions: 5,
    });
    const n = base.time.length;
    const cut = fc
      .tuple(fc.integer({ min: 1, max: n - 2 }), fc.integer({ min: 1, max: 2000 }))
      .map(([from, length]) => [from, Math.min(n - 1, from + length)] as const);
    const strategy = fc.oneof(
      ...STRATEGIES.map((s) => s.params.map((params) => ({ name: s.name, params: params as Record<string, unknown> }))),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(cut, { maxLength: 3 }),
        strategy,
        fc.oneof(fc.integer({ min: 1, max: 40 }), fc.integer({ min: 41, max: 10_000 })),
        fc.record({
          equity: fc.constantFrom('daily', 'per-trade', 'per-bar'),
          gapHours: fc.constantFrom(0.5, 2, 96),
          flatten: fc.boolean(),
          dailyLossLimit: fc.option(fc.constantFrom(150, 400), { nil: undefined }),
          fromBar: fc.option(fc.integer({ min: 0, max: n - 1 }), { nil: undefined }),
          maxCandles: fc.integer({ min: 1, max: 500 }),
          minutes: fc.constantFrom(1, 1, 5, 15),
          monthAt: fc.option(fc.integer({ min: 1, max: n - 1 }), { nil: undefined }),
        }),
        async (cuts, chosen, pieceBars, o) => {
          const bars = withoutStretches(base, cuts);
          const months =
            o.monthAt === undefined || o.monthAt >= bars.time.length
              ? []
              : [
                  { contract: 'ESZ5', from: 0 },
                  { contract: 'ESH6', from: o.monthAt },
                ];
          const files = imported(bars, months);
          const extra = {
            timeframe: { unit: 'minute', unitNumber: o.minutes },
            outputs: { equity: o.equity },
            gaps: { longerThanHours: o.gapHours, flatten: o.flatten },
            account: {
              startingBalance: 50_000,
              ...(o.dailyLossLimit === undefined ? {} : { dailyLossLimit: o.dailyLossLimit }),
            },
            ...(o.fromBar === undefined || o.fromBar >= bars.time.length
              ? {}
              : { from: new Date(bars.time[o.fromBar]!).toISOString() }),
          };
          const whole = await executeBacktest(configOf(files, chosen, extra, false), 'run');
          const config = configOf(files, chosen, extra, true);
          // A per-bar equity.csv is written while the run streams, into the folder it is told.
          const outputDir = mkdtempSync(path.join(dir, 'run-'));
          const choice = streamChoice(config, contract, { outputDir });
          if (!choice.stream) throw new Error('expected to stream');
          const { loadStrategy } = await import('../../../src/strategies/index.ts');
          const streamed = runStreamedDefinition(config, 'run', contract, choice, {
            strategy: await loadStrategy(chosen.name),
            pieceBars,
            maxCandles: o.maxCandles,
            outputDir,
          });
          expectSameRun(whole, streamed);
          // Told its folder, the streamed run wrote decisions.csv as it went and kept none; the report's
          // summary of them is the one of the whole run's kept decisions.
          expect(streamed.result.decisions).toHaveLength(0);
          expect(streamed.decisionsFile).toBe(path.join(outputDir, 'decisions.csv'));
          expect(summarizeRunDecisions(streamed.report, streamed.statistics)).toEqual(
            summarizeRunDecisions(whole.report, whole.statistics),
          );
          expect(streamed.report.rolls).toEqual(whole.report.rolls);
          await expectSameFiles(whole, streamed);
          // The chart: the same candles, equity, drawdown and markers (the overlays are what a streamed run leaves
          // out).
          const grid = new PriceGrid(contract.grid.tickSize, contract.grid.tickValue);
          const chartOf = (outcome: BacktestOutcome) => {
            const { overlays: _overlays, ...chart } = chartData(outcome.report, grid, {
              maxCandles: o.maxCandles,
              maxMarkers: 200,
              decisions: [],
            });
            return chart;
          };
          expect(chartOf(streamed)).toEqual(chartOf(whole));
        },
      ),
      { numRuns: 25 },
    );
  }, 240_000);

  it('streams an import above the threshold by default, and a small one only when asked', () => {
    const files = imported(
      syntheticBars({ seed: 1, grid: contract.grid, startPrice: 5000, start: Date.UTC(2025, 2, 2), sessions: 1 }),
    );
    const strategy = { name: 'sma-cross', params: {} };
    const config = (stream?: boolean, extra: Record<string, unknown> = {}) => {
      const c = configOf(files, strategy, extra, true);
      return { ...c, data: { ...c.data, stream } } as BacktestConfig;
    };
    expect(streamChoice(config(), contract, {}).stream).toBe(false);
    expect(streamChoice(config(true), contract, {}).stream).toBe(true);
    expect(streamChoice(config(false), contract, {}).stream).toBe(false);
    expect(STREAM_AUTO_BARS).toBeGreaterThan(1_000_000);
    // Asked to stream where it cannot: it says why, and the whole history runs.
    const perBar = (options: { outputDir?: string }) =>
      streamChoice(config(true, { outputs: { equity: 'per-bar' } }), contract, options);
    expect(perBar({})).toMatchObject({ stream: false, why: expect.stringMatching(/per-bar/) });
    expect(perBar({ outputDir: dir }).stream).toBe(true);
    const twoMonths = imported(
      syntheticBars({ seed: 1, grid: contract.grid, startPrice: 5000, start: Date.UTC(2025, 2, 2), sessions: 1 }),
      [
        { contract: 'ESH5', from: 0 },
        { contract: 'ESM5', from: 100 },
      ],
    );
    // One traded contract over the file's months streams (they are only marked); a continuous one cannot.
    expect(streamChoice(configOf(twoMonths, strategy, {}, true), contract, {}).stream).toBe(true);
    const continuous = configOf(twoMonths, strategy, { contract: 'ES' }, true);
    expect(streamChoice(continuous, configuredContract(continuous), {})).toMatchObject({
      stream: false,
      why: expect.stringMatching(/continuous/),
    });
  });

  it("reads an import chunk by chunk, a bar's time by its index and counts in a range, aggregated or not", () => {
    const n = 300_000;
    const bars = allocateColumns(n);
    for (let i = 0; i < n; i++) {
      // A minute apart, with an hour missing every 1,000 bars.
      bars.time[i] = Date.UTC(2020, 0, 1) + (i + 60 * Math.floor(i / 1000)) * 60_000;
      bars.open[i] = bars.high[i] = bars.low[i] = bars.close[i] = 4000 + (i % 17);
      bars.volume[i] = i % 5;
    }
    const files = imported(bars);
    const cache = new BarCache(files.cache);
    try {
      const chunks = [...cache.importChunks(files.file, n)];
      expect(chunks.length).toBeGreaterThan(1);
      let at = 0;
      for (const chunk of chunks) {
        for (const key of ['time', 'open', 'high', 'low', 'close', 'volume'] as const) {
          const bytes = (column: Float64Array) => Buffer.from(column.buffer, column.byteOffset, column.byteLength);
          expect(bytes(chunk[key]).equals(bytes(bars[key].subarray(at, at + chunk.time.length))), key).toBe(true);
        }
        at += chunk.time.length;
      }
      expect(at).toBe(n);
      for (const index of [0, 262_143, 262_144, 280_001, n - 1])
        expect(cache.importTimeAt(files.file, index)).toBe(bars.time[index]);
      const from = bars.time[123_456]!;
      const to = bars.time[283_210]! + 1;
      expect(cache.importCountIn(files.file, from, to)).toBe(283_210 - 123_456 + 1);
      const fiveMinutes = aggregate(sliceByTime(bars, from, to), { unit: 'minute', unitNumber: 5 }).time.length;
      expect(cache.importCountIn(files.file, from, to, { unit: 'minute', unitNumber: 5 })).toBe(fiveMinutes);
      expect(() => [...cache.importChunks(files.file, n + 1)]).toThrow(/incomplete/);
    } finally {
      cache.close();
    }
  });

  it('rejects an unknown key of the data config', () => {
    expect(() =>
      BacktestConfig.parse({
        strategy: { name: 'sma-cross' },
        contract: 'ESZ5',
        data: { source: 'csv', file: 'x.csv', streaming: true },
      }),
    ).toThrow(/streaming/);
  });
});
