import {
  BacktestConfig,
  gridCombinations,
  loadHistory,
  rank,
  resolveContract,
  runSweep,
  type Job,
} from 'tickline/backtest';

// A sweep re-runs one definition with other parameters; the history is loaded once and shared.
const config = BacktestConfig.parse({
  strategy: { name: 'sma-cross' },
  contract: 'MES', // a root: the front month at each date of the data
  data: { source: 'synthetic', seed: 7, sessions: 3 },
});
const history = await loadHistory(config, resolveContract(config.contract));
const combos = gridCombinations({ fast: [5, 10], slow: [20, 40] });
const jobs: Job[] = combos.map((params, index) => ({ index, params, sample: 'all' }));

// workers: lanes in parallel (this thread plus worker threads); 1 runs every job here.
const results = await runSweep(
  { config, name: 'sma-sweep', samples: { all: history, in: undefined, out: undefined } },
  jobs,
  { workers: 1 },
);
const ranked = rank(results, 'sharpe');
for (const r of ranked)
  console.log(JSON.stringify(r.params), r.summary?.sharpe?.toFixed(2) ?? '-', r.summary?.netPnl.toFixed(2));

export { ranked };
