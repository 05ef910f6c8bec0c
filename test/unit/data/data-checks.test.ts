import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { spacingWarning, usualSpacing } from '../../../src/data/data-checks.ts';
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
