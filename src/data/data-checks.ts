/**
 * Checks of a history against what its config says, worded as warnings: the run goes on, but a quant
 * whose file holds five-minute bars under `timeframe: 1m` should hear about it before reading results.
 */
import { nominalMs, timeframeLabel } from '../engine/timeframe.ts';
import type { BarColumns, Timeframe } from '../engine/types.ts';

/** Steps looked at: enough to find the usual spacing, few enough to cost nothing on a long history. */
export const SAMPLE_STEPS = 100_000;

/** The most frequent step between consecutive bars (ms), or undefined with fewer than two bars. */
export function usualSpacing(bars: Pick<BarColumns, 'time'>): number | undefined {
  const counts = new Map<number, number>();
  const n = Math.min(bars.time.length, SAMPLE_STEPS + 1);
  for (let i = 1; i < n; i++) {
    const step = bars.time[i]! - bars.time[i - 1]!;
    counts.set(step, (counts.get(step) ?? 0) + 1);
  }
  let best: number | undefined;
  let bestCount = 0;
  for (const [step, count] of counts) {
    if (count > bestCount || (count === bestCount && step < best!)) {
      best = step;
      bestCount = count;
    }
  }
  return best;
}

/**
 * A warning when the bars are usually spaced otherwise than the configured timeframe (months and weeks
 * vary in length, so only a spacing shorter than the timeframe's is reported for them).
 */
export function spacingWarning(
  bars: Pick<BarColumns, 'time'>,
  timeframe: Timeframe,
  source: string,
): string | undefined {
  const spacing = usualSpacing(bars);
  if (spacing === undefined) return undefined;
  const expected = nominalMs(timeframe);
  const variable = timeframe.unit === 'month' || timeframe.unit === 'week';
  if (variable ? spacing >= expected * 0.9 : spacing === expected) return undefined;
  return `${source}: its bars are usually ${formatSpacing(spacing)} apart, but the data's timeframe is ${timeframeLabel(timeframe)} (set data.timeframe to what the file holds)`;
}

function formatSpacing(ms: number): string {
  if (ms % 86_400_000 === 0) return `${ms / 86_400_000}d`;
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000}h`;
  if (ms % 60_000 === 0) return `${ms / 60_000}m`;
  return `${ms / 1000}s`;
}
