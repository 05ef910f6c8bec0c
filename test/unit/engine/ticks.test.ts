import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PriceGrid } from '../../../src/engine/ticks.ts';

const grids = [0.25, 0.1, 0.01, 0.005].map((tick) => new PriceGrid(tick, 1));

describe('tick conversion is exact on 0.25, 0.1, 0.01 and 0.005 grids', () => {
  for (const grid of grids) {
    it(`toPrice -> toTicks round-trips every whole number of ticks (${grid.tickSize})`, () => {
      fc.assert(
        // Prices are read as integers of 1e-9, so |price| stays under 2^53 / 1e9 (about 9 million).
        fc.property(
          fc.integer({ min: -Math.floor(8e6 / grid.tickSize), max: Math.floor(8e6 / grid.tickSize) }),
          (ticks) => {
            const price = grid.toPrice(ticks);
            expect(grid.toTicks(price)).toBe(ticks);
            expect(grid.isAligned(price)).toBe(true);
          },
        ),
        { numRuns: 500 },
      );
    });
    it(`a price between two ticks is never a whole number of ticks (${grid.tickSize})`, () => {
      const decimals = grid.decimals + 3;
      fc.assert(
        fc.property(
          fc.integer({ min: -5_000_000, max: 5_000_000 }),
          fc.integer({ min: 1, max: 999 }),
          (ticks, thousandths) => {
            // ticks + a fraction of a tick, written with a few more decimals than the grid has
            const price = Number((grid.toPrice(ticks) + (grid.tickSize * thousandths) / 1000).toFixed(decimals));
            fc.pre(!grid.isAligned(price));
            expect(Number.isInteger(grid.toTicks(price))).toBe(false);
          },
        ),
        { numRuns: 500 },
      );
    });
  }
  it('classic float traps stay exact', () => {
    expect(new PriceGrid(0.1, 1).toTicks(0.3)).toBe(3);
    expect(new PriceGrid(0.01, 1).toTicks(1.15)).toBe(115);
    expect(new PriceGrid(0.005, 1).toTicks(0.015)).toBe(3);
    expect(new PriceGrid(0.25, 12.5).toTicks(4321.75)).toBe(17287);
  });

  it('toPrice is the number its printed decimals read back as, on any grid, for whole and fractional ticks', () => {
    const tick = fc.constantFrom(0.25, 0.1, 0.01, 0.005, 0.03125, 0.0001, 0.5, 1, 5, 0.000001);
    const count = fc.oneof(
      fc.integer({ min: -100_000_000, max: 100_000_000 }),
      fc.double({ min: -1e6, max: 1e6, noNaN: true }),
    );
    fc.assert(
      fc.property(tick, count, (size, ticks) => {
        const grid = new PriceGrid(size, 1);
        const printed = Number(((ticks * grid.tickNanos) / 1e9).toFixed(grid.decimals));
        expect(grid.toPrice(ticks) === printed).toBe(true);
      }),
      { numRuns: 20_000 },
    );
  });
});
