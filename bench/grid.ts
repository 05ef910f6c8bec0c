/**
 * Figure 7: a grid of 64 parameter sets of the reference strategy through the backtest's own sweep
 * machinery (`runSweep` of src/optimize/grid-sweep.ts, what `tickline optimize` runs): once in this
 * thread, one run after another, and once on 2 lanes (two pool threads running the compiled JavaScript
 * of dist/, the history in shared memory, this thread handing out jobs), on the generated 1 M bars and on the ES
 * file. Both must give the same order list hash and net PnL for every parameter set.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { BacktestConfig } from '../src/adapters/backtest/backtest-config.ts';
import { gridCombinations, runSweep, type Job, type JobResult, type SweepContext } from '../src/optimize/grid-sweep.ts';
import { SweepPool } from '../src/optimize/sweep-pool.ts';
import { readCsvBars } from '../src/data/csv.ts';
import type { BarColumns } from '../src/engine/types.ts';
import { CONTRACT, MINUTE } from './reference.ts';

/** fast 4..18 by 2 x slow 20..90 by 10: sixty-four sets around the reference's 10/30. */
export const GRID = { fast: [4, 6, 8, 10, 12, 14, 16, 18], slow: [20, 30, 40, 50, 60, 70, 80, 90] } as const;

/** The two lanes: two pool threads (this thread hands out the jobs). */
export const LANES = 2;

/** The shared ES minute file beside the repository (CI clones shared/ next to it); undefined without it. */
export function esBars(): BarColumns | undefined {
  const file = path.resolve(import.meta.dirname, '../../shared/data/es-minute-lean.csv');
  return existsSync(file) ? readCsvBars(file, CONTRACT.grid).bars : undefined;
}

export function gridContext(bars: BarColumns, description: string): { context: SweepContext; jobs: Job[] } {
  const config = BacktestConfig.parse({
    name: 'bench-grid',
    strategy: { name: 'sma-cross', params: { size: 1 } },
    contract: 'ESZ5',
    data: { source: 'synthetic' },
    account: { startingBalance: 50_000 },
    fills: { slippageTicks: 0, stopSlippageTicks: 0, feePerContractPerSide: 0 },
  });
  const history = { bars, timeframe: MINUTE, description };
  const jobs = gridCombinations(GRID).map((params, index): Job => ({ index, params, sample: 'all' }));
  return { context: { config, name: 'bench-grid', samples: { all: history, in: undefined, out: undefined } }, jobs };
}

export interface GridTiming {
  readonly ms: number;
  readonly cpuMs: number;
  readonly results: JobResult[];
}

/**
 * One sweep: wall time, and CPU time of the whole process (every thread: the workers', and V8's garbage
 * collection and compiler helpers, which is why even the sequential sweep uses more than one core).
 * `pool`: run on it (already warm); otherwise a parallel sweep starts its own pool inside the timing.
 */
export async function runGrid(
  bars: BarColumns,
  description: string,
  workers: number,
  pool?: SweepPool,
): Promise<GridTiming> {
  const { context, jobs } = gridContext(bars, description);
  const cpu = process.cpuUsage();
  const start = performance.now();
  const results = await runSweep(context, jobs, { workers, forcePool: workers > 1, ...(pool ? { pool } : {}) });
  const ms = performance.now() - start;
  const used = process.cpuUsage(cpu);
  return { ms, cpuMs: (used.user + used.system) / 1000, results };
}

/**
 * Pool threads started and warmed before a timing: their modules loaded and the whole grid run once on (at
 * most 20,000 of) the bars, as a search's earlier sweeps leave them. A few jobs left the once-a-run code
 * (engine set-up, statistics) to the interpreter, where the sequential sweep it is compared with, in this
 * warm thread, runs it compiled.
 */
export async function warmPool(bars: BarColumns): Promise<SweepPool> {
  const pool = new SweepPool(LANES, 'sma-cross');
  const { context, jobs } = gridContext(bars.time.length > 20_000 ? sliceHead(bars, 20_000) : bars, 'warm-up');
  await runSweep(context, jobs, { workers: LANES, pool, forcePool: true });
  return pool;
}

function sliceHead(bars: BarColumns, n: number): BarColumns {
  return {
    time: bars.time.subarray(0, n),
    open: bars.open.subarray(0, n),
    high: bars.high.subarray(0, n),
    low: bars.low.subarray(0, n),
    close: bars.close.subarray(0, n),
    volume: bars.volume.subarray(0, n),
  };
}

/** The timing of median wall time. */
export function medianTiming(timings: readonly GridTiming[]): GridTiming {
  return [...timings].sort((a, b) => a.ms - b.ms)[timings.length >> 1]!;
}

/** The first parameter set whose outcome differs between two sweeps, or undefined. */
export function compareGrids(a: readonly JobResult[], b: readonly JobResult[]): string | undefined {
  if (a.length !== b.length) return `grid sizes differ: ${a.length} vs ${b.length}`;
  for (let k = 0; k < a.length; k++) {
    const x = a[k]!;
    const y = b[k]!;
    if (x.error !== undefined || y.error !== undefined)
      return `parameter set ${JSON.stringify(x.params)} failed: ${x.error ?? y.error}`;
    if (x.summary?.orderListHash !== y.summary?.orderListHash || x.summary?.netPnl !== y.summary?.netPnl) {
      return `parameter set ${JSON.stringify(x.params)} differs between the sequential and the parallel sweep: net PnL ${x.summary?.netPnl} vs ${y.summary?.netPnl}, order list hash ${x.summary?.orderListHash.slice(0, 12)} vs ${y.summary?.orderListHash.slice(0, 12)}`;
    }
  }
  return undefined;
}
