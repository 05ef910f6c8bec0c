/**
 * Child process of the benchmark (figure 6): generates the 1,000,000 bars and runs the reference backtest
 * once, then prints its peak resident set size as JSON. A fresh process, so the parent's other
 * measurements (the simulator, the grid, earlier runs' garbage) do not inflate it.
 */
import { fullPathBacktest, referenceBars } from './reference.ts';

const count = Number(process.argv[2] ?? 1_000_000);
if (!Number.isInteger(count) || count < 1) throw new RangeError(`bar count must be a positive whole number, got ${process.argv[2]}`);
const baseline = process.resourceUsage().maxRSS;
const bars = referenceBars(count);
const run = fullPathBacktest(bars);
// maxRSS is in kilobytes (KiB).
process.stdout.write(`${JSON.stringify({ bars: run.bars, fills: run.fills.length, baselineKiB: baseline, maxRssKiB: process.resourceUsage().maxRSS })}\n`);
