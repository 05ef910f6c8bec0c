import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { CALENDAR } from '../../../src/market/contract-months.ts';
import type { TouchFills } from '../../../src/market/quotes.ts';
import { ContractMarket, FixedBars, SyntheticBars } from '../../../src/sim/market/market.ts';
import { timeframe } from '../../../src/engine/timeframe.ts';

const ES = CALENDAR.grid('ES');
const FILLS: TouchFills = {
  spread: { type: 'fixed', ticks: 1 },
  book: { sizeShare: 0.25, minSize: 1, maxSize: 1000, levels: 5 },
  partialFills: true,
  queue: false,
};
const T0 = Date.UTC(2025, 0, 6, 14, 0);

/** Three minute bars: up (100 -> 104, low 99, high 106), a gap, down (110 -> 105, high 111, low 104). */
function fixed(): ContractMarket {
  const f = (values: number[]) => Float64Array.from(values);
  return new ContractMarket(
    ES,
    new FixedBars(60_000, {
      time: f([T0, T0 + 60_000, T0 + 180_000]),
      open: f([100, 104, 110]),
      high: f([106, 105, 111]),
      low: f([99, 103, 104]),
      close: f([104, 104, 105]),
      volume: f([60, 30, 90]),
    }),
    FILLS,
  );
}

describe('ContractMarket', () => {
  it('walks open, low, high, close inside an up bar and has no price before the data', () => {
    const m = fixed();
    expect(m.lastPrice(T0 - 1)).toBeUndefined();
    expect(m.lastPrice(T0)).toBe(100);
    expect(m.lastPrice(T0 + 20_000)).toBe(99);
    expect(m.lastPrice(T0 + 40_000)).toBe(106);
    expect(m.lastPrice(T0 + 59_999)).toBe(104);
  });

  it('holds the last close in a gap, where the market is closed', () => {
    const m = fixed();
    expect(m.isOpen(T0 + 150_000)).toBe(false);
    expect(m.lastPrice(T0 + 150_000)).toBe(104);
    expect(m.isOpen(T0 + 180_000)).toBe(true);
  });

  it('lists the path points between two times, marking the jump at a bar open as a gap', () => {
    const points = fixed().pointsBetween(T0 + 120_000, T0 + 200_000);
    expect(points).toEqual([
      { time: T0 + 180_000, price: 110, gap: true },
      { time: T0 + 200_000, price: 111, gap: false },
    ]);
  });

  it('aggregates minute bars into buckets, newest first, with the forming bar only on request', () => {
    const m = fixed();
    const now = T0 + 200_000;
    const tf = timeframe('minute', 5);
    expect(m.bars(tf, T0, now, now, 10, false)).toEqual([]);
    const [bar] = m.bars(tf, T0, now, now, 10, true);
    expect(bar).toMatchObject({ t: T0, o: 100, h: 111, l: 99, c: 111 });
    const minutes = m.bars(timeframe('minute', 1), T0, now, now, 10, false);
    expect(minutes.map((b) => b.t)).toEqual([T0 + 60_000, T0]);
  });

  it('derives second bars from the intrabar path', () => {
    const m = fixed();
    const now = T0 + 60_000;
    const seconds = m.bars(timeframe('second', 20), T0, now, now, 10, false);
    expect(seconds.map((b) => [b.t - T0, b.o, b.c])).toEqual([
      [40_000, 106, 104],
      [20_000, 99, 106],
      [0, 100, 99],
    ]);
  });

  it('keeps a synthetic market consistent: the path stays within each bar and bars aggregate to their minutes', () => {
    const mnq = CALENDAR.root('MNQ')!;
    const origin = Date.UTC(2025, 0, 1);
    const grid = CALENDAR.grid(mnq);
    const m = new ContractMarket(grid, new SyntheticBars({ startPrice: mnq.startPrice, grid }, 5, 3, origin), FILLS);
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 5 * 86_400_000 }), (offset) => {
        const t = origin + offset;
        const i = Math.floor(offset / 60_000);
        const price = m.lastPrice(t)!;
        return Number.isInteger(price) && price >= m.base.low(i) && price <= m.base.high(i);
      }),
    );
    const hourStart = origin + 86_400_000 + 14 * 3_600_000;
    const [hour] = m.bars(timeframe('hour', 1), hourStart, hourStart, origin + 3 * 86_400_000, 1, false);
    const minutes = m.bars(
      timeframe('minute', 1),
      hourStart,
      hourStart + 3_599_999,
      origin + 3 * 86_400_000,
      100,
      false,
    );
    expect(hour!.h).toBe(Math.max(...minutes.map((b) => b.h)));
    expect(hour!.o).toBe(minutes.at(-1)!.o);
    expect(hour!.c).toBe(minutes[0]!.c);
  });
});
