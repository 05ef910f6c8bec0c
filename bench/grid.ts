/**
 * Figure 7: a grid of 16 parameter sets of the reference strategy through the backtest's own sweep
 * machinery (`runSweep` of src/adapters/backtest/optimize.ts, what `tickline optimize` runs): once in this
 * thread, one run after another, and once in parallel (one lane per core: this thread and worker threads,
 * the history in shared memory).
 * Both must give the same order list hash and net PnL for every parameter set.
 */
import { availableParallelism } from 'node:os';
import { BacktestConfig } from '../src/adapters/backtest/config.ts';
import { gridCombinations, runSweep, type Job, type JobResult, type SweepContext } from '../src/adapters/backtest/optimize.ts';
import type { BarColumns } from '../src/engine/types.ts';
import { MINUTE } from './reference.ts';

/** fast 5..20 by 5 x slow 30..60 by 10: sixteen sets around the reference's 10/30. */
export const GRID = { fast: [5, 10, 15, 20], slow: [30, 40, 50, 60] } as const;

export function gridContext(bars: BarColumns): { context: SweepContext; jobs: Job[] } {
  const config = BacktestConfig.parse({
    name: 'bench-grid',
    strategy: { name: 'sma-cross', params: { size: 1 } },
    contract: 'ESZ5',
    data: { source: 'synthetic' },
    account: { startingBalance: 50_000 },
    fills: { slippageTicks: 0, stopSlippageTicks: 0, feePerContractPerSide: 0 },
  });
  const history = { bars, timeframe: MINUTE, description: 'bench: seeded synthetic market' };
  const jobs = gridCombinations(GRID).map((params, index): Job => ({ index, params, sample: 'all' }));
  return { context: { config, name: 'bench-grid', samples: { all: history, in: undefined, out: undefined } }, jobs };
}

/**
 * One sweep: wall time, and CPU time of the whole process (every thread: the workers', and V8's garbage
 * collection and compiler helpers, which is why even the sequential sweep uses more than one core).
 */
export async function runGrid(bars: BarColumns, workers: number): Promise<{ ms: number; cpuMs: number; results: JobResult[] }> {
  const { context, jobs } = gridContext(bars);
  const cpu = process.cpuUsage();
  const start = performance.now();
  const results = await runSweep(context, jobs, { workers });
  const ms = performance.now() - start;
  const used = process.cpuUsage(cpu);
  return { ms, cpuMs: (used.user + used.system) / 1000, results };
}

export const PARALLEL_WORKERS = availableParallelism();

/** The first parameter set whose outcome differs between two sweeps, or undefined. */
export function compareGrids(a: readonly JobResult[], b: readonly JobResult[]): string | undefined {
  if (a.length !== b.length) return `grid sizes differ: ${a.length} vs ${b.length}`;
  for (let k = 0; k < a.length; k++) {
    const x = a[k]!;
    const y = b[k]!;
    if (x.error !== undefined || y.error !== undefined) return `parameter set ${JSON.stringify(x.params)} failed: ${x.error ?? y.error}`;
    if (x.summary?.orderListHash !== y.summary?.orderListHash || x.summary?.netPnl !== y.summary?.netPnl) {
      return `parameter set ${JSON.stringify(x.params)} differs between the sequential and the parallel sweep: net PnL ${x.summary?.netPnl} vs ${y.summary?.netPnl}, order list hash ${x.summary?.orderListHash.slice(0, 12)} vs ${y.summary?.orderListHash.slice(0, 12)}`;
    }
  }
  return undefined;
}
