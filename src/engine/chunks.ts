/** Small views of bar chunks. */
import type { BarChunk, BarRecord } from './types.ts';

/** Bar `i` of a chunk as one record (the per-bar style's value). */
export function barRecord(chunk: BarChunk, i: number): BarRecord {
  return {
    contractId: chunk.contractId,
    time: chunk.time[i]!,
    open: chunk.open[i]!,
    high: chunk.high[i]!,
    low: chunk.low[i]!,
    close: chunk.close[i]!,
    volume: chunk.volume[i]!,
  };
}

/** A view of bars [from, to) of a chunk (no copy). */
export function sliceChunk(chunk: BarChunk, from: number, to: number): BarChunk {
  return {
    contractId: chunk.contractId,
    timeframe: chunk.timeframe,
    length: to - from,
    time: chunk.time.subarray(from, to),
    open: chunk.open.subarray(from, to),
    high: chunk.high.subarray(from, to),
    low: chunk.low.subarray(from, to),
    close: chunk.close.subarray(from, to),
    volume: chunk.volume.subarray(from, to),
    ...(chunk.baseIndex === undefined ? {} : { baseIndex: chunk.baseIndex.subarray(from, to) }),
  };
}

/** Where `prefetchColumns` leaves its sum: a result nobody reads could let the compiler drop the reads. */
let _prefetchSum = 0;

/**
 * Reads one value of every 64-byte cache line of the columns read at scattered bars: the time (a signal's,
 * a fill's), and the open, high and low (the venue matching a bar while an order works). Each such read
 * came from memory, as the columns of a long history are not in cache and a read every few dozen bars is
 * no pattern the processor fetches ahead; read in order first, they stream in at once (1 M bars: 3-5% of
 * a backtest's time, issue 30's ninth turn in docs/bench.md). The close needs none: the strategies'
 * indicators read it in order.
 */
export function prefetchColumns(chunk: BarChunk): void {
  const { time, open, high, low } = chunk;
  const n = chunk.length;
  let sum = 0;
  for (let i = 0; i < n; i += 8) sum += time[i]! + open[i]! + high[i]! + low[i]!;
  _prefetchSum += sum;
}
