import { fullPathBacktest, referenceBars } from './reference.ts';
const bars = referenceBars(1_000_000);
const out: string[] = [];
for (let r = 0; r < 5; r++) { const t = performance.now(); fullPathBacktest(bars); out.push((performance.now() - t).toFixed(0)); }
console.log(process.execArgv.join(' '), out.join(' '));
