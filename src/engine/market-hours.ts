/**
 * The market's hours as the engine sees them: an interface the adapters implement (from the exchange
 * calendar of the contract's root, src/market/exchange-hours.ts), and the cached view of it that the
 * guard, the calendar flat-by and the strategies' `ctx.session` read. A view answers from the span it
 * last computed (a session, or the gap between two) until the time leaves it: the per-bar check is one
 * comparison, and a span is computed twice a day.
 */
import type { TradingCalendar } from './trading-day.ts';

/** A contract's trading hours. Times are epoch ms. */
export interface MarketHours {
  /** True while the market trades (in a session, not in a daily break, a weekend or a holiday). */
  isOpen(time: number): boolean;
  /** The first instant after `time` at which the market closes (the close of the next session when closed). */
  nextClose(time: number): number;
  /** The first instant after `time` at which the market opens (after the next close when open). */
  nextOpen(time: number): number;
  /** The trading day `time` belongs to, `YYYY-MM-DD` (when closed: the one that closed last). */
  tradingDay(time: number): string;
}

/** Where an instant falls for the guard: open, within the calendar flat-by before a close, or closed. */
export type MarketPhase = 'open' | 'closing' | 'closed';

/** What a strategy reads of the market's hours (`ctx.session`, `ctx.sessionAt`). */
export interface SessionInfo {
  /** The market trades now. */
  readonly open: boolean;
  /** Whole and fractional minutes until the close of the open session; Infinity when closed or no hours are known. */
  readonly minutesToClose: number;
  /** The next close (epoch ms): this session's when open, the next session's when closed; Infinity without hours. */
  readonly nextClose: number;
  /** The next open (epoch ms) when closed; NaN while open. */
  readonly nextOpen: number;
  /** The trading day, `YYYY-MM-DD` (the exchange's when its hours are known, else the engine's 17:00 CT day). */
  readonly tradingDay: string;
}

const MINUTE_MS = 60_000;

/**
 * One contract's hours cached by span: `refresh(time)` recomputes only when `time` leaves the span it last
 * computed. Without hours the market counts as always open, and the trading day is the engine's.
 */
export class MarketSession {
  open = true;
  /** Close of the current session (open), or of the next one (closed); Infinity without hours. */
  closesAt = Infinity;
  /** Next open while closed; NaN while open. */
  opensAt = Number.NaN;
  tradingDay = '';
  private from = Infinity;
  private until = -Infinity;

  constructor(
    readonly hours: MarketHours | undefined,
    private readonly calendar: TradingCalendar,
  ) {}

  refresh(time: number): this {
    if (time >= this.from && time < this.until) return this;
    const hours = this.hours;
    this.from = time;
    if (hours === undefined) {
      this.until = this.calendar.nextDayStart(time);
      this.from = this.calendar.dayStart(time);
      this.tradingDay = this.calendar.dayOf(time);
      return this;
    }
    this.open = hours.isOpen(time);
    this.closesAt = hours.nextClose(time);
    this.opensAt = this.open ? Number.NaN : hours.nextOpen(time);
    this.until = this.open ? this.closesAt : this.opensAt;
    this.tradingDay = hours.tradingDay(time);
    return this;
  }

  /** The guard's phase at `time`, with a calendar flat-by of `flatMs` before each close (0: none). */
  phase(time: number, flatMs: number): MarketPhase {
    this.refresh(time);
    if (!this.open) return 'closed';
    return flatMs > 0 && time >= this.closesAt - flatMs ? 'closing' : 'open';
  }

  /** The next instant after `time` at which `phase(·, flatMs)` may change. */
  nextChange(time: number, flatMs: number): number {
    this.refresh(time);
    if (!this.open) return this.opensAt;
    const flatFrom = flatMs > 0 ? this.closesAt - flatMs : this.closesAt;
    return time < flatFrom ? flatFrom : this.closesAt;
  }
}

/**
 * `ctx.session`: the session at the engine's clock (the end of the bar being processed), read through
 * getters so a strategy that reads it on every bar allocates nothing.
 */
export class SessionView implements SessionInfo {
  constructor(
    private readonly market: MarketSession,
    private readonly clock: () => number,
  ) {}

  get open(): boolean {
    return this.market.refresh(this.clock()).open;
  }

  get minutesToClose(): number {
    const time = this.clock();
    const market = this.market.refresh(time);
    return market.open ? (market.closesAt - time) / MINUTE_MS : Infinity;
  }

  get nextClose(): number {
    return this.market.refresh(this.clock()).closesAt;
  }

  get nextOpen(): number {
    return this.market.refresh(this.clock()).opensAt;
  }

  get tradingDay(): string {
    return this.market.refresh(this.clock()).tradingDay;
  }
}

/** A plain snapshot of the session at `time` (for chunk pipelines, which see a whole chunk at once). */
export function sessionSnapshot(market: MarketSession, time: number): SessionInfo {
  market.refresh(time);
  return {
    open: market.open,
    minutesToClose: market.open ? (market.closesAt - time) / MINUTE_MS : Infinity,
    nextClose: market.closesAt,
    nextOpen: market.opensAt,
    tradingDay: market.tradingDay,
  };
}
