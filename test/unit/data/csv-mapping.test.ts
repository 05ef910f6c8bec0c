import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseCsvBars, parseLocalTime } from '../../../src/data/csv.ts';
import { ZoneClock } from '../../../src/engine/trading-day.ts';
import { CsvDataConfig } from '../../../src/adapters/backtest/backtest-config.ts';
import { PriceGrid } from '../../../src/engine/ticks.ts';

const ES = new PriceGrid(0.25, 12.5);
const EXPORT = [
  'datetime,open,high,low,close,volume',
  '2024-01-08 08:30:00,4750.25,4751,4750,4750.75,120',
  '2024-07-08T08:30:00,5600,5600.5,5599.75,5600.25,80',
].join('\n');
const columns = { time: 'datetime', open: 'open', high: 'high', low: 'low', close: 'close', volume: 'volume' };

/** The wall-clock time of `utc` in `zone`, as `YYYY-MM-DD HH:MM:SS`. */
function localText(utc: number, zone: string): string {
  const f: Record<string, string> = {};
  const format = new Intl.DateTimeFormat('en-US', {
    timeZone: zone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  });
  for (const part of format.formatToParts(utc)) f[part.type] = part.value;
  return `${f.year}-${f.month}-${f.day} ${f.hour}:${f.minute}:${f.second}`;
}

describe('CSV column mapping and time zones', () => {
  it('reads a common export header through the mapping, times without offset in the configured zone (CST in January, CDT in July)', () => {
    const { bars, segments } = parseCsvBars(EXPORT, ES, 'export.csv', { columns, timeZone: 'America/Chicago' });
    expect([...bars.time]).toEqual([Date.parse('2024-01-08T14:30:00Z'), Date.parse('2024-07-08T13:30:00Z')]);
    expect([...bars.open]).toEqual([4750.25 * 4, 5600 * 4]);
    expect([...bars.volume]).toEqual([120, 80]);
    expect(segments).toEqual([]);
  });

  it('refuses the export without a mapping (naming the way out) and times without offset without a zone', () => {
    expect(() => parseCsvBars(EXPORT, ES, 'export.csv')).toThrow(
      'export.csv:1 column t: header lacks the column "t" (found: datetime,open,high,low,close,volume); name the file\'s columns in data.columns',
    );
    expect(() => parseCsvBars(EXPORT, ES, 'export.csv', { columns })).toThrow(
      'export.csv:2 column t: "2024-01-08 08:30:00" is not an ISO 8601 time with an offset (Z or +hh:mm)',
    );
    expect(() => parseCsvBars(EXPORT, ES, 'export.csv', { columns: { ...columns, volume: 'vol' } })).toThrow(
      'header lacks the column "vol" for volume',
    );
  });

  it('a time with an offset is read as written, whatever the zone', () => {
    const text = ['t,o,h,l,c,v', '2024-01-08T08:30:00-05:00,1,1,1,1,1'].join('\n');
    expect(parseCsvBars(text, ES, 'x.csv', { timeZone: 'Asia/Tokyo' }).bars.time[0]).toBe(
      Date.parse('2024-01-08T13:30:00Z'),
    );
  });

  it('property: a wall-clock time of the zone read back gives the same wall-clock time (DST changes included)', () => {
    const zones = ['America/Chicago', 'America/New_York', 'Europe/London', 'Australia/Sydney', 'Asia/Kolkata', 'UTC'];
    fc.assert(
      fc.property(
        fc.integer({ min: Date.UTC(2000, 0, 1), max: Date.UTC(2035, 0, 1) }),
        fc.constantFrom(...zones),
        (t, zone) => {
          const utc = Math.floor(t / 1000) * 1000;
          const text = localText(utc, zone);
          const read = parseLocalTime(text, new ZoneClock(zone));
          expect(localText(read, zone)).toBe(text);
          // The instant itself comes back, or (in the hour a change back repeats) the other one of that text.
          expect(read === utc || Math.abs(read - utc) === 3_600_000).toBe(true);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('the fast and general paths agree on times without offset', () => {
    const zone = new ZoneClock('America/Chicago');
    const fast = parseCsvBars(
      ['t,o,h,l,c,v', '2024-03-10T01:59:00,1,1,1,1,1', '2024-03-10T03:00:00,1,1,1,1,1'].join('\n'),
      ES,
      'x',
      { timeZone: 'America/Chicago' },
    );
    expect([...fast.bars.time]).toEqual([
      parseLocalTime('2024-03-10 01:59:00', zone),
      parseLocalTime('2024-03-10 03:00', zone),
    ]);
    expect(fast.bars.time[1]! - fast.bars.time[0]!).toBe(60_000);
  });

  it('a skipped wall-clock time is read an hour earlier, a repeated one as its first instant, a date as its midnight (as docs/backtest.md says)', () => {
    const zone = new ZoneClock('America/Chicago');
    expect(parseLocalTime('2024-03-10 02:30', zone)).toBe(Date.parse('2024-03-10T07:30:00Z'));
    expect(parseLocalTime('2024-11-03 01:30', zone)).toBe(Date.parse('2024-11-03T06:30:00Z'));
    expect(parseLocalTime('2024-01-08', zone)).toBe(Date.parse('2024-01-08T06:00:00Z'));
  });

  it('the config validates the zone and the mapping strictly', () => {
    expect(
      CsvDataConfig.safeParse({
        source: 'csv',
        file: 'x.csv',
        timeZone: 'America/Chicago',
        columns: { time: 'datetime' },
      }).success,
    ).toBe(true);
    expect(
      CsvDataConfig.safeParse({ source: 'csv', file: 'x.csv', timeZone: 'Mars/Olympus' }).error?.issues[0]?.message,
    ).toMatch(/IANA time zone/);
    expect(CsvDataConfig.safeParse({ source: 'csv', file: 'x.csv', columns: { when: 'datetime' } }).success).toBe(
      false,
    );
  });
});
