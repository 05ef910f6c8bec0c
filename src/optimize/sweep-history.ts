/**
 * The bars of a sweep (the config's history at its timeframe) and its samples: the same for a sweep run in
 * this process, on a pool, or on the queue's workers.
 */
import { configuredContract, loadHistory, type History } from '../adapters/backtest/definition-run.ts';
import { aggregate } from '../data/columns.ts';
import { alignToBuckets } from '../data/continuous.ts';
import { timeframeLabel } from '../engine/timeframe.ts';
import { splitHistory, type SweepContext } from './grid-sweep.ts';

/** The bars a sweep runs on: the config's history at its timeframe. */
export async function sweepHistory(config: SweepContext['config']): Promise<History> {
  const history = await loadHistory(config, configuredContract(config));
  if (timeframeLabel(history.timeframe) === timeframeLabel(config.timeframe)) return history;
  // As executeBacktest does: no aggregated bar may hold two contract months.
  const aligned =
    history.segments !== undefined && history.segments.length > 1
      ? alignToBuckets(history.bars, history.segments, config.timeframe)
      : undefined;
  const source = aligned === undefined ? history : { ...history, bars: aligned.bars, segments: aligned.segments };
  return { ...source, bars: aggregate(source.bars, config.timeframe), timeframe: config.timeframe };
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
