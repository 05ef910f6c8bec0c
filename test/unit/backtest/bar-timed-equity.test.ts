import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BarTimedEquity } from '../../../src/adapters/backtest/bar-timed-equity.ts';
import { BlockStock } from '../../../src/engine/block-stock.ts';
import { EquityRecorder } from '../../../src/engine/equity-recorder.ts';

describe('the equity of a whole history', () => {
  it("records the curve EquityRecorder records, sharing the bars' times while every point is at its bar's, in lent room or its own", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 60 }),
        fc.array(fc.integer({ min: 1, max: 25 }), { minLength: 1, maxLength: 8 }),
        fc.option(fc.nat(), { nil: undefined }),
        fc.integer({ min: -10, max: 10 }),
        // Room lent by the caller (a sweep's thread): holding an earlier run's points, or none of this length.
        fc.option(fc.boolean(), { nil: undefined }),
        (bars, chunks, offAt, extra, spareOfLength) => {
          const barTimes = Float64Array.from({ length: bars }, (_, i) => 1_700_000_000_000 + i * 60_000);
          // As many points as bars, or fewer (a run that stopped) or more; one maybe off its bar's time.
          const points = Math.max(0, bars + extra);
          const off = offAt === undefined || points === 0 ? -1 : offAt % points;
          const stock = new BlockStock();
          const room = new Float64Array(spareOfLength ? bars : bars + 1).fill(-7);
          stock.give([room]);
          const lease = spareOfLength === undefined ? undefined : stock.lease();
          const timed = new BarTimedEquity(barTimes, lease);
          const plain = new EquityRecorder(bars);
          let p = 0;
          for (const n of chunks) {
            if (p >= points) break;
            const take = Math.min(n, points - p);
            timed.reserve(take);
            plain.reserve(take);
            for (let q = 0; q < take; q++, p++) {
              const time = p === off ? (barTimes[p] ?? 0) + 1 : (barTimes[p] ?? 1_800_000_000_000 + p);
              timed.record(time, 50_000 + p * 1.25);
              plain.record(time, 50_000 + p * 1.25);
            }
          }
          const got = timed.curve();
          const want = plain.curve();
          expect(Array.from(got.time)).toEqual(Array.from(want.time));
          expect(Array.from(got.equity)).toEqual(Array.from(want.equity));
          // Nothing stored beside the bars' own column when every bar has its point at its time.
          // (The point set off its time may lie past the last one recorded: then none was off.)
          if (p === bars && (off === -1 || off >= p)) expect(got.time).toBe(barTimes);
          else expect(got.time).not.toBe(barTimes);
          // Lent room is used, not copied: a full curve's points are the spare itself.
          if (spareOfLength === true && p === bars && (off === -1 || off >= p)) expect(got.equity).toBe(room);
          if (lease !== undefined) {
            lease.end();
            // The room went back: the recorder forgot it, and the stock holds it (a spare of another length,
            // which this run did not use, is let go).
            expect(timed.curve().equity.length).toBe(0);
            expect(stock.spares).toBe(1);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
