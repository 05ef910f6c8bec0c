/**
 * Figure 18: what a backtest costs per order: bytes allocated on the V8 heap (the sampling heap profiler,
 * collected objects included, so the garbage counts), bytes its result keeps after a full collection (on
 * the heap and in typed arrays outside it), and wall time. The run is a function, so two versions of the
 * engine can be measured side by side in one process (bench/compare-engines.ts loads another checkout).
 */
import { Session } from 'node:inspector/promises';

export interface PerOrder {
  readonly orders: number;
  readonly allocatedBytesPerOrder: number;
  readonly keptHeapBytesPerOrder: number;
  readonly keptArrayBytesPerOrder: number;
  readonly microsecondsPerOrder: number;
  readonly medianMs: number;
}

/**
 * `run` once per repetition, returning its result (kept for the last measure). `orders`: how many orders a
 * run makes, counted by the caller outside the timing (reading a result's order list may make its objects).
 */
export async function measurePerOrder(run: () => unknown, orders: number, reps: number): Promise<PerOrder> {
  run();
  const times: number[] = [];
  for (let k = 0; k < reps; k++) {
    const start = performance.now();
    run();
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  const medianMs = times[times.length >> 1]!;
  const session = new Session();
  session.connect();
  await session.post('HeapProfiler.enable');
  await session.post('HeapProfiler.startSampling', {
    samplingInterval: 256,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
  const sampled = 2;
  for (let k = 0; k < sampled; k++) run();
  const { profile } = await session.post('HeapProfiler.stopSampling');
  let allocated = 0;
  const walk = (node: { selfSize: number; children: unknown[] }): void => {
    allocated += node.selfSize;
    for (const child of node.children) walk(child as typeof node);
  };
  walk(profile.head as never);
  // What the result keeps: the heap and array buffers after a full collection, with and without it.
  await session.post('HeapProfiler.collectGarbage');
  const before = process.memoryUsage();
  let kept: unknown = run();
  await session.post('HeapProfiler.collectGarbage');
  const after = process.memoryUsage();
  kept = undefined;
  session.disconnect();
  void kept;
  return {
    orders,
    allocatedBytesPerOrder: allocated / sampled / orders,
    keptHeapBytesPerOrder: (after.heapUsed - before.heapUsed) / orders,
    keptArrayBytesPerOrder: (after.arrayBuffers - before.arrayBuffers) / orders,
    microsecondsPerOrder: (medianMs * 1000) / orders,
    medianMs,
  };
}
