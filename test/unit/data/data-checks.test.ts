import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { priceLevelWarning, spacingWarning, usualSpacing } from '../../../src/data/data-checks.ts';
import { allocateColumns } from '../../../src/data/columns.ts';

const MINUTE = 60_000;

/** Bars every `minutes`, with a session break (an hour) every 50 bars and a weekend every 500. */
function spaced(count: number, minutes: number) {
  const bars = allocateColumns(count);
  let t = Date.UTC(2025, 0, 6);
  for (let i = 0; i < count; i++) {
    bars.time[i] = t;
    t += minutes * MINUTE + (i % 50 === 49 ? 3_600_000 : 0) + (i % 500 === 499 ? 49 * 3_600_000 : 0);
  }
  return bars;
}

describe('the data spacing check', () => {
  it('property: bars k minutes apart warn exactly when the timeframe is not k minutes', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 60 }),
        fc.integer({ min: 1, max: 60 }),
        fc.integer({ min: 3, max: 1500 }),
        (k, configured, count) => {
          const bars = spaced(count, k);
          expect(usualSpacing(bars)).toBe(k * MINUTE);
          const warning = spacingWarning(bars, { unit: 'minute', unitNumber: configured }, 'bars.csv');
          if (k === configured) expect(warning).toBeUndefined();
          else
            expect(warning).toBe(
              `bars.csv: its bars are usually ${k === 60 ? '1h' : `${k}m`} apart, but the data's timeframe is ${configured}m (set data.timeframe to what the file holds)`,
            );
        },
      ),
      { numRuns: 50 },
    );
  });

  it('says nothing of a single bar', () => {
    expect(spacingWarning(spaced(1, 1), { unit: 'minute', unitNumber: 5 }, 'x')).toBeUndefined();
  });
});

describe('the price level check', () => {
  const es = { name: 'ES', startPrice: 6000 };
  const ticks = (prices: number[], tickSize: number) => prices.map((p) => Math.round(p / tickSize));

  it("warns, naming both levels, when the data's median is ten times off the contract's usual level", () => {
    expect(priceLevelWarning(ticks([1700, 1710, 1690], 0.01), 0.01, { name: 'CL', startPrice: 60 }, 'es.csv')).toBe(
      "es.csv: its prices are around 1,700, but CL usually trades around 60: is this the contract's data (check contract: and the file's price unit)?",
    );
    expect(priceLevelWarning(ticks([59, 61], 0.25), 0.25, es, 'cl.csv')).toContain('usually trades around 6,000');
  });

  it('stays quiet within ten times of the usual level (ES in 2013 and today), or with no level or bars', () => {
    expect(priceLevelWarning(ticks([1676.75, 1680], 0.25), 0.25, es, 'es.csv')).toBeUndefined();
    expect(priceLevelWarning(ticks([6100], 0.25), 0.25, es, 'es.csv')).toBeUndefined();
    expect(priceLevelWarning(ticks([1700], 0.25), 0.25, { name: 'X', startPrice: undefined }, 'x.csv')).toBeUndefined();
    expect(priceLevelWarning([], 0.25, es, 'es.csv')).toBeUndefined();
  });
});
