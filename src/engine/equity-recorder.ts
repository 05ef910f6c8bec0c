/**
 * The equity curve, one point per bar: typed columns grown once per chunk, not number[] pushed per bar
 * (growing two JS arrays to a million elements re-copied their backing stores on the V8 heap: 87 MB per
 * 1M-bar run in the bench's heap profile of an optimize job); typed arrays live outside the heap and at
 * most double.
 */
export interface EquityCurve {
  readonly time: Float64Array;
  readonly equity: Float64Array;
}

export class EquityRecorder {
  private times: Float64Array;
  private values: Float64Array;
  private count = 0;

  constructor(capacity = 0) {
    this.times = new Float64Array(capacity);
    this.values = new Float64Array(capacity);
  }

  /** Make room for `n` more points (call once per chunk, before its bars). */
  reserve(n: number): void {
    if (this.count + n <= this.times.length) return;
    const capacity = Math.max(this.count + n, this.times.length * 2);
    const times = new Float64Array(capacity);
    const values = new Float64Array(capacity);
    times.set(this.times.subarray(0, this.count));
    values.set(this.values.subarray(0, this.count));
    this.times = times;
    this.values = values;
  }

  /** One point; `reserve` must have made room for it. */
  record(time: number, equity: number): void {
    this.times[this.count] = time;
    this.values[this.count] = equity;
    this.count++;
  }

  /**
   * The points since the last drain, as views valid until the next `reserve` or `record`, and forget
   * them: a streamed run reads each chunk's points and lets them go, so the columns stay one chunk long.
   */
  drain(): EquityCurve {
    const drained = { time: this.times.subarray(0, this.count), equity: this.values.subarray(0, this.count) };
    this.count = 0;
    return drained;
  }

  /** The points so far; the columns themselves when full (a later `reserve` moves to new ones), else a copy. */
  curve(): EquityCurve {
    if (this.count === this.times.length) return { time: this.times, equity: this.values };
    return { time: this.times.slice(0, this.count), equity: this.values.slice(0, this.count) };
  }
}
