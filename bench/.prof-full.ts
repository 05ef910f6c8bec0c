import { fullPathBacktest, referenceBars } from './reference.ts';
const bars = referenceBars(1_000_000);
for (let r = 0; r < 12; r++) { const t = performance.now(); fullPathBacktest(bars); console.log((performance.now() - t).toFixed(0)); }
