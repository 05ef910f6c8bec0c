import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { generateBars } from '../../../src/market/synthetic.ts';

const START = Date.UTC(2025, 10, 3, 0, 0);

describe('generateBars', () => {
  it('is deterministic from the seed and differs between seeds', () => {
    const a = generateBars({ seed: 7, tickSize: 0.25, startPrice: 6000, start: START, count: 5000 });
    const b = generateBars({ seed: 7, tickSize: 0.25, startPrice: 6000, start: START, count: 5000 });
    const c = generateBars({ seed: 8, tickSize: 0.25, startPrice: 6000, start: START, count: 5000 });
    expect(Array.from(a.close)).toEqual(Array.from(b.close));
    expect(Array.from(a.volume)).toEqual(Array.from(b.volume));
    expect(Array.from(a.close)).not.toEqual(Array.from(c.close));
  });

  it('starts at the start price in ticks and steps time by stepMs', () => {
    const bars = generateBars({ seed: 1, tickSize: 0.25, startPrice: 6000, start: START, count: 10, stepMs: 1000 });
    expect(bars.open[0]).toBe(24000);
    expect(bars.time[0]).toBe(START);
    expect(bars.time[9]).toBe(START + 9000);
  });

  it('keeps every price an integer tick with consistent o/h/l/c and positive volume', () => {
    fc.assert(
      fc.property(
        fc.integer(),
        fc.constantFrom(0.25, 0.1, 0.01, 1, 0.005),
        fc.integer({ min: 1, max: 2000 }),
        (seed, tickSize, count) => {
          const bars = generateBars({ seed, tickSize, startPrice: 100, start: START, count });
          const problems: string[] = [];
          for (let i = 0; i < count; i++) {
            const o = bars.open[i]!,
              h = bars.high[i]!,
              l = bars.low[i]!,
              c = bars.close[i]!;
            if (![o, h, l, c].every(Number.isInteger)) problems.push(`bar ${i} off the grid`);
            if (h < Math.max(o, c) || l > Math.min(o, c)) problems.push(`bar ${i} inconsistent ${o}/${h}/${l}/${c}`);
            if (l <= 0 || !(bars.volume[i]! > 0)) problems.push(`bar ${i} non-positive low or volume`);
            if (i > 0 && o !== bars.close[i - 1]) problems.push(`bar ${i} open is not the previous close`);
          }
          expect(problems).toEqual([]);
        },
      ),
      { numRuns: 50 },
    );
  });

  it('is quieter overnight than at the US open', () => {
    const days = 20;
    const bars = generateBars({ seed: 3, tickSize: 0.25, startPrice: 6000, start: START, count: days * 1440 });
    let night = 0,
      open = 0,
      nightVolume = 0,
      openVolume = 0;
    for (let i = 0; i < bars.time.length; i++) {
      const minute = (bars.time[i]! / 60_000) % 1440;
      const range = bars.high[i]! - bars.low[i]!;
      if (minute >= 120 && minute < 180) {
        night += range;
        nightVolume += bars.volume[i]!;
      }
      if (minute >= 13 * 60 + 30 && minute < 14 * 60 + 30) {
        open += range;
        openVolume += bars.volume[i]!;
      }
    }
    expect(open).toBeGreaterThan(night * 2);
    expect(openVolume).toBeGreaterThan(nightVolume * 2);
  });
});
