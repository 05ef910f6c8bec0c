/**
 * The contract calendar: real expiry dates of each rule, front months across a roll, listed months, ids
 * and names both ways, roots from a config; and its invariants as properties over any date: exactly one
 * front month, roll dates that are business days the configured count before expiry.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  CALENDAR,
  ContractCalendar,
  DAY_MS,
  isBusinessDay,
  monthLabel,
  rootSpecSchema,
  type ContractMonth,
} from '../../../src/market/contract-months.ts';

const day = (text: string) => Date.parse(`${text}T00:00:00Z`);
const iso = (t: number) => new Date(t).toISOString().slice(0, 10);
const month = (year: number, m: number): ContractMonth => ({ year, month: m });
const front = (root: string, t: number) => monthLabel(CALENDAR.frontMonth(root, t));

/** Business days from `a` (exclusive) to `b` (inclusive). */
function businessDaysBetween(a: number, b: number): number {
  let n = 0;
  for (let d = a + DAY_MS; d <= b; d += DAY_MS) if (isBusinessDay(d)) n++;
  return n;
}

describe('contract calendar', () => {
  it('dates expiries by each rule', () => {
    // Equity index: third Friday of the quarter month.
    expect(iso(CALENDAR.expiry('ES', month(2025, 12)))).toBe('2025-12-19');
    expect(iso(CALENDAR.expiry('ES', month(2026, 3)))).toBe('2026-03-20');
    expect(iso(CALENDAR.expiry('NQ', month(2026, 12)))).toBe('2026-12-18');
    // Gold: third-last business day of the month; crude: 3 business days before the 25th of the month before.
    expect(iso(CALENDAR.expiry('GC', month(2026, 12)))).toBe('2026-12-29');
    expect(iso(CALENDAR.expiry('CL', month(2027, 1)))).toBe('2026-12-22');
    expect(iso(CALENDAR.expiry('CL', month(2026, 12)))).toBe('2026-11-20');
    // When the 25th is a Sunday, counting starts from the Friday before.
    expect(iso(CALENDAR.expiry('CL', month(2026, 11)))).toBe('2026-10-20');
    // Euro FX: two business days before the third Wednesday; 10-year note: 7 business days before the last one.
    expect(iso(CALENDAR.expiry('6E', month(2026, 12)))).toBe('2026-12-14');
    expect(iso(CALENDAR.expiry('ZN', month(2026, 12)))).toBe('2026-12-22');
  });

  it('rolls the front month the configured business days before expiry', () => {
    expect(iso(CALENDAR.rollDate('ES', month(2026, 12)))).toBe('2026-12-10');
    expect(iso(CALENDAR.rollDate('ES', month(2026, 12), 0))).toBe('2026-12-18');
    expect(front('ES', day('2026-11-23'))).toBe('Z26');
    expect(front('ES', day('2026-12-09'))).toBe('Z26');
    expect(front('ES', day('2026-12-10'))).toBe('H27');
    expect(front('ES', day('2026-12-21'))).toBe('H27');
    expect(monthLabel(CALENDAR.frontMonth('ES', day('2026-12-10'), 0))).toBe('Z26');
    // Late November 2026: gold still December, crude already January, silver December.
    expect(front('GC', day('2026-11-23'))).toBe('Z26');
    expect(front('GC', day('2026-11-24'))).toBe('G27');
    expect(front('CL', day('2026-11-23'))).toBe('F27');
    expect(front('SI', day('2026-11-23'))).toBe('Z26');
  });

  it('lists the unexpired months, nearest first, the old front until its expiry', () => {
    const labels = (t: number) => CALENDAR.contractsOn('ES', t).map(monthLabel);
    expect(labels(day('2026-11-23'))).toEqual(['Z26', 'H27', 'M27', 'U27', 'Z27']);
    expect(labels(day('2026-12-18'))).toEqual(['Z26', 'H27', 'M27', 'U27', 'Z27']);
    expect(labels(day('2026-12-19'))).toEqual(['H27', 'M27', 'U27', 'Z27', 'H28']);
    expect(CALENDAR.contractsOn('GC', day('2026-11-23')).map(monthLabel)).toEqual(['Z26', 'G27', 'J27', 'M27']);
    const z26 = CALENDAR.byId('CON.F.US.EP.Z26')!;
    expect(CALENDAR.status(z26, day('2026-12-09'))).toBe('front');
    expect(CALENDAR.status(z26, day('2026-12-10'))).toBe('listed');
    expect(CALENDAR.status(z26, day('2026-12-19'))).toBe('expired');
    expect(CALENDAR.status(CALENDAR.byId('CON.F.US.EP.H28')!, day('2026-11-23'))).toBe('unlisted');
  });

  it('reads and writes ids and names', () => {
    const es = CALENDAR.byId('CON.F.US.EP.Z26')!;
    expect(es).toMatchObject({
      name: 'ESZ6',
      symbolId: 'F.US.EP',
      description: 'E-mini S&P 500: December 2026',
      tickSize: 0.25,
      tickValue: 12.5,
      feePerSide: 1.4,
    });
    expect(CALENDAR.byId('CON.F.US.EP.F26')).toBeUndefined(); // January is not an ES month
    expect(CALENDAR.byId('CON.F.US.NOPE.Z26')).toBeUndefined();
    const on = day('2026-11-23');
    expect(CALENDAR.resolve('esz6', on)?.id).toBe('CON.F.US.EP.Z26');
    expect(CALENDAR.resolve('ESZ26', on)?.id).toBe('CON.F.US.EP.Z26');
    expect(CALENDAR.resolve('ESZ5', on)?.id).toBe('CON.F.US.EP.Z25');
    // A one-digit year is the nearest year ending in it: in 2026, 9 is 2029 and 1 is 2021.
    expect(CALENDAR.resolve('ESH9', on)?.id).toBe('CON.F.US.EP.H29');
    expect(CALENDAR.resolve('ESH1', on)?.id).toBe('CON.F.US.EP.H21');
    expect(CALENDAR.resolve('MESZ6', on)?.id).toBe('CON.F.US.MES.Z26');
    expect(CALENDAR.resolve('M2KH7', on)?.name).toBe('M2KH7');
    expect(CALENDAR.resolve('6EZ6', on)?.id).toBe('CON.F.US.EU6.Z26');
    expect(CALENDAR.resolve('F.US.EP', on)?.id).toBe('CON.F.US.EP.Z26');
    expect(CALENDAR.resolve('F.US.EP', day('2026-12-10'))?.id).toBe('CON.F.US.EP.H27');
    expect(CALENDAR.resolve('ES', on)).toBeUndefined();
    expect(CALENDAR.resolve('nothing', on)).toBeUndefined();
  });

  it('takes roots from a config, validated strictly', () => {
    const calendar = CALENDAR.withRoots([
      {
        root: 'FDAX',
        symbol: 'FDAX',
        title: 'DAX Futures',
        tickSize: 0.5,
        tickValue: 12.5,
        startPrice: 24000,
        cycle: 'HMUZ',
        expiry: { rule: 'nthWeekday', nth: 3, weekday: 'friday' },
        listed: 3,
      },
    ]);
    expect(calendar.resolve('FDAXZ6', day('2026-11-23'))).toMatchObject({
      id: 'CON.F.US.FDAX.Z26',
      grid: { tickSize: 0.5 },
    });
    expect(calendar.roots().length).toBe(CALENDAR.roots().length + 1);
    expect(() =>
      rootSpecSchema.parse({
        root: 'X',
        symbol: 'X',
        title: 'x',
        tickSize: 1,
        tickValue: 1,
        startPrice: 1,
        cycle: 'HMUZ',
        expiry: { rule: 'someday' },
      }),
    ).toThrow();
    expect(() => new ContractCalendar([...CALENDAR.roots(), { ...CALENDAR.root('ES')!, root: 'ES2' }])).toThrow(
      /share a gateway symbol/,
    );
  });

  it("has start prices on each root's grid", () => {
    for (const spec of CALENDAR.roots()) expect(CALENDAR.grid(spec).isAligned(spec.startPrice), spec.root).toBe(true);
  });
});

describe('contract calendar properties', () => {
  const anyDay = fc
    .integer({ min: day('2000-01-01') / DAY_MS, max: day('2045-12-31') / DAY_MS })
    .map((d) => d * DAY_MS);
  const anyRoot = fc.constantFrom(...CALENDAR.roots().map((r) => r.root));

  it('every date has exactly one front month, listed and not expired, and the front never moves backwards', () => {
    fc.assert(
      fc.property(anyRoot, anyDay, fc.integer({ min: 0, max: 40 }), (root, t, later) => {
        const listed = CALENDAR.contractsOn(root, t).map((m) => CALENDAR.contract(root, m));
        const fronts = listed.filter((c) => CALENDAR.status(c, t) === 'front');
        expect(fronts.map((c) => c.id)).toEqual([CALENDAR.contract(root, CALENDAR.frontMonth(root, t)).id]);
        expect(fronts[0]!.expiry).toBeGreaterThanOrEqual(t);
        const next = CALENDAR.frontMonth(root, t + later * DAY_MS);
        const now = CALENDAR.frontMonth(root, t);
        expect(next.year * 12 + next.month).toBeGreaterThanOrEqual(now.year * 12 + now.month);
      }),
      { numRuns: 300 },
    );
  });

  it('roll dates and expiries are business days, the roll the configured count of business days before expiry', () => {
    fc.assert(
      fc.property(anyRoot, anyDay, fc.integer({ min: 0, max: 30 }), (root, t, days) => {
        const m = CALENDAR.frontMonth(root, t);
        const expiry = CALENDAR.expiry(root, m);
        const roll = CALENDAR.rollDate(root, m, days);
        expect(isBusinessDay(expiry)).toBe(true);
        expect(isBusinessDay(roll)).toBe(true);
        expect(businessDaysBetween(roll, expiry)).toBe(days);
        // The front month changes on its roll date: the day before, it was still front.
        expect(CALENDAR.frontMonth(root, roll - DAY_MS, days)).toEqual(m);
        expect(CALENDAR.frontMonth(root, roll, days)).not.toEqual(m);
      }),
      { numRuns: 300 },
    );
  });

  it('an id read back gives the same contract, and a name resolves to it on a date near its year', () => {
    fc.assert(
      fc.property(anyRoot, anyDay, (root, t) => {
        for (const m of CALENDAR.contractsOn(root, t)) {
          const contract = CALENDAR.contract(root, m);
          expect(CALENDAR.byId(contract.id)).toBe(contract);
          expect(CALENDAR.resolve(contract.name, t)?.id).toBe(contract.id);
          expect(CALENDAR.resolve(`${root}${monthLabel(m)}`, 0)?.id).toBe(contract.id);
        }
      }),
      { numRuns: 200 },
    );
  });
});
