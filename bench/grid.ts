/**
 * Figure 7: a grid of 16 parameter sets of the reference strategy, run one after another in this process
 * and in parallel on worker threads (one per core). Both must give the same fills, PnL and order list
 * hash per parameter set.
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { BarColumns } from '../src/adapters/backtest/sources/columns.ts';
import { fullPathBacktest, type ReferenceParams } from './reference.ts';

/** fast 5..20 by 5 x slow 30..60 by 10: sixteen sets around the reference's 10/30. */
export function gridParams(): ReferenceParams[] {
  const out: ReferenceParams[] = [];
  for (const fast of [5, 10, 15, 20]) for (const slow of [30, 40, 50, 60]) out.push({ fast, slow });
  return out;
}

export interface GridJob {
  readonly entry: string;
  /** Six float64 columns of `count` bars, one after another. */
  readonly bars: SharedArrayBuffer;
  readonly count: number;
  readonly params: readonly ReferenceParams[];
  /** Int32 counter: the next parameter set to claim. */
  readonly counter: SharedArrayBuffer;
}

export interface GridOutcome {
  readonly index: number;
  readonly fills: number;
  readonly realizedPnl: number;
  readonly orderListHash: string;
}

export function shareColumns(bars: BarColumns): { buffer: SharedArrayBuffer; count: number } {
  const count = bars.time.length;
  const buffer = new SharedArrayBuffer(count * 6 * 8);
  [bars.time, bars.open, bars.high, bars.low, bars.close, bars.volume].forEach((column, k) => new Float64Array(buffer, k * count * 8, count).set(column));
  return { buffer, count };
}

export function gridColumns(buffer: SharedArrayBuffer, count: number): BarColumns {
  const column = (k: number) => new Float64Array(buffer, k * count * 8, count);
  return { time: column(0), open: column(1), high: column(2), low: column(3), close: column(4), volume: column(5) };
}

export function runGridSequential(bars: BarColumns, params: readonly ReferenceParams[]): GridOutcome[] {
  return params.map((p, index) => {
    const run = fullPathBacktest(bars, p);
    return { index, fills: run.fills.length, realizedPnl: run.realizedPnl, orderListHash: run.orderListHash };
  });
}

export interface GridPool {
  /** Time from creating the workers until every one had loaded its modules. */
  readonly startupMs: number;
  /** Run the whole grid once on the pool; each worker starts as soon as it is ready. */
  round(): Promise<GridOutcome[]>;
  close(): Promise<void>;
}

/**
 * Start `size` workers and run the first round at once (a worker starts claiming runs the moment it has
 * loaded, so the round's time includes the start-up, as a fresh optimizer's would).
 */
export async function startGridPool(bars: BarColumns, params: readonly ReferenceParams[], size = availableParallelism()): Promise<{ pool: GridPool; first: GridOutcome[]; firstMs: number }> {
  const shared = shareColumns(bars);
  const counter = new SharedArrayBuffer(4);
  const job: GridJob = { entry: new URL('./grid-worker.ts', import.meta.url).href, bars: shared.buffer, count: shared.count, params, counter };
  const started = performance.now();
  let readyCount = 0;
  let startupMs = 0;
  const workers = Array.from({ length: size }, () => new Worker(new URL('./worker-entry.mjs', import.meta.url), { workerData: job }));

  const collect = (worker: Worker): Promise<GridOutcome[]> =>
    new Promise((resolve, reject) => {
      const onMessage = (message: { kind: 'ready' } | { kind: 'done'; outcomes: GridOutcome[] }) => {
        if (message.kind === 'ready') {
          readyCount++;
          if (readyCount === size) startupMs = performance.now() - started;
          worker.postMessage({ kind: 'start' });
          return;
        }
        worker.off('message', onMessage);
        worker.off('error', reject);
        resolve(message.outcomes);
      };
      worker.on('message', onMessage);
      worker.once('error', reject);
    });
  const merge = (parts: GridOutcome[][]) => parts.flat().sort((a, b) => a.index - b.index);

  const first = merge(await Promise.all(workers.map(collect)));
  const firstMs = performance.now() - started;
  const pool: GridPool = {
    startupMs,
    async round() {
      new Int32Array(counter).fill(0);
      const parts = workers.map(collect);
      for (const worker of workers) worker.postMessage({ kind: 'start' });
      return merge(await Promise.all(parts));
    },
    async close() {
      await Promise.all(workers.map((w) => w.terminate()));
    },
  };
  return { pool, first, firstMs };
}

/** The first parameter set whose outcomes differ, or undefined. */
export function compareGrids(a: readonly GridOutcome[], b: readonly GridOutcome[], params: readonly ReferenceParams[]): string | undefined {
  if (a.length !== b.length) return `grid sizes differ: ${a.length} vs ${b.length}`;
  for (let k = 0; k < a.length; k++) {
    const x = a[k]!;
    const y = b[k]!;
    if (x.index !== y.index || x.fills !== y.fills || x.realizedPnl !== y.realizedPnl || x.orderListHash !== y.orderListHash) {
      return `parameter set ${JSON.stringify(params[x.index])} differs between sequential and parallel runs`;
    }
  }
  return undefined;
}
