/**
 * The embedded default market: the simulator's seeded synthetic bars (`generateBars`), laid out on the
 * CME Globex week so a backtest sees real session gaps: each session runs 22:00 UTC to 21:00 UTC the next
 * day (a one-hour daily break), Sunday evening to Friday afternoon, no weekend bars. Each session continues
 * from the previous close; the same seed always gives the same bars.
 */
import { generateBars } from '../../../sim/market/synthetic.ts';
import type { PriceGrid } from '../../../engine/ticks.ts';
import { allocateColumns, type BarColumns } from './columns.ts';

export interface SyntheticMarketOptions {
  readonly seed: number;
  readonly grid: PriceGrid;
  /** Decimal price of the first bar's open. */
  readonly startPrice: number;
  /** A day (UTC, any time) in the first trading week; the first session is the first one opening on or after it. */
  readonly start: number;
  readonly sessions: number;
  /** Bar length in ms (divides an hour); one minute by default. */
  readonly stepMs?: number;
}

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const SESSION_MS = 23 * HOUR;

/** Start times (epoch ms) of `count` Globex sessions (Sun..Thu 22:00 UTC) from `from` on. */
export function sessionStarts(from: number, count: number): number[] {
  const starts: number[] = [];
  let day = Math.floor(from / DAY) * DAY;
  while (starts.length < count) {
    const weekday = new Date(day).getUTCDay(); // 0 = Sunday
    const open = day + 22 * HOUR;
    if (weekday <= 4 && open >= from) starts.push(open);
    day += DAY;
  }
  return starts;
}

export function syntheticBars(options: SyntheticMarketOptions): BarColumns {
  const stepMs = options.stepMs ?? 60_000;
  if (!Number.isInteger(options.sessions) || options.sessions < 1) throw new RangeError(`sessions must be a positive whole number, got ${options.sessions}`);
  if (!(stepMs > 0) || HOUR % stepMs !== 0) throw new RangeError(`stepMs must divide an hour, got ${stepMs}`);
  const perSession = SESSION_MS / stepMs;
  const out = allocateColumns(perSession * options.sessions);
  let price = options.startPrice;
  sessionStarts(options.start, options.sessions).forEach((start, s) => {
    const bars = generateBars({ seed: (options.seed + s * 0x9e3779b1) >>> 0, tickSize: options.grid.tickSize, startPrice: price, start, count: perSession, stepMs });
    const at = s * perSession;
    out.time.set(bars.time, at);
    out.open.set(bars.open, at);
    out.high.set(bars.high, at);
    out.low.set(bars.low, at);
    out.close.set(bars.close, at);
    out.volume.set(bars.volume, at);
    price = options.grid.toPrice(bars.close[perSession - 1]!);
  });
  return out;
}
