/**
 * The equity recorder of a run over a whole history: one point a bar at the bar's time, so the times are
 * the bars' own column and are not stored again (80 MB of a 10 M-bar run). A point at any other time (the
 * engine fed other bars than these, such as an aggregate of them) makes it keep its own times from there
 * on, the points before it copied from the bars: the curve is always the one `EquityRecorder` records.
 */
import type { BlockLease, Borrower } from '../../engine/block-stock.ts';
import { EquityRecorder, type EquityCurve } from '../../engine/equity-recorder.ts';
import { StreamedRunError } from './run-gathering.ts';

export class BarTimedEquity extends EquityRecorder implements Borrower {
  private points: Float64Array;
  /** Times of their own once a point was not at its bar's time; until then, the bars' times. */
  private ownTimes: Float64Array | undefined;
  private recorded = 0;

  /** `lease`: where the room for a point a bar comes from (`BacktestRunInput.blocks`); its own otherwise. */
  constructor(
    private readonly barTimes: Float64Array,
    lease?: BlockLease,
  ) {
    super(0);
    const n = barTimes.length;
    // Every point is written before it is read: lent room need not be cleared.
    this.points = lease === undefined ? new Float64Array(n) : lease.take(n, this);
  }

  /** The lent room went back (its lease ended): the curve is empty from now on. */
  forget(): void {
    this.points = new Float64Array(0);
    this.ownTimes = undefined;
    this.recorded = 0;
  }

  override reserve(n: number): void {
    if (this.recorded + n <= this.points.length) return;
    // Grown as `EquityRecorder` grows, for a run fed more points than bars.
    const capacity = Math.max(this.recorded + n, this.points.length * 2);
    const points = new Float64Array(capacity);
    points.set(this.points.subarray(0, this.recorded));
    this.points = points;
    if (this.ownTimes !== undefined) {
      const times = new Float64Array(capacity);
      times.set(this.ownTimes.subarray(0, this.recorded));
      this.ownTimes = times;
    }
  }

  override record(time: number, equity: number): void {
    const at = this.recorded;
    if (this.ownTimes !== undefined) this.ownTimes[at] = time;
    else if (time !== this.barTimes[at]) this.keepOwnTimes(time);
    this.points[at] = equity;
    this.recorded = at + 1;
  }

  /** A streamed run drains its points chunk by chunk and has no whole column of bar times: not for it. */
  override drain(): EquityCurve {
    throw new StreamedRunError('BarTimedEquity records a whole history; a streamed run drains an EquityRecorder');
  }

  override curve(): EquityCurve {
    const count = this.recorded;
    if (this.ownTimes === undefined && count === this.barTimes.length)
      return { time: this.barTimes, equity: count === this.points.length ? this.points : this.points.slice(0, count) };
    const times = this.ownTimes ?? this.barTimes;
    return { time: times.slice(0, count), equity: this.points.slice(0, count) };
  }

  private keepOwnTimes(time: number): void {
    const at = this.recorded;
    const times = new Float64Array(this.points.length);
    times.set(this.barTimes.subarray(0, at));
    times[at] = time;
    this.ownTimes = times;
  }
}
