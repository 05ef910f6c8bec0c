/**
 * Child process of the benchmark: one 1M-bar reference backtest in a fresh process, so the parent's other
 * measurements (the simulator, the grid, earlier runs' garbage, a warmed-up compiler) do not flatter or
 * inflate it. Prints one JSON line: wall time from the bars' source to the result (modules already
 * loaded), the run's fills and order list hash, and the process's peak resident set size.
 *
 *   fresh-run.ts synthetic <bars>              generate the seeded market, then run (figure 6)
 *   fresh-run.ts cache <file> <from> <to>      load the range from the SQLite bar cache, then run (figure 3, cold)
 */
import { readFileSync } from 'node:fs';
import { BarCache } from '../src/data/bar-cache.ts';
import { CONTRACT, MINUTE, fullPathBacktest, referenceBars } from './reference.ts';
import { raiseInliningBudget } from '../src/cli/compiler-budget.ts';

// A run as the command line makes it.
raiseInliningBudget();

/**
 * The process's own peak resident set (KiB): /proc/self/status's VmHWM where there is one, since on Linux
 * `maxRSS` also counts the parent's resident set at the fork (the bench holds its generated bars then), as
 * report-rss.cjs says for the command's child.
 */
function peakRssKiB(): number {
  try {
    const hwm = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
    if (hwm !== null) return Number(hwm[1]);
  } catch {
    // No /proc (not Linux): maxRSS it is.
  }
  return process.resourceUsage().maxRSS;
}

const [mode, ...rest] = process.argv.slice(2);
const baselineKiB = peakRssKiB();
const start = performance.now();
let run;
if (mode === 'synthetic') {
  const count = Number(rest[0]);
  if (!Number.isInteger(count) || count < 1)
    throw new RangeError(`bar count must be a positive whole number, got ${rest[0]}`);
  run = fullPathBacktest(referenceBars(count));
} else if (mode === 'cache') {
  const [file, from, to] = [rest[0]!, Number(rest[1]), Number(rest[2])];
  const cache = new BarCache(file);
  try {
    const key = { contractId: CONTRACT.id, timeframe: MINUTE, live: false };
    if (cache.missing(key, from, to).length > 0) throw new RangeError(`${file} does not cover the range asked for`);
    run = fullPathBacktest(cache.load(key, CONTRACT.grid, from, to));
  } finally {
    cache.close();
  }
} else {
  throw new RangeError(`mode must be 'synthetic' or 'cache', got '${mode}'`);
}
const ms = performance.now() - start;
process.stdout.write(
  `${JSON.stringify({ mode, ms, bars: run.bars, fills: run.fills.length, orderListHash: run.orderListHash, baselineKiB, maxRssKiB: peakRssKiB() })}\n`,
);
