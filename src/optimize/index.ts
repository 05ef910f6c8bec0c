/**
 * `tickline/backtest`: run a backtest from a definition, read its results, sweep parameters. The package's
 * entry point lives here because the sweeps sit on top of the backtest adapter: this surface gathers both
 * without the adapter importing upward.
 */
export * from '../adapters/backtest/index.ts';
export {
  METRICS,
  SweepError,
  gridCombinations,
  rank,
  runJob,
  runSweep,
  splitHistory,
  summarize,
  type Grid,
  type Job,
  type JobResult,
  type Metric,
  type RunSummary,
  type SweepContext,
  type SweepOptions,
  type WarmUpReport,
} from './grid-sweep.ts';
export { SweepPool } from './sweep-pool.ts';
export { SEARCHES, runSearch, search, type SearchMethod, type SweepSearchOptions } from './search.ts';
export {
  WINDOW_MODES,
  WalkForwardError,
  runWalkForward,
  walkForwardFolds,
  type Fold,
  type FoldPlan,
  type FoldResult,
  type WalkForwardOptions,
  type WalkForwardResult,
  type WindowMode,
} from './walk-forward.ts';
