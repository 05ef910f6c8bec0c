import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BarTimedEquity } from '../../../src/adapters/backtest/bar-timed-equity.ts';
import { EquityRecorder } from '../../../src/engine/equity-recorder.ts';

describe('the equity of a whole history', () => {
  it("records the curve EquityRecorder records, sharing the bars' times while every point is at its bar's, in lent room or its own", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 60 }),
        fc.array(fc.integer({ min: 1, max: 25 }), { minLength: 1, maxLength: 8 }),
        fc.option(fc.nat(), { nil: undefined }),
        fc.integer({ min: -10, max: 10 }),
        // Room lent by the caller (a sweep's thread), shorter or longer than the bars, holding an earlier run's points.
        fc.option(fc.integer({ min: -3, max: 10 }), { nil: undefined }),
        (bars, chunks, offAt, extra, roomExtra) => {
          const barTimes = Float64Array.from({ length: bars }, (_, i) => 1_700_000_000_000 + i * 60_000);
          // As many points as bars, or fewer (a run that stopped) or more; one maybe off its bar's time.
          const points = Math.max(0, bars + extra);
          const off = offAt === undefined || points === 0 ? -1 : offAt % points;
          const room = roomExtra === undefined ? undefined : new Float64Array(Math.max(0, bars + roomExtra)).fill(-7);
          const timed = new BarTimedEquity(barTimes, room);
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
          // Room that holds a point a bar is used, not copied: a full curve's points are a view of it.
          if (room !== undefined && room.length >= bars && bars > 0 && p === bars && (off === -1 || off >= p))
            expect(got.equity.buffer).toBe(room.buffer);
        },
      ),
      { numRuns: 300 },
    );
  });
});
