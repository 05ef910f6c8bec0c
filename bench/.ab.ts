import { fullPathBacktest, referenceBars } from './reference.ts';
const bars = referenceBars(1_000_000);
for (let r = 0; r < 3; r++) fullPathBacktest(bars);
const wall: number[] = [], cpu: number[] = [];
for (let r = 0; r < Number(process.argv[2] ?? 11); r++) {
  const c = process.cpuUsage(); const t = performance.now();
  fullPathBacktest(bars);
  wall.push(performance.now() - t); const d = process.cpuUsage(c); cpu.push((d.user + d.system) / 1000);
}
const med = (a: number[]) => [...a].sort((x, y) => x - y)[a.length >> 1]!;
const min = (a: number[]) => Math.min(...a);
console.log(`wall med ${med(wall).toFixed(0)} min ${min(wall).toFixed(0)} | cpu med ${med(cpu).toFixed(0)} min ${min(cpu).toFixed(0)} | load ${(await import('node:os')).loadavg()[0].toFixed(1)}`);
