/** The guard's order-rate window: the send times of the last `size` places and modifies, in a ring. */
export class OrderRate {
  private readonly times: Float64Array;
  private count = 0;

  /** `size` is the rule's order count; 0 when there is no order-rate rule (nothing is kept). */
  constructor(private readonly size: number) {
    this.times = new Float64Array(size);
  }

  noteSent(time: number): void {
    if (this.size === 0) return;
    this.times[this.count % this.size] = time;
    this.count++;
  }

  /** How many of the remembered sends happened at or after `since`. */
  sentSince(since: number): number {
    let count = 0;
    const n = Math.min(this.count, this.size);
    for (let k = 0; k < n; k++) if (this.times[k]! >= since) count++;
    return count;
  }
}
