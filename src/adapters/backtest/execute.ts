/**
 * A backtest from its definition: streamed from the bar cache (streamed.ts) when the history is an import
 * too large to hold, else run over its whole history (definition-run.ts); then its statistics. The
 * `backtest` and `optimize` commands are thin shells around this module.
 */
import { computeStatistics } from '../../report/statistics.ts';
import { loadStrategy } from '../../strategies/index.ts';
import type { BacktestConfig } from './backtest-config.ts';
import { configuredContract, runDefinition, type BacktestOutcome, type ExecuteOptions } from './definition-run.ts';
import { runStreamedDefinition, streamChoice } from './streamed.ts';

/** Load, run and compute statistics; writes nothing. */
export async function executeBacktest(
  config: BacktestConfig,
  name: string,
  options: ExecuteOptions = {},
): Promise<BacktestOutcome> {
  const contract = configuredContract(config);
  const choice = streamChoice(config, contract, options);
  if (choice.stream) {
    const strategy = options.strategy ?? (await loadStrategy(config.strategy.name, options.cwd));
    return runStreamedDefinition(config, name, contract, choice, { ...options, strategy });
  }
  const run = await runDefinition(config, name, options);
  // A run that gathered its figures as its bars passed has its statistics already, and no curve to read.
  const statistics = run.statistics ?? computeStatistics(run.report, config.gaps.longerThanHours * 3_600_000);
  if (choice.why !== undefined) {
    options.logger?.warn(choice.why);
    return { ...run, warnings: [choice.why, ...run.warnings], statistics };
  }
  return { ...run, statistics };
}
