import { runGrid } from './grid.ts';
import { referenceBars } from './reference.ts';
const bars = referenceBars(Number(process.argv[2]));
await runGrid(referenceBars(2000), 1);
const s = await runGrid(bars, 1);
const p = await runGrid(bars, 2);
console.log('seq wall', s.ms.toFixed(0), 'cpu', s.cpuMs.toFixed(0), '| par wall', p.ms.toFixed(0), 'cpu', p.cpuMs.toFixed(0), '| ratio', (p.ms / s.ms).toFixed(2), 'cpu-est', (p.cpuMs / 2 / s.cpuMs).toFixed(2), '| load', (await import('node:os')).loadavg()[0].toFixed(1));
