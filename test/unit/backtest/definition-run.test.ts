import { describe, expect, it } from 'vitest';
import { BacktestConfig } from '../../../src/adapters/backtest/backtest-config.ts';
import { runDefinition, strategyOverlays } from '../../../src/adapters/backtest/definition-run.ts';
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
