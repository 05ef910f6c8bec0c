/**
 * The backtest's synthetic market keeps the exchange's hours when it is given them: no bar while the
 * market is closed (the daily break, a weekend, a holiday's closure), bars up to an early close.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { syntheticBars } from '../../../src/data/synthetic-bars.ts';
import { PriceGrid } from '../../../src/engine/ticks.ts';
import { exchangeCalendarFor, rootMarketHours } from '../../../src/market/contract-hours.ts';

const hours = rootMarketHours('ES', exchangeCalendarFor('weeklyHours'));
const grid = new PriceGrid(0.25, 12.5);

describe('synthetic bars on the exchange calendar', () => {
  it('has no bar while the market is closed, from any start and for any number of sessions', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: Date.UTC(2025, 0, 1), max: Date.UTC(2027, 11, 1) }),
        fc.integer({ min: 1, max: 6 }),
        fc.constantFrom(60_000, 300_000, 900_000),
        (start, sessions, stepMs) => {
          const bars = syntheticBars({ seed: 7, grid, startPrice: 6000, start, sessions, stepMs, hours });
          for (const t of bars.time) if (!hours.isOpen(t) || !hours.isOpen(t + stepMs - 1)) return false;
          return bars.time.length > 0 && bars.time[0]! >= start;
        },
      ),
      { numRuns: 40 },
    );
  });

  it('stops at Thanksgiving 2026: the halt at 12:00 CT and the early close at 12:15 CT the day after', () => {
    const bars = syntheticBars({ seed: 7, grid, startPrice: 6000, start: Date.UTC(2026, 10, 25), sessions: 4, hours });
    const times = [...bars.time];
    // Thursday's stretch ends at 12:00 CT (18:00 UTC); Friday's at 12:15 CT (18:15 UTC).
    expect(times.filter((t) => t >= Date.UTC(2026, 10, 26, 18) && t < Date.UTC(2026, 10, 26, 23))).toEqual([]);
    expect(times.filter((t) => t >= Date.UTC(2026, 10, 27, 18, 15) && t < Date.UTC(2026, 10, 29, 23))).toEqual([]);
    expect(times).toContain(Date.UTC(2026, 10, 26, 17, 59));
    expect(times).toContain(Date.UTC(2026, 10, 27, 18, 14));
  });

  it('without hours keeps the plain Globex week', () => {
    const plain = syntheticBars({ seed: 7, grid, startPrice: 6000, start: Date.UTC(2026, 10, 25), sessions: 2 });
    expect(plain.time.length).toBe(2 * 23 * 60);
  });
});
