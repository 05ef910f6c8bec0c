import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isoDate, SessionClock, TradingCalendar, ZoneClock } from '../../../src/engine/trading-day.ts';

const utc = (iso: string) => Date.parse(iso);

describe('trading day (17:00 America/Chicago by default)', () => {
  const calendar = new TradingCalendar();
  it('names the day by the date it ends and starts at 17:00 Chicago', () => {
    // November: CST = UTC-6, so 17:00 CT = 23:00 UTC
    expect(calendar.dayOf(utc('2026-11-16T22:59:00Z'))).toBe('2026-11-16');
    expect(calendar.dayOf(utc('2026-11-16T23:00:00Z'))).toBe('2026-11-17');
    expect(calendar.dayStart(utc('2026-11-17T05:00:00Z'))).toBe(utc('2026-11-16T23:00:00Z'));
    expect(calendar.nextDayStart(utc('2026-11-17T05:00:00Z'))).toBe(utc('2026-11-17T23:00:00Z'));
  });
  it('follows daylight saving time', () => {
    // July: CDT = UTC-5, so 17:00 CT = 22:00 UTC
    expect(calendar.dayOf(utc('2026-07-15T21:59:00Z'))).toBe('2026-07-15');
    expect(calendar.dayOf(utc('2026-07-15T22:00:00Z'))).toBe('2026-07-16');
    // 2026-03-08 02:00 CST -> CDT: the day starting Sunday 17:00 CDT (22:00 UTC) is Monday's
    expect(calendar.dayStart(utc('2026-03-09T12:00:00Z'))).toBe(utc('2026-03-08T22:00:00Z'));
    // the day ending Sunday 17:00 CDT started Saturday 17:00 CST (23:00 UTC): 23 hours long
    expect(calendar.dayStart(utc('2026-03-08T12:00:00Z'))).toBe(utc('2026-03-07T23:00:00Z'));
    expect(calendar.nextDayStart(utc('2026-03-08T12:00:00Z'))).toBe(utc('2026-03-08T22:00:00Z'));
    // 2026-11-01 back to CST: a 25-hour day
    expect(calendar.nextDayStart(utc('2026-11-01T12:00:00Z')) - calendar.dayStart(utc('2026-11-01T12:00:00Z'))).toBe(
      25 * 3_600_000,
    );
  });
  it('is configurable', () => {
    const midnightUtc = new TradingCalendar({ timeZone: 'UTC', startsAt: '00:00' });
    expect(midnightUtc.dayOf(utc('2026-11-16T23:59:00Z'))).toBe('2026-11-16');
    expect(midnightUtc.dayStart(utc('2026-11-16T23:59:00Z'))).toBe(utc('2026-11-16T00:00:00Z'));
    const berlin = new TradingCalendar({ timeZone: 'Europe/Berlin', startsAt: '22:00' });
    expect(berlin.dayOf(utc('2026-07-01T20:00:00Z'))).toBe('2026-07-02');
    expect(() => new TradingCalendar({ timeZone: 'Mars/Olympus', startsAt: '17:00' })).toThrow(/time zone/);
    expect(() => new TradingCalendar({ timeZone: 'UTC', startsAt: '25:00' })).toThrow(/range/);
  });
  it('property: learnt offsets equal Intl at any instant, transitions included (also half-hour zones)', () => {
    for (const zone of [
      'America/Chicago',
      'Europe/London',
      'Australia/Lord_Howe',
      'America/St_Johns',
      'Asia/Kolkata',
    ]) {
      const clock = new ZoneClock(zone);
      const format = new Intl.DateTimeFormat('en-US', {
        timeZone: zone,
        hourCycle: 'h23',
        year: 'numeric',
        month: 'numeric',
        day: 'numeric',
        hour: 'numeric',
        minute: 'numeric',
      });
      const direct = (t: number) => {
        const parts = format.formatToParts(new Date(t));
        const get = (type: string) => Number(parts.find((p) => p.type === type)!.value);
        return (
          Date.UTC(get('year'), get('month') - 1, get('day'), get('hour'), get('minute')) -
          Math.floor(t / 60_000) * 60_000
        );
      };
      fc.assert(
        fc.property(
          fc.integer({ min: Date.UTC(2020, 0, 1) / 60_000, max: Date.UTC(2030, 0, 1) / 60_000 }),
          (minute) => {
            expect(clock.offsetAt(minute * 60_000)).toBe(direct(minute * 60_000));
          },
        ),
        { numRuns: 300 },
      );
      // around this zone's transitions in 2026, minute by minute for an hour either side
      for (let t = Date.UTC(2026, 0, 1); t < Date.UTC(2027, 0, 1); t += 86_400_000) {
        if (direct(t) === direct(t + 86_400_000)) continue;
        for (let m = t; m <= t + 86_400_000; m += 15 * 60_000) expect(clock.offsetAt(m)).toBe(direct(m));
      }
    }
  });

  it('zone clock offsets', () => {
    const chicago = new ZoneClock('America/Chicago');
    expect(chicago.offsetAt(utc('2026-01-10T12:00:00Z'))).toBe(-6 * 3_600_000);
    expect(chicago.offsetAt(utc('2026-07-10T12:00:00Z'))).toBe(-5 * 3_600_000);
  });
});

describe('a date as text', () => {
  const byDate = (ms: number) => new Date(ms).toISOString().slice(0, 10);
  it('property: isoDate writes what Date writes, at any instant of years 1900 to 10100', () => {
    fc.assert(
      fc.property(fc.integer({ min: Date.UTC(1900, 0, 1), max: Date.UTC(10100, 0, 1) }), (ms) => {
        expect(isoDate(ms)).toBe(byDate(ms));
      }),
      { numRuns: 20_000 },
    );
  });
  it('every day around leap days, century years and the ends of its own range', () => {
    const DAY = 86_400_000;
    for (const start of [0, Date.UTC(1999, 11, 1), Date.UTC(2100, 0, 1), Date.UTC(2400, 0, 1), Date.UTC(9999, 11, 1)])
      for (let d = -100; d < 500; d++) {
        const ms = start + d * DAY;
        expect(isoDate(ms)).toBe(byDate(ms));
        expect(isoDate(ms + DAY - 1)).toBe(byDate(ms + DAY - 1));
      }
  });
});

describe('sessions', () => {
  const session = new SessionClock(
    { open: '08:30', close: '15:15', flatBy: '15:10', days: [1, 2, 3, 4, 5] },
    'America/Chicago',
  );
  it('tells open, closed and flat-by in local time', () => {
    expect(session.phase(utc('2026-11-16T14:29:00Z'))).toBe('flatBy'); // 08:29 CST Monday: flat-by lasts until the open
    const noFlatBy = new SessionClock({ open: '08:30', close: '15:15' }, 'America/Chicago');
    expect(noFlatBy.phase(utc('2026-11-16T14:29:00Z'))).toBe('closed');
    expect(noFlatBy.phase(utc('2026-11-16T21:15:00Z'))).toBe('closed');
    expect(session.phase(utc('2026-11-16T14:30:00Z'))).toBe('open');
    expect(session.phase(utc('2026-11-16T21:10:00Z'))).toBe('flatBy'); // 15:10
    expect(session.phase(utc('2026-11-17T02:00:00Z'))).toBe('flatBy'); // 20:00, until the next open
    expect(session.phase(utc('2026-11-15T15:00:00Z'))).toBe('closed'); // Sunday 09:00
  });
  it('windows may wrap midnight (belonging to the day they open)', () => {
    const globex = new SessionClock({ open: '17:00', close: '16:00', days: [0, 1, 2, 3, 4] }, 'America/Chicago');
    expect(globex.phase(utc('2026-11-16T00:00:00Z'))).toBe('open'); // Sunday 18:00
    expect(globex.phase(utc('2026-11-16T22:30:00Z'))).toBe('closed'); // Monday 16:30
    expect(globex.phase(utc('2026-11-21T00:00:00Z'))).toBe('closed'); // Friday 18:00
  });
});
