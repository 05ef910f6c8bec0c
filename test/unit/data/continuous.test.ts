import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { map, mergeMap, from } from 'rxjs';
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { AccountConfig, BacktestConfig } from '../../../src/adapters/backtest/backtest-config.ts';
import { resolveContract } from '../../../src/adapters/backtest/contract.ts';
import { configuredContract } from '../../../src/adapters/backtest/definition-run.ts';
import { executeBacktest } from '../../../src/adapters/backtest/execute.ts';
import {
  alignToBuckets,
  frontMonthSegments,
  monthOfLabel,
  planContinuity,
  segmentIndexAt,
  segmentsFromLabels,
  volumeRolledHistory,
  type HistorySegment,
} from '../../../src/data/continuous.ts';
import { TradingCalendar } from '../../../src/engine/trading-day.ts';
import { runBacktest, type BacktestRunInput, type BacktestRunResult } from '../../../src/adapters/backtest/run.ts';
import { readCsvBars } from '../../../src/data/csv.ts';
import { allocateColumns } from '../../../src/data/columns.ts';
import { CALENDAR } from '../../../src/market/contract-months.ts';
import { bucketStart } from '../../../src/engine/timeframe.ts';
import { defineStrategy } from '../../../src/engine/strategy.ts';
import { target } from '../../../src/engine/intents.ts';
import type { BarColumns, Intent } from '../../../src/engine/types.ts';

const ES_CSV = path.resolve(import.meta.dirname, '../../../../shared/data/es-minute-lean.csv');
const MINUTE = 60_000;
const ES = CALENDAR.root('ES')!;
const contract = resolveContract('ES');

/** A strategy that targets the size scheduled for a bar index, and records every close it is shown. */
function scheduled(schedule: ReadonlyMap<number, number>, seen: number[]) {
  let index = 0;
  return defineStrategy({
    name: 'scheduled',
    params: z.object({}),
    run: ({ bars }) =>
      bars().pipe(
        mergeMap((chunk) => {
          const out: Intent[] = [];
          for (let i = 0; i < chunk.length; i++, index++) {
            seen.push(chunk.close[i]!);
            const size = schedule.get(index);
            if (size !== undefined) out.push({ ...target(size), at: i });
          }
          return from(out);
        }),
        map((intent) => intent),
      ),
  });
}

/** Flat one-minute bars (open = high = low = close) at the given prices, from `start`. */
function flatBars(prices: readonly number[], start: number): BarColumns {
  const bars = allocateColumns(prices.length);
  prices.forEach((p, i) => {
    bars.time[i] = start + i * MINUTE;
    bars.open[i] = bars.high[i] = bars.low[i] = bars.close[i] = p;
    bars.volume[i] = 10;
  });
  return bars;
}

function run(
  bars: BarColumns,
  segments: readonly HistorySegment[],
  strategy: BacktestRunInput['strategy'],
  rollMode: 'roll' | 'flatten' = 'roll',
): BacktestRunResult {
  return runBacktest({
    contract,
    bars,
    dataTimeframe: { unit: 'minute', unitNumber: 1 },
    timeframe: { unit: 'minute', unitNumber: 1 },
    strategy,
    params: {},
    account: AccountConfig.parse({}),
    risk: {},
    fills: { slippageTicks: 1, feePerContractPerSide: 1.4 },
    continuity: { segments, rollMode },
  });
}

describe('the month of a contract cell', () => {
  it('reads YYYYMM, names and ids of the root, and refuses other roots and months out of cycle', () => {
    const on = Date.UTC(2013, 10, 1);
    expect(monthOfLabel('201403', ES, CALENDAR, on)).toEqual({ year: 2014, month: 3 });
    expect(monthOfLabel('ESH4', ES, CALENDAR, on)).toEqual({ year: 2014, month: 3 });
    expect(monthOfLabel('CON.F.US.EP.Z13', ES, CALENDAR, on)).toEqual({ year: 2013, month: 12 });
    expect(() => monthOfLabel('201402', ES, CALENDAR, on)).toThrow(/not a ES month/);
    expect(() => monthOfLabel('NQH4', ES, CALENDAR, on)).toThrow(/not a ES month/);
  });

  it('a root in a config is the front month at each date; months still resolve as before', () => {
    expect(contract).toMatchObject({ id: 'F.US.EP', name: 'ES', continuous: { root: { root: 'ES' } } });
    expect(resolveContract('ESH6', Date.UTC(2026, 0, 1)).id).toBe('CON.F.US.EP.H26');
    expect(resolveContract('CON.F.US.EP.H26').id).toBe('CON.F.US.EP.H26');
  });
});

describe('roots added in the config', () => {
  it('a root written in roots: resolves as a root and by its months', () => {
    const root = {
      root: 'XAU',
      symbol: 'XAUF',
      title: 'Test gold',
      tickSize: 0.1,
      tickValue: 10,
      feePerSide: 1,
      startPrice: 2000,
      cycle: 'GJMQVZ',
      expiry: { rule: 'beforeMonthEnd', businessDays: 2 },
      rollBusinessDays: 20,
    };
    const config = BacktestConfig.parse({
      strategy: { name: 'sma-cross' },
      contract: 'XAU',
      roots: [root],
      data: { source: 'synthetic' },
    });
    const continuous = configuredContract(config);
    expect(continuous).toMatchObject({
      id: 'F.US.XAUF',
      name: 'XAU',
      feePerSide: 1,
      continuous: { root: { root: 'XAU', cycle: 'GJMQVZ' } },
    });
    const month = configuredContract({ ...config, contract: 'XAUJ26' });
    expect(month).toMatchObject({ id: 'CON.F.US.XAUF.J26', name: 'XAUJ6' });
    expect(month.grid.tickSize).toBe(0.1);
    expect(() => BacktestConfig.parse({ ...config, roots: [{ ...root, cycle: 'ABC' }] })).toThrow();
    expect(() =>
      configuredContract(
        BacktestConfig.parse({ strategy: { name: 'sma-cross' }, contract: 'XAU', data: { source: 'synthetic' } }),
      ),
    ).toThrow(/unknown contract "XAU"/);
  });
});

describe('a continuous backtest over a crafted two-month file with a price gap at the roll', () => {
  // December 2025 (ESZ5) then March 2026 (ESH6): 20 bars each, each bar opening at the last close and
  // closing one tick up, and the new month opening 160 ticks (40 points) above the old month's last close.
  const dir = mkdtempSync(path.join(tmpdir(), 'tickline-roll-'));
  const file = path.join(dir, 'two-months.csv');
  const start = Date.UTC(2025, 11, 10, 15, 0);
  const rows = ['t,o,h,l,c,v,contract'];
  for (let i = 0; i < 40; i++) {
    const close = (24_000 + i + (i >= 20 ? 160 : 0)) * 0.25;
    const open = close - 0.25;
    rows.push(
      `${new Date(start + i * MINUTE).toISOString().replace('.000', '')},${open},${close},${open},${close},10,${i < 20 ? '202512' : '202603'}`,
    );
  }
  writeFileSync(file, `${rows.join('\n')}\n`);
  const { bars, segments: labels } = readCsvBars(file, contract.grid);
  const segments = segmentsFromLabels(bars, labels, ES, CALENDAR);

  it('rolls the position: closed in December at its last close, reopened in March at its first open, each with slippage and fees', () => {
    const seen: number[] = [];
    // Long from bar 5 (decided at bar 4's close), flat at bar 31 (decided at bar 30's close).
    const result = run(
      bars,
      segments,
      scheduled(
        new Map([
          [4, 1],
          [30, 0],
        ]),
        seen,
      ),
    );
    expect(segments.map((s) => s.contractId)).toEqual(['CON.F.US.EP.Z25', 'CON.F.US.EP.H26']);
    expect(result.rolls).toEqual([
      { time: start + 20 * MINUTE, from: 'CON.F.US.EP.Z25', to: 'CON.F.US.EP.H26', position: 1, action: 'rolled' },
    ]);
    expect(result.trades.map((t) => [t.contractId, t.entryPrice, t.exitPrice, t.fees])).toEqual([
      ['CON.F.US.EP.Z25', 24_004 + 1, 24_019 - 1, 2.8],
      ['CON.F.US.EP.H26', 24_179 + 1, 24_190 - 1, 2.8],
    ]);
    // By hand, in ticks of 12.50: long at bar 5's open 24,004 + 1 slippage, rolled out at bar 19's close
    // 24,019 - 1 (13 ticks), in again at bar 20's open 24,179 + 1, out at bar 31's open 24,190 - 1 (9 ticks);
    // four fills of 1.40.
    expect(result.realizedPnl).toBeCloseTo((13 + 9) * 12.5, 9);
    expect(result.endingBalance).toBeCloseTo(50_000 + (13 + 9) * 12.5 - 4 * 1.4, 9);
    // The strategy saw one tick a bar throughout: the 160-tick roll difference is back-adjusted away.
    const steps = new Set(seen.slice(1).map((c, i) => c - seen[i]!));
    expect([...steps]).toEqual([1]);
    expect(seen.at(-1)).toBe(24_039 + 160);
    expect(result.openPosition).toBe(0);
  });

  it('flatten mode closes at the roll and stays flat', () => {
    const result = run(bars, segments, scheduled(new Map([[4, 1]]), []), 'flatten');
    expect(result.rolls[0]).toMatchObject({ position: 1, action: 'flattened' });
    expect(result.trades).toHaveLength(1);
    expect(result.trades[0]).toMatchObject({ contractId: 'CON.F.US.EP.Z25', exitPrice: 24_019 - 1 });
    expect(result.fills).toHaveLength(2);
    expect(result.openPosition).toBe(0);
  });
});

describe('rolls and gaps, as properties', () => {
  it('no trade spans two months, no position is held across a gap, and PnL is that of the real fills', () => {
    const month = fc.record({
      bars: fc.integer({ min: 2, max: 30 }),
      jump: fc.integer({ min: -200, max: 200 }),
      gapMinutes: fc.constantFrom(0, 0, 10, 7 * 24 * 60),
    });
    fc.assert(
      fc.property(
        fc.array(month, { minLength: 1, maxLength: 4 }),
        fc.array(fc.tuple(fc.nat(120), fc.integer({ min: -2, max: 2 })), { maxLength: 12 }),
        (months, targets) => {
          const prices: number[] = [];
          const times: number[] = [];
          const segments: HistorySegment[] = [];
          let t = Date.UTC(2025, 0, 6, 15, 0);
          let price = 24_000;
          const ids = ['CON.F.US.EP.H25', 'CON.F.US.EP.M25', 'CON.F.US.EP.U25', 'CON.F.US.EP.Z25'];
          months.forEach((m, k) => {
            if (k > 0) {
              price += m.jump;
              t += m.gapMinutes * MINUTE;
            }
            segments.push({ start: t, contractId: ids[k]! });
            for (let i = 0; i < m.bars; i++) {
              prices.push(price + (i % 3));
              times.push(t);
              t += MINUTE;
            }
          });
          const bars = flatBars(prices, 0);
          bars.time.set(times);
          const result = run(bars, segments, scheduled(new Map(targets), []));
          const segmentEnd = (k: number) =>
            k + 1 < segments.length ? segments[k + 1]!.start : Number.POSITIVE_INFINITY;
          for (const trade of result.trades) {
            const k = segmentIndexAt(segments, trade.entryTime);
            expect(trade.contractId).toBe(segments[k]!.contractId);
            expect(trade.exitTime).toBeLessThanOrEqual(segmentEnd(k));
          }
          // The list the report reads labels each trade with its month as it is read, the same way.
          expect([...result.tradeList]).toEqual(result.trades);
          if (result.trades.length > 0) expect(result.tradeList.at(-1)).toEqual(result.trades.at(-1));
          for (const gap of result.gaps) {
            expect(result.trades.some((tr) => tr.entryTime < gap.from && tr.exitTime > gap.from)).toBe(false);
          }
          const fromFills = result.fills.reduce((sum, f) => sum + (f.side === 'sell' ? 1 : -1) * f.size * f.price, 0);
          if (result.openPosition === 0) expect(result.realizedPnl).toBeCloseTo(fromFills * 12.5, 6);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('the back-adjusted series has no step at a roll that is not in a gap', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 1, max: 10 }), fc.integer({ min: -500, max: 500 })), {
          minLength: 1,
          maxLength: 5,
        }),
        (parts) => {
          const prices: number[] = [];
          const segments: HistorySegment[] = [];
          let price = 20_000;
          parts.forEach(([n, jump], k) => {
            price += jump;
            segments.push({ start: prices.length * MINUTE, contractId: `M${k}` });
            for (let i = 0; i < n; i++) prices.push(price + i);
          });
          const bars = flatBars(prices, 0);
          const plan = planContinuity(bars, segments, MINUTE, 96 * 3_600_000);
          expect(plan.breaks.map((b) => b.index)).toEqual(segments.slice(1).map((s) => s.start / MINUTE));
          expect(plan.offsets[segments.length - 1]).toBe(0);
          for (const b of plan.breaks) {
            const before = segmentIndexAt(segments, bars.time[b.index - 1]!);
            const after = segmentIndexAt(segments, bars.time[b.index]!);
            expect(
              bars.open[b.index]! + plan.offsets[after]! - (bars.close[b.index - 1]! + plan.offsets[before]!),
            ).toBe(0);
          }
        },
      ),
    );
  });
});

describe("a history's continuity plan, made once for runs over the same bars", () => {
  it('property: whatever was planned over the same bars before, a plan equals one made afresh over a copy of them', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 4 }), { minLength: 2, maxLength: 120 }),
        fc.array(
          fc.record({
            cuts: fc.array(fc.nat(119), { maxLength: 3 }),
            gapMinutes: fc.constantFrom(2, 5, 60),
            barMs: fc.constantFrom(MINUTE, 2 * MINUTE),
          }),
          { minLength: 1, maxLength: 8 },
        ),
        (idles, asks) => {
          // Bars a minute apart, with idle minutes between some of them (gaps when longer than the limit).
          const bars = flatBars(
            idles.map((_, i) => 5_000 + i),
            0,
          );
          let t = 0;
          idles.forEach((idle, i) => {
            bars.time[i] = t;
            t += (1 + idle) * MINUTE;
          });
          const copy = { ...bars, time: bars.time.slice() };
          for (const ask of asks) {
            const starts = [...new Set(ask.cuts.map((c) => c % idles.length))].sort((a, b) => a - b);
            const segments: HistorySegment[] = [0, ...starts.filter((c) => c > 0)].map((i, k) => ({
              start: bars.time[i]!,
              contractId: `M${k}`,
            }));
            const limit = ask.gapMinutes * MINUTE;
            const plan = planContinuity(bars, segments, ask.barMs, limit);
            expect(plan).toEqual(planContinuity({ ...copy, time: copy.time.slice() }, segments, ask.barMs, limit));
            // Asked again, with equal segments in another array, the same plan: the bars were scanned once.
            expect(planContinuity(bars, [...segments], ask.barMs, limit)).toBe(plan);
          }
        },
      ),
      { numRuns: 100 },
    );
  });
});

describe('aggregating a continuous history', () => {
  it('property: after the rolls move to bucket starts, no aggregated bar holds two months, and every kept bar keeps its month', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 1, max: 3 }), { minLength: 2, maxLength: 200 }),
        fc.uniqueArray(fc.nat(199), { maxLength: 4 }),
        fc.integer({ min: 1, max: 30 }),
        (steps, cuts, unitNumber) => {
          const times: number[] = [];
          let t = Date.UTC(2025, 0, 6, 14, 0);
          for (const step of steps) times.push((t += step * MINUTE));
          const bars = flatBars(
            times.map(() => 24_000),
            0,
          );
          bars.time.set(times);
          const starts = [0, ...cuts.filter((c) => c > 0 && c < times.length).sort((a, b) => a - b)];
          const segments = starts.map((index, k) => ({ start: times[index]!, contractId: `M${k}` }));
          const timeframe = { unit: 'minute' as const, unitNumber };
          const aligned = alignToBuckets(bars, segments, timeframe);
          const bucketMonth = new Map<number, string>();
          for (let i = 0; i < aligned.bars.time.length; i++) {
            const time = aligned.bars.time[i]!;
            const month = aligned.segments[segmentIndexAt(aligned.segments, time)]!.contractId;
            expect(month).toBe(segments[segmentIndexAt(segments, time)]!.contractId);
            const bucket = bucketStart(time, timeframe);
            expect(bucketMonth.get(bucket) ?? month).toBe(month);
            bucketMonth.set(bucket, month);
          }
          expect(times.length - aligned.bars.time.length).toBeLessThanOrEqual((segments.length - 1) * (unitNumber - 1));
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe('contract: ES over the real ES file', () => {
  it('every trade belongs to one contract month, and no position is held across a gap (the 2013 -> 2020 one included)', async () => {
    const config = BacktestConfig.parse({
      strategy: { name: 'sma-cross', params: { fast: 20, slow: 50 } },
      contract: 'ES',
      data: { source: 'csv', file: ES_CSV },
      from: '2013-11-18',
      fills: { slippageTicks: 1, feePerContractPerSide: 1.4 },
    });
    const outcome = await executeBacktest(config, 'es-continuous', { recordEquity: false });
    const { result, history } = outcome;
    const segments = history.segments!;
    expect(segments.map((s) => s.contractId)).toEqual(['CON.F.US.EP.Z13', 'CON.F.US.EP.H14', 'CON.F.US.EP.H20']);
    expect(result.trades.length).toBeGreaterThan(20);
    for (const trade of result.trades) {
      // A position held at a roll is closed in its month and reopened as a new trade: none spans two.
      const entry = segmentIndexAt(segments, trade.entryTime);
      expect(segmentIndexAt(segments, trade.exitTime - 1)).toBe(entry);
      expect(trade.contractId).toBe(segments[entry]!.contractId);
      // Nothing open from 2013 into 2020.
      expect(trade.exitTime - trade.entryTime).toBeLessThan(4 * 86_400_000);
    }
    const longest = result.gaps.find((g) => g.to - g.from > 365 * 86_400_000);
    expect(longest).toBeDefined();
    expect(result.trades.some((t) => t.entryTime < longest!.from && t.exitTime >= longest!.to)).toBe(false);
    expect(result.rolls.map((r) => r.to)).toEqual(['CON.F.US.EP.H14', 'CON.F.US.EP.H20']);
  });

  it('front months by the calendar match a file without a contract column', () => {
    const days = Array.from({ length: 200 }, (_, i) => Date.UTC(2025, 0, 1) + i * 86_400_000);
    const bars = flatBars(
      days.map(() => 24_000),
      0,
    );
    bars.time.set(days);
    const segments = frontMonthSegments(bars, ES, CALENDAR);
    for (const day of days) {
      const expected = CALENDAR.contract(ES, CALENDAR.frontMonth(ES, day)).id;
      expect(segments[segmentIndexAt(segments, day)]!.contractId).toBe(expected);
    }
  });
});

describe("rolling by volume (roll.by: volume) over a file of every month's rows", () => {
  const days = new TradingCalendar();
  /** Month k's bars: one bar an hour on each of `dayCount` trading days, with that day's volume. */
  function monthBars(volumes: readonly number[], price: number): BarColumns {
    const hours = 3;
    const bars = allocateColumns(volumes.length * hours);
    volumes.forEach((volume, d) => {
      for (let h = 0; h < hours; h++) {
        const i = d * hours + h;
        // 14:00-16:00 UTC of consecutive weekdays: one Chicago trading day each.
        bars.time[i] = Date.UTC(2025, 11, 1 + d + 2 * Math.floor(d / 5), 14 + h);
        bars.open[i] = bars.high[i] = bars.low[i] = bars.close[i] = price + d;
        bars.volume[i] = h === 0 ? volume : 0;
      }
    });
    return bars;
  }
  const months = (volumes: readonly (readonly number[])[]) =>
    volumes.map((v, k) => ({ contractId: `M${k}`, expiry: k, bars: monthBars(v, 1000 * (k + 1)) }));
  const volumeTable = fc.array(fc.array(fc.nat({ max: 50 }), { minLength: 8, maxLength: 8 }), {
    minLength: 1,
    maxLength: 3,
  });

  it('property: each day comes whole from one month, the front only moves forward, and only after a day on which the new month traded more', () => {
    fc.assert(
      fc.property(volumeTable, (table) => {
        const input = months(table);
        const { bars, segments } = volumeRolledHistory(input, (t) => days.dayOf(t));
        expect(bars.time.length).toBe(8 * 3);
        for (let i = 1; i < bars.time.length; i++) expect(bars.time[i]!).toBeGreaterThan(bars.time[i - 1]!);
        const monthAt = (i: number) => Number(segments[segmentIndexAt(segments, bars.time[i]!)]!.contractId.slice(1));
        for (let d = 0; d < 8; d++) {
          const k = monthAt(d * 3);
          // The day's bars are that month's own.
          for (let h = 0; h < 3; h++) expect(bars.close[d * 3 + h]).toBe(1000 * (k + 1) + d);
          if (d === 0) {
            expect(k).toBe(0);
            continue;
          }
          const before = monthAt((d - 1) * 3);
          expect(k).toBeGreaterThanOrEqual(before);
          // A move needs the new month to have out-traded the old on the day before.
          if (k !== before) expect(table[k]![d - 1]!).toBeGreaterThan(table[before]![d - 1]!);
          // And no later month out-traded the front without the front moving.
          else
            for (let j = k + 1; j < table.length; j++) expect(table[j]![d - 1]!).toBeLessThanOrEqual(table[k]![d - 1]!);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('property: no look-ahead: volumes of later days never change the months chosen before them', () => {
    fc.assert(
      fc.property(
        volumeTable,
        fc.integer({ min: 1, max: 7 }),
        fc.array(fc.nat({ max: 50 }), { minLength: 8, maxLength: 8 }),
        (table, cut, other) => {
          const changed = table.map((v, k) => v.map((x, d) => (d >= cut ? other[(d + k) % 8]! : x)));
          const a = volumeRolledHistory(months(table), (t) => days.dayOf(t));
          const b = volumeRolledHistory(months(changed), (t) => days.dayOf(t));
          // Days 0..cut are chosen from the volumes of days before cut only.
          const upTo = (cut + 1) * 3;
          expect(Array.from(b.bars.close.subarray(0, upTo))).toEqual(Array.from(a.bars.close.subarray(0, upTo)));
        },
      ),
      { numRuns: 300 },
    );
  });

  it("a backtest of contract: ES with roll.by volume reads every month's rows and rolls the day after the next month out-trades the front", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'tickline-volume-roll-'));
    const file = path.join(dir, 'all-months.csv');
    // ESZ5 and ESH6 side by side for 6 trading days; March out-trades December on the 3rd day (Dec 10).
    const rows = ['t,o,h,l,c,v,contract'];
    for (let d = 0; d < 6; d++) {
      for (let m = 0; m < 30; m++) {
        const t = new Date(Date.UTC(2025, 11, 8 + d, 15, m)).toISOString().replace('.000', '');
        const december = 6000 + d + m * 0.25;
        rows.push(`${t},${december},${december + 0.5},${december - 0.5},${december},${d >= 2 ? 10 : 100},202512`);
        rows.push(
          `${t},${december + 40},${december + 40.5},${december + 39.5},${december + 40},${d >= 2 ? 100 : 10},202603`,
        );
      }
    }
    writeFileSync(file, `${rows.join('\n')}\n`);
    const config = BacktestConfig.parse({
      strategy: { name: 'sma-cross', params: { fast: 3, slow: 8 } },
      contract: 'ES',
      roll: { by: 'volume' },
      data: { source: 'csv', file },
    });
    const { history, result } = await executeBacktest(config, 'volume-roll', { recordEquity: false });
    expect(history.description).toMatch(/front months by volume \(ESZ25, ESH26\)/);
    expect(history.segments).toEqual([
      { start: Date.UTC(2025, 11, 8, 15), contractId: 'CON.F.US.EP.Z25' },
      { start: Date.UTC(2025, 11, 11, 15), contractId: 'CON.F.US.EP.H26' },
    ]);
    expect(history.bars.time.length).toBe(6 * 30);
    expect(history.bars.close[3 * 30]).toBe(contract.grid.toTicks(6000 + 3 + 40));
    expect(result.rolls.map((r) => [r.from, r.to])).toEqual([['CON.F.US.EP.Z25', 'CON.F.US.EP.H26']]);
    // A row of one month with a bad price is reported at its own line of the file.
    writeFileSync(
      file,
      `${[...rows.slice(0, 10), rows[10]!.replace(/,(\d+(\.\d+)?),/, ',abc,'), ...rows.slice(11)].join('\n')}\n`,
    );
    await expect(executeBacktest(config, 'volume-roll', { recordEquity: false })).rejects.toThrow(
      /all-months\.csv:11 column o: "abc" is not a number/,
    );
    const gateway = BacktestConfig.parse({
      ...config,
      data: { source: 'gateway' },
      from: '2025-12-08',
      to: '2025-12-09',
    });
    await expect(executeBacktest(gateway, 'volume-roll')).rejects.toThrow(
      /roll\.by volume reads a CSV file with every month's rows/,
    );
  });
});
