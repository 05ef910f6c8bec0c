import { runJob } from '../src/adapters/backtest/optimize.ts';
import { gridContext } from './grid.ts';
import { referenceBars, fullPathBacktest } from './reference.ts';
const bars = referenceBars(1_000_000);
const { context, jobs } = gridContext(bars);
for (let r = 0; r < 5; r++) { let t = performance.now(); await runJob(context, jobs[5]!); const a = performance.now() - t; t = performance.now(); fullPathBacktest(bars); console.log('job', a.toFixed(0), 'full', (performance.now() - t).toFixed(0)); }
