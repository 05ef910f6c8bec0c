/**
 * The exchange calendar: when each root's market is open, as data (weekly hours per hours family, and
 * the holidays of ./exchange-holidays.ts), with one API over instants (epoch ms, UTC): is it open, the
 * next open and close, the trading day, the time left to the close.
 *
 * Vocabulary:
 * - a *session* is one stretch of continuous trading, [opens, closes): Globex's runs from 17:00 CT to
 *   16:00 CT the next day;
 * - every session belongs to a *trading day*, named `YYYY-MM-DD` by the date its regular session ends on
 *   (Sunday 17:00 CT opens Monday's). A holiday with a `halt` is not a trading day: what trades on it
 *   belongs to the next one, as CME clears it;
 * - a closed instant belongs to the trading day that closed last: the day turns when a session opens,
 *   so a daily break, a weekend or a holiday stays on the day before it.
 *
 * Daylight saving time comes from the engine's ZoneClock (Intl, learnt per four-week block). Sessions are
 * built a week at a time and kept, and the last answers are kept per hours family, so the per-bar call
 * is a map lookup and two comparisons; Intl is read only when the clock meets a four-week block it has
 * not seen.
 */
import { TicklineError } from '../engine/errors.ts';
import { isoDate, parseClock, ZoneClock } from '../engine/trading-day.ts';
import { UnknownRootError, type FuturesContract } from './contract-months.ts';
import {
  EXCHANGE_HOLIDAYS,
  HOLIDAY_COVERAGE,
  type ExchangeHoliday,
  type HolidayRule,
  type HoursFamily,
} from './exchange-holidays.ts';

export {
  EXCHANGE_HOLIDAYS,
  HOLIDAY_COVERAGE,
  HOURS_FAMILIES,
  type ExchangeHoliday,
  type HolidayRule,
  type HoursFamily,
} from './exchange-holidays.ts';

const DAY_MS = 86_400_000;
const MINUTE_MS = 60_000;
/** How far a search for the next or previous session may go before the data is called broken. */
const MAX_EMPTY_WEEKS = 8;

/** One session of a trading day, in the exchange's wall clock. */
export interface SessionHours {
  /** `HH:MM`. */
  readonly opens: string;
  /** True when the session opens the calendar day before its trading day (Globex's 17:00). */
  readonly opensDayBefore: boolean;
  /** `HH:MM`, on the trading day's date. */
  readonly closes: string;
}

/** A family's regular week: the same sessions for every trading day, Monday to Friday. */
export interface WeeklyHours {
  readonly timeZone: string;
  readonly sessions: readonly SessionHours[];
}

const GLOBEX: WeeklyHours = Object.freeze({
  timeZone: 'America/Chicago',
  sessions: Object.freeze([{ opens: '17:00', opensDayBefore: true, closes: '16:00' }]),
});

/**
 * Regular hours per family (CME contract specifications): all four trade Globex's Sunday-to-Friday
 * 17:00-16:00 CT with a daily break from 16:00 to 17:00. Kept per family because they need not stay the
 * same: the grains' two sessions a day (19:00-07:45 and 08:30-13:20) fit the same shape.
 */
export const FAMILY_HOURS: Readonly<Record<HoursFamily, WeeklyHours>> = Object.freeze({
  equityIndex: GLOBEX,
  interestRate: GLOBEX,
  fx: GLOBEX,
  energyMetals: GLOBEX,
});

/** The hours family of each root of the contract calendar's DEFAULT_ROOTS. */
export const ROOT_FAMILIES: Readonly<Record<string, HoursFamily>> = Object.freeze({
  ES: 'equityIndex',
  MES: 'equityIndex',
  NQ: 'equityIndex',
  MNQ: 'equityIndex',
  YM: 'equityIndex',
  MYM: 'equityIndex',
  RTY: 'equityIndex',
  M2K: 'equityIndex',
  GC: 'energyMetals',
  MGC: 'energyMetals',
  SI: 'energyMetals',
  CL: 'energyMetals',
  MCL: 'energyMetals',
  ZN: 'interestRate',
  '6E': 'fx',
});

/**
 * When a contract month stops trading on its last trading day, in its family's wall clock: a time
 * `HH:MM`, or `close` for the close of that trading day's session. Sources, CME Group contract
 * specifications ("Termination of Trading", "Settlement Procedure"):
 * - equity index (E-mini and Micro E-mini S&P 500, Nasdaq-100, Dow, Russell 2000): trading terminates at
 *   08:30 CT on the third Friday of the contract month, and the month settles to the Special Opening
 *   Quotation (SOQ) of the index computed from the opening prices of its stocks that morning;
 * - the other families: the close of the last trading day. CME ends some earlier (gold 12:30 CT, the
 *   10-year note 12:01 CT, euro FX 09:16 CT, crude oil at the close): not modelled yet.
 */
export const FINAL_SETTLEMENT: Readonly<Record<HoursFamily, string>> = Object.freeze({
  equityIndex: '08:30',
  interestRate: 'close',
  fx: 'close',
  energyMetals: 'close',
});

export type ExchangeHoursErrorCode = 'OUTSIDE_HOLIDAY_COVERAGE' | 'INVALID_DATE' | 'INVALID_INSTANT' | 'INVALID_HOURS';

export class ExchangeHoursError extends TicklineError {
  override readonly name = 'ExchangeHoursError';
  // A date the calendar has no holidays for is the input's (a backtest's range, a simulator's start).
  readonly kind = 'input';
  constructor(
    readonly code: ExchangeHoursErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/** Where an instant falls: in a session, or between two. */
export type SessionState =
  | {
      readonly open: true;
      readonly tradingDay: string;
      readonly openedAt: number;
      readonly closesAt: number;
    }
  | {
      readonly open: false;
      /** The trading day that closed last. */
      readonly tradingDay: string;
      readonly closedAt: number;
      readonly opensAt: number;
      /** The trading day of the session that opens at `opensAt`. */
      readonly nextTradingDay: string;
    };

export interface HolidayInfo {
  readonly date: string;
  readonly name: string;
  readonly kind: HolidayRule['kind'];
  /** `HH:MM` in the exchange's zone: the early close or the halt. */
  readonly at?: string;
  readonly basis: ExchangeHoliday['basis'];
}

export interface ExchangeCalendarOptions {
  /** More roots, or other families for known ones (a root not named here or in ROOT_FAMILIES is unknown). */
  readonly roots?: Readonly<Record<string, HoursFamily>>;
  /**
   * What a trading day beyond the holiday data means. `throw` (the default) fails with
   * OUTSIDE_HOLIDAY_COVERAGE: a backtest of 2024 that traded through Christmas would be wrong where
   * nobody looks, so the caller has to choose. `weeklyHours` applies the regular week with no holidays;
   * `coversHolidays(t)` tells which answers are missing them.
   */
  readonly beyondCoverage?: 'throw' | 'weeklyHours';
}

interface Session {
  readonly opens: number;
  readonly closes: number;
  readonly day: string;
}

interface Span {
  /** The state holds on [from, until). */
  readonly from: number;
  readonly until: number;
  readonly state: SessionState;
}

function epochDay(date: string): number {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(date);
  const day = match ? Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3])) / DAY_MS : NaN;
  if (!match || !Number.isInteger(day) || label(day) !== date)
    throw new ExchangeHoursError('INVALID_DATE', `expected a date as YYYY-MM-DD, got '${date}'`);
  return day;
}

function label(day: number): string {
  return isoDate(day * DAY_MS);
}

/** 0 = Sunday (1970-01-01, day 0, was a Thursday). */
function weekday(day: number): number {
  return (((day + 4) % 7) + 7) % 7;
}

function isWeekend(day: number): boolean {
  const w = weekday(day);
  return w === 0 || w === 6;
}

interface ParsedRule {
  readonly rule: HolidayRule;
  readonly holiday: ExchangeHoliday;
  /** Minutes after midnight of `at` (earlyClose and halt). */
  readonly cut: number;
}

/** One family's sessions: built a week at a time (Saturday to Friday, local), and the last answers. */
class FamilySchedule {
  private readonly clock: ZoneClock;
  private readonly sessions: readonly {
    readonly opens: number;
    readonly closes: number;
    readonly dayBefore: boolean;
  }[];
  private readonly weeks = new Map<number, readonly Session[]>();
  /**
   * The last two answers: nextOpen and nextClose look one span past t, so with one kept, a bar's isOpen
   * and nextOpen would evict each other on every bar.
   */
  private recent: Span | undefined;
  private older: Span | undefined;

  constructor(
    readonly family: HoursFamily,
    readonly hours: WeeklyHours,
    private readonly rules: ReadonlyMap<number, ParsedRule>,
    private readonly firstDay: number,
    private readonly lastDay: number,
    private readonly strict: boolean,
  ) {
    this.clock = new ZoneClock(hours.timeZone);
    this.sessions = hours.sessions.map((s) => ({
      opens: parseClock(s.opens),
      closes: parseClock(s.closes),
      dayBefore: s.opensDayBefore,
    }));
    // In minutes from the trading day's midnight, sessions must be in order with a gap between each and
    // the next, the next trading day's first included: where two touched, a close would not be a close.
    const bounds = this.sessions.map((s) => [s.opens - (s.dayBefore ? 24 * 60 : 0), s.closes] as const);
    const first = bounds[0];
    if (first === undefined) throw new ExchangeHoursError('INVALID_HOURS', `${family}: a trading day needs a session`);
    bounds.forEach(([opens, closes], i) => {
      const nextOpens = i + 1 < bounds.length ? bounds[i + 1]![0] : first[0] + 24 * 60;
      if (!(opens < closes && closes < nextOpens))
        throw new ExchangeHoursError(
          'INVALID_HOURS',
          `${family}: sessions must be in order, open before they close, and not touch`,
        );
    });
  }

  /** The instants the holiday data decides: from the first covered week's first open to the last week's last close. */
  coverage(): { from: number; until: number } {
    const first = this.week(this.firstDay)[0];
    const lastWeek = this.week(this.lastDay - 4);
    const last = lastWeek[lastWeek.length - 1];
    // An empty first or last week only narrows what is covered; the data has none.
    return { from: first?.opens ?? Infinity, until: last?.closes ?? -Infinity };
  }

  covers(day: number): boolean {
    return day >= this.firstDay && day <= this.lastDay;
  }

  rule(day: number): ParsedRule | undefined {
    if (!this.covers(day)) {
      if (this.strict)
        throw new ExchangeHoursError(
          'OUTSIDE_HOLIDAY_COVERAGE',
          `no holiday data for ${label(day)}: the calendar covers ${HOLIDAY_COVERAGE.first} to ${HOLIDAY_COVERAGE.last}`,
        );
      return undefined;
    }
    return this.rules.get(day);
  }

  at(t: number): Span {
    const recent = this.recent;
    if (recent !== undefined && t >= recent.from && t < recent.until) return recent;
    const older = this.older;
    if (older !== undefined && t >= older.from && t < older.until) {
      this.older = recent;
      this.recent = older;
      return older;
    }
    const span = this.locate(t);
    this.older = recent;
    this.recent = span;
    return span;
  }

  private locate(t: number): Span {
    if (!Number.isFinite(t))
      throw new ExchangeHoursError('INVALID_INSTANT', `expected an instant as epoch ms, got ${t}`);
    const localDay = Math.floor(this.clock.wall(t) / DAY_MS);
    let week = this.weekOf(localDay);
    let sessions = this.week(week);
    let i = 0;
    while (i < sessions.length && sessions[i]!.closes <= t) i++;
    const current = sessions[i];
    if (current !== undefined && current.opens <= t) {
      return {
        from: current.opens,
        until: current.closes,
        state: { open: true, tradingDay: current.day, openedAt: current.opens, closesAt: current.closes },
      };
    }
    const next = current ?? this.firstAfter(week);
    let previous = sessions[i - 1];
    for (let back = 1; previous === undefined; back++) {
      if (back > MAX_EMPTY_WEEKS)
        throw new ExchangeHoursError(
          'INVALID_HOURS',
          `${this.family}: no session in ${MAX_EMPTY_WEEKS} weeks before ${new Date(t).toISOString()}`,
        );
      week -= 7;
      sessions = this.week(week);
      previous = sessions[sessions.length - 1];
    }
    return {
      from: previous.closes,
      until: next.opens,
      state: {
        open: false,
        tradingDay: previous.day,
        closedAt: previous.closes,
        opensAt: next.opens,
        nextTradingDay: next.day,
      },
    };
  }

  private firstAfter(week: number): Session {
    for (let ahead = 1; ahead <= MAX_EMPTY_WEEKS; ahead++) {
      const first = this.week(week + 7 * ahead)[0];
      if (first !== undefined) return first;
    }
    throw new ExchangeHoursError(
      'INVALID_HOURS',
      `${this.family}: no session in ${MAX_EMPTY_WEEKS} weeks after ${label(week)}`,
    );
  }

  /** The Monday of the Saturday-to-Friday week holding a local date. */
  private weekOf(day: number): number {
    const saturday = day - ((weekday(day) + 1) % 7);
    return saturday + 2;
  }

  private week(monday: number): readonly Session[] {
    let sessions = this.weeks.get(monday);
    if (sessions === undefined) {
      sessions = this.build(monday);
      // A sweep over decades would otherwise keep every week it passed.
      if (this.weeks.size > 1024) this.weeks.clear();
      this.weeks.set(monday, sessions);
    }
    return sessions;
  }

  private build(monday: number): readonly Session[] {
    const out: Session[] = [];
    for (let day = monday; day < monday + 5; day++) {
      const parsed = this.rule(day);
      if (parsed?.rule.kind === 'closed') continue;
      const name = parsed?.rule.kind === 'halt' ? this.nextTradingDay(day) : label(day);
      for (const s of this.sessions) {
        const opensWall = (day - (s.dayBefore ? 1 : 0)) * DAY_MS + s.opens * MINUTE_MS;
        let closesWall = day * DAY_MS + s.closes * MINUTE_MS;
        if (parsed !== undefined) {
          const cutWall = day * DAY_MS + parsed.cut * MINUTE_MS;
          if (opensWall >= cutWall) continue;
          closesWall = Math.min(closesWall, cutWall);
        }
        out.push({ opens: this.clock.instantOf(opensWall), closes: this.clock.instantOf(closesWall), day: name });
      }
    }
    return out;
  }

  /** The first date after a halt that is a trading day: a weekday neither closed nor halted. */
  private nextTradingDay(day: number): string {
    for (let d = day + 1; d <= day + 7 * MAX_EMPTY_WEEKS; d++) {
      if (isWeekend(d)) continue;
      const kind = this.rule(d)?.rule.kind;
      if (kind !== 'closed' && kind !== 'halt') return label(d);
    }
    throw new ExchangeHoursError('INVALID_HOURS', `${this.family}: no trading day after ${label(day)}`);
  }
}

/**
 * The markets' hours per root. Roots are case-insensitive, like the contract calendar's. Every method takes
 * an instant as epoch ms and throws UnknownRootError (code UNKNOWN_ROOT) for a root it has no family for.
 */
export class ExchangeCalendar {
  private readonly byRoot = new Map<string, FamilySchedule>();
  private readonly families = new Map<HoursFamily, FamilySchedule>();
  private readonly firstDay: number;
  private readonly lastDay: number;
  private readonly strict: boolean;
  private coverage: { from: number; until: number } | undefined;
  private readonly zoneClocks = new Map<string, ZoneClock>();

  constructor(options: ExchangeCalendarOptions = {}) {
    this.strict = (options.beyondCoverage ?? 'throw') === 'throw';
    this.firstDay = epochDay(HOLIDAY_COVERAGE.first);
    this.lastDay = epochDay(HOLIDAY_COVERAGE.last);
    // Weeks are built whole, so the data must cover whole Monday-to-Friday weeks.
    if (weekday(this.firstDay) !== 1 || weekday(this.lastDay) !== 5)
      throw new ExchangeHoursError('INVALID_DATE', 'holiday coverage must run from a Monday to a Friday');
    const rules = new Map<HoursFamily, Map<number, ParsedRule>>();
    const seen = new Set<number>();
    for (const holiday of EXCHANGE_HOLIDAYS) {
      const day = epochDay(holiday.date);
      if (seen.has(day)) throw new ExchangeHoursError('INVALID_DATE', `two holidays on ${holiday.date}`);
      if (day < this.firstDay || day > this.lastDay || isWeekend(day))
        throw new ExchangeHoursError('INVALID_DATE', `holiday ${holiday.date} is not a weekday of the covered years`);
      seen.add(day);
      for (const [family, rule] of Object.entries(holiday.rules) as [HoursFamily, HolidayRule][]) {
        let byDay = rules.get(family);
        if (!byDay) {
          byDay = new Map();
          rules.set(family, byDay);
        }
        byDay.set(day, { rule, holiday, cut: rule.kind === 'closed' ? 0 : parseClock(rule.at) });
      }
    }
    const roots = { ...ROOT_FAMILIES, ...options.roots };
    for (const [root, family] of Object.entries(roots)) {
      let schedule = this.families.get(family);
      if (!schedule) {
        const hours = FAMILY_HOURS[family];
        if (!hours) throw new ExchangeHoursError('INVALID_HOURS', `root ${root}: unknown hours family '${family}'`);
        schedule = new FamilySchedule(
          family,
          hours,
          rules.get(family) ?? new Map(),
          this.firstDay,
          this.lastDay,
          this.strict,
        );
        this.families.set(family, schedule);
      }
      this.byRoot.set(root.toUpperCase(), schedule);
    }
  }

  /**
   * The instant a month of `root` whose last trading day is `date` (`YYYY-MM-DD`) stops trading and
   * expires (FINAL_SETTLEMENT of its family). Holidays do not move it (an early close on an expiry day is
   * not modelled).
   */
  finalSettlement(root: string, date: string): number {
    const schedule = this.schedule(root);
    const at = FINAL_SETTLEMENT[schedule.family];
    const sessions = schedule.hours.sessions;
    const minutes = parseClock(at === 'close' ? (sessions[sessions.length - 1] as SessionHours).closes : at);
    let clock = this.zoneClocks.get(schedule.hours.timeZone);
    if (!clock) {
      clock = new ZoneClock(schedule.hours.timeZone);
      this.zoneClocks.set(schedule.hours.timeZone, clock);
    }
    const wall = epochDay(date) * DAY_MS + minutes * MINUTE_MS;
    // The wall clock back to UTC: the offset at the first guess, then at the answer (exact away from a DST change).
    return wall - clock.offsetAt(wall - clock.offsetAt(wall));
  }

  /** The instant a month stops trading and expires: `finalSettlement` on its last trading day. */
  monthExpiry(contract: Pick<FuturesContract, 'spec' | 'expiry'>): number {
    return this.finalSettlement(contract.spec.root, isoDate(contract.expiry));
  }

  /** The roots this calendar knows. */
  roots(): string[] {
    return [...this.byRoot.keys()];
  }

  /** Whether the calendar has hours for `root` (any case). */
  knows(root: string): boolean {
    return this.byRoot.has(root.toUpperCase());
  }

  familyOf(root: string): HoursFamily {
    return this.schedule(root).family;
  }

  hoursOf(root: string): WeeklyHours {
    return this.schedule(root).hours;
  }

  sessionAt(root: string, t: number): SessionState {
    return this.schedule(root).at(t).state;
  }

  isOpen(root: string, t: number): boolean {
    return this.schedule(root).at(t).state.open;
  }

  /** The trading day `t` belongs to, `YYYY-MM-DD`: its session's, or when closed, the one that closed last. */
  tradingDay(root: string, t: number): string {
    return this.schedule(root).at(t).state.tradingDay;
  }

  /** Milliseconds until the session open at `t` closes, or null when closed. */
  msToClose(root: string, t: number): number | null {
    const state = this.schedule(root).at(t).state;
    return state.open ? state.closesAt - t : null;
  }

  /** The first instant after `t` at which the market opens (after the next close when open at `t`). */
  nextOpen(root: string, t: number): number {
    const schedule = this.schedule(root);
    const state = schedule.at(t).state;
    if (!state.open) return state.opensAt;
    const after = schedule.at(state.closesAt).state;
    if (after.open) throw new ExchangeHoursError('INVALID_HOURS', 'a session closed into another');
    return after.opensAt;
  }

  /** The first instant after `t` at which the market closes (the close of the next session when closed at `t`). */
  nextClose(root: string, t: number): number {
    const schedule = this.schedule(root);
    const state = schedule.at(t).state;
    if (state.open) return state.closesAt;
    const next = schedule.at(state.opensAt).state;
    if (!next.open) throw new ExchangeHoursError('INVALID_HOURS', 'a session opened closed');
    return next.closesAt;
  }

  /**
   * The holiday on a date (`YYYY-MM-DD`, the exchange's zone) as it applies to a root, or undefined for
   * a regular day or one the root's family trades as usual.
   */
  holidayOn(root: string, date: string): HolidayInfo | undefined {
    const schedule = this.schedule(root);
    const parsed = schedule.rule(epochDay(date));
    if (parsed === undefined) return undefined;
    const { rule, holiday } = parsed;
    const base = { date: holiday.date, name: holiday.name, kind: rule.kind, basis: holiday.basis };
    return rule.kind === 'closed' ? base : { ...base, at: rule.at };
  }

  /**
   * True when the answers at `t` come from the holiday data: from the first covered session's open to the
   * last one's close. Outside, a calendar built with `beyondCoverage: 'weeklyHours'` answers from the
   * regular week, and the default one throws. An answer that reaches past the end (the next open after
   * the last covered close) throws in the default calendar even when `t` is covered.
   */
  coversHolidays(t: number): boolean {
    if (this.coverage === undefined) {
      // Conservative over families: true only where every family's answers are decided by the data.
      let from = -Infinity;
      let until = Infinity;
      for (const schedule of this.families.values()) {
        const c = schedule.coverage();
        from = Math.max(from, c.from);
        until = Math.min(until, c.until);
      }
      this.coverage = { from, until };
    }
    return t >= this.coverage.from && t < this.coverage.until;
  }

  private schedule(root: string): FamilySchedule {
    const schedule = this.byRoot.get(root) ?? this.byRoot.get(root.toUpperCase());
    if (!schedule)
      throw new UnknownRootError(
        `unknown root "${root}" for exchange hours; known: ${[...this.byRoot.keys()].join(', ')}`,
      );
    return schedule;
  }
}

/** The calendar of the built-in roots, strict about the years its holiday data covers. */
export const EXCHANGE_CALENDAR = new ExchangeCalendar();
