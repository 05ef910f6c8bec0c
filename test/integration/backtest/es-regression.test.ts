import { describe, expect, it } from 'vitest';
import path from 'node:path';
import { runBacktest } from '../../../src/adapters/backtest/run.ts';
import { readCsvBars } from '../../../src/data/csv.ts';
import { resolveContract } from '../../../src/adapters/backtest/contract.ts';
import { AccountConfig } from '../../../src/adapters/backtest/backtest-config.ts';
import smaCross from '../../../src/strategies/sma-cross.ts';
import breakout from '../../../src/strategies/breakout.ts';
import meanReversion from '../../../src/strategies/mean-reversion.ts';
import { lowerBound } from '../../../src/data/columns.ts';

const ES_CSV = path.resolve(import.meta.dirname, '../../../../shared/data/es-minute-lean.csv');

/**
 * The same strategy written as a plain loop over the columns, independent of the engine: integer running
 * sums, side = sign(3 * sum10 - sum30) (so a tie is exact), a change of side after the first defined one
 * targets +1/-1, and the order fills at the next bar's open with the slippage against it.
 */
function plainLoop(close: Float64Array, open: Float64Array, time: Float64Array, slippage: number) {
  const fills: { time: number; side: 'buy' | 'sell'; size: number; price: number }[] = [];
  let sum10 = 0;
  let sum30 = 0;
  let side = 0;
  let position = 0;
  let pending = 0; // target decided at the previous close, to fill at this open
  let hasPending = false;
  for (let i = 0; i < close.length; i++) {
    if (hasPending) {
      const diff = pending - position;
      if (diff !== 0) {
        const buy = diff > 0;
        fills.push({
          time: time[i]!,
          side: buy ? 'buy' : 'sell',
          size: Math.abs(diff),
          price: open[i]! + (buy ? slippage : -slippage),
        });
        position = pending;
      }
      hasPending = false;
    }
    sum10 += close[i]!;
    sum30 += close[i]!;
    if (i >= 10) sum10 -= close[i - 10]!;
    if (i >= 30) sum30 -= close[i - 30]!;
    if (i < 29) continue;
    const d = 3 * sum10 - sum30;
    const now = d > 0 ? 1 : d < 0 ? -1 : side;
    if (now !== 0 && side !== 0 && now !== side) {
      pending = now;
      hasPending = true;
    }
    if (now !== 0) side = now;
  }
  return fills;
}

describe('regression: sma-cross on the real ES minutes', () => {
  it('fills, trades and PnL equal an independent plain loop', () => {
    const contract = resolveContract('ESZ5');
    const { bars } = readCsvBars(ES_CSV, contract.grid);
    const slippage = 1;
    const fee = 1.4;
    const result = runBacktest({
      contract,
      bars,
      dataTimeframe: { unit: 'minute', unitNumber: 1 },
      timeframe: { unit: 'minute', unitNumber: 1 },
      strategy: smaCross,
      params: { fast: 10, slow: 30 },
      account: AccountConfig.parse({}),
      risk: {},
      fills: { slippageTicks: slippage, feePerContractPerSide: fee },
      recordEquity: false,
    });
    const expected = plainLoop(bars.close, bars.open, bars.time, slippage);
    expect(expected.length).toBeGreaterThan(500);
    expect(result.fills.map((f) => ({ time: f.time, side: f.side, size: f.size, price: f.price }))).toEqual(expected);

    // Realized PnL of the loop: average-price accounting of a position that only ever flips between +-1.
    let position = 0;
    let entry = 0;
    let realizedTicks = 0;
    let contracts = 0;
    let roundTurns = 0;
    for (const f of expected) {
      const signed = f.side === 'buy' ? f.size : -f.size;
      contracts += f.size;
      if (position !== 0) {
        realizedTicks += (f.price - entry) * position;
        roundTurns++;
      }
      position += signed;
      entry = f.price;
    }
    const tickValue = contract.grid.tickValue;
    expect(result.realizedPnl).toBeCloseTo(realizedTicks * tickValue, 6);
    expect(result.fees).toBeCloseTo(contracts * fee, 6);
    expect(result.trades.length).toBe(roundTurns);
    expect(result.trades.reduce((s, t) => s + t.pnl, 0)).toBeCloseTo(realizedTicks * tickValue, 6);
    // The open position at the end is marked at the last close.
    const last = bars.close[bars.close.length - 1]!;
    expect(result.endingEquity).toBeCloseTo(
      50_000 + realizedTicks * tickValue - contracts * fee + (last - entry) * position * tickValue,
      6,
    );
    expect(result.orderListHash).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe('breakout (trailing stops) and mean reversion (brackets) on the real ES minutes', () => {
  it.each([
    ['breakout', breakout],
    ['mean-reversion', meanReversion],
  ] as const)(
    '%s: every fill inside its bar, trades add up to the realized PnL, fees to the fills',
    (_name, strategy) => {
      const contract = resolveContract('ESZ5');
      const { bars } = readCsvBars(ES_CSV, contract.grid);
      const result = runBacktest({
        contract,
        bars,
        dataTimeframe: { unit: 'minute', unitNumber: 1 },
        timeframe: { unit: 'minute', unitNumber: 1 },
        strategy,
        params: {},
        account: AccountConfig.parse({}),
        risk: {},
        fills: { slippageTicks: 0, feePerContractPerSide: 1.4 },
        recordEquity: false,
      });
      expect(result.fills.length).toBeGreaterThan(10);
      for (const f of result.fills) {
        const i = lowerBound(bars.time, f.time);
        expect(bars.time[i]).toBe(f.time);
        expect(f.price).toBeGreaterThanOrEqual(bars.low[i]!);
        expect(f.price).toBeLessThanOrEqual(bars.high[i]!);
      }
      expect(result.trades.reduce((s, t) => s + t.pnl, 0)).toBeCloseTo(result.realizedPnl, 6);
      expect(result.fees).toBeCloseTo(
        result.fills.reduce((s, f) => s + f.fees, 0),
        6,
      );
      expect(result.trades.reduce((s, t) => s + t.fees, 0)).toBeLessThanOrEqual(result.fees + 1e-9);
      const legs = result.orders.filter((o) => o.role !== 'entry');
      // A bracket's legs: at most one of the pair fills.
      const byParent = new Map<string, string[]>();
      for (const leg of legs) byParent.set(leg.parentId!, [...(byParent.get(leg.parentId!) ?? []), leg.state]);
      for (const states of byParent.values())
        expect(states.filter((s) => s === 'filled').length).toBeLessThanOrEqual(1);
      if (strategy === meanReversion) expect(legs.length).toBeGreaterThan(0);
      if (strategy === breakout)
        expect(result.orders.some((o) => o.type === 'trailingStop' && o.modifies > 0)).toBe(true);
    },
  );
});
