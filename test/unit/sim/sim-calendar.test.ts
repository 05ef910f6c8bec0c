import { describe, expect, it } from 'vitest';
import { CALENDAR, PRICE_PATHS } from '../../../src/market/contract-months.ts';
import { openSimulator } from '../../../src/sim/index.ts';

/** Tuesday 24 November 2026, 09:00 CT: the market is open. */
const OPEN_TUESDAY = Date.UTC(2026, 10, 24, 15);

describe('shared price paths', () => {
  it('gives a micro root and its mini the same last price at the same instant', () => {
    const sim = openSimulator({ clock: 'manual', startTime: OPEN_TUESDAY });
    try {
      for (const [micro, mini] of Object.entries(PRICE_PATHS)) {
        const microContract = CALENDAR.contract(micro, CALENDAR.frontMonth(micro, OPEN_TUESDAY));
        const miniContract = CALENDAR.contract(mini, CALENDAR.frontMonth(mini, OPEN_TUESDAY));
        for (const t of [OPEN_TUESDAY, OPEN_TUESDAY + 12_345, OPEN_TUESDAY - 3 * 3_600_000]) {
          const a = sim.engine.lastPrice(microContract.id, t);
          const b = sim.engine.lastPrice(miniContract.id, t);
          expect(a).toBeDefined();
          const microPrice = microContract.grid.toPrice(a as number);
          const miniPrice = miniContract.grid.toPrice(b as number);
          expect(Math.abs(microPrice - miniPrice)).toBeLessThanOrEqual(microContract.tickSize);
        }
      }
    } finally {
      sim.close();
    }
  });
});
