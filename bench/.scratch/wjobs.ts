import { Worker } from 'node:worker_threads';
import { runJob, shareColumns } from './a/src/adapters/backtest/optimize.ts';
import { gridContext } from './a/bench/grid.ts';
import { referenceBars } from './a/bench/reference.ts';
const bars = shareColumns(referenceBars(Number(process.argv[2])));
const { context, jobs } = gridContext(bars);
const t0 = performance.now();
const w = new Worker(new URL('./a/src/adapters/backtest/optimize-worker.mjs', import.meta.url), { workerData: context });
let k = 0; let t = 0;
const times: string[] = [];
await new Promise<void>((resolve) => {
  w.on('message', (m: any) => {
    if (m.ready) times.push('ready ' + (performance.now() - t0).toFixed(0));
    else times.push((performance.now() - t).toFixed(0));
    if (k >= 8) { void w.terminate().then(() => resolve()); return; }
    t = performance.now(); w.postMessage(jobs[k++]);
  });
});
console.log('worker', times.join(' '));
const main: string[] = [];
for (let j = 0; j < 8; j++) { const t1 = performance.now(); await runJob(context, jobs[j]!); main.push((performance.now() - t1).toFixed(0)); }
console.log('main  ', main.join(' '));
