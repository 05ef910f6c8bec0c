/** `tickline/backtest`: run a backtest from a definition, read its results, sweep parameters. */
export * from './config.ts';
export { BacktestDataError, executeBacktest, loadHistory, type BacktestOutcome, type ExecuteOptions, type History, type HistoryOptions } from './backtest.ts';
export { writeBacktestOutputs, type WrittenFiles } from './result-files.ts';
export { runBacktest, type BacktestRunInput, type BacktestRunResult, type BacktestViolation } from './run.ts';
export { orderListHash } from './order-list-hash.ts';
export { resolveContract, UnknownContractError, type BacktestContract, type ContractInput } from './contract.ts';
export { METRICS, SweepError, gridCombinations, rank, runJob, runSweep, splitHistory, summarize, type Grid, type Job, type JobResult, type Metric, type RunSummary, type SweepContext, type SweepOptions } from './optimize.ts';
export { SweepPool } from './sweep-pool.ts';
export { SEARCHES, runSearch, search, type SearchMethod, type SweepSearchOptions } from './search.ts';
export { WINDOW_MODES, WalkForwardError, runWalkForward, walkForwardFolds, type Fold, type FoldPlan, type FoldResult, type WalkForwardOptions, type WalkForwardResult, type WindowMode } from './walk-forward.ts';
export { syntheticBars, type SyntheticMarketOptions } from './sources/synthetic.ts';
export { CsvBarsError, parseCsvBars, readCsvBars, type CsvBars, type CsvProblem } from './sources/csv.ts';
export { aggregate, sliceByIndex, sliceByTime } from './sources/columns.ts';
export { builtinStrategies, builtinStrategyNames, loadStrategy } from '../../strategies/index.ts';
export * from '../../report/index.ts';
