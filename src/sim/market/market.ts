/**
 * The market of one root (every month of it trades the same prices; a micro root shares its mini's path): base bars (one-minute by default)
 * from the synthetic generator or a replayed bar file, an intrabar price path, the last traded price and
 * the quote at any time, the price moves between two times (for matching), and bars of any unit
 * aggregated from the base bars.
 *
 * Inside a base bar the price walks the shared path (src/market/path.ts: open -> first extreme -> second
 * extreme -> close, low first on an up bar), reaching the vertices at 0, 1/3, 2/3 of the bar and its last
 * millisecond. Between bars the price jumps from one close to the next open (a gap).
 */
import { bucketEnd, bucketStart } from '../../engine/timeframe.ts';
import type { PriceGrid } from '../../engine/ticks.ts';
import type { BarColumns, Timeframe } from '../../engine/types.ts';
import { lastMove, pathPrices } from '../../market/path.ts';
import { quoteOf, type BarFacts, type Quote, type TouchFills } from '../../market/quotes.ts';
import { generateBars } from '../../market/synthetic.ts';

const DAY_MS = 86_400_000;

/** Base bars by global index; prices in ticks. */
export interface BaseBars {
  readonly stepMs: number;
  /** Index of the last bar starting at or before `t`, or -1 (generating synthetic bars as needed). */
  lastAtOrBefore(t: number): number;
  /** Bars known so far (a synthetic series grows as time goes on). */
  count(): number;
  time(i: number): number;
  open(i: number): number;
  high(i: number): number;
  low(i: number): number;
  close(i: number): number;
  volume(i: number): number;
}

/** An unbounded synthetic series generated a day at a time from `origin` (a UTC midnight). */
export class SyntheticBars implements BaseBars {
  readonly stepMs = 60_000;
  private readonly blocks: BarColumns[] = [];
  private readonly perBlock = DAY_MS / 60_000;

  constructor(
    private readonly root: { readonly startPrice: number; readonly grid: PriceGrid },
    private readonly seed: number,
    private readonly salt: number,
    private readonly origin: number,
  ) {}

  private block(k: number): BarColumns {
    while (this.blocks.length <= k) {
      const index = this.blocks.length;
      const previous = this.blocks[index - 1];
      const grid = this.root.grid;
      const startTicks = previous
        ? (previous.close[previous.close.length - 1] as number)
        : Math.round(this.root.startPrice / grid.tickSize);
      this.blocks.push(
        generateBars({
          // Each day's seed depends on the run's seed, the contract and the day, so days are independent draws.
          seed:
            (Math.imul(this.seed ^ 0x9e3779b9, 0x85ebca6b) +
              Math.imul(this.salt + 1, 0xc2b2ae35) +
              Math.imul(index + 1, 0x27d4eb2f)) |
            0,
          tickSize: grid.tickSize,
          startPrice: grid.toPrice(startTicks),
          start: this.origin + index * DAY_MS,
          count: this.perBlock,
        }),
      );
    }
    return this.blocks[k] as BarColumns;
  }

  private at(i: number): [BarColumns, number] {
    return [this.block(Math.floor(i / this.perBlock)), i % this.perBlock];
  }

  lastAtOrBefore(t: number): number {
    if (t < this.origin) return -1;
    const i = Math.floor((t - this.origin) / this.stepMs);
    this.block(Math.floor(i / this.perBlock));
    return i;
  }
  count(): number {
    return this.blocks.length * this.perBlock;
  }
  time(i: number): number {
    return this.origin + i * this.stepMs;
  }
  open(i: number): number {
    const [b, j] = this.at(i);
    return b.open[j] as number;
  }
  high(i: number): number {
    const [b, j] = this.at(i);
    return b.high[j] as number;
  }
  low(i: number): number {
    const [b, j] = this.at(i);
    return b.low[j] as number;
  }
  close(i: number): number {
    const [b, j] = this.at(i);
    return b.close[j] as number;
  }
  volume(i: number): number {
    const [b, j] = this.at(i);
    return b.volume[j] as number;
  }
}

/**
 * Another root's bars on this root's tick grid (a micro contract trading its mini's path): prices are the
 * same decimals rounded to this root's tick.
 */
export class RegriddedBars implements BaseBars {
  private readonly factor: number;
  constructor(
    private readonly inner: BaseBars,
    from: PriceGrid,
    to: PriceGrid,
  ) {
    this.factor = from.tickSize / to.tickSize;
  }
  get stepMs(): number {
    return this.inner.stepMs;
  }
  private scale(ticks: number): number {
    return Math.round(ticks * this.factor);
  }
  lastAtOrBefore(t: number): number {
    return this.inner.lastAtOrBefore(t);
  }
  count(): number {
    return this.inner.count();
  }
  time(i: number): number {
    return this.inner.time(i);
  }
  open(i: number): number {
    return this.scale(this.inner.open(i));
  }
  high(i: number): number {
    return this.scale(this.inner.high(i));
  }
  low(i: number): number {
    return this.scale(this.inner.low(i));
  }
  close(i: number): number {
    return this.scale(this.inner.close(i));
  }
  volume(i: number): number {
    return this.inner.volume(i);
  }
}

/** A fixed series (a replayed bar file), bars sorted by time, possibly with gaps (market closed). */
export class FixedBars implements BaseBars {
  constructor(
    readonly stepMs: number,
    private readonly bars: BarColumns,
  ) {}
  lastAtOrBefore(t: number): number {
    const times = this.bars.time;
    let lo = 0;
    let hi = times.length - 1;
    if (hi < 0 || (times[0] as number) > t) return -1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((times[mid] as number) <= t) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }
  count(): number {
    return this.bars.time.length;
  }
  time(i: number): number {
    return this.bars.time[i] as number;
  }
  open(i: number): number {
    return this.bars.open[i] as number;
  }
  high(i: number): number {
    return this.bars.high[i] as number;
  }
  low(i: number): number {
    return this.bars.low[i] as number;
  }
  close(i: number): number {
    return this.bars.close[i] as number;
  }
  volume(i: number): number {
    return this.bars.volume[i] as number;
  }
}

/** A price point of the path; `gap` marks a jump (no trading between the previous point and this one). */
export interface PricePoint {
  readonly time: number;
  readonly price: number;
  readonly gap: boolean;
}

export interface OutBar {
  t: number;
  o: number;
  h: number;
  l: number;
  c: number;
  v: number;
}

/**
 * When a market trades (the exchange calendar's sessions of its root). Base bars inside a closed period
 * do not trade: the synthetic walk goes on underneath, so the reopen gaps from the last close.
 */
export interface MarketHours {
  isOpen(t: number): boolean;
  /** When the market closed last, for an instant at which it is closed. */
  closedAt(t: number): number;
}

/** How far back the tick rule looks for the last price change before it assumes an up move. */
const DIRECTION_LOOKBACK_BARS = 50;

export class ContractMarket {
  constructor(
    readonly grid: PriceGrid,
    readonly base: BaseBars,
    /** How orders fill at the touch here: spread, book, partial fills, queue. */
    readonly fills: TouchFills,
    /** The trading hours; without them the market trades whenever the base series has a bar. */
    readonly hours?: MarketHours,
  ) {}

  /** The latest instant at or before `t` at which the market traded (t itself when it is open). */
  private tradedBy(t: number): number {
    return this.hours === undefined || this.hours.isOpen(t) ? t : this.hours.closedAt(t) - 1;
  }

  /** False for a base bar inside a closed period (it does not trade). */
  trades(i: number): boolean {
    return this.hours === undefined || this.hours.isOpen(this.base.time(i));
  }

  private vertices(i: number): [number[], number[]] {
    const s = this.base.time(i);
    const step = this.base.stepMs;
    return [
      [s, s + Math.floor(step / 3), s + Math.floor((2 * step) / 3), s + step - 1],
      pathPrices(this.base.open(i), this.base.high(i), this.base.low(i), this.base.close(i)),
    ];
  }

  private facts(i: number): BarFacts {
    return { high: this.base.high(i), low: this.base.low(i), volume: this.base.volume(i) };
  }

  /** What the quote of bar `i` is computed from: the bar before it, or itself when it is the first. */
  previousFacts(i: number): BarFacts {
    return this.facts(i > 0 ? i - 1 : i);
  }

  /** The volume and range of bar `i` (what a resting order's touch in that bar works with). */
  barFacts(i: number): BarFacts {
    return this.facts(i);
  }

  /**
   * The direction of the last price change at or before `t` (the tick rule): +1 up, -1 down; +1 when
   * nothing moved within the lookback. Inside a bar, a segment counts once the rounded price has left
   * its starting vertex.
   */
  direction(at: number): 1 | -1 {
    const t = this.tradedBy(at);
    let i = this.base.lastAtOrBefore(t);
    if (i < 0) return 1;
    if (t < this.base.time(i) + this.base.stepMs) {
      const [times, prices] = this.vertices(i);
      const now = this.pathPrice(i, t);
      for (let k = 3; k >= 1; k--) {
        if ((times[k - 1] as number) > t) continue;
        const from = prices[k - 1] as number;
        const to = (times[k] as number) <= t ? (prices[k] as number) : now;
        if (to !== from) return to > from ? 1 : -1;
      }
    } else {
      const move = this.barMove(i);
      if (move !== 0) return move;
    }
    for (let back = 0; back < DIRECTION_LOOKBACK_BARS && i > 0; back++, i--) {
      const jump = this.base.open(i) - this.base.close(i - 1);
      if (jump !== 0) return jump > 0 ? 1 : -1;
      const move = this.barMove(i - 1);
      if (move !== 0) return move;
    }
    return 1;
  }

  private barMove(i: number): -1 | 0 | 1 {
    return lastMove(this.base.open(i), this.base.high(i), this.base.low(i), this.base.close(i));
  }

  /** Best bid and ask (ticks) and their sizes at `t`, or undefined when the market is closed or has no data yet. */
  quote(t: number): Quote | undefined {
    const i = this.barAt(t);
    if (i < 0) return undefined;
    return quoteOf(this.fills, this.pathPrice(i, t), this.direction(t), this.previousFacts(i));
  }

  /** The quote at a price the path reaches at `t` moving in `direction` (a level crossed inside a move). */
  quoteAt(t: number, price: number, direction: number): Quote | undefined {
    const i = this.barAt(t);
    if (i < 0) return undefined;
    return quoteOf(this.fills, price, direction, this.previousFacts(i));
  }

  /** Index of the bar trading at `t`, or -1 when the market is closed at `t`. */
  barAt(t: number): number {
    if (this.hours !== undefined && !this.hours.isOpen(t)) return -1;
    const i = this.base.lastAtOrBefore(t);
    if (i < 0 || t >= this.base.time(i) + this.base.stepMs) return -1;
    return i;
  }

  isOpen(t: number): boolean {
    return this.barAt(t) >= 0;
  }

  private pathPrice(i: number, t: number): number {
    const [times, prices] = this.vertices(i);
    for (let k = 1; k < 4; k++) {
      const t1 = times[k] as number;
      if (t <= t1) {
        const t0 = times[k - 1] as number;
        const p0 = prices[k - 1] as number;
        const p1 = prices[k] as number;
        return Math.round(p0 + ((p1 - p0) * (t - t0)) / (t1 - t0));
      }
    }
    return prices[3] as number;
  }

  /** Last traded price in ticks at `t`: inside a bar from its path, in a gap the previous close; none before the data. */
  lastPrice(at: number): number | undefined {
    const t = this.tradedBy(at);
    const i = this.base.lastAtOrBefore(t);
    if (i < 0) return undefined;
    if (t >= this.base.time(i) + this.base.stepMs) return this.base.close(i);
    return this.pathPrice(i, t);
  }

  /** The path's points in (t0, t1], ending with the price at t1 when the market is open then. */
  pointsBetween(t0: number, t1: number): PricePoint[] {
    const points: PricePoint[] = [];
    if (t1 <= t0) return points;
    const last = this.base.lastAtOrBefore(t1);
    if (last < 0) return points;
    let i = Math.max(0, this.base.lastAtOrBefore(t0));
    for (; i <= last; i++) {
      if (!this.trades(i)) continue;
      const [times, prices] = this.vertices(i);
      for (let k = 0; k < 4; k++) {
        const t = times[k] as number;
        if (t > t0 && t <= t1) points.push({ time: t, price: prices[k] as number, gap: k === 0 });
      }
    }
    if (this.barAt(t1) >= 0) {
      const tail = points[points.length - 1];
      if (!tail || tail.time < t1) points.push({ time: t1, price: this.pathPrice(last, t1), gap: false });
    }
    return points;
  }

  /** High, low, open, close of the path over [from, to] inside bar i (to clamped to the bar). */
  private pathRange(i: number, from: number, to: number): OutBar {
    const [times, prices] = this.vertices(i);
    const o = this.pathPrice(i, from);
    const c = this.pathPrice(i, to);
    let h = Math.max(o, c);
    let l = Math.min(o, c);
    for (let k = 0; k < 4; k++) {
      const t = times[k] as number;
      if (t > from && t < to) {
        h = Math.max(h, prices[k] as number);
        l = Math.min(l, prices[k] as number);
      }
    }
    const share = (to - from + 1) / this.base.stepMs;
    return { t: from, o, h, l, c, v: Math.round(this.base.volume(i) * Math.min(1, share)) };
  }

  /**
   * Bars of `tf` whose start lies in [start, end], newest first, each aggregated over its whole bucket up
   * to `now`. A bucket still forming at `now` is the partial bar, included only when asked.
   */
  bars(tf: Timeframe, start: number, end: number, now: number, limit: number, includePartialBar: boolean): OutBar[] {
    const out: OutBar[] = [];
    if (limit <= 0 || end < start) return out;
    const upper = Math.min(end, now);
    if (upper < start) return out;
    if (tf.unit === 'second') return this.secondBars(tf, start, upper, now, limit, includePartialBar);
    const step = this.base.stepMs;
    let i = this.base.lastAtOrBefore(Math.min(bucketEnd(bucketStart(upper, tf), tf) - 1, now));
    let current: OutBar | undefined;
    let currentBucket = Number.NaN;
    const flush = (): boolean => {
      if (!current) return false;
      const partial = bucketEnd(currentBucket, tf) > now;
      if (!partial || includePartialBar) out.push(current);
      current = undefined;
      return out.length >= limit;
    };
    for (; i >= 0; i--) {
      const barTime = this.base.time(i);
      const bucket = bucketStart(barTime, tf);
      if (bucket < start) break;
      if (bucket > end || !this.trades(i)) continue;
      const piece =
        barTime + step > now
          ? this.pathRange(i, barTime, now)
          : {
              t: barTime,
              o: this.base.open(i),
              h: this.base.high(i),
              l: this.base.low(i),
              c: this.base.close(i),
              v: this.base.volume(i),
            };
      if (bucket !== currentBucket) {
        if (flush()) return out;
        currentBucket = bucket;
        current = { ...piece, t: bucket };
      } else if (current) {
        // Walking backwards: this piece is earlier, so it supplies the open.
        current.o = piece.o;
        current.h = Math.max(current.h, piece.h);
        current.l = Math.min(current.l, piece.l);
        current.v += piece.v;
      }
    }
    flush();
    return out;
  }

  private secondBars(
    tf: Timeframe,
    start: number,
    upper: number,
    now: number,
    limit: number,
    includePartialBar: boolean,
  ): OutBar[] {
    const out: OutBar[] = [];
    const width = 1000 * tf.unitNumber;
    for (let t = bucketStart(upper, tf); t >= start && out.length < limit; ) {
      const i = this.base.lastAtOrBefore(t);
      if (i < 0) break;
      const barStart = this.base.time(i);
      const barLast = barStart + this.base.stepMs - 1;
      if (!this.trades(i)) {
        // The market was closed: continue from the last second bucket before the close.
        t = bucketStart((this.hours as MarketHours).closedAt(barStart) - 1, tf);
        continue;
      }
      if (t > barLast) {
        // A gap in the data: continue from the last second bucket of the previous bar.
        t = bucketStart(barLast, tf);
        continue;
      }
      const to = Math.min(t + width - 1, barLast, now);
      const partial = t + width > now;
      if (!partial || includePartialBar) {
        let bar = this.pathRange(i, Math.max(t, barStart), to);
        // A bucket wider than what remains of this base bar continues into the next one.
        for (
          let j = i + 1;
          this.base.time(j) <= Math.min(t + width - 1, now) && j < this.base.count() && this.trades(j);
          j++
        ) {
          const more = this.pathRange(
            j,
            this.base.time(j),
            Math.min(t + width - 1, this.base.time(j) + this.base.stepMs - 1, now),
          );
          bar = {
            t: bar.t,
            o: bar.o,
            h: Math.max(bar.h, more.h),
            l: Math.min(bar.l, more.l),
            c: more.c,
            v: bar.v + more.v,
          };
        }
        out.push({ ...bar, t });
      }
      t -= width;
    }
    return out;
  }
}
