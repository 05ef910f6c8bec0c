import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { BacktestConfig, executeBacktest, renderSummary, writeBacktestOutputs } from 'tickline/backtest';
import rsiReversion from './strategy.ts';

// The same keys as a backtest YAML file; parse() applies the defaults (50K account, one tick of slippage).
const config = BacktestConfig.parse({
  strategy: { name: rsiReversion.name, params: { period: 10 } },
  contract: 'MES', // a root: the front month at each date of the data
  timeframe: { unit: 'minute', unitNumber: 5 },
  data: { source: 'synthetic', seed: 42, sessions: 5 },
  account: { dailyLossLimit: 1000, maximumLossLimit: { amount: 2000, variant: 'trailingEndOfDay' } },
});

const outcome = await executeBacktest(config, 'rsi-example', { strategy: rsiReversion });
const { result, statistics } = outcome;
console.log(renderSummary(statistics, outcome.report));
console.log(
  `${result.bars} bars, ${result.trades.length} trades, net ${statistics.netPnl.toFixed(2)}, ${result.passed ? 'passed' : 'failed'}`,
);
for (const trade of result.trades.slice(0, 3)) {
  // Prices inside the engine are ticks: the contract's grid converts them.
  const grid = outcome.contract.grid;
  console.log(
    trade.side,
    trade.size,
    grid.toPrice(trade.entryPrice),
    '->',
    grid.toPrice(trade.exitPrice),
    trade.pnl - trade.fees,
  );
}

// trades.csv, equity.csv, summary.json, statistics.json, report.html, ... (the same bytes for the same run)
const written = await writeBacktestOutputs(mkdtempSync(path.join(tmpdir(), 'rsi-example-')), outcome);
console.log(`report: ${written.report}`);

export { outcome };
