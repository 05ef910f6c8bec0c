import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TradingCalendar } from '../../../src/engine/trading-day.ts';
import { timeframe } from '../../../src/engine/timeframe.ts';
import { CALENDAR } from '../../../src/market/contract-months.ts';
import type { TouchFills } from '../../../src/market/quotes.ts';
import { SessionStats } from '../../../src/sim/hubs/session-stats.ts';
import { ContractMarket, SyntheticBars } from '../../../src/sim/market/market.ts';

const FILLS: TouchFills = {
  spread: { type: 'fixed', ticks: 1 },
  book: { sizeShare: 0.25, minSize: 1, maxSize: 1000, levels: 5 },
  partialFills: true,
  queue: false,
};
const ORIGIN = Date.UTC(2025, 0, 1);
const grid = CALENDAR.grid('ES');
const market = new ContractMarket(grid, new SyntheticBars({ startPrice: 6000, grid }, 3, 0, ORIGIN), FILLS);
const days = new TradingCalendar();

/** The day's figures the slow way: the minute bars the REST history answers, aggregated. */
function fromBars(dayStart: number, now: number) {
  const bars = market.bars(timeframe('minute'), dayStart, now, now, 100_000, true);
  const oldest = bars.at(-1)!;
  const before = market.base.lastAtOrBefore(dayStart - 1);
  return {
    open: oldest.o,
    high: Math.max(...bars.map((b) => b.h)),
    low: Math.min(...bars.map((b) => b.l)),
    volume: bars.reduce((sum, b) => sum + b.v, 0),
    previousClose: market.base.close(before),
  };
}

describe('market hub session figures', () => {
  it('equal the trading day so far aggregated from the minute bars, read incrementally or afresh', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 2 * 86_400_000, max: 6 * 86_400_000 }), { minLength: 1, maxLength: 8 }),
        (offsets) => {
          const incremental = new SessionStats(market);
          for (const now of offsets.sort((a, b) => a - b).map((o) => ORIGIN + o)) {
            const dayStart = days.dayStart(now);
            const figures = incremental.at(dayStart, now);
            expect(new SessionStats(market).at(dayStart, now)).toEqual(figures);
            expect({ ...figures }).toMatchObject(fromBars(dayStart, now));
          }
        },
      ),
      { numRuns: 40 },
    );
  });
});
