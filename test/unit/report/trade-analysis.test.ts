import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ClosedTrade, ReportInput } from '../../../src/report/report-types.ts';
import { cents } from '../../../src/report/statistics.ts';
import {
  analyseTrades,
  ExcursionTracker,
  tradeExcursions,
  type TradeExcursion,
  type TradeExcursions,
} from '../../../src/report/trade-analysis.ts';
import { generatedRun } from './fixture.ts';

/** The two columns as one object a trade, for comparing. */
function excursionList(columns: TradeExcursions): TradeExcursion[] {
  return Array.from({ length: columns.length }, (_, i) => ({
    maeTicks: columns.maeTicks(i),
    mfeTicks: columns.mfeTicks(i),
  }));
}

const T0 = Date.parse('2024-03-05T14:30:00Z'); // 08:30 in Chicago (CST), a Tuesday
const MIN = 60_000;

/** Six one-minute bars, prices in ticks. */
const bars = {
  time: [0, 1, 2, 3, 4, 5].map((k) => T0 + k * MIN),
  open: [100, 102, 101, 99, 104, 106],
  high: [103, 104, 102, 105, 107, 108],
  low: [99, 100, 96, 98, 103, 104],
  close: [102, 101, 99, 104, 106, 107],
};

function trade(fields: Partial<ClosedTrade>): ClosedTrade {
  return {
    contractId: 'C',
    side: 'buy',
    size: 1,
    entryTime: T0,
    exitTime: T0,
    entryPrice: 100,
    exitPrice: 100,
    pnl: 0,
    fees: 0,
    ...fields,
  };
}

describe('trade excursions', () => {
  it('takes the high and low of every bar from the entry bar to the exit bar, both included', () => {
    // A market entry decided at bar 0 fills at bar 1's open (102) and is stamped with bar 1's start; a
    // stop exit inside bar 3 at 98 is stamped with bar 3's start: bars 1 to 3 count (high 105, low 96).
    const long = trade({ entryTime: bars.time[1], exitTime: bars.time[3], entryPrice: 102, exitPrice: 98, pnl: -50 });
    // A short from bar 2's open (101) to bar 5's open (106), two contracts: bars 2 to 5 (high 108, low 96).
    const short = trade({
      side: 'sell',
      size: 2,
      entryTime: bars.time[2],
      exitTime: bars.time[5],
      entryPrice: 101,
      exitPrice: 106,
      pnl: -125,
      fees: 4,
    });
    expect(excursionList(tradeExcursions(bars, [long, short]))).toEqual([
      { maeTicks: 96 - 102, mfeTicks: 105 - 102 },
      { maeTicks: 101 - 108, mfeTicks: 101 - 96 },
    ]);
    const input: ReportInput = {
      ...generatedRun(10),
      contract: { id: 'C', name: 'C', tickSize: 0.25, tickValue: 12.5 },
      bars,
      trades: [{ ...long, label: 'breakout' }, short],
    };
    const analysis = analyseTrades(input);
    expect(analysis.timeZone).toBe('America/Chicago');
    expect(analysis.trades[0]).toEqual({
      maeTicks: -6,
      mfeTicks: 3,
      mae: -75,
      mfe: 37.5,
      pnlTicks: -4,
      durationMs: 2 * MIN,
      label: 'breakout',
      hour: 8,
      weekday: 'Tue',
    });
    expect(analysis.trades[1]).toMatchObject({ maeTicks: -7, mfeTicks: 5, mae: -175, mfe: 125, pnlTicks: -5 });
    expect(analysis.byLabel).toEqual([
      { key: '-', trades: 1, won: 0, winRate: 0, netPnl: -129, averageNet: -129 },
      { key: 'breakout', trades: 1, won: 0, winRate: 0, netPnl: -50, averageNet: -50 },
    ]);
    expect(analysis.byHour.map((b) => [b.key, b.trades])).toEqual([['08', 2]]);
    expect(analysis.byWeekday.map((b) => b.key)).toEqual(['Tue']);
  });

  it('counts fill prices outside their bar (slippage) as prices the trade saw', () => {
    // Entry at 110 above every bar: MFE 0, not negative; the exit at 95 below bar 2's low 96: MAE -15.
    const t = trade({ entryTime: bars.time[1], exitTime: bars.time[2], entryPrice: 110, exitPrice: 95 });
    expect(excursionList(tradeExcursions(bars, [t]))).toEqual([{ maeTicks: -15, mfeTicks: 0 }]);
  });

  // Random bars and trades of positions that do not overlap (as one contract's trades are), partial exits.
  const history = fc
    .record({
      moves: fc.array(fc.tuple(fc.integer({ min: -6, max: 6 }), fc.nat(4), fc.nat(4)), {
        minLength: 5,
        maxLength: 120,
      }),
      cuts: fc.array(fc.integer({ min: 1, max: 119 }), { maxLength: 6 }),
      positions: fc.array(
        fc.record({
          gap: fc.nat(6),
          length: fc.nat(12),
          buy: fc.boolean(),
          slip: fc.integer({ min: -2, max: 2 }),
          parts: fc.integer({ min: 1, max: 3 }),
        }),
        { maxLength: 10 },
      ),
    })
    .map(({ moves, cuts, positions }) => {
      const n = moves.length;
      const time: number[] = [];
      const open: number[] = [];
      const high: number[] = [];
      const low: number[] = [];
      let price = 1000;
      moves.forEach(([move, up, down], i) => {
        time.push(T0 + i * MIN);
        open.push(price);
        const close = price + move;
        high.push(Math.max(price, close) + up);
        low.push(Math.min(price, close) - down);
        price = close;
      });
      const trades: ClosedTrade[] = [];
      let at = 0;
      let open_: { since: number; exit: number } | undefined;
      for (const p of positions) {
        const entry = at + p.gap;
        const exit = entry + p.length;
        if (exit >= n) break;
        const entryPrice = open[entry]! + p.slip;
        for (let part = 0; part < p.parts; part++) {
          const exitBar = Math.min(exit, entry + part);
          const exitPrice = part % 2 === 0 ? low[exitBar]! - 1 : high[exitBar]!;
          const direction = p.buy ? 1 : -1;
          trades.push(
            trade({
              side: p.buy ? 'buy' : 'sell',
              entryTime: time[entry]!,
              exitTime: time[exitBar]!,
              entryPrice,
              exitPrice,
              pnl: (exitPrice - entryPrice) * direction * 12.5,
            }),
          );
        }
        open_ = { since: time[entry]!, exit };
        at = exit + 1;
      }
      return { bars: { time, open, high, low, close: open }, trades, cuts, openPosition: open_ };
    });

  it('MAE <= 0 <= MFE and the PnL in ticks (gross) lies between them', () => {
    fc.assert(
      fc.property(history, ({ bars: b, trades }) => {
        const excursions = excursionList(tradeExcursions(b, trades));
        expect(excursions).toHaveLength(trades.length);
        trades.forEach((t, i) => {
          const { maeTicks, mfeTicks } = excursions[i]!;
          const pnl = (t.exitPrice - t.entryPrice) * (t.side === 'buy' ? 1 : -1);
          expect(Number.isInteger(maeTicks) && Number.isInteger(mfeTicks)).toBe(true);
          expect(maeTicks).toBeLessThanOrEqual(0);
          expect(mfeTicks).toBeGreaterThanOrEqual(0);
          expect(pnl).toBeGreaterThanOrEqual(maeTicks);
          expect(pnl).toBeLessThanOrEqual(mfeTicks);
        });
      }),
    );
  });

  it('gives the same excursions when the bars pass in chunks as from the whole history', () => {
    fc.assert(
      fc.property(history, ({ bars: b, trades }) => {
        const whole = tradeExcursions(b, trades);
        const n = b.time.length;
        const cuts = [...new Set([0, ...[7, 19, 33, 50].filter((c) => c < n), n])].sort((x, y) => x - y);
        const tracker = new ExcursionTracker();
        for (let k = 0; k + 1 < cuts.length; k++) {
          const from = cuts[k]!;
          const to = cuts[k + 1]!;
          const end = b.time[to - 1]!;
          // Trades closed by the end of these bars; the position open after them, as the run reports it.
          const closed = trades.filter((t) => t.exitTime <= end);
          const open = trades.find((t) => t.entryTime <= end && t.exitTime > end);
          const slice = { time: b.time.slice(from, to), high: b.high.slice(from, to), low: b.low.slice(from, to) };
          tracker.add(slice, closed, open === undefined ? Number.NaN : open.entryTime);
        }
        expect(excursionList(tracker.result())).toEqual(excursionList(whole));
      }),
    );
  });

  it("makes each trade's facts from the trade, its excursions and the exchange's clock, and counts the breakdowns from them", () => {
    // The definition, written out: the zone's hour and weekday from Intl, money from ticks.
    const clock = new Intl.DateTimeFormat('en-US', {
      timeZone: 'America/Chicago',
      hourCycle: 'h23',
      hour: 'numeric',
      weekday: 'short',
    });
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 40 }), fc.integer({ min: 200, max: 1500 }), (seed, barCount) => {
        const input = generatedRun(barCount, seed);
        const labels = ['a', 'b', undefined];
        const labelled = { ...input, trades: input.trades.map((t, i) => ({ ...t, label: labels[i % 3] })) };
        const analysis = analyseTrades(labelled);
        const excursions = excursionList(tradeExcursions(labelled.bars, labelled.trades));
        const facts = labelled.trades.map((t, i) => {
          const parts = clock.formatToParts(new Date(t.entryTime));
          const { maeTicks, mfeTicks } = excursions[i]!;
          const tickValue = labelled.contract.tickValue;
          return {
            maeTicks,
            mfeTicks,
            mae: cents(maeTicks * tickValue * t.size),
            mfe: cents(mfeTicks * tickValue * t.size),
            // Ticks are whole: the difference is exact (and 0, never -0).
            pnlTicks: (t.exitPrice - t.entryPrice) * (t.side === 'buy' ? 1 : -1) || 0,
            durationMs: t.exitTime - t.entryTime,
            label: t.label ?? null,
            hour: Number(parts.find((p) => p.type === 'hour')!.value),
            weekday: parts.find((p) => p.type === 'weekday')!.value,
          };
        });
        for (let i = 0; i < facts.length; i++) expect(analysis.fact(i)).toEqual(facts[i]);
        expect(analysis.trades).toEqual(facts);
        // Each breakdown: its trades are those of the facts' keys.
        const keys = {
          byHour: (i: number) => String(facts[i]!.hour).padStart(2, '0'),
          byWeekday: (i: number) => facts[i]!.weekday,
          byLabel: (i: number) => facts[i]!.label ?? '-',
        };
        for (const [name, keyOf] of Object.entries(keys)) {
          const counted = new Map<string, number>();
          facts.forEach((_, i) => counted.set(keyOf(i), (counted.get(keyOf(i)) ?? 0) + 1));
          const breakdown = analysis[name as keyof typeof keys];
          expect(new Map(breakdown.map((b) => [b.key, b.trades]))).toEqual(counted);
        }
      }),
      { numRuns: 20 },
    );
  });
});
