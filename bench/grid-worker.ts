/**
 * One worker of the parameter grid (figure 7). The bars arrive as a SharedArrayBuffer (no copy); the
 * parameter sets are claimed one at a time from a shared counter, so a worker that starts late or runs
 * slow simply takes fewer: the grid ends when the last run does, not when the slowest share does.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { fullPathBacktest, type ReferenceParams } from './reference.ts';
import { gridColumns, type GridJob, type GridOutcome } from './grid.ts';

const job = workerData as GridJob;
const bars = gridColumns(job.bars, job.count);
const next = new Int32Array(job.counter);
parentPort!.postMessage({ kind: 'ready' });
parentPort!.on('message', (message: { kind: 'start' }) => {
  if (message.kind !== 'start') return;
  const outcomes: GridOutcome[] = [];
  for (;;) {
    const k = Atomics.add(next, 0, 1);
    if (k >= job.params.length) break;
    const params: ReferenceParams = job.params[k]!;
    const run = fullPathBacktest(bars, params);
    outcomes.push({ index: k, fills: run.fills.length, realizedPnl: run.realizedPnl, orderListHash: run.orderListHash });
  }
  parentPort!.postMessage({ kind: 'done', outcomes });
});
