import { barCursor } from './indicators.ts';
import type { BarChunk } from './types.ts';

/**
 * Where the engine is in the bars pushed to it, and the time that gives: read by every part that stamps,
 * decides or reports something.
 */
export class BarClock {
  // Fields, not closure variables: a double stored into a closure's context is boxed afresh on every
  // write (V8 in Node 20), which was the per-bar loop's only allocation (32 bytes a bar, bench heap profile).
  /** End of the last bar processed (the default engine clock). */
  lastBarEnd = NaN;
  /** End of the bar being processed. */
  now = NaN;
  /** The chunk being pushed. */
  chunk: BarChunk | undefined = undefined;
  /** Index in `chunk` of the bar being processed; -1 outside the bar loop. */
  index = -1;
  /** True while the strategies' chunk pipelines run (before the bar loop). */
  pushing = false;
  /** Length of the chunk being pushed. */
  pushLength = 0;
  /** Engine clock (epoch ms): the adapter's, else the end of the last bar pushed. */
  readonly time: () => number;

  constructor(external: (() => number) | undefined) {
    this.time = external ?? (() => this.lastBarEnd);
  }

  /** The time of a decision made now: the end of the bar being processed, else the clock. */
  current(): number {
    return this.index >= 0 ? this.now : this.time();
  }

  /** Start of the bar being processed (the time a decision made now is stamped with), else `otherwise`. */
  barStartOr(otherwise: number): number {
    return this.chunk !== undefined && this.index >= 0 ? this.chunk.time[this.index]! : otherwise;
  }

  /** Index of the bar a strategy's pipeline is at while the chunk runs through it (the last bar if unknown). */
  pipelineIndex(): number {
    return barCursor.at >= 0 && barCursor.at < this.pushLength ? barCursor.at : this.pushLength - 1;
  }
}
