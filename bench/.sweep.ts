import { runGrid } from './grid.ts';
import { referenceBars } from './reference.ts';
const n = Number(process.argv[2]);
const bars = referenceBars(n);
for (const w of [1, 2, 1, 2]) { const r = await runGrid(bars, w); console.log(w, r.ms.toFixed(0)); }
