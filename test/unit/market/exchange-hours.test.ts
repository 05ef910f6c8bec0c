/**
 * The exchange calendar: the regular Globex week, daylight saving time, the holidays of 2025-2027 as CME
 * published them (halts, early closes, closures, and the trading day a halted holiday trades for), the
 * holiday data's own consistency, and properties over any instant: the answers agree with a direct
 * reading of the rules on Intl's wall clock, and open/close/next-open/next-close/trading-day agree with
 * each other.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEFAULT_ROOTS, rootSpecSchema, UnknownRootError } from '../../../src/market/contract-months.ts';
import {
  EXCHANGE_CALENDAR as calendar,
  EXCHANGE_HOLIDAYS,
  ExchangeCalendar,
  ExchangeHoursError,
  HOLIDAY_COVERAGE,
  HOURS_FAMILIES,
  type HolidayRule,
  type HoursFamily,
} from '../../../src/market/exchange-hours.ts';

const utc = (iso: string) => Date.parse(iso);
const iso = (t: number) => new Date(t).toISOString();
const MINUTE = 60_000;
const DAY_MS = 86_400_000;
/** One root per family. */
const FAMILY_ROOTS: Record<HoursFamily, string> = {
  equityIndex: 'ES',
  interestRate: 'ZN',
  fx: '6E',
  energyMetals: 'CL',
};

describe('regular Globex week', () => {
  it('is open on a Tuesday morning, until 16:00 CT', () => {
    const t = utc('2026-11-17T16:00:00Z'); // Tuesday 10:00 CST
    expect(calendar.isOpen('ES', t)).toBe(true);
    expect(calendar.tradingDay('ES', t)).toBe('2026-11-17');
    expect(iso(calendar.nextClose('ES', t))).toBe('2026-11-17T22:00:00.000Z');
    expect(calendar.msToClose('ES', t)).toBe(6 * 3_600_000);
    expect(calendar.sessionAt('ES', t)).toEqual({
      open: true,
      tradingDay: '2026-11-17',
      openedAt: utc('2026-11-16T23:00:00Z'),
      closesAt: utc('2026-11-17T22:00:00Z'),
    });
  });

  it('closes for the daily break from 16:00 to 17:00 CT and reopens for the next trading day', () => {
    const t = utc('2026-11-17T22:30:00Z'); // Tuesday 16:30 CST
    expect(calendar.isOpen('ES', t)).toBe(false);
    expect(calendar.msToClose('ES', t)).toBeNull();
    expect(iso(calendar.nextOpen('ES', t))).toBe('2026-11-17T23:00:00.000Z');
    // The break stays on the day that closed; the day turns when the next session opens.
    expect(calendar.tradingDay('ES', t)).toBe('2026-11-17');
    expect(calendar.sessionAt('ES', t)).toMatchObject({ open: false, nextTradingDay: '2026-11-18' });
    expect(calendar.isOpen('ES', utc('2026-11-17T21:59:59.999Z'))).toBe(true);
    expect(calendar.isOpen('ES', utc('2026-11-17T22:00:00Z'))).toBe(false);
    expect(calendar.tradingDay('ES', utc('2026-11-17T23:00:00Z'))).toBe('2026-11-18');
  });

  it('closes on Friday at 16:00 CT until Sunday 17:00 CT; Saturday is closed', () => {
    const friday = utc('2026-11-20T16:00:00Z');
    expect(iso(calendar.nextClose('ES', friday))).toBe('2026-11-20T22:00:00.000Z');
    expect(iso(calendar.nextOpen('ES', friday))).toBe('2026-11-22T23:00:00.000Z');
    const saturday = utc('2026-11-21T18:00:00Z');
    expect(calendar.isOpen('ES', saturday)).toBe(false);
    expect(calendar.tradingDay('ES', saturday)).toBe('2026-11-20');
    expect(iso(calendar.nextOpen('ES', saturday))).toBe('2026-11-22T23:00:00.000Z');
    expect(iso(calendar.nextClose('ES', saturday))).toBe('2026-11-23T22:00:00.000Z');
  });

  it("names a session opening Sunday 17:00 CT by Monday's date", () => {
    const sunday18 = utc('2026-11-23T00:00:00Z'); // Sunday 18:00 CST
    expect(calendar.isOpen('ES', sunday18)).toBe(true);
    expect(calendar.tradingDay('ES', sunday18)).toBe('2026-11-23');
    expect(calendar.isOpen('ES', utc('2026-11-22T22:59:59.999Z'))).toBe(false);
  });

  it('follows daylight saving time: Sunday 17:00 CT is 23:00 UTC in winter, 22:00 UTC in summer', () => {
    // 2026-03-08: CST -> CDT at 02:00, before the Sunday open.
    expect(iso(calendar.nextOpen('ES', utc('2026-03-07T12:00:00Z')))).toBe('2026-03-08T22:00:00.000Z');
    expect(iso(calendar.nextClose('ES', utc('2026-03-06T12:00:00Z')))).toBe('2026-03-06T22:00:00.000Z');
    expect(iso(calendar.nextClose('ES', utc('2026-03-09T12:00:00Z')))).toBe('2026-03-09T21:00:00.000Z');
    // 2026-11-01: CDT -> CST at 02:00.
    expect(iso(calendar.nextOpen('ES', utc('2026-10-31T12:00:00Z')))).toBe('2026-11-01T23:00:00.000Z');
    expect(iso(calendar.nextClose('ES', utc('2026-10-30T12:00:00Z')))).toBe('2026-10-30T21:00:00.000Z');
    expect(calendar.tradingDay('ES', utc('2026-11-02T00:00:00Z'))).toBe('2026-11-02');
  });

  it('knows every root of the contract calendar, with the session its root spec declares', () => {
    for (const input of DEFAULT_ROOTS) {
      const spec = rootSpecSchema.parse(input);
      const hours = calendar.hoursOf(spec.root);
      expect(hours.timeZone, spec.root).toBe(spec.session.timeZone);
      expect(hours.sessions[0]?.opens, spec.root).toBe(spec.session.opens);
      expect(hours.sessions.at(-1)?.closes, spec.root).toBe(spec.session.closes);
    }
    expect(new Set(calendar.roots())).toEqual(new Set(DEFAULT_ROOTS.map((r) => r.root)));
    expect(calendar.isOpen('es', utc('2026-11-17T16:00:00Z'))).toBe(true);
  });

  it('fails on an unknown root with UNKNOWN_ROOT, and takes more roots', () => {
    expect(() => calendar.isOpen('XX', utc('2026-11-17T16:00:00Z'))).toThrow(UnknownRootError);
    expect(() => calendar.tradingDay('ZB', utc('2026-11-17T16:00:00Z'))).toThrow(
      expect.objectContaining({ code: 'UNKNOWN_ROOT' }),
    );
    const more = new ExchangeCalendar({ roots: { ZB: 'interestRate' } });
    expect(more.familyOf('ZB')).toBe('interestRate');
    expect(iso(more.nextClose('ZB', utc('2026-11-27T15:00:00Z')))).toBe('2026-11-27T18:15:00.000Z');
  });
});

describe('holidays', () => {
  it('Thanksgiving 2026, equity index: a 12:00 CT halt, then the day after closes at 12:15 CT', () => {
    expect(calendar.holidayOn('ES', '2026-11-26')).toEqual({
      date: '2026-11-26',
      name: 'Thanksgiving Day',
      kind: 'halt',
      at: '12:00',
      basis: 'read',
    });
    expect(calendar.holidayOn('ES', '2026-11-27')).toMatchObject({ kind: 'earlyClose', at: '12:15' });
    const thursday1159 = utc('2026-11-26T17:59:00Z');
    expect(calendar.isOpen('ES', thursday1159)).toBe(true);
    expect(calendar.msToClose('ES', thursday1159)).toBe(MINUTE);
    // Thanksgiving is no trading day: its morning trades for Friday.
    expect(calendar.tradingDay('ES', thursday1159)).toBe('2026-11-27');
    expect(calendar.isOpen('ES', utc('2026-11-26T18:00:00Z'))).toBe(false);
    expect(iso(calendar.nextOpen('ES', utc('2026-11-26T18:00:00Z')))).toBe('2026-11-26T23:00:00.000Z');
    expect(calendar.tradingDay('ES', utc('2026-11-27T00:00:00Z'))).toBe('2026-11-27');
    expect(iso(calendar.nextClose('ES', utc('2026-11-27T00:00:00Z')))).toBe('2026-11-27T18:15:00.000Z');
    expect(iso(calendar.nextOpen('ES', utc('2026-11-27T18:15:00Z')))).toBe('2026-11-29T23:00:00.000Z');
    // Wednesday is a regular day.
    expect(calendar.holidayOn('ES', '2026-11-25')).toBeUndefined();
    expect(iso(calendar.nextClose('ES', utc('2026-11-25T16:00:00Z')))).toBe('2026-11-25T22:00:00.000Z');
  });

  it('Thanksgiving 2026, other families: energy and metals 13:30 / 13:45, rates 12:00 / 12:15, FX a full day / 13:45', () => {
    const thursday = utc('2026-11-26T15:00:00Z');
    const friday = utc('2026-11-27T15:00:00Z');
    expect(iso(calendar.nextClose('CL', thursday))).toBe('2026-11-26T19:30:00.000Z');
    expect(iso(calendar.nextClose('GC', friday))).toBe('2026-11-27T19:45:00.000Z');
    expect(iso(calendar.nextClose('ZN', thursday))).toBe('2026-11-26T18:00:00.000Z');
    expect(iso(calendar.nextClose('ZN', friday))).toBe('2026-11-27T18:15:00.000Z');
    expect(iso(calendar.nextClose('6E', thursday))).toBe('2026-11-26T22:00:00.000Z');
    expect(calendar.tradingDay('6E', thursday)).toBe('2026-11-27');
    expect(iso(calendar.nextClose('6E', friday))).toBe('2026-11-27T19:45:00.000Z');
  });

  it('Christmas 2026: Thursday closes at 12:15 CT (equity) / 12:45 CT (energy), Friday is closed', () => {
    expect(iso(calendar.nextClose('ES', utc('2026-12-24T15:00:00Z')))).toBe('2026-12-24T18:15:00.000Z');
    expect(iso(calendar.nextClose('CL', utc('2026-12-24T15:00:00Z')))).toBe('2026-12-24T18:45:00.000Z');
    for (const root of ['ES', 'ZN', '6E', 'CL']) {
      expect(calendar.holidayOn(root, '2026-12-25')).toMatchObject({ kind: 'closed', name: 'Christmas Day' });
      expect(calendar.isOpen(root, utc('2026-12-25T16:00:00Z')), root).toBe(false);
      expect(iso(calendar.nextOpen(root, utc('2026-12-25T16:00:00Z'))), root).toBe('2026-12-27T23:00:00.000Z');
    }
    expect(calendar.tradingDay('ES', utc('2026-12-25T16:00:00Z'))).toBe('2026-12-24');
    expect(calendar.tradingDay('ES', utc('2026-12-28T00:00:00Z'))).toBe('2026-12-28');
  });

  it('Good Friday 2026 (2026-04-03): energy and metals closed; equity, rates and FX a short session after the jobs report', () => {
    expect(calendar.holidayOn('CL', '2026-04-03')).toMatchObject({ kind: 'closed', name: 'Good Friday' });
    expect(iso(calendar.nextClose('CL', utc('2026-04-02T15:00:00Z')))).toBe('2026-04-02T21:00:00.000Z');
    expect(calendar.isOpen('CL', utc('2026-04-03T13:00:00Z'))).toBe(false);
    expect(iso(calendar.nextOpen('CL', utc('2026-04-03T13:00:00Z')))).toBe('2026-04-05T22:00:00.000Z');
    expect(calendar.holidayOn('ES', '2026-04-03')).toMatchObject({ kind: 'earlyClose', at: '08:15' });
    expect(calendar.isOpen('ES', utc('2026-04-03T13:14:00Z'))).toBe(true);
    expect(calendar.tradingDay('ES', utc('2026-04-03T13:14:00Z'))).toBe('2026-04-03');
    expect(calendar.isOpen('ES', utc('2026-04-03T13:15:00Z'))).toBe(false);
    expect(iso(calendar.nextClose('ZN', utc('2026-04-03T13:00:00Z')))).toBe('2026-04-03T15:15:00.000Z');
    // Good Friday 2025 had no report: closed for every family.
    for (const root of ['ES', 'ZN', '6E', 'CL'])
      expect(calendar.isOpen(root, utc('2025-04-18T15:00:00Z')), root).toBe(false);
    expect(calendar.tradingDay('ES', utc('2025-04-18T15:00:00Z'))).toBe('2025-04-17');
  });

  it('a Monday holiday halts and trades for Tuesday (Martin Luther King Jr. Day 2026)', () => {
    expect(calendar.tradingDay('ES', utc('2026-01-19T00:00:00Z'))).toBe('2026-01-20'); // Sunday 18:00 CST
    expect(calendar.isOpen('ES', utc('2026-01-19T17:59:00Z'))).toBe(true);
    expect(calendar.isOpen('ES', utc('2026-01-19T18:00:00Z'))).toBe(false);
    expect(calendar.tradingDay('ES', utc('2026-01-19T20:00:00Z'))).toBe('2026-01-20');
    expect(iso(calendar.nextClose('CL', utc('2026-01-19T15:00:00Z')))).toBe('2026-01-19T19:30:00.000Z');
    // FX trades its regular hours, but for Tuesday.
    expect(calendar.isOpen('6E', utc('2026-01-19T21:00:00Z'))).toBe(true);
    expect(calendar.tradingDay('6E', utc('2026-01-19T21:00:00Z'))).toBe('2026-01-20');
  });

  it('a Friday holiday halts at 12:00 CT until Sunday (Juneteenth 2026), and the halted morning trades for Monday', () => {
    expect(calendar.isOpen('ES', utc('2026-06-19T16:59:00Z'))).toBe(true);
    expect(calendar.tradingDay('ES', utc('2026-06-19T16:59:00Z'))).toBe('2026-06-22');
    expect(iso(calendar.nextOpen('ES', utc('2026-06-19T16:59:00Z')))).toBe('2026-06-21T22:00:00.000Z');
    expect(calendar.tradingDay('ES', utc('2026-06-18T20:00:00Z'))).toBe('2026-06-18');
  });

  it('the National Day of Mourning of 2025-01-09: equity stopped at 08:30 CT, rates at 12:15 CT, energy traded', () => {
    expect(iso(calendar.nextClose('ES', utc('2025-01-09T13:00:00Z')))).toBe('2025-01-09T14:30:00.000Z');
    expect(iso(calendar.nextOpen('ES', utc('2025-01-09T13:00:00Z')))).toBe('2025-01-09T23:00:00.000Z');
    expect(calendar.sessionAt('ES', utc('2025-01-09T15:00:00Z'))).toMatchObject({
      open: false,
      tradingDay: '2025-01-09',
      nextTradingDay: '2025-01-10',
    });
    expect(iso(calendar.nextClose('ZN', utc('2025-01-09T13:00:00Z')))).toBe('2025-01-09T18:15:00.000Z');
    expect(calendar.isOpen('CL', utc('2025-01-09T20:00:00Z'))).toBe(true);
  });

  it('Christmas 2027 falls on a Saturday: closed on Friday 24 December, derived by rule', () => {
    expect(calendar.holidayOn('ES', '2027-12-24')).toMatchObject({ kind: 'closed', basis: 'derived' });
    expect(iso(calendar.nextOpen('ES', utc('2027-12-23T15:00:00Z')))).toBe('2027-12-26T23:00:00.000Z');
  });
});

describe('holiday coverage', () => {
  it('throws beyond the covered years by default, and tells which instants are covered', () => {
    const first = utc('2024-12-29T23:00:00Z'); // Sunday 17:00 CST, the first covered session
    const last = utc('2027-12-31T22:00:00Z'); // Friday 16:00 CST, the last covered close
    expect(calendar.coversHolidays(first)).toBe(true);
    expect(calendar.coversHolidays(first - 1)).toBe(false);
    expect(calendar.coversHolidays(last - 1)).toBe(true);
    expect(calendar.coversHolidays(last)).toBe(false);
    expect(calendar.isOpen('ES', first)).toBe(true);
    expect(() => calendar.isOpen('ES', utc('2024-12-25T16:00:00Z'))).toThrow(ExchangeHoursError);
    expect(() => calendar.isOpen('ES', first - 1)).toThrow(/2024-12-2/);
    expect(() => calendar.nextOpen('ES', last - 1)).toThrow(
      expect.objectContaining({ code: 'OUTSIDE_HOLIDAY_COVERAGE' }),
    );
    expect(() => calendar.holidayOn('ES', '2028-01-17')).toThrow(
      expect.objectContaining({ code: 'OUTSIDE_HOLIDAY_COVERAGE' }),
    );
    expect(() => calendar.holidayOn('ES', '2026-02-30')).toThrow(expect.objectContaining({ code: 'INVALID_DATE' }));
    expect(() => calendar.isOpen('ES', NaN)).toThrow(expect.objectContaining({ code: 'INVALID_INSTANT' }));
    expect(HOLIDAY_COVERAGE.years).toEqual([2025, 2026, 2027]);
  });

  it('applies the regular week beyond the covered years when asked to', () => {
    const weekly = new ExchangeCalendar({ beyondCoverage: 'weeklyHours' });
    const christmas2024 = utc('2024-12-25T16:00:00Z');
    expect(weekly.coversHolidays(christmas2024)).toBe(false);
    expect(weekly.isOpen('ES', christmas2024)).toBe(true);
    expect(weekly.holidayOn('ES', '2024-12-25')).toBeUndefined();
    expect(iso(weekly.nextOpen('ES', utc('2027-12-31T22:00:00Z')))).toBe('2028-01-02T23:00:00.000Z');
    // Inside the covered years it is the same calendar.
    expect(weekly.isOpen('ES', utc('2026-12-25T16:00:00Z'))).toBe(false);
  });
});

describe('holiday data', () => {
  const epochDay = (date: string) => Date.parse(`${date}T00:00:00Z`) / DAY_MS;
  const weekdayOf = (date: string) => new Date(`${date}T00:00:00Z`).getUTCDay();

  it('lists valid weekdays in order, once each, inside the coverage, with valid times before the regular close', () => {
    let previous = '';
    for (const holiday of EXCHANGE_HOLIDAYS) {
      expect(new Date(`${holiday.date}T00:00:00Z`).toISOString().slice(0, 10)).toBe(holiday.date);
      expect(holiday.date > previous, holiday.date).toBe(true);
      previous = holiday.date;
      expect([1, 2, 3, 4, 5], holiday.date).toContain(weekdayOf(holiday.date));
      expect(holiday.date >= HOLIDAY_COVERAGE.first && holiday.date <= HOLIDAY_COVERAGE.last).toBe(true);
      for (const [family, rule] of Object.entries(holiday.rules) as [HoursFamily, HolidayRule][]) {
        expect(HOURS_FAMILIES).toContain(family);
        if (rule.kind !== 'closed')
          expect(rule.at, `${holiday.date} ${family}`).toMatch(/^(0\d|1[0-5]):[0-5]\d$|^16:00$/);
      }
      // Only 2027 is derived, and what was read is marked so.
      if (holiday.basis === 'derived') expect(holiday.date.startsWith('2027-')).toBe(true);
    }
  });

  it('dates each US holiday by its rule in every covered year', () => {
    const nthWeekday = (year: number, month: number, weekday: number, nth: number) => {
      const first = Date.UTC(year, month - 1, 1) / DAY_MS;
      const offset = (weekday - new Date(first * DAY_MS).getUTCDay() + 7) % 7;
      return first + offset + 7 * (nth - 1);
    };
    const lastWeekday = (year: number, month: number, weekday: number) => {
      const last = Date.UTC(year, month, 0) / DAY_MS;
      return last - ((new Date(last * DAY_MS).getUTCDay() - weekday + 7) % 7);
    };
    // Anonymous Gregorian algorithm for Easter Sunday.
    const easter = (y: number) => {
      const a = y % 19,
        b = Math.floor(y / 100),
        c = y % 100,
        d = Math.floor(b / 4),
        e = b % 4;
      const f = Math.floor((b + 8) / 25),
        g = Math.floor((b - f + 1) / 3),
        h = (19 * a + b - d - g + 15) % 30;
      const i = Math.floor(c / 4),
        k = c % 4,
        l = (32 + 2 * e + 2 * i - h - k) % 7,
        m = Math.floor((a + 11 * h + 22 * l) / 451);
      const month = Math.floor((h + l - 7 * m + 114) / 31),
        day = ((h + l - 7 * m + 114) % 31) + 1;
      return Date.UTC(y, month - 1, day) / DAY_MS;
    };
    /** The federal rule: Saturday moves to Friday, Sunday to Monday. */
    const observed = (day: number) => {
      const w = new Date(day * DAY_MS).getUTCDay();
      return w === 6 ? day - 1 : w === 0 ? day + 1 : day;
    };
    const byDay = new Map(EXCHANGE_HOLIDAYS.map((h) => [epochDay(h.date), h.name]));
    for (const year of HOLIDAY_COVERAGE.years) {
      const expected: [number, RegExp][] = [
        [nthWeekday(year, 1, 1, 3), /^Martin Luther King/],
        [nthWeekday(year, 2, 1, 3), /^Presidents/],
        [easter(year) - 2, /^Good Friday/],
        [lastWeekday(year, 5, 1), /^Memorial/],
        [observed(Date.UTC(year, 5, 19) / DAY_MS), /^Juneteenth/],
        [observed(Date.UTC(year, 6, 4) / DAY_MS), /^Independence Day/],
        [nthWeekday(year, 9, 1, 1), /^Labor/],
        [nthWeekday(year, 11, 4, 4), /^Thanksgiving/],
        [nthWeekday(year, 11, 4, 4) + 1, /^Day after Thanksgiving/],
        [observed(Date.UTC(year, 11, 25) / DAY_MS), /^Christmas Day/],
      ];
      const newYear = Date.UTC(year, 0, 1) / DAY_MS;
      if (new Date(newYear * DAY_MS).getUTCDay() % 6 !== 0) expected.push([newYear, /^New Year/]);
      for (const [day, name] of expected) expect(byDay.get(day), `${year}: ${name}`).toMatch(name);
    }
  });
});

// ---------------------------------------------------------------- properties

/** The covered instants, less the last weeks, whose next open lies beyond the data. */
const FROM = utc('2024-12-29T23:00:00Z');
const UNTIL = utc('2027-12-20T00:00:00Z');
/** Any millisecond, or a whole minute (every boundary is one) or the millisecond before one. */
const instant = fc.oneof(
  fc.integer({ min: FROM, max: UNTIL - 1 }),
  fc.integer({ min: Math.ceil(FROM / MINUTE), max: Math.floor(UNTIL / MINUTE) - 1 }).map((m) => m * MINUTE),
  fc.integer({ min: Math.ceil(FROM / MINUTE) + 1, max: Math.floor(UNTIL / MINUTE) - 1 }).map((m) => m * MINUTE - 1),
);
const family = fc.constantFrom(...HOURS_FAMILIES);

/** The wall clock in Chicago from Intl directly, not from the engine's learnt offsets. */
const chicagoFormat = new Intl.DateTimeFormat('en-US', {
  timeZone: 'America/Chicago',
  hourCycle: 'h23',
  year: 'numeric',
  month: 'numeric',
  day: 'numeric',
  hour: 'numeric',
  minute: 'numeric',
});
function chicago(t: number): { day: number; minute: number } {
  const parts = chicagoFormat.formatToParts(new Date(t));
  const get = (type: string) => Number(parts.find((p) => p.type === type)!.value);
  return {
    day: Date.UTC(get('year'), get('month') - 1, get('day')) / DAY_MS,
    minute: get('hour') * 60 + get('minute'),
  };
}

const rulesByDay = new Map<string, ReadonlyMap<number, HolidayRule>>();
function ruleOf(f: HoursFamily, day: number): HolidayRule | undefined {
  let rules = rulesByDay.get(f);
  if (!rules) {
    rules = new Map(
      EXCHANGE_HOLIDAYS.flatMap((h) =>
        h.rules[f] ? [[Date.parse(`${h.date}T00:00:00Z`) / DAY_MS, h.rules[f]] as const] : [],
      ),
    );
    rulesByDay.set(f, rules);
  }
  return rules.get(day);
}
const dayLabel = (day: number) => new Date(day * DAY_MS).toISOString().slice(0, 10);
const weekend = (day: number) => [0, 6].includes(new Date(day * DAY_MS).getUTCDay());
const minutes = (hhmm: string) => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3));

/** Globex read straight off the rules: the session for day D runs from 17:00 on D-1 to 16:00 (or the holiday's time) on D. */
function oracle(f: HoursFamily, t: number): { open: boolean; tradingDay?: string } {
  const { day, minute } = chicago(t);
  if (minute >= 16 * 60 && minute < 17 * 60) return { open: false };
  const tradeDay = minute >= 17 * 60 ? day + 1 : day;
  if (weekend(tradeDay)) return { open: false };
  const rule = ruleOf(f, tradeDay);
  if (rule?.kind === 'closed') return { open: false };
  if (rule && minute < 17 * 60 && minute >= minutes(rule.at)) return { open: false };
  let named = tradeDay;
  if (rule?.kind === 'halt') {
    do named++;
    while (weekend(named) || ['closed', 'halt'].includes(ruleOf(f, named)?.kind ?? ''));
  }
  return { open: true, tradingDay: dayLabel(named) };
}

describe('properties', () => {
  it('open or closed and the trading day agree with a direct reading of the rules at any instant', () => {
    fc.assert(
      fc.property(family, instant, (f, t) => {
        const root = FAMILY_ROOTS[f];
        const expected = oracle(f, t);
        const state = calendar.sessionAt(root, t);
        expect(state.open, `${root} ${iso(t)}`).toBe(expected.open);
        expect(calendar.isOpen(root, t)).toBe(state.open);
        if (expected.tradingDay !== undefined) expect(state.tradingDay, `${root} ${iso(t)}`).toBe(expected.tradingDay);
        // msToClose is null exactly when closed.
        expect(calendar.msToClose(root, t) === null).toBe(!state.open);
      }),
      { numRuns: 400 },
    );
  });

  it('nextClose is after t, the market is open up to it and closed at it', () => {
    fc.assert(
      fc.property(family, instant, (f, t) => {
        const root = FAMILY_ROOTS[f];
        const close = calendar.nextClose(root, t);
        expect(close).toBeGreaterThan(t);
        expect(calendar.isOpen(root, close)).toBe(false);
        expect(calendar.isOpen(root, close - 1)).toBe(true);
        if (calendar.isOpen(root, t)) {
          expect(calendar.msToClose(root, t)).toBe(close - t);
          const day = calendar.tradingDay(root, t);
          for (let u = t; u < close; u += 15 * MINUTE) {
            expect(calendar.isOpen(root, u), `${root} ${iso(u)}`).toBe(true);
            expect(calendar.tradingDay(root, u)).toBe(day);
          }
        } else {
          expect(close).toBeGreaterThan(calendar.nextOpen(root, t));
          expect(calendar.nextClose(root, calendar.nextOpen(root, t))).toBe(close);
        }
      }),
    );
  });

  it('nextOpen is after t, open at it and closed just before it; after a close it is the next open', () => {
    fc.assert(
      fc.property(family, instant, (f, t) => {
        const root = FAMILY_ROOTS[f];
        const open = calendar.nextOpen(root, t);
        expect(open).toBeGreaterThan(t);
        expect(calendar.isOpen(root, open)).toBe(true);
        expect(calendar.isOpen(root, open - 1)).toBe(false);
        if (calendar.isOpen(root, t)) {
          const close = calendar.nextClose(root, t);
          expect(open).toBeGreaterThan(close);
          expect(calendar.nextOpen(root, close)).toBe(open);
        } else {
          for (let u = t; u < open; u += 15 * MINUTE) expect(calendar.isOpen(root, u), `${root} ${iso(u)}`).toBe(false);
          // A closed instant stays on the day that closed last.
          const state = calendar.sessionAt(root, t);
          if (!state.open) expect(calendar.tradingDay(root, state.closedAt - 1)).toBe(state.tradingDay);
        }
      }),
    );
  });

  it('the trading day never goes back in time', () => {
    fc.assert(
      fc.property(family, instant, instant, (f, a, b) => {
        const root = FAMILY_ROOTS[f];
        const [early, late] = a <= b ? [a, b] : [b, a];
        expect(calendar.tradingDay(root, early) <= calendar.tradingDay(root, late)).toBe(true);
      }),
    );
  });

  it('answers do not depend on what was asked before (week and session caches)', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(family, instant), { minLength: 1, maxLength: 30 }), (queries) => {
        const shared = new ExchangeCalendar();
        for (const [f, t] of queries) {
          const root = FAMILY_ROOTS[f];
          expect(shared.sessionAt(root, t)).toEqual(new ExchangeCalendar().sessionAt(root, t));
        }
      }),
      { numRuns: 50 },
    );
  });
});
