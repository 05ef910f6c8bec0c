import { describe, expect, it } from 'vitest';
import path from 'node:path';
import { firstValueFrom, toArray } from 'rxjs';
import { PriceGrid } from '../../../src/engine/ticks.ts';
import { ZoneClock } from '../../../src/engine/trading-day.ts';
import { CsvBarsError, parseCsvBars, readCsvBars } from '../../../src/data/csv.ts';
import { aggregate, sliceByTime } from '../../../src/data/columns.ts';
import { globexSessions, syntheticBars } from '../../../src/data/synthetic-bars.ts';
import { ReplayDataError, ReplayMarketData } from '../../../src/adapters/backtest/replay.ts';

const ES = new PriceGrid(0.25, 12.5);
const ES_CSV = path.resolve(import.meta.dirname, '../../../../shared/data/es-minute-lean.csv');

function problemsOf(text: string): CsvBarsError['problems'] {
  try {
    parseCsvBars(text, ES, 'bars.csv');
  } catch (error) {
    expect(error).toBeInstanceOf(CsvBarsError);
    return (error as CsvBarsError).problems;
  }
  throw new Error('expected a CsvBarsError');
}

describe('CSV bars', () => {
  it('reads the real ES file exactly in ticks, oldest first, with its contract rolls', () => {
    const { bars, segments } = readCsvBars(ES_CSV, ES);
    expect(bars.time.length).toBe(19_083);
    expect(bars.time[0]).toBe(Date.parse('2013-10-06T22:00:00Z'));
    expect([bars.open[0], bars.high[0], bars.low[0], bars.close[0], bars.volume[0]]).toEqual([
      6707, 6709, 6694, 6701, 1884,
    ]);
    for (let i = 1; i < bars.time.length; i++) expect(bars.time[i]! > bars.time[i - 1]!).toBe(true);
    expect(segments.map((s) => s.contract)).toEqual(['201312', '201403', '202003']);
  });

  it('reports every bad cell at once with file, line and column', () => {
    const text = [
      't,o,h,l,c,v',
      '2024-01-02T15:00:00Z,100,101,99,100.5,10', // ok
      '2024-01-02T15:01:00Z,100.1,101,99,100,10', // o off grid
      '2024-01-02 15:02,100,101,99,100,x', // t without offset, v not a number
      '2024-01-02T15:03:00Z,100,99,98,100,1', // high below open
      '2024-01-02T15:00:30Z,100,101,99,100,1', // time goes back
      '2024-01-02T15:05:00Z,100,101',
      '',
    ].join('\n');
    expect(problemsOf(text).map((p) => [p.line, p.column])).toEqual([
      [3, 'o'],
      [4, 't'],
      [4, 'v'],
      [5, ''],
      [6, 't'],
      [7, ''],
    ]);
    expect(problemsOf(text)[0]).toEqual({
      file: 'bars.csv',
      line: 3,
      column: 'o',
      message: 'price 100.1 is not a multiple of the tick size 0.25',
    });
  });

  it('still sees a time going backwards right after an unreadable time', () => {
    const text = [
      't,o,h,l,c,v',
      '2024-01-02T15:05:00Z,100,101,99,100,1',
      'soon,100,101,99,100,1',
      '2024-01-02T15:01:00Z,100,101,99,100,1',
    ].join('\n');
    expect(problemsOf(text).map((p) => [p.line, p.column])).toEqual([
      [3, 't'],
      [4, 't'],
    ]);
  });

  it('names missing header columns and a missing file', () => {
    expect(problemsOf('t,o,h,c,v\n').map((p) => p.column)).toEqual(['l']);
    expect(() => readCsvBars(path.join(import.meta.dirname, 'nope.csv'), ES, 'nope.csv')).toThrow(
      /nope.csv: file not found/,
    );
  });
});

describe('columns', () => {
  const { bars } = parseCsvBars(
    [
      't,o,h,l,c,v',
      '2024-01-02T15:00:00Z,1,3,1,2,1',
      '2024-01-02T15:01:00Z,2,5,2,4,2',
      '2024-01-02T15:05:00Z,4,4,0.5,1,3',
      '2024-01-02T15:16:00Z,1,2,1,2,4',
    ].join('\n'),
    ES,
    'x.csv',
  );

  it('aggregates into UTC buckets without inventing bars across gaps', () => {
    const m15 = aggregate(bars, { unit: 'minute', unitNumber: 15 });
    expect(Array.from(m15.time)).toEqual([Date.parse('2024-01-02T15:00:00Z'), Date.parse('2024-01-02T15:15:00Z')]);
    expect([m15.open[0], m15.high[0], m15.low[0], m15.close[0], m15.volume[0]]).toEqual([4, 20, 2, 4, 6]);
    expect([m15.open[1], m15.close[1], m15.volume[1]]).toEqual([4, 8, 4]);
  });

  it('slices by time as views', () => {
    const part = sliceByTime(bars, Date.parse('2024-01-02T15:01:00Z'), Date.parse('2024-01-02T15:16:00Z'));
    expect(part.time.length).toBe(2);
    expect(part.time.buffer).toBe(bars.time.buffer);
  });
});

describe('synthetic market', () => {
  it('lays seeded bars on Globex sessions (17:00-16:00 Chicago): no weekend bars, a daily break, same seed same bars', () => {
    const start = Date.UTC(2024, 0, 5); // a Friday: the first session opens Sunday 17:00 CST = 23:00 UTC
    expect(globexSessions(start, 2)).toEqual([
      { start: Date.UTC(2024, 0, 7, 23), end: Date.UTC(2024, 0, 8, 22) },
      { start: Date.UTC(2024, 0, 8, 23), end: Date.UTC(2024, 0, 9, 22) },
    ]);
    // Daylight saving time moves the session with Chicago: 17:00 CDT = 22:00 UTC.
    expect(globexSessions(Date.UTC(2024, 6, 1), 1)[0]!.start).toBe(Date.UTC(2024, 6, 1, 22));
    const a = syntheticBars({ seed: 7, grid: ES, startPrice: 5000, start, sessions: 6 });
    const b = syntheticBars({ seed: 7, grid: ES, startPrice: 5000, start, sessions: 6 });
    expect(a.close).toEqual(b.close);
    expect(a.time.length).toBe(6 * 23 * 60);
    const chicago = new ZoneClock('America/Chicago');
    let gaps = 0;
    for (let i = 0; i < a.time.length; i++) {
      const wall = new Date(chicago.wall(a.time[i]!));
      const day = wall.getUTCDay();
      const hour = wall.getUTCHours();
      expect(hour === 16 || day === 6 || (day === 5 && hour >= 16) || (day === 0 && hour < 17)).toBe(false);
      expect(
        Number.isInteger(a.open[i]) &&
          a.low[i]! <= Math.min(a.open[i]!, a.close[i]!) &&
          a.high[i]! >= Math.max(a.open[i]!, a.close[i]!),
      ).toBe(true);
      if (i > 0 && a.time[i]! - a.time[i - 1]! > 60_000) gaps++;
    }
    expect(gaps).toBe(5);
    const c = syntheticBars({ seed: 8, grid: ES, startPrice: 5000, start, sessions: 6 });
    expect(c.close).not.toEqual(a.close);
  });
});

describe('replay', () => {
  it('emits oldest-first chunks of views without copying, and refuses finer timeframes', async () => {
    const bars = syntheticBars({ seed: 1, grid: ES, startPrice: 5000, start: Date.UTC(2024, 0, 7), sessions: 1 });
    const replay = new ReplayMarketData(
      [{ contractId: 'ES', timeframe: { unit: 'minute', unitNumber: 1 }, bars }],
      500,
    );
    const chunks = await firstValueFrom(replay.bars('ES', { unit: 'minute', unitNumber: 1 }).pipe(toArray()));
    expect(chunks.map((c) => c.length)).toEqual([500, 500, 380]);
    expect(chunks[1]!.time.buffer).toBe(bars.time.buffer);
    expect(chunks[1]!.time[0]).toBe(bars.time[500]);
    const hourly = await firstValueFrom(replay.bars('ES', { unit: 'hour', unitNumber: 1 }).pipe(toArray()));
    expect(hourly[0]!.length).toBe(23);
    expect(hourly[0]!.time[0]).toBe(bars.time[0]);
    expect(() => replay.bars('ES', { unit: 'second', unitNumber: 30 })).toThrow(ReplayDataError);
    expect(() => replay.bars('NQ', { unit: 'minute', unitNumber: 1 })).toThrow(ReplayDataError);
  });
});
