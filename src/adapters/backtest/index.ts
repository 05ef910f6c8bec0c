/** The backtest adapter's surface: run a backtest from a definition and read its results (src/optimize/index.ts adds the sweeps: together they are `tickline/backtest`). */
export * from './backtest-config.ts';
export { executeBacktest } from './execute.ts';
export {
  BacktestDataError,
  loadHistory,
  type BacktestOutcome,
  type ExecuteOptions,
  type History,
  type HistoryOptions,
} from './definition-run.ts';
export { writeBacktestOutputs, type WrittenFiles } from './result-files.ts';
export { runBacktest, type BacktestRunInput, type BacktestRunResult, type BacktestViolation } from './run.ts';
export { orderListHash } from './order-list-hash.ts';
export { resolveContract, UnknownContractError, type BacktestContract, type ContractInput } from './contract.ts';
export { syntheticBars, type SyntheticMarketOptions } from '../../data/synthetic-bars.ts';
export { CsvBarsError, parseCsvBars, readCsvBars, type CsvBars, type CsvProblem } from '../../data/csv.ts';
export { aggregate, sliceByIndex, sliceByTime } from '../../data/columns.ts';
export { builtinStrategies, builtinStrategyNames, loadStrategy } from '../../strategies/index.ts';
export * from '../../report/index.ts';
