import { createHash } from 'node:crypto';
import { map } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { AccountConfig } from '../../../src/adapters/backtest/backtest-config.ts';
import { resolveContract } from '../../../src/adapters/backtest/contract.ts';
import type { OrderRecord } from '../../../src/adapters/backtest/simulated-venue.ts';
import { runBacktest, runStreamedBacktest, type BacktestRunInput } from '../../../src/adapters/backtest/run.ts';
import { sliceByIndex } from '../../../src/data/columns.ts';
import fc from 'fast-check';
import { FileSpill } from '../../../src/adapters/backtest/file-spill.ts';
import { OrderColumns, OrderColumnsError } from '../../../src/adapters/backtest/order-columns.ts';
import { OrderListHasher, orderListHash } from '../../../src/adapters/backtest/order-list-hash.ts';
import { syntheticBars } from '../../../src/data/synthetic-bars.ts';
import { TradingCalendar } from '../../../src/engine/trading-day.ts';
import smaCross from '../../../src/strategies/sma-cross.ts';
import meanReversion from '../../../src/strategies/mean-reversion.ts';
import breakout from '../../../src/strategies/breakout.ts';
import { crossover, sma } from '../../../src/engine/indicators.ts';
import { target } from '../../../src/engine/intents.ts';
import { defineStrategy } from '../../../src/engine/strategy.ts';

const contract = resolveContract('MESZ5');
const bars = syntheticBars({
  seed: 11,
  grid: contract.grid,
  startPrice: 6700,
  start: Date.UTC(2025, 2, 2),
  sessions: 4,
});
const base: BacktestRunInput = {
  contract,
  bars,
  dataTimeframe: { unit: 'minute', unitNumber: 1 },
  timeframe: { unit: 'minute', unitNumber: 1 },
  strategy: smaCross,
  params: { fast: 3, slow: 8 },
  account: AccountConfig.parse({}),
  risk: {},
  fills: { slippageTicks: 1, feePerContractPerSide: 0.37 },
};
const calendar = new TradingCalendar();
/** Order list hashes of layout 1, recorded: an empty list, and the run of `base` (27 orders). */
const EMPTY_LIST_HASH = 'fe37db9442e05a2b9b001a98b6bf23ff9d20e0eca33beafeb1bed4624f4e72c5';
const BASE_RUN_HASH = 'fffdea5f49d8918087e67c9b5d5aad908c6796ccff64c2927b0e19ca1794fb49';

describe('account rules in the backtest', () => {
  it('a daily loss limit break flattens and pauses trading until the next trading day, once per day', () => {
    const result = runBacktest({ ...base, account: AccountConfig.parse({ dailyLossLimit: 40 }) });
    const days = result.violations.map((v) => v.tradingDay);
    expect(days.length).toBeGreaterThan(1);
    expect(new Set(days).size).toBe(days.length);
    for (const v of result.violations) {
      expect(v).toMatchObject({
        type: 6,
        rule: 'dailyLossLimit',
        duration: 2,
        dailyLossLimit: 40,
        minimumBalance: null,
      });
      expect(v.violationBalance).toBeLessThanOrEqual(v.level);
      const at = Date.parse(v.triggeredAt);
      // After the break's bar only the flatten (at the next bar's open) trades that day; the next fill is on a later
      // trading day.
      const sameDay = result.fills.filter((f) => f.time > at && calendar.dayOf(f.time) === v.tradingDay);
      expect(sameDay.length).toBeLessThanOrEqual(1);
      const later = result.fills.find((f) => calendar.dayOf(f.time) > v.tradingDay);
      if (later !== undefined) expect(later.time).toBeGreaterThanOrEqual(calendar.nextDayStart(at));
    }
    expect(result.passed).toBe(true);
    expect(result.closestApproach).toMatchObject([{ rule: 'dailyLossLimit' }]);
    expect(result.closestApproach[0]!.minRoom).toBeLessThanOrEqual(0);
  });

  it('a maximum loss limit break fails the account and stops trading for good', () => {
    const result = runBacktest({
      ...base,
      account: AccountConfig.parse({ maximumLossLimit: { amount: 60, variant: 'static' } }),
    });
    const breaks = result.violations.filter((v) => v.rule === 'maximumLossLimit');
    expect(breaks).toHaveLength(1);
    expect(breaks[0]).toMatchObject({ type: 6, duration: 1, minimumBalance: 50_000 - 60 });
    expect(result.passed).toBe(false);
    const at = Date.parse(breaks[0]!.triggeredAt);
    // The flatten at the next bar's open is the last fill of the run.
    const after = result.fills.filter((f) => f.time > at);
    expect(after.length).toBeLessThanOrEqual(1);
    expect(after[0]?.orderId ?? 'risk-').toMatch(/^risk-/);
    expect(result.openPosition).toBe(0);
  });

  it('a profit target decides pass or fail; personal limits do not fail the account', () => {
    const personal = runBacktest({
      ...base,
      account: AccountConfig.parse({ personalDailyLossLimit: 20, profitTarget: 1_000_000 }),
    });
    expect(personal.violations.every((v) => v.type === 3 && v.duration === 0 && v.personalDailyLossLimit === 20)).toBe(
      true,
    );
    expect(personal.violations.length).toBeGreaterThan(0);
    expect(personal.passed).toBe(false);
    expect(personal.verdict).toMatch(/profit target not reached/);
    const plain = runBacktest(base);
    expect(plain.violations).toEqual([]);
    expect(plain.passed).toBe(true);
  });
});

describe('orderListHash', () => {
  /**
   * The definition, layout 1 of docs/backtest.md written out plainly: sha256 of a 24-byte header, then per
   * order 8 bytes of codes, 8 little-endian doubles, 3 string lengths and a zero word, the UTF-8 strings,
   * zeros to a multiple of 8.
   */
  const codes = {
    side: ['buy', 'sell'],
    type: ['market', 'limit', 'stop', 'stopLimit', 'trailingStop'],
    role: ['entry', 'stopLoss', 'takeProfit'],
    state: ['pending', 'working', 'filled', 'cancelled', 'rejected', 'expired'],
  };
  const byLayout = (orders: readonly OrderRecord[]): string => {
    const hash = createHash('sha256');
    const header = Buffer.alloc(24);
    header.write('tickline order list v1\n', 'ascii');
    hash.update(header);
    for (const o of orders) {
      const fixed = Buffer.alloc(88);
      fixed[0] = codes.side.indexOf(o.side);
      fixed[1] = codes.type.indexOf(o.type);
      fixed[2] = codes.role.indexOf(o.role);
      fixed[3] = codes.state.indexOf(o.state);
      const optional = [o.limitPrice, o.stopPrice, o.trailPrice, o.fillPrice, o.fillTime, o.parentId];
      fixed[4] = optional.reduce<number>((bits, v, k) => (v === null ? bits : bits | (1 << k)), 0);
      const numbers = [
        o.size,
        o.limitPrice,
        o.stopPrice,
        o.trailPrice,
        o.placedAt,
        o.fillPrice,
        o.fillTime,
        o.modifies,
      ];
      numbers.forEach((v, k) => {
        const value = v ?? 0;
        fixed.writeDoubleLE(Object.is(value, -0) ? 0 : Number.isNaN(value) ? Number.NaN : value, 8 + 8 * k);
      });
      const strings = [o.id, o.contractId, o.parentId ?? ''].map((t) => Buffer.from(t, 'utf8'));
      strings.forEach((t, k) => fixed.writeUInt32LE(t.length, 72 + 4 * k));
      const text = Buffer.concat(strings);
      hash.update(fixed);
      hash.update(Buffer.concat([text, Buffer.alloc((8 - (text.length % 8)) % 8)]));
    }
    return hash.digest('hex');
  };

  /** Orders of a run made odd: numbers of every kind, non-ASCII and long ids, more than one buffer. */
  const oddOrders = (run: { orders: readonly OrderRecord[] }): OrderRecord[] => {
    const odd = [0, -0, 7, -12, 2 ** 53 - 1, -(2 ** 53), 1e21, 0.25, -1.5e-7, NaN, Infinity, 1_741_000_000_000];
    const ids = ['s-1', '', 'é€😀-2', 'x'.repeat(5000), 'ü'.repeat(600)];
    const orders: OrderRecord[] = [];
    for (let k = 0; k < 3000; k++) {
      const price = odd[k % odd.length]!;
      orders.push({
        ...run.orders[k % run.orders.length]!,
        id: `${ids[k % ids.length]}${k}`,
        size: odd[(k * 7) % odd.length]!,
        limitPrice: k % 3 === 0 ? null : price,
        stopPrice: k % 5 === 0 ? price : null,
        parentId: k % 2 === 0 ? null : ids[(k >> 1) % ids.length]!,
        placedAt: odd[(k * 5) % odd.length]!,
        fillTime: k % 4 === 0 ? null : 1_741_000_000_000 + k,
        modifies: k % 11,
      });
    }
    return orders;
  };

  it('hashes the bytes of layout 1: a backtest, odd numbers, non-ASCII and long ids, more than one buffer', () => {
    const run = runBacktest(base);
    expect(run.orders.length).toBeGreaterThan(10);
    expect(run.orderListHash).toBe(byLayout(run.orders));
    expect(run.orderListHash).toBe(orderListHash(run.orders));
    const orders = oddOrders(run);
    expect(orderListHash(orders)).toBe(byLayout(orders));
    expect(orderListHash([])).toBe(byLayout([]));
    // Recorded so a change of layout is seen (docs/backtest.md lists these values).
    expect(orderListHash([])).toBe(EMPTY_LIST_HASH);
    expect(run.orderListHash).toBe(BASE_RUN_HASH);
  });

  it("hashes an id's bytes whatever its form: <prefix><n> (kept as a prefix and a number), a leading zero, many digits, any string", () => {
    const orders = runBacktest(base).orders;
    const id = fc.oneof(
      fc.tuple(fc.string({ unit: 'binary' }), fc.nat()).map(([prefix, n]) => `${prefix}${n}`),
      fc.tuple(fc.string(), fc.stringMatching(/^0[0-9]{1,3}$/)).map(([prefix, digits]) => prefix + digits),
      fc.tuple(fc.string(), fc.stringMatching(/^[1-9][0-9]{15,18}$/)).map(([prefix, digits]) => prefix + digits),
      fc.string({ unit: 'binary' }),
    );
    fc.assert(
      fc.property(fc.array(id, { minLength: 1, maxLength: 40 }), (ids) => {
        const list = ids.map((x, k) => ({ ...orders[k % orders.length]!, id: x }));
        expect(orderListHash(list)).toBe(byLayout(list));
      }),
      { numRuns: 100 },
    );
  });

  it('is the same however the list is added: any chunking, a digest taken midway, a copy going on', () => {
    const orders = oddOrders(runBacktest(base));
    const whole = orderListHash(orders);
    fc.assert(
      fc.property(fc.array(fc.nat(orders.length), { maxLength: 12 }), (cuts) => {
        const points = [...new Set(cuts)].sort((a, b) => a - b);
        const hasher = new OrderListHasher();
        let from = 0;
        for (const to of [...points, orders.length]) {
          for (let k = from; k < to; k++) hasher.add(orders[k]!);
          // A digest or a copy midway changes nothing of what follows.
          expect(hasher.digest()).toBe(orderListHash(orders.slice(0, to)));
          hasher.copy().add(orders[0]!);
          from = to;
        }
        expect(hasher.digest()).toBe(whole);
        expect(hasher.count).toBe(orders.length);
      }),
      { numRuns: 25 },
    );
  });

  it("hashed from the columns' rows equals the layout: blocks parked in a file, any spread of the adds, records after rows", () => {
    const orders = oddOrders(runBacktest(base));
    const whole = byLayout(orders);
    fc.assert(
      fc.property(fc.array(fc.nat(orders.length), { maxLength: 8 }), fc.nat(orders.length), (cuts, split) => {
        const columns = new OrderColumns(new FileSpill());
        const hasher = new OrderListHasher();
        const points = new Set(cuts);
        for (let k = 0; k < split; k++) {
          columns.push(orders[k]!);
          // As the venue's book does: a full block is hashed before the next one starts (and the first parks).
          if ((columns.length & 1023) === 0 || points.has(columns.length)) hasher.addRows(columns);
        }
        hasher.addRows(columns);
        expect(hasher.count).toBe(split);
        expect(hasher.digest()).toBe(byLayout(orders.slice(0, split)));
        // The orders not in the columns yet, from their records: the same bytes.
        for (let k = split; k < orders.length; k++) hasher.add(orders[k]!);
        expect(hasher.digest()).toBe(whole);
      }),
      { numRuns: 12 },
    );
  });

  it('hashed order by order as they settle equals the hash of the whole list: brackets settling out of order, any chunk size', () => {
    for (const strategy of [meanReversion, smaCross]) {
      const input = { ...base, strategy, params: {} };
      const pieces = (size: number) =>
        Array.from({ length: Math.ceil(bars.time.length / size) }, (_, k) =>
          sliceByIndex(bars, k * size, Math.min(bars.time.length, (k + 1) * size)),
        );
      const runs = [
        runBacktest(input),
        ...[1, 37, 5000].map((size) =>
          runStreamedBacktest({ ...input, chunks: pieces(size), total: bars.time.length }),
        ),
      ];
      const [first] = runs;
      expect(first!.orders.some((o) => o.role !== 'entry') || strategy === smaCross).toBe(true);
      for (const run of runs) {
        expect(run.orderListHash).toBe(orderListHash(run.orders));
        expect(run.orderListHash).toBe(first!.orderListHash);
        expect(run.orders).toEqual(first!.orders);
      }
    }
  });

  it('refuses an order the layout has no code for', () => {
    const order = { ...runBacktest(base).orders[0]!, state: 'lost' } as unknown as OrderRecord;
    expect(() => orderListHash([order])).toThrow(OrderColumnsError);
  });
});

describe('the entry label of an intent', () => {
  it('reaches the trade its order opens, and changes nothing else of the run', () => {
    const crossing = (labels: boolean) =>
      defineStrategy({
        name: 'sma-cross-labelled',
        params: z.strictObject({ fast: z.number(), slow: z.number() }),
        warmup: (p) => p.slow,
        run: ({ bars: stream, params }) =>
          stream().pipe(
            crossover(sma(params.fast), sma(params.slow)),
            map((cross) => {
              const size = cross.direction === 'up' ? 1 : -1;
              return labels ? target(size, { label: size > 0 ? 'cross up' : 'cross down' }) : target(size);
            }),
          ),
      });
    const plain = runBacktest({ ...base, strategy: crossing(false) });
    const result = runBacktest({ ...base, strategy: crossing(true) });
    expect(result.trades.length).toBeGreaterThan(3);
    expect(result.orderListHash).toBe(plain.orderListHash);
    result.trades.forEach((trade, i) => {
      // A reversal closes the long a cross up opened (its label) and opens a short labelled cross down.
      expect(trade.label).toBe(trade.side === 'buy' ? 'cross up' : 'cross down');
      expect({ ...trade, label: undefined }).toEqual({ ...plain.trades[i], label: undefined });
    });
    expect(plain.trades.every((t) => t.label === undefined)).toBe(true);
  });
});

describe('bars the runner passes over', () => {
  it('change nothing: the same orders, fills, trades, equity and hash as a run that looks at every bar, whole and in any chunks', () => {
    // An account limit no run comes near keeps the runner on every bar (it checks the limit at each one).
    const everyBar = AccountConfig.parse({ dailyLossLimit: 1_000_000_000 });
    const pieces = (size: number) =>
      Array.from({ length: Math.ceil(bars.time.length / size) }, (_, k) =>
        sliceByIndex(bars, k * size, Math.min(bars.time.length, (k + 1) * size)),
      );
    const outputs = (run: ReturnType<typeof runBacktest>) => ({
      orders: run.orders,
      fills: run.fills,
      trades: run.trades,
      equityTime: [...run.equity.time],
      equity: [...run.equity.equity],
      hash: run.orderListHash,
      endingEquity: run.endingEquity,
    });
    for (const [strategy, params] of [
      [smaCross, { fast: 3, slow: 8 }],
      [meanReversion, {}],
      [breakout, {}],
    ] as const) {
      for (const recordEquity of [true, false]) {
        const input = { ...base, strategy, params, recordEquity };
        const looked = outputs(runBacktest({ ...input, account: everyBar }));
        expect(looked.fills.length).toBeGreaterThan(4);
        expect(outputs(runBacktest(input))).toEqual(looked);
        for (const size of [1, 37, 5000]) {
          const streamed = runStreamedBacktest({ ...input, chunks: pieces(size), total: bars.time.length });
          const whole = outputs(
            runStreamedBacktest({ ...input, account: everyBar, chunks: pieces(size), total: bars.time.length }),
          );
          expect(outputs(streamed)).toEqual(whole);
        }
      }
    }
  });
});
