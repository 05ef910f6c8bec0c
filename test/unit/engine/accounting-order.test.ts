/**
 * Fills that arrive out of execution order (a realtime event overtaking a trade a poll brings later) are
 * booked in execution order: whatever the arrival order, the position, its average price and the realized
 * PnL equal those of the fills applied in time order, as the gateway books them.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Accounting } from '../../../src/engine/accounting.ts';
import { PriceGrid } from '../../../src/engine/ticks.ts';
import type { ContractSpec, Fill } from '../../../src/engine/types.ts';

const ES: ContractSpec = { id: 'CON.F.US.EP.Z26', name: 'ESZ6', symbolId: 'F.US.EP', description: 'ES', grid: new PriceGrid(0.25, 12.5) };

function book(fills: readonly Fill[]) {
  const accounting = new Accounting([ES], 50_000);
  accounting.startDay('2026-11-23');
  for (const fill of fills) accounting.applyFill(fill, '2026-11-23');
  const position = accounting.positionView(ES.id);
  return { realized: accounting.realizedPnl, fees: accounting.fees, size: position.size, average: position.averagePrice, balance: accounting.balance, day: accounting.days[0]!.realizedPnl };
}

const fillArb = fc.record({ side: fc.constantFrom('buy' as const, 'sell' as const), size: fc.integer({ min: 1, max: 3 }), price: fc.integer({ min: 25_590, max: 25_610 }) });

describe('fills booked in execution order', () => {
  it('any arrival order gives the books of the time order', () => {
    fc.assert(
      fc.property(fc.array(fillArb, { minLength: 1, maxLength: 12 }).chain((raw) => fc.tuple(fc.constant(raw), fc.shuffledSubarray(raw.map((_, k) => k), { minLength: raw.length, maxLength: raw.length }))), ([raw, order]) => {
        const fills: Fill[] = raw.map((f, k) => ({ kind: 'fill', fillId: String(100 + k), orderId: `o-${k}`, contractId: ES.id, side: f.side, size: f.size, price: f.price, fees: 1.4 * f.size, time: 1_000 + k }));
        const inTime = book(fills);
        const arrived = book(order.map((k) => fills[k]!));
        expect(arrived.size).toBe(inTime.size);
        expect(arrived.realized).toBeCloseTo(inTime.realized, 6);
        expect(arrived.day).toBeCloseTo(inTime.day, 6);
        expect(arrived.balance).toBeCloseTo(inTime.balance, 6);
        if (inTime.size !== 0) expect(arrived.average).toBeCloseTo(inTime.average, 9);
      }),
      { numRuns: 300 },
    );
  });
});
