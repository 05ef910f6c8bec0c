/**
 * Open, high, low, volume of the current trading day and the previous day's last price, for the market
 * hub's quotes. Finished base bars are added once (a running total per trading day); the bar still
 * forming is read from the price path up to now.
 */
import type { ContractMarket } from '../market/market.ts';

export interface SessionFigures {
  /** Prices in ticks. */
  readonly open: number;
  readonly high: number;
  readonly low: number;
  readonly volume: number;
  readonly previousClose: number;
}

interface Running {
  dayStart: number;
  /** Index of the last finished bar included. */
  through: number;
  open: number;
  high: number;
  low: number;
  volume: number;
  previousClose: number;
}

export class SessionStats {
  private running: Running | undefined;

  constructor(private readonly market: ContractMarket) {}

  /** The figures at `now` for the trading day starting at `dayStart`, or undefined before any bar of it. */
  at(dayStart: number, now: number): SessionFigures | undefined {
    const base = this.market.base;
    const current = base.lastAtOrBefore(now);
    let first = base.lastAtOrBefore(dayStart - 1) + 1;
    // A day that starts closed (a holiday's halt) opens at its first trading bar.
    while (first <= current && !this.market.trades(first)) first++;
    if (current < first) return undefined;
    let running = this.running;
    if (running === undefined || running.dayStart !== dayStart) {
      const open = base.open(first);
      running = {
        dayStart,
        through: first - 1,
        open,
        high: open,
        low: open,
        volume: 0,
        // The last close before the day (the close before a break or a weekend, not the walk beneath it).
        previousClose: first > 0 ? (this.market.lastPrice(base.time(first) - 1) ?? open) : open,
      };
      this.running = running;
    }
    const forming = this.market.barAt(now) === current;
    const lastFinished = forming ? current - 1 : current;
    for (let i = running.through + 1; i <= lastFinished; i++) {
      if (!this.market.trades(i)) continue;
      running.high = Math.max(running.high, base.high(i));
      running.low = Math.min(running.low, base.low(i));
      running.volume += base.volume(i);
    }
    running.through = Math.max(running.through, lastFinished);
    const { open, high, low, volume, previousClose } = running;
    if (!forming) return { open, high, low, volume, previousClose };
    const start = base.time(current);
    const points = this.market.pointsBetween(start - 1, now);
    const prices = points.map((p) => p.price);
    const share = Math.min(1, (now - start + 1) / base.stepMs);
    return {
      open,
      high: Math.max(high, ...prices),
      low: Math.min(low, ...prices),
      volume: volume + Math.round(base.volume(current) * share),
      previousClose,
    };
  }
}
