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
