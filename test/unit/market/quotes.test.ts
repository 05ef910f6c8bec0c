/** The book both venues quote from (src/market/quotes.ts) and the intrabar path (src/market/path.ts). */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { lastMove, pathPrices } from '../../../src/market/path.ts';
import {
  DEFAULT_BOOK,
  depthOf,
  levelSize,
  levelVolume,
  queueAhead,
  quoteAround,
  spreadModelSchema,
  spreadTicks,
  takeLiquidity,
  touchFill,
  type TouchFills,
} from '../../../src/market/quotes.ts';
import { syntheticSpreadModel } from '../../../src/market/synthetic.ts';

const bar = (high: number, low: number, volume: number) => ({ high, low, volume });
const fills = (over: Partial<TouchFills> = {}): TouchFills => ({
  spread: { type: 'fixed', ticks: 1 },
  book: DEFAULT_BOOK,
  partialFills: true,
  queue: false,
  ...over,
});

describe('spread', () => {
  it('is fixed, or widens with the range and on a thin bar, within its bounds', () => {
    expect(spreadTicks({ type: 'fixed', ticks: 2 }, bar(110, 100, 5))).toBe(2);
    const model = spreadModelSchema.parse({ type: 'volatility', rangeTicksPerTick: 10, thinVolume: 8 });
    expect(spreadTicks(model, bar(105, 100, 50))).toBe(1);
    expect(spreadTicks(model, bar(120, 100, 50))).toBe(3);
    expect(spreadTicks(model, bar(105, 100, 3))).toBe(2);
    expect(spreadTicks(model, bar(300, 100, 3))).toBe(4);
    expect(() =>
      spreadModelSchema.parse({ type: 'volatility', rangeTicksPerTick: 10, minTicks: 3, maxTicks: 2 }),
    ).toThrow(/maxTicks/);
  });

  it('of the synthetic ES market is one tick in a busy minute, wider at night and after a jump', () => {
    const model = syntheticSpreadModel(6700, 0.25);
    expect(spreadTicks(model, bar(10, 0, 60))).toBe(1); // a day-session minute: 10 ticks, 60 contracts
    expect(spreadTicks(model, bar(3, 0, 3))).toBe(2); // a night minute: a few contracts
    expect(spreadTicks(model, bar(40, 0, 200))).toBe(2); // a jump: four typical ranges
  });
});

describe('quote and book', () => {
  it('puts the last trade on the ask after an up move and on the bid after a down move', () => {
    expect(quoteAround(100, 1, 2, 5)).toEqual({ bid: 98, ask: 100, bidSize: 5, askSize: 5 });
    expect(quoteAround(100, -1, 2, 5)).toEqual({ bid: 100, ask: 102, bidSize: 5, askSize: 5 });
    expect(quoteAround(100, 0, 1, 5)).toMatchObject({ ask: 100 });
    expect(depthOf(quoteAround(100, 1, 1, 5), 3)).toEqual({
      bids: [
        { price: 99, size: 5 },
        { price: 98, size: 5 },
        { price: 97, size: 5 },
      ],
      asks: [
        { price: 100, size: 5 },
        { price: 101, size: 5 },
        { price: 102, size: 5 },
      ],
    });
  });

  it('sizes a level as a share of the bar before, within bounds', () => {
    expect(levelSize(DEFAULT_BOOK, bar(0, 0, 40))).toBe(10);
    expect(levelSize(DEFAULT_BOOK, bar(0, 0, 1))).toBe(1);
    expect(levelSize({ ...DEFAULT_BOOK, maxSize: 50 }, bar(0, 0, 10_000))).toBe(50);
    expect(levelVolume(bar(103, 100, 40))).toBe(10);
  });

  it('walks the book one tick per level, never beyond a limit; whole at the touch without partial fills', () => {
    const quote = quoteAround(100, 1, 1, 10);
    expect(takeLiquidity(quote, 1, 25, undefined, true)).toEqual([
      { price: 100, size: 10 },
      { price: 101, size: 10 },
      { price: 102, size: 5 },
    ]);
    expect(takeLiquidity(quote, -1, 12, undefined, true)).toEqual([
      { price: 99, size: 10 },
      { price: 98, size: 2 },
    ]);
    expect(takeLiquidity(quote, 1, 25, 101, true)).toEqual([
      { price: 100, size: 10 },
      { price: 101, size: 10 },
    ]);
    expect(takeLiquidity(quote, 1, 25, 99, true)).toEqual([]);
    expect(takeLiquidity(quote, 1, 25, undefined, false)).toEqual([{ price: 100, size: 25 }]);
  });

  it('never fills a taker better than the touch, nor more than asked', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 10, max: 10_000 }),
        fc.constantFrom(-1, 1),
        fc.integer({ min: 0, max: 4 }),
        fc.integer({ min: 1, max: 50 }),
        fc.constantFrom<1 | -1>(1, -1),
        fc.integer({ min: 1, max: 200 }),
        fc.option(fc.integer({ min: -6, max: 6 }), { nil: undefined }),
        fc.boolean(),
        (last, direction, spread, size, sign, wanted, limitOffset, partial) => {
          const quote = quoteAround(last, direction, spread, size);
          const touchPrice = sign === 1 ? quote.ask : quote.bid;
          const limit = limitOffset === undefined ? undefined : touchPrice + limitOffset;
          const parts = takeLiquidity(quote, sign, wanted, limit, partial);
          const filled = parts.reduce((sum, p) => sum + p.size, 0);
          expect(filled).toBeLessThanOrEqual(wanted);
          if (limit === undefined) expect(filled).toBe(wanted);
          for (const p of parts) {
            expect(sign * p.price).toBeGreaterThanOrEqual(sign * touchPrice);
            if (limit !== undefined) expect(sign * p.price).toBeLessThanOrEqual(sign * limit);
          }
        },
      ),
    );
  });
});

describe('resting limits at the touch', () => {
  it('join the back of the queue at a price already shown, the front when they improve it', () => {
    const quote = quoteAround(100, 1, 2, 7);
    expect(queueAhead(quote, 1, 98)).toBe(7);
    expect(queueAhead(quote, 1, 95)).toBe(7);
    expect(queueAhead(quote, 1, 99)).toBe(0);
    expect(queueAhead(quote, -1, 100)).toBe(7);
    expect(queueAhead(quote, -1, 99)).toBe(0);
  });

  it('take a level per touch with partial fills, the rest without; behind a queue only what trades past it', () => {
    const touched = bar(103, 100, 40); // 10 contracts trade at each of its four prices
    const before = bar(103, 100, 40); // level size 10
    expect(touchFill(fills(), 25, 0, touched, before)).toEqual({ size: 10, ahead: 0 });
    expect(touchFill(fills({ partialFills: false }), 25, 0, touched, before)).toEqual({ size: 25, ahead: 0 });
    expect(touchFill(fills({ queue: true }), 25, 10, touched, before)).toEqual({ size: 0, ahead: 0 });
    expect(touchFill(fills({ queue: true }), 25, 14, touched, before)).toEqual({ size: 0, ahead: 4 });
    expect(touchFill(fills({ queue: true }), 25, 4, touched, before)).toEqual({ size: 6, ahead: 0 });
    expect(touchFill(fills({ queue: true, partialFills: false }), 25, 4, touched, before)).toEqual({
      size: 25,
      ahead: 0,
    });
  });
});

describe('intrabar path', () => {
  it('visits the low first on an up bar and the high first on a down bar', () => {
    expect(pathPrices(100, 110, 95, 105)).toEqual([100, 95, 110, 105]);
    expect(pathPrices(100, 110, 95, 98)).toEqual([100, 110, 95, 98]);
  });

  it("tells the direction of the bar's last change", () => {
    expect(lastMove(100, 110, 95, 105)).toBe(-1); // ... 110 -> 105
    expect(lastMove(100, 110, 95, 110)).toBe(1); // ... 95 -> 110 -> 110
    expect(lastMove(100, 100, 100, 100)).toBe(0);
    expect(lastMove(100, 100, 95, 95)).toBe(-1); // 100 -> 100 -> 95 -> 95
  });
});
