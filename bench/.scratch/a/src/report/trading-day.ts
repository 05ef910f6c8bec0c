/**
 * The exchange trading day of an instant. CME Globex sessions open at 17:00 America/Chicago and belong to
 * the next calendar day's date: Sunday 17:00 to Monday 16:00 Chicago is Monday's trading day. Chicago's
 * UTC offset changes with daylight saving time, so the boundary is 22:00 UTC in summer and 23:00 UTC in
 * winter; `Intl` knows the transitions.
 */

export const DEFAULT_TRADING_DAY_START_HOUR = 17;
const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;

const chicagoClock = new Intl.DateTimeFormat('en-US', {
  timeZone: 'America/Chicago',
  year: 'numeric',
  month: 'numeric',
  day: 'numeric',
  hour: 'numeric',
  hourCycle: 'h23',
});

function chicagoWallClock(timeMs: number): { year: number; month: number; day: number; hour: number } {
  let year = 0;
  let month = 0;
  let day = 0;
  let hour = 0;
  for (const part of chicagoClock.formatToParts(timeMs)) {
    if (part.type === 'year') year = Number(part.value);
    else if (part.type === 'month') month = Number(part.value);
    else if (part.type === 'day') day = Number(part.value);
    else if (part.type === 'hour') hour = Number(part.value);
  }
  return { year, month, day, hour };
}

function isoDate(utcMidnightMs: number): string {
  return new Date(utcMidnightMs).toISOString().slice(0, 10);
}

function validateStartHour(startHour: number): void {
  if (!Number.isInteger(startHour) || startHour < 0 || startHour > 23) {
    throw new RangeError(`tradingDayStartHour must be an integer from 0 to 23, got ${startHour}`);
  }
}

/** The trading day (`YYYY-MM-DD`) of an epoch-ms instant. */
export function tradingDay(timeMs: number, startHour = DEFAULT_TRADING_DAY_START_HOUR): string {
  validateStartHour(startHour);
  if (!Number.isFinite(timeMs)) throw new RangeError(`not a finite time: ${timeMs}`);
  const { year, month, day, hour } = chicagoWallClock(timeMs);
  const calendarDay = Date.UTC(year, month - 1, day);
  return isoDate(startHour > 0 && hour >= startHour ? calendarDay + DAY_MS : calendarDay);
}

/**
 * A `tradingDay` for long sorted series. Chicago's offset is a whole number of hours and changes on an
 * hour, so every instant of one UTC hour has the same trading day: one `Intl` call per hour of data
 * instead of one per bar (a million minute bars cost about 17,000 calls).
 */
export function tradingDayResolver(startHour = DEFAULT_TRADING_DAY_START_HOUR): (timeMs: number) => string {
  validateStartHour(startHour);
  let cachedHour = Number.NaN;
  let cachedDay = '';
  return (timeMs: number) => {
    const hourKey = Math.floor(timeMs / HOUR_MS);
    if (hourKey !== cachedHour) {
      cachedDay = tradingDay(timeMs, startHour);
      cachedHour = hourKey;
    }
    return cachedDay;
  };
}
