import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BlockStock, type Borrower } from '../../../src/engine/block-stock.ts';

/** A borrower that counts how often it was told to forget. */
class Holder implements Borrower {
  forgotten = 0;
  forget(): void {
    this.forgotten++;
  }
}

describe('a stock of arrays lent run after run', () => {
  it('never lends one array to two leases at once, lends a spare of the length before it makes one, takes everything back at the end and keeps only the lengths the last run used', () => {
    fc.assert(
      fc.property(
        // Steps: take from lease k an array of one of three lengths, or end lease k.
        fc.array(
          fc.record({
            lease: fc.nat(2),
            op: fc.constantFrom('take', 'take', 'end'),
            length: fc.constantFrom(1, 8, 1024),
          }),
          { maxLength: 60 },
        ),
        (steps) => {
          const stock = new BlockStock();
          const leases = [stock.lease(), stock.lease(), stock.lease()];
          const holders = [new Holder(), new Holder(), new Holder()];
          const open: Set<Float64Array>[] = [new Set(), new Set(), new Set()];
          // The arrays given back and not lent again.
          const given = new Set<Float64Array>();
          for (const step of steps) {
            const k = step.lease;
            if (step.op === 'end') {
              leases[k]!.end();
              // Each borrower is emptied once per lease; what the lease lent is spare now.
              expect(holders[k]!.forgotten).toBe(open[k]!.size > 0 ? 1 : 0);
              // The stock keeps spares of the lengths this lease used, and of no other.
              if (open[k]!.size > 0) {
                const lengths = new Set([...open[k]!].map((a) => a.length));
                for (const array of given) if (!lengths.has(array.length)) given.delete(array);
              }
              for (const array of open[k]!) given.add(array);
              expect(stock.spares).toBe(given.size);
              leases[k] = stock.lease();
              holders[k] = new Holder();
              open[k] = new Set();
              continue;
            }
            const array = leases[k]!.take(step.length, holders[k]!);

            for (const other of open) expect(other.has(array)).toBe(false);
            // A spare of the length is lent before a new array is made.
            const spareOfLength = [...given].some((a) => a.length === step.length);
            expect(given.has(array)).toBe(spareOfLength);
            given.delete(array);
            open[k]!.add(array);
            // A lent array may hold anything: the next run writes over it.
            array.fill(k + 1);
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  it('a lease that ended lends arrays of its own, which never go to the stock', () => {
    const stock = new BlockStock();
    const lease = stock.lease();
    const holder = new Holder();
    lease.take(16, holder);
    lease.end();
    lease.end();
    expect(holder.forgotten).toBe(1);
    expect(stock.spares).toBe(1);
    const late = lease.take(16, holder);
    lease.end();
    expect(stock.spares).toBe(1);
    // The spare is the one given back, not the late one.
    expect(stock.take(16)).not.toBe(late);
  });
});
