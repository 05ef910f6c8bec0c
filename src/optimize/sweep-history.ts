/**
 * The bars of a sweep (the config's history at its timeframe) and its samples: the same for a sweep run in
 * this process, on a pool, or on the queue's workers.
 */
import { configuredContract, historyAt, loadHistory, type History } from '../adapters/backtest/definition-run.ts';
import { splitHistory, type SweepContext } from './grid-sweep.ts';

/** The bars a sweep runs on: the config's history at its timeframe, as a backtest of the config runs on. */
export async function sweepHistory(config: SweepContext['config']): Promise<History> {
  return historyAt(await loadHistory(config, configuredContract(config)), config.timeframe);
}

/** The whole history, or its in-sample and out-of-sample parts under walk-forward. */
export function sweepSamples(history: History, walkForward: number | null): SweepContext['samples'] {
  if (walkForward === null) return { all: history, in: undefined, out: undefined };
  const [inSample, outSample] = splitHistory(history.bars, walkForward);
  return {
    all: undefined,
    in: { ...history, bars: inSample, description: `${history.description} (in-sample)` },
    out: { ...history, bars: outSample, description: `${history.description} (out-of-sample)` },
  };
}
