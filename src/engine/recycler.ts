import { objectArray } from './object-array.ts';

/**
 * Objects made over instead of made anew (a backtest's order records). One given back (`retire`) may still
 * be in the hands of a caller up the stack, so it becomes spare only at `reclaim`, which the owner calls
 * where no caller holds one. Counts, not the arrays' lengths, say what each list holds: an array popped
 * empty lets its backing store go, and the next push would make one again (an allocation an order).
 */
export class Recycler<T> {
  private readonly spare: T[] = objectArray();
  private spareCount = 0;
  private readonly retired: T[] = objectArray();
  private retiredCount = 0;

  /** `limit`: objects retired between two reclaims kept at most; more are left to the collector. */
  constructor(private readonly limit = Number.MAX_SAFE_INTEGER) {}

  /** A spare object to make over, or undefined when there is none. */
  take(): T | undefined {
    return this.spareCount === 0 ? undefined : this.spare[--this.spareCount];
  }

  retire(item: T): void {
    if (this.retiredCount < this.limit) this.retired[this.retiredCount++] = item;
  }

  /** Everything retired so far becomes spare: no caller holds any of it now. */
  reclaim(): void {
    const n = this.retiredCount;
    for (let k = 0; k < n; k++) this.spare[this.spareCount++] = this.retired[k]!;
    this.retiredCount = 0;
  }
}
