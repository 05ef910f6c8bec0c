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

/**
 * How far the data's typical price may sit from the contract's usual level before it is named: ten times
 * above or below. Markets move (ES from 1,700 in 2013 to 6,000 in 2025, gold from 1,200 to 4,000), but a
 * file of another contract is off by far more (the ES file under `contract: CL`: 1,700 against 60).
 */
export const PRICE_LEVEL_FACTOR = 10;

/**
 * A warning when the data's median close (decimal, from a sample of its closes in ticks) is more than
 * PRICE_LEVEL_FACTOR times above or below the contract's usual price level: a file of another contract,
 * or prices in another unit (cents, or a multiplier applied twice).
 */
export function priceLevelWarning(
  closeTicks: ArrayLike<number>,
  tickSize: number,
  contract: { readonly name: string; readonly startPrice: number | undefined },
  source: string,
): string | undefined {
  const usual = contract.startPrice;
  if (usual === undefined || !(usual > 0) || closeTicks.length === 0) return undefined;
  const n = Math.min(closeTicks.length, SAMPLE_STEPS);
  const step = closeTicks.length / n;
  const sample: number[] = [];
  for (let i = 0; i < n; i++) sample.push(closeTicks[Math.floor(i * step)]!);
  sample.sort((a, b) => a - b);
  const median = sample[Math.floor(sample.length / 2)]! * tickSize;
  if (!(median > 0)) return undefined;
  if (median <= usual * PRICE_LEVEL_FACTOR && median >= usual / PRICE_LEVEL_FACTOR) return undefined;
  return `${source}: its prices are around ${formatLevel(median)}, but ${contract.name} usually trades around ${formatLevel(usual)}: is this the contract's data (check contract: and the file's price unit)?`;
}

function formatLevel(price: number): string {
  return price.toLocaleString('en-US', { maximumSignificantDigits: 4 });
}
