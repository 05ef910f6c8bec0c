/**
 * CME Globex holidays and shortened sessions, 2025 to 2027, per hours family: the data the exchange
 * calendar (./exchange-hours.ts) reads. Dates are calendar dates and times are wall-clock times in
 * America/Chicago (CT), as CME publishes them.
 *
 * Sources, read on 2026-11-26:
 * - CME Group, "Holiday Calendar" (https://www.cmegroup.com/tools-information/holiday-calendar.html) and
 *   "Trading Hours" (https://www.cmegroup.com/trading-hours.html): CME's own pages. Since 2023 they are an
 *   interactive tool that could not be read from here, so the times below were read from public
 *   copies of CME's published schedule:
 * - EdgeClear, "Exchange holiday hours" (https://edgeclear.com/exchange-holiday-hours/): CME's 2026
 *   Globex schedule, e.g. Martin Luther King Jr. Day 2026 per product group (equities and interest rates
 *   halt 12:00, energy and metals 13:30, FX 16:00, all reopen 17:00; trade day Tuesday 20 January).
 * - QuantConnect Lean, Data/market-hours/market-hours-database.json (github.com/QuantConnect/Lean,
 *   commit 24863901d of 2026-08-21): early closes and evening reopenings of ES, MES, NQ, MNQ, YM, MYM,
 *   RTY, M2K, ZN, 6E, CL, MCL, GC, MGC and SI for every 2025 and 2026 date below, and 2027-01-01 and
 *   2027-06-18. It records what CME published.
 * - pandas_market_calendars issue #464 (2026-05-29), which quotes CME's published 2026 hours for energy
 *   and metals (Juneteenth and 3 July 12:00, Labor Day 13:30, day after Thanksgiving 13:45), and pull
 *   request #456 (2026-04-04): equity index futures traded until 08:15 on Good Friday 2026.
 * - CME Group press release of 2024-12-30, "CME Group Announces Trading Hours for U.S. National Day of
 *   Mourning to Honor Former President Jimmy Carter", as published by mondovisione.com.
 * - forexlive.com, 2025-01-19: Martin Luther King Jr. Day 2025, equities and interest rates halt 12:00,
 *   FX 16:00, all reopen 17:00.
 *
 * `basis: 'read'` marks an entry read from these sources. `basis: 'derived'` marks an entry set by rule,
 * because CME had not published it or no copy was found: every 2027 date except New Year's Day and
 * Juneteenth (observed). The rules: a Monday holiday and Thanksgiving are shaped like their 2026
 * instances; Good Friday 2027 (26 March) is a full closure, as no employment report falls on it (the
 * shortened Good Friday sessions of 2021, 2023 and 2026 were on report days); Christmas 2027 falls on a
 * Saturday and is observed on Friday 24 December, as CME did in 2021; New Year's Day 2028 falls on a
 * Saturday and CME does not move it to Friday, so 31 December 2027 is a regular day.
 */

/**
 * Products that share trading hours and a holiday schedule. CME publishes one holiday schedule for
 * energy and metals, so they are one family.
 */
export type HoursFamily = 'equityIndex' | 'interestRate' | 'fx' | 'energyMetals';

export const HOURS_FAMILIES: readonly HoursFamily[] = ['equityIndex', 'interestRate', 'fx', 'energyMetals'];

/**
 * What a holiday does to one family's session, the session of the trading day named by the holiday's date
 * (the one that opens at 17:00 the evening before):
 * - `closed`: that session does not open; the next one opens at 17:00 as usual.
 * - `earlyClose`: the date is a trading day whose session ends at `at` instead of the regular close.
 * - `halt`: the date is not a trading day (CME clears nothing on it), but Globex trades from 17:00 the
 *   evening before until `at`; what trades belongs to the next trading day, which opens at 17:00 as
 *   usual. A halt at the regular close (FX on a Monday holiday) changes only the trading day.
 */
export type HolidayRule = { readonly kind: 'closed' } | { readonly kind: 'earlyClose' | 'halt'; readonly at: string };

export interface ExchangeHoliday {
  /** `YYYY-MM-DD`, in the exchange's time zone. */
  readonly date: string;
  readonly name: string;
  readonly basis: 'read' | 'derived';
  /** A family left out trades its regular hours on this date. */
  readonly rules: Readonly<Partial<Record<HoursFamily, HolidayRule>>>;
}

/**
 * The trading days the holiday data is complete for. Whole Monday-to-Friday weeks, so that every week the
 * calendar builds is either known or not: 2024-12-30 and 2024-12-31 have no holiday (Lean records
 * 31 December 2024 at the regular close for every family here).
 */
export const HOLIDAY_COVERAGE = { first: '2024-12-30', last: '2027-12-31', years: [2025, 2026, 2027] } as const;

const CLOSED: HolidayRule = { kind: 'closed' };
const halt = (at: string): HolidayRule => ({ kind: 'halt', at });
const early = (at: string): HolidayRule => ({ kind: 'earlyClose', at });

const ALL_CLOSED = { equityIndex: CLOSED, interestRate: CLOSED, fx: CLOSED, energyMetals: CLOSED };
/** A federal holiday on Monday to Thursday: each family halts, and all reopen at 17:00. */
const WEEKDAY_HOLIDAY = {
  equityIndex: halt('12:00'),
  interestRate: halt('12:00'),
  fx: halt('16:00'),
  energyMetals: halt('13:30'),
};
/** A federal holiday on a Friday: every family halts at 12:00 and reopens on Sunday. */
const FRIDAY_HOLIDAY = {
  equityIndex: halt('12:00'),
  interestRate: halt('12:00'),
  fx: halt('12:00'),
  energyMetals: halt('12:00'),
};
const DAY_AFTER_THANKSGIVING = {
  equityIndex: early('12:15'),
  interestRate: early('12:15'),
  fx: early('13:45'),
  energyMetals: early('13:45'),
};
const CHRISTMAS_EVE = {
  equityIndex: early('12:15'),
  interestRate: early('12:15'),
  fx: early('12:45'),
  energyMetals: early('12:45'),
};

export const EXCHANGE_HOLIDAYS: readonly ExchangeHoliday[] = Object.freeze([
  // ---------------------------------------------------------------- 2025
  { date: '2025-01-01', name: "New Year's Day", basis: 'read', rules: ALL_CLOSED },
  // Equities stopped at the cash open; energy, FX and metals traded as usual.
  {
    date: '2025-01-09',
    name: 'National Day of Mourning (President Carter)',
    basis: 'read',
    rules: { equityIndex: early('08:30'), interestRate: early('12:15') },
  },
  { date: '2025-01-20', name: 'Martin Luther King Jr. Day', basis: 'read', rules: WEEKDAY_HOLIDAY },
  { date: '2025-02-17', name: "Presidents' Day", basis: 'read', rules: WEEKDAY_HOLIDAY },
  { date: '2025-04-18', name: 'Good Friday', basis: 'read', rules: ALL_CLOSED },
  { date: '2025-05-26', name: 'Memorial Day', basis: 'read', rules: WEEKDAY_HOLIDAY },
  { date: '2025-06-19', name: 'Juneteenth', basis: 'read', rules: WEEKDAY_HOLIDAY },
  // Only equity index products closed early on the eve; the others ran to the regular close.
  { date: '2025-07-03', name: 'Independence Day eve', basis: 'read', rules: { equityIndex: early('12:15') } },
  { date: '2025-07-04', name: 'Independence Day', basis: 'read', rules: FRIDAY_HOLIDAY },
  { date: '2025-09-01', name: 'Labor Day', basis: 'read', rules: WEEKDAY_HOLIDAY },
  { date: '2025-11-27', name: 'Thanksgiving Day', basis: 'read', rules: WEEKDAY_HOLIDAY },
  { date: '2025-11-28', name: 'Day after Thanksgiving', basis: 'read', rules: DAY_AFTER_THANKSGIVING },
  { date: '2025-12-24', name: 'Christmas Eve', basis: 'read', rules: CHRISTMAS_EVE },
  { date: '2025-12-25', name: 'Christmas Day', basis: 'read', rules: ALL_CLOSED },
  // ---------------------------------------------------------------- 2026
  { date: '2026-01-01', name: "New Year's Day", basis: 'read', rules: ALL_CLOSED },
  { date: '2026-01-19', name: 'Martin Luther King Jr. Day', basis: 'read', rules: WEEKDAY_HOLIDAY },
  { date: '2026-02-16', name: "Presidents' Day", basis: 'read', rules: WEEKDAY_HOLIDAY },
  // The March employment report came out on Good Friday: equity, interest rate and FX futures traded a
  // short session after it; energy and metals stayed closed.
  {
    date: '2026-04-03',
    name: 'Good Friday',
    basis: 'read',
    rules: { equityIndex: early('08:15'), interestRate: early('10:15'), fx: early('10:15'), energyMetals: CLOSED },
  },
  { date: '2026-05-25', name: 'Memorial Day', basis: 'read', rules: WEEKDAY_HOLIDAY },
  { date: '2026-06-19', name: 'Juneteenth', basis: 'read', rules: FRIDAY_HOLIDAY },
  { date: '2026-07-03', name: 'Independence Day (observed)', basis: 'read', rules: FRIDAY_HOLIDAY },
  { date: '2026-09-07', name: 'Labor Day', basis: 'read', rules: WEEKDAY_HOLIDAY },
  { date: '2026-11-26', name: 'Thanksgiving Day', basis: 'read', rules: WEEKDAY_HOLIDAY },
  { date: '2026-11-27', name: 'Day after Thanksgiving', basis: 'read', rules: DAY_AFTER_THANKSGIVING },
  { date: '2026-12-24', name: 'Christmas Eve', basis: 'read', rules: CHRISTMAS_EVE },
  { date: '2026-12-25', name: 'Christmas Day', basis: 'read', rules: ALL_CLOSED },
  // ---------------------------------------------------------------- 2027
  { date: '2027-01-01', name: "New Year's Day", basis: 'read', rules: ALL_CLOSED },
  { date: '2027-01-18', name: 'Martin Luther King Jr. Day', basis: 'derived', rules: WEEKDAY_HOLIDAY },
  { date: '2027-02-15', name: "Presidents' Day", basis: 'derived', rules: WEEKDAY_HOLIDAY },
  { date: '2027-03-26', name: 'Good Friday', basis: 'derived', rules: ALL_CLOSED },
  { date: '2027-05-31', name: 'Memorial Day', basis: 'derived', rules: WEEKDAY_HOLIDAY },
  { date: '2027-06-18', name: 'Juneteenth (observed)', basis: 'read', rules: FRIDAY_HOLIDAY },
  { date: '2027-07-05', name: 'Independence Day (observed)', basis: 'derived', rules: WEEKDAY_HOLIDAY },
  { date: '2027-09-06', name: 'Labor Day', basis: 'derived', rules: WEEKDAY_HOLIDAY },
  { date: '2027-11-25', name: 'Thanksgiving Day', basis: 'derived', rules: WEEKDAY_HOLIDAY },
  { date: '2027-11-26', name: 'Day after Thanksgiving', basis: 'derived', rules: DAY_AFTER_THANKSGIVING },
  { date: '2027-12-24', name: 'Christmas Day (observed)', basis: 'derived', rules: ALL_CLOSED },
] satisfies ExchangeHoliday[]);
