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

const ES: ContractSpec = {
  id: 'CON.F.US.EP.Z26',
  name: 'ESZ6',
  symbolId: 'F.US.EP',
  description: 'ES',
  grid: new PriceGrid(0.25, 12.5),
};

/** `asView`: every fill passed in one object rewritten for each, as a venue's listener may get them. */
function book(fills: readonly Fill[], asView = false) {
  const accounting = new Accounting([ES], 50_000);
  accounting.startDay('2026-11-23');
  const view = { ...fills[0]! };
  for (const fill of fills) accounting.applyFill(asView ? Object.assign(view, fill) : fill, '2026-11-23');
  const position = accounting.positionView(ES.id);
  return {
    realized: accounting.realizedPnl,
    fees: accounting.fees,
    size: position.size,
    average: position.averagePrice,
    balance: accounting.balance,
    day: accounting.days[0]!.realizedPnl,
  };
}

const fillArb = fc.record({
  side: fc.constantFrom('buy' as const, 'sell' as const),
  size: fc.integer({ min: 1, max: 3 }),
  price: fc.integer({ min: 25_590, max: 25_610 }),
});

describe('fills booked in execution order', () => {
  it('any arrival order gives the books of the time order, fills given as one rewritten view too', () => {
    fc.assert(
      fc.property(
        fc.array(fillArb, { minLength: 1, maxLength: 12 }).chain((raw) =>
          fc.tuple(
            fc.constant(raw),
            fc.shuffledSubarray(
              raw.map((_, k) => k),
              { minLength: raw.length, maxLength: raw.length },
            ),
          ),
        ),
        ([raw, order]) => {
          const fills: Fill[] = raw.map((f, k) => ({
            kind: 'fill',
            fillId: String(100 + k),
            orderId: `o-${k}`,
            contractId: ES.id,
            side: f.side,
            size: f.size,
            price: f.price,
            fees: 1.4 * f.size,
            time: 1_000 + k,
          }));
          const inTime = book(fills);
          const arrived = book(order.map((k) => fills[k]!));
          expect(arrived.size).toBe(inTime.size);
          expect(arrived.realized).toBeCloseTo(inTime.realized, 6);
          expect(arrived.day).toBeCloseTo(inTime.day, 6);
          expect(arrived.balance).toBeCloseTo(inTime.balance, 6);
          if (inTime.size !== 0) expect(arrived.average).toBeCloseTo(inTime.average, 9);
          // The fills accounting remembers (to book a late one again) are copies, not the view.
          const throughView = book(
            order.map((k) => fills[k]!),
            true,
          );
          expect(throughView).toEqual(arrived);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('books each closed trade in cents, as the gateway does, when asked (live): the balance is the sum of rounded trades', () => {
    // MES-like: $1.25 a tick, so an average entry between ticks gives PnL in fractions of a cent.
    const MES: ContractSpec = { ...ES, id: 'CON.F.US.MES.Z26', grid: new PriceGrid(0.25, 1.25) };
    fc.assert(
      fc.property(fc.array(fillArb, { minLength: 1, maxLength: 14 }), (raw) => {
        const fills: Fill[] = raw.map((f, k) => ({
          kind: 'fill',
          fillId: String(100 + k),
          orderId: `o-${k}`,
          contractId: MES.id,
          side: f.side,
          size: f.size,
          price: f.price,
          fees: 0.37 * f.size,
          time: 1_000 + k,
        }));
        const exact = new Accounting([MES], 50_000);
        const cents = new Accounting([MES], 50_000, { pnlInCents: true });
        for (const a of [exact, cents]) {
          a.startDay('2026-11-23');
          for (const fill of fills) a.applyFill(fill, '2026-11-23');
        }
        const rounded = exact.trades.reduce((sum, t) => sum + Math.round(t.pnl * 100) / 100, 0);
        expect(cents.realizedPnl).toBeCloseTo(rounded, 9);
        for (const t of cents.trades) expect(Math.abs(t.pnl * 100 - Math.round(t.pnl * 100))).toBeLessThan(1e-6);
        expect(cents.positionView(MES.id).size).toBe(exact.positionView(MES.id).size);
      }),
      { numRuns: 300 },
    );
  });
});
