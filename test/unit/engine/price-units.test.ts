/** Prices in, ticks inside: intents written in prices reach the venue in exact ticks; off-grid prices are refused. */
import fc from 'fast-check';
import { Subject } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { limitOrder, modifyOrder, stopLimitOrder, stopOrder, trailingStopOrder } from '../../../src/engine/intents.ts';
import { createEngine, type Decision } from '../../../src/engine/runner.ts';
import { defineStrategy } from '../../../src/engine/strategy.ts';
import { PriceGrid } from '../../../src/engine/ticks.ts';
import type { ContractSpec, Intent } from '../../../src/engine/types.ts';
import { chunk, TinyVenue } from './helpers.ts';

const quarter: ContractSpec = {
  id: 'CON.F.US.EP.Z26',
  name: 'ESZ6',
  symbolId: 'F.US.EP',
  description: 'ES',
  grid: new PriceGrid(0.25, 12.5),
};
const tenth: ContractSpec = {
  id: 'CON.F.US.CLE.F27',
  name: 'CLF7',
  symbolId: 'F.US.CLE',
  description: 'CL',
  grid: new PriceGrid(0.01, 10),
};
const gold: ContractSpec = {
  id: 'CON.F.US.GCE.G27',
  name: 'GCG7',
  symbolId: 'F.US.GCE',
  description: 'GC',
  grid: new PriceGrid(0.1, 10),
};

function harness(contract: ContractSpec, lastTicks: number) {
  const intents = new Subject<Intent>();
  const strategy = defineStrategy({ name: 'hand', params: z.object({}), run: () => intents.asObservable() });
  const venue = new TinyVenue();
  const decisions: Decision[] = [];
  const engine = createEngine({
    strategies: [{ strategy }],
    contracts: [contract],
    venue,
    account: { startingBalance: 50_000 },
    risk: { maxPriceDistancePct: 1000 },
  });
  engine.decisions$.subscribe((d) => decisions.push(d));
  engine.push(chunk([lastTicks], undefined, contract.id));
  return { intents, venue, decisions };
}

describe('prices in, ticks inside', () => {
  it('limitOrder(buy, 1, 4501.25) on ES reaches the venue as 18005 ticks; stop, stop-limit, trail and modify likewise', () => {
    const { intents, venue } = harness(quarter, 18_000);
    intents.next(limitOrder('buy', 1, 4501.25));
    intents.next(stopOrder('buy', 1, 4510));
    intents.next(stopLimitOrder('buy', 1, 4510, 4510.5));
    intents.next(trailingStopOrder('sell', 1, 4490.75));
    expect(venue.placed.map((o) => o.order)).toEqual([
      { type: 'limit', limitPrice: 18_005 },
      { type: 'stop', stopPrice: 18_040 },
      { type: 'stopLimit', stopPrice: 18_040, limitPrice: 18_042 },
      { type: 'trailingStop', trailPrice: 17_963 },
    ]);
    intents.next(modifyOrder(venue.placed[0]!.id, { limitPrice: 4500.5 }));
    expect(venue.modified.at(-1)).toMatchObject({ limitPrice: 18_002 });
  });

  it('an off-grid price is TICK_MISALIGNED naming the price and the nearest valid ones; nothing is sent', () => {
    const { intents, venue, decisions } = harness(quarter, 6_680);
    intents.next(limitOrder('buy', 1, 1670.13));
    expect(venue.placed).toEqual([]);
    expect(decisions[0]?.result).toEqual({
      accepted: false,
      code: 'TICK_MISALIGNED',
      message: 'limitPrice 1670.13 is not on the 0.25 grid of ESZ6: nearest valid 1670 or 1670.25',
    });
  });

  it("{ unit: 'ticks' } keeps ticks for code that computes in ticks", () => {
    const { intents, venue } = harness(quarter, 18_000);
    intents.next(limitOrder('buy', 1, 17_990, { unit: 'ticks' }));
    expect(venue.placed[0]?.order).toEqual({ type: 'limit', limitPrice: 17_990 });
  });

  for (const contract of [quarter, tenth, gold]) {
    it(`any on-grid price round-trips exactly, any off-grid one is refused (${contract.grid.tickSize} ticks)`, () => {
      fc.assert(
        fc.property(fc.integer({ min: 1, max: 2_000_000 }), fc.integer({ min: 1, max: 9 }), (ticks, tenthOfTick) => {
          const { intents, venue, decisions } = harness(contract, ticks);
          const price = contract.grid.toPrice(ticks);
          intents.next(limitOrder('buy', 1, price));
          expect(venue.placed[0]?.order).toEqual({ type: 'limit', limitPrice: ticks });
          // A tenth of a tick off the grid, computed the way a person's code would (with float noise).
          const off = price + (tenthOfTick * contract.grid.tickSize) / 10;
          intents.next(limitOrder('buy', 1, off));
          expect(venue.placed).toHaveLength(1);
          expect(decisions.at(-1)?.result).toMatchObject({ accepted: false, code: 'TICK_MISALIGNED' });
        }),
        { numRuns: 200 },
      );
    });
  }
});
