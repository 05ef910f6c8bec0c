/**
 * The embedded default market: the simulator's seeded synthetic bars (`generateBars`), laid out on the
 * exchange's hours so a backtest sees real session gaps. With the contract's hours (the exchange calendar,
 * as the simulator and the guard read it) a session is each stretch the market is open: 17:00 to 16:00
 * America/Chicago with the daily break, no weekend, and a holiday's closure or early close. Without them,
 * the plain Globex week (no holidays). Each session continues from the previous close; the same seed and
 * hours always give the same bars.
 */
import { generateBars } from '../market/synthetic.ts';
import type { PriceGrid } from '../engine/ticks.ts';
import { DEFAULT_TRADING_DAY, TradingCalendar } from '../engine/trading-day.ts';
import type { MarketHours } from '../engine/market-hours.ts';
import type { BarColumns } from '../engine/types.ts';
import { allocateColumns } from './columns.ts';

export interface SyntheticMarketOptions {
  readonly seed: number;
  readonly grid: PriceGrid;
  /** Decimal price of the first bar's open. */
  readonly startPrice: number;
  /** The first session is the first one opening at or after this time (epoch ms). */
  readonly start: number;
  readonly sessions: number;
  /** Bar length in ms (divides an hour); one minute by default. */
  readonly stepMs?: number;
  /** The market's hours: sessions are its open stretches (holidays and early closes included). */
  readonly hours?: Pick<MarketHours, 'isOpen' | 'nextOpen' | 'nextClose'>;
}

const HOUR = 3_600_000;

export interface Session {
  /** Epoch ms of the session's first bar. */
  readonly start: number;
  /** Epoch ms just after its last bar (the daily break follows). */
  readonly end: number;
}

/**
 * `count` Globex sessions from `from` on: each opens at the start of a CME trading day (17:00
 * America/Chicago, the engine's calendar, so daylight saving time moves it with the exchange) and runs
 * until one hour before the next trading day (the daily break); trading days end Monday to Friday.
 */
export function globexSessions(
  from: number,
  count: number,
  calendar = new TradingCalendar(DEFAULT_TRADING_DAY),
): Session[] {
  const sessions: Session[] = [];
  let start = calendar.dayStart(from);
  if (start < from) start = calendar.nextDayStart(from);
  while (sessions.length < count) {
    const next = calendar.nextDayStart(start);
    const weekday = new Date(`${calendar.dayOf(start)}T12:00:00Z`).getUTCDay();
    if (weekday >= 1 && weekday <= 5) sessions.push({ start, end: next - HOUR });
    start = next;
  }
  return sessions;
}

/**
 * `count` open stretches of `hours` from `from` on, each cut to whole bars of `stepMs` (an early close at
 * 12:15 with 5-minute bars keeps its last whole bar). A stretch shorter than one bar is skipped.
 */
export function calendarSessions(
  from: number,
  count: number,
  stepMs: number,
  hours: Pick<MarketHours, 'isOpen' | 'nextOpen' | 'nextClose'>,
): Session[] {
  const sessions: Session[] = [];
  // The first session opening at or after `from`, as the Globex week counts: one under way is left out.
  let start = !hours.isOpen(from) ? hours.nextOpen(from) : hours.isOpen(from - 1) ? hours.nextOpen(from) : from;
  while (sessions.length < count) {
    const close = hours.nextClose(start);
    const end = start + Math.floor((close - start) / stepMs) * stepMs;
    if (end > start) sessions.push({ start, end });
    start = hours.nextOpen(close);
  }
  return sessions;
}

export function syntheticBars(options: SyntheticMarketOptions): BarColumns {
  const stepMs = options.stepMs ?? 60_000;
  if (!Number.isInteger(options.sessions) || options.sessions < 1)
    throw new RangeError(`sessions must be a positive whole number, got ${options.sessions}`);
  if (!(stepMs > 0) || HOUR % stepMs !== 0) throw new RangeError(`stepMs must divide an hour, got ${stepMs}`);
  const sessions =
    options.hours === undefined
      ? globexSessions(options.start, options.sessions)
      : calendarSessions(options.start, options.sessions, stepMs, options.hours);
  const counts = sessions.map((s) => (s.end - s.start) / stepMs);
  const out = allocateColumns(counts.reduce((a, b) => a + b, 0));
  let price = options.startPrice;
  let at = 0;
  sessions.forEach(({ start }, s) => {
    const count = counts[s]!;
    const bars = generateBars({
      seed: (options.seed + s * 0x9e3779b1) >>> 0,
      tickSize: options.grid.tickSize,
      startPrice: price,
      start,
      count,
      stepMs,
    });
    out.time.set(bars.time, at);
    out.open.set(bars.open, at);
    out.high.set(bars.high, at);
    out.low.set(bars.low, at);
    out.close.set(bars.close, at);
    out.volume.set(bars.volume, at);
    at += count;
    price = options.grid.toPrice(bars.close[count - 1]!);
  });
  return out;
}
