/** The backtest hands its engine's trading day (`risk.tradingDay`) to the report, whatever the time zone. */
import { describe, expect, it } from 'vitest';
import { executeBacktest } from '../../../src/adapters/backtest/execute.ts';
import { BacktestConfig } from '../../../src/adapters/backtest/backtest-config.ts';
import { TradingCalendar } from '../../../src/engine/trading-day.ts';

const LONDON_MORNING = { timeZone: 'Europe/London', startsAt: '09:00' };

function countBy<T>(items: readonly T[], key: (item: T) => string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const item of items) counts[key(item)] = (counts[key(item)] ?? 0) + 1;
  return counts;
}

describe('backtest report trading day', () => {
  it('cuts the daily records on the configured risk.tradingDay boundary, not 17:00 Chicago', async () => {
    const config = BacktestConfig.parse({
      strategy: { name: 'sma-cross', params: { fast: 3, slow: 8 } },
      contract: 'MESZ5',
      data: { source: 'synthetic', seed: 5, sessions: 3, start: '2025-03-02T00:00:00Z' },
      risk: { tradingDay: LONDON_MORNING },
    });
    const outcome = await executeBacktest(config, 'london-day', { recordEquity: true });
    expect(outcome.report.tradingDay).toEqual(LONDON_MORNING);

    const london = new TradingCalendar(LONDON_MORNING);
    const chicago = new TradingCalendar();
    const trades = outcome.result.trades;
    expect(trades.length).toBeGreaterThan(10);
    const tradesPerDay = countBy(trades, (t) => london.dayOf(t.exitTime));
    const daily = outcome.statistics.daily.filter((d) => d.totalTrades > 0);
    expect(Object.fromEntries(daily.map((d) => [d.tradeDay.slice(0, 10), d.totalTrades]))).toEqual(tradesPerDay);
    // The two boundaries group these trades differently, so the check above tells them apart.
    expect(countBy(trades, (t) => chicago.dayOf(t.exitTime))).not.toEqual(tradesPerDay);
  });
});
