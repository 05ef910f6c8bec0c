/**
 * Child process of the benchmark: figure 2's full path and plain loop, alternated, at V8's own inlining
 * budget, which the command line raises for its process (src/cli/compiler-budget.ts) and the bench with
 * it: what a program that runs the engine without raising it gets. Prints one JSON line.
 *
 *   ratio-child.ts <bars> <rounds>
 */
import { fullPathBacktest, plainLoop, referenceBars } from './reference.ts';

const [count, rounds] = process.argv.slice(2).map(Number) as [number, number];
if (!Number.isInteger(count) || count < 1 || !Number.isInteger(rounds) || rounds < 1)
  throw new RangeError(`usage: ratio-child.ts <bars> <rounds>, got ${process.argv.slice(2).join(' ')}`);
const bars = referenceBars(count);
for (let k = 0; k < 2; k++) fullPathBacktest(bars);
for (let k = 0; k < 5; k++) plainLoop(bars);
const full: number[] = [];
const loop: number[] = [];
const time = (f: () => unknown): number => {
  const start = performance.now();
  f();
  return performance.now() - start;
};
for (let r = 0; r < rounds; r++) {
  if (r % 2 === 0) {
    full.push(time(() => fullPathBacktest(bars)));
    loop.push(time(() => plainLoop(bars)));
  } else {
    loop.push(time(() => plainLoop(bars)));
    full.push(time(() => fullPathBacktest(bars)));
  }
}
const median = (v: number[]) => [...v].sort((a, b) => a - b)[v.length >> 1]!;
process.stdout.write(
  `${JSON.stringify({ fullMs: median(full), loopMs: median(loop), ratio: median(loop) / median(full) })}\n`,
);
