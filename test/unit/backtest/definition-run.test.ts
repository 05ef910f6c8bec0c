import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BacktestConfig } from '../../../src/adapters/backtest/backtest-config.ts';
import { runDefinition, strategyOverlays } from '../../../src/adapters/backtest/definition-run.ts';
import { executeBacktest } from '../../../src/adapters/backtest/execute.ts';
import { writeBacktestOutputs } from '../../../src/adapters/backtest/result-files.ts';
import { decisionLines, summarizeRunDecisions } from '../../../src/report/decisions.ts';
import { Observable } from 'rxjs';
import { z } from 'zod';
import { defineStrategy, target } from '../../../src/engine/index.ts';
import type { Intent } from '../../../src/engine/types.ts';
import guarded from './fixtures/guarded-strategy.ts';
import { barsPerCandle, candleValues } from '../../../src/report/chart-data.ts';
import { DEFAULT_MAX_POINTS, renderReport } from '../../../src/report/html.ts';
import { loadStrategy } from '../../../src/strategies/index.ts';

describe('a definition run', () => {
  it("keeps the strategy's plots at the report's candles, and the report is the one the plots of every bar give", async () => {
    // 20 sessions of one-minute bars: more than the chart's candles, so several bars a candle.
    const config = BacktestConfig.parse({
      strategy: { name: 'sma-cross', params: { fast: 5, slow: 20 } },
      contract: 'ESZ5',
      data: { source: 'synthetic', seed: 3, sessions: 20 },
      account: { startingBalance: 50_000 },
    });
    const run = await runDefinition(config, 'plots');
    const bars = run.history.bars;
    const k = barsPerCandle(bars.time.length, DEFAULT_MAX_POINTS);
    expect(k).toBeGreaterThan(1);
    const strategy = await loadStrategy('sma-cross');
    const chunk = { ...bars, contractId: run.contract.id, timeframe: config.timeframe, length: bars.time.length };
    const everyBar = strategyOverlays(strategy, { fast: 5, slow: 20 }, chunk);
    expect(run.report.overlays).toEqual(
      everyBar.map((o) => ({ ...o, values: candleValues(o.values, k), barsPerValue: k })),
    );
    expect(renderReport(run.report)).toBe(renderReport({ ...run.report, overlays: everyBar }));
  });
});

/** Turns its position every 40 bars, and throws at its 2,000th bar. */
const failing = defineStrategy({
  name: 'failing',
  params: z.strictObject({}),
  run: (ctx) =>
    new Observable<Intent>((subscriber) => {
      let index = 0;
      return ctx.barRecords().subscribe(() => {
        index++;
        if (index === 2000) throw new Error('failing strategy: bar 2000');
        if (index % 40 === 0) subscriber.next(target(index % 80 === 0 ? 1 : -1));
      });
    }),
});

describe('decisions.csv written while the run goes', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'tickline-definition-run-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('gives the files, report and summary lines of a run that kept its decisions and equity curve, and keeps neither', async () => {
    const cases = [
      { strategy: { name: 'sma-cross', params: { fast: 3, slow: 9 } }, risk: {} },
      // Pieces cut small, each session's close a gap (flattened), every bar's equity in equity.csv.
      {
        strategy: { name: 'sma-cross', params: { fast: 3, slow: 9 } },
        risk: {},
        extra: { gaps: { longerThanHours: 0.5 }, outputs: { equity: 'per-bar' } },
        pieceBars: 37,
      },
      { strategy: { name: 'mean-reversion', params: {} }, risk: {}, extra: { outputs: { equity: 'per-trade' } } },
      { strategy: { name: 'breakout', params: {} }, risk: { maxPositionSize: 1 }, pieceBars: 500 },
      // Refusals of every kind and a strategy that stops trading: the summary's firsts and warning.
      { strategy: { name: 'guarded', params: {} }, risk: { maxPositionSize: 1 }, module: guarded },
      // A strategy that fails half way: what ran is the result, the bars after it pass without equity.
      { strategy: { name: 'failing', params: {} }, risk: {}, module: failing, pieceBars: 300 },
      // Orders, fills and trades over several blocks of columns, the full ones parked in the run's spill file.
      {
        strategy: { name: 'sma-cross', params: { fast: 2, slow: 3 } },
        risk: {},
        extra: { data: { source: 'synthetic', seed: 5, sessions: 8, startPrice: 6700 } },
        manyBlocks: true,
      },
    ];
    for (const [k, c] of cases.entries()) {
      const config = BacktestConfig.parse({
        strategy: c.strategy,
        contract: 'MESZ5',
        data: { source: 'synthetic', seed: 11 + k, sessions: 3, startPrice: 6700 },
        account: { startingBalance: 50_000 },
        risk: c.risk,
        ...c.extra,
      });
      const options = {
        ...(c.module === undefined ? {} : { strategy: c.module }),
        ...(c.pieceBars === undefined ? {} : { pieceBars: c.pieceBars }),
      };
      const kept = await executeBacktest(config, 'd', options);
      const out = path.join(dir, `case-${k}`);
      const streamed = await executeBacktest(config, 'd', { ...options, outputDir: path.join(out, 'streamed') });
      if (c.module === failing) expect(kept.result.failure?.message).toContain('bar 2000');
      expect(kept.result.decisions.length).toBeGreaterThan(0);
      expect(streamed.result.decisions).toHaveLength(0);
      expect(kept.report.equity.equity.length).toBe(kept.result.bars);
      expect(streamed.report.equity.equity).toHaveLength(0);
      if (k === 1) expect(kept.result.gaps.length).toBeGreaterThan(0);
      if (c.manyBlocks === true) expect(streamed.result.trades.length).toBeGreaterThan(3 * 1_024);
      await writeBacktestOutputs(path.join(out, 'kept'), kept);
      await writeBacktestOutputs(path.join(out, 'streamed'), streamed);
      // Written elsewhere than the run was told: the file is copied.
      await writeBacktestOutputs(path.join(out, 'moved'), streamed);
      const files = readdirSync(path.join(out, 'kept')).sort();
      expect(readdirSync(path.join(out, 'streamed')).sort()).toEqual(files);
      for (const name of files)
        for (const other of ['streamed', 'moved'])
          expect(readFileSync(path.join(out, other, name), 'utf8'), `${c.strategy.name} ${other}/${name}`).toBe(
            readFileSync(path.join(out, 'kept', name), 'utf8'),
          );
      const lines = (o: typeof kept) => decisionLines(summarizeRunDecisions(o.report, o.statistics));
      expect(lines(streamed)).toEqual(lines(kept));
      expect(summarizeRunDecisions(streamed.report, streamed.statistics)).toEqual(
        summarizeRunDecisions(kept.report, kept.statistics),
      );
    }
  });
});
