import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ColumnSpillError, FileSpill } from '../../../src/adapters/backtest/file-spill.ts';
import { FillColumns, OrderColumns, OrderColumnsError } from '../../../src/adapters/backtest/order-columns.ts';
import type { OrderRecord } from '../../../src/adapters/backtest/venue-book.ts';
import { asStored, sequenceIds } from '../../../src/engine/column-blocks.ts';
import { BlockStock } from '../../../src/engine/block-stock.ts';
import { MARKET_ORDER } from '../../../src/engine/intents.ts';
import { TradeColumns } from '../../../src/engine/trade-columns.ts';
import type { Fill, OrderSpec } from '../../../src/engine/types.ts';

const price = fc.oneof(fc.integer({ min: -1_000_000, max: 1_000_000 }), fc.double({ noNaN: true }));
const optional = <T>(value: fc.Arbitrary<T>) => fc.option(value, { nil: null });

const spec: fc.Arbitrary<OrderSpec> = fc.oneof(
  fc.constant(MARKET_ORDER),
  fc.constant({ type: 'market' } as const),
  price.map((limitPrice) => ({ type: 'limit', limitPrice }) as const),
  price.map((stopPrice) => ({ type: 'stop', stopPrice }) as const),
);

/**
 * Ids the columns keep as a prefix and a number (`sma-cross-12`) and ids they must keep as strings: a
 * leading zero, more digits than a double holds exactly, no digits, anything.
 */
const orderId: fc.Arbitrary<string> = fc.oneof(
  fc.tuple(fc.constantFrom('sma-cross-', 'bot-a-', 'F', ''), fc.nat()).map(([prefix, n]) => `${prefix}${n}`),
  fc.tuple(fc.string(), fc.stringMatching(/^0[0-9]{1,3}$/)).map(([prefix, digits]) => prefix + digits),
  fc.tuple(fc.string(), fc.stringMatching(/^[1-9][0-9]{15,18}$/)).map(([prefix, digits]) => prefix + digits),
  fc.string(),
);

const record: fc.Arbitrary<OrderRecord> = fc.record({
  id: orderId,
  contractId: fc.string(),
  side: fc.constantFrom('buy', 'sell'),
  size: fc.integer({ min: 0, max: 1_000 }),
  type: fc.constantFrom('market', 'limit', 'stop', 'stopLimit', 'trailingStop'),
  limitPrice: optional(price),
  stopPrice: optional(price),
  trailPrice: optional(price),
  role: fc.constantFrom('entry', 'stopLoss', 'takeProfit'),
  parentId: optional(fc.string()),
  placedAt: fc.integer({ min: 0, max: 2 ** 45 }),
  state: fc.constantFrom('pending', 'working', 'filled', 'cancelled', 'rejected', 'expired'),
  fillPrice: optional(price),
  fillTime: optional(fc.integer({ min: 0, max: 2 ** 45 })),
  filledSize: fc.integer({ min: 0, max: 1_000 }),
  modifies: fc.nat(20),
  spec,
});

const fill: fc.Arbitrary<Fill> = fc.record({
  kind: fc.constant('fill' as const),
  fillId: fc.string(),
  orderId,
  contractId: fc.string(),
  side: fc.constantFrom('buy', 'sell'),
  size: fc.integer({ min: 1, max: 1_000 }),
  price,
  fees: fc.double({ min: 0, max: 100, noNaN: true }),
  time: fc.integer({ min: 0, max: 2 ** 45 }),
});

describe('order and fill columns', () => {
  it('keep every order: each made again equals the one pushed, key for key', () => {
    fc.assert(
      fc.property(fc.array(record, { maxLength: 300 }), (orders) => {
        const columns = new OrderColumns();
        for (const o of orders) columns.push(o);
        expect(columns.length).toBe(orders.length);
        orders.forEach((o, k) => {
          const made = columns.record(k);
          expect(made).toEqual(o);
          // The same keys in the same order: orders.json and the API read them as objects.
          expect(Object.keys(made)).toEqual(Object.keys(o));
          expect(made.spec).toBe(o.spec);
          expect(columns.idAt(k)).toBe(o.id);
        });
      }),
      { numRuns: 60 },
    );
  });

  it('keep every fill and the balance after it', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fill, fc.double({ noNaN: true }), fc.boolean()), { maxLength: 300 }), (drawn) => {
        // Half the fills numbered as the simulated venue numbers them (F1, F2, ...), made again, not kept.
        const fills = drawn.map(([f, balance, numbered], k) =>
          numbered ? ([{ ...f, fillId: `F${k + 1}` }, balance] as const) : ([f, balance] as const),
        );
        const columns = new FillColumns();
        for (const [f, balance] of fills) columns.push(f, balance);
        expect(columns.length).toBe(fills.length);
        const made = columns.toFills();
        expect(made).toEqual(fills.map(([f]) => f));
        expect(JSON.stringify(made)).toBe(JSON.stringify(fills.map(([f]) => f)));
        fills.forEach(([f], k) => expect(columns.timeAt(k)).toBe(f.time));
        expect(columns.balances()).toEqual({
          time: fills.map(([f]) => f.time),
          balance: fills.map(([, b]) => b),
        });
      }),
      { numRuns: 60 },
    );
  });

  it("keep every order and fill on a lease, in blocks an earlier run filled (a sweep's runs in one thread)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.array(record, { maxLength: 200 }), fc.array(fill, { maxLength: 200 })), {
          minLength: 2,
          maxLength: 3,
        }),
        (runs) => {
          const stock = new BlockStock();
          for (const [orders, fills] of runs) {
            const lease = stock.lease();
            const orderColumns = new OrderColumns(undefined, lease);
            const fillColumns = new FillColumns(undefined, lease);
            for (const o of orders) orderColumns.push(o);
            fills.forEach((f, k) => fillColumns.push(f, k * 0.5));
            orders.forEach((o, k) => expect(orderColumns.record(k)).toEqual(o));
            expect(fillColumns.toFills()).toEqual(fills);
            lease.end();
            if (orders.length > 0) expect(() => orderColumns.record(0)).toThrow();
          }
        },
      ),
      { numRuns: 40 },
    );
  });

  it('keep every value across their blocks of references (more than 1,024 orders and fills)', () => {
    const orders = fc.sample(record, { numRuns: 2_500, seed: 7 });
    const fills = fc
      .sample(fill, { numRuns: 2_500, seed: 8 })
      .map((f, k) => (k % 3 === 0 ? { ...f, fillId: `F${k + 1}` } : f));
    const orderColumns = new OrderColumns();
    const fillColumns = new FillColumns();
    for (const o of orders) orderColumns.push(o);
    fills.forEach((f, k) => fillColumns.push(f, k));
    expect(orders.map((_, k) => orderColumns.record(k))).toEqual(orders);
    expect(fillColumns.toFills()).toEqual(fills);
  });

  it('keep an id the engine said it made as the prefix and number that reading the id gives', () => {
    const number = fc.oneof(
      fc.nat(),
      fc.integer({ min: 999_999_999_999_990, max: 1_000_000_000_000_010 }),
      fc.integer({ min: -100, max: -1 }),
      fc.double({ noNaN: false }),
    );
    const prefix = fc.oneof(fc.constantFrom('sma-cross-', 'bot-a-', 'F', '', 'run7', 'é-'), fc.string());
    fc.assert(
      fc.property(prefix, number, (p, n) => {
        const id = p + n;
        sequenceIds.encode('another-1');
        const code = sequenceIds.encode(id);
        const read = sequenceIds.number;
        sequenceIds.encode('another-2');
        sequenceIds.made(id, p, n);
        expect(sequenceIds.encode(id)).toBe(code);
        if (code >= 0) {
          expect(sequenceIds.number).toBe(read);
          expect(sequenceIds.decode(code, read)).toBe(id);
        }
      }),
      { numRuns: 2_000 },
    );
  });

  it('refuse an order with a state they have no code for', () => {
    const columns = new OrderColumns();
    const o = fc.sample(record, { numRuns: 1, seed: 1 })[0]!;
    expect(() => columns.push({ ...o, state: 'lost' } as unknown as OrderRecord)).toThrow(OrderColumnsError);
  });
});

describe('a number read back from the columns', () => {
  it('is the same value (asStored changes only how V8 holds a whole number): -0, NaN, fractions, large and small', () => {
    const special = fc.constantFrom(0, -0, Number.NaN, Infinity, -Infinity, 2 ** 31 - 1, -(2 ** 31), 2 ** 31, 2 ** 53);
    fc.assert(
      fc.property(fc.oneof(fc.double(), fc.integer(), special), (v) => {
        expect(Object.is(asStored(v), v)).toBe(true);
      }),
      { numRuns: 2_000 },
    );
  });
});

describe('order and fill columns parked in a file', () => {
  // Ids and contract ids of any UTF-16 units (lone surrogates too): the references go through JSON.
  const anyText = fc.string({ unit: 'binary', maxLength: 12 });
  const wild = record.chain((o) =>
    fc.record({ id: fc.oneof(fc.constant(o.id), anyText), parentId: optional(anyText) }).map((v) => ({ ...o, ...v })),
  );

  it('read back every order and fill, in order and at random, equal key for key to the ones pushed', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 4_200 }),
        fc.array(fc.nat(), { maxLength: 200 }),
        fc.integer(),
        (count, picks, seed) => {
          const orders = fc.sample(wild, { numRuns: count, seed });
          const fills = fc
            .sample(fill, { numRuns: count, seed: seed + 1 })
            .map((f, k) => (k % 3 === 0 ? { ...f, fillId: `F${k + 1}` } : f));
          const spill = new FileSpill();
          const orderColumns = new OrderColumns(spill);
          const fillColumns = new FillColumns(spill);
          for (let k = 0; k < count; k++) {
            orderColumns.push(orders[k]!);
            fillColumns.push(fills[k]!, k * 0.5);
          }
          for (const pick of picks) {
            if (count === 0) break;
            const k = pick % count;
            expect(orderColumns.record(k)).toEqual(orders[k]);
            expect(Object.keys(orderColumns.record(k))).toEqual(Object.keys(orders[k]!));
            expect(orderColumns.idAt(k)).toBe(orders[k]!.id);
            expect(fillColumns.fill(k)).toEqual(fills[k]);
            expect(fillColumns.timeAt(k)).toBe(fills[k]!.time);
          }
          expect(Array.from({ length: count }, (_, k) => orderColumns.record(k))).toEqual(orders);
          expect(fillColumns.toFills()).toEqual(fills);
          expect(fillColumns.balances().balance).toEqual(fills.map((_, k) => k * 0.5));
        },
      ),
      { numRuns: 12 },
    );
  });

  it('read back equal whole blocks of what the engine makes (no reference to keep) among orders, fills and trades that keep some', () => {
    // An engine's market order under its own id, a fill `F<n>` of it, a trade without a label: the numbers
    // hold all of them. Runs of them fill whole blocks; the others are scattered, so a block parked with
    // references has slots that were never written.
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 3_500 }), fc.integer(), fc.nat(5), (count, seed, rate) => {
        const wild = fc.sample(record, { numRuns: count, seed });
        const plain = (k: number): boolean => k % 1_500 < 1_100 || (k * 7919 + seed) % 11 > rate;
        const orders = wild.map((o, k) =>
          plain(k) ? { ...o, id: `sma-cross-${k + 1}`, parentId: null, spec: MARKET_ORDER } : o,
        );
        const fills = fc
          .sample(fill, { numRuns: count, seed: seed + 1 })
          .map((f, k) => (plain(k) ? { ...f, orderId: `sma-cross-${k + 1}`, fillId: `F${k + 1}` } : f));
        const spill = new FileSpill();
        const orderColumns = new OrderColumns(spill);
        const fillColumns = new FillColumns(spill);
        const tradeColumns = new TradeColumns(spill);
        for (let k = 0; k < count; k++) {
          orderColumns.push(orders[k]!);
          fillColumns.push(fills[k]!, k);
          const f = fills[k]!;
          const label = plain(k) ? undefined : `entry ${k}`;
          tradeColumns.push('ESZ5', 1, 1, 10, 11, k, k + 1, 12.5, 0, f.fillId, k + 1, `2026-11-${k % 2}`, label);
        }
        for (let k = 0; k < count; k++) {
          expect(orderColumns.record(k)).toEqual(orders[k]);
          expect(fillColumns.fill(k)).toEqual(fills[k]);
          const trade = tradeColumns.trade(k);
          expect(trade.exitFillId).toBe(fills[k]!.fillId);
          expect(trade.tradingDay).toBe(`2026-11-${k % 2}`);
          // Undefined, not null: a slot never written comes back from the file as null.
          expect(trade.label).toBe(plain(k) ? undefined : `entry ${k}`);
        }
        for (let k = 0; k < count; k++) if (plain(k)) expect(orderColumns.record(k).spec).toBe(MARKET_ORDER);
      }),
      { numRuns: 10 },
    );
  });

  it('names the folder it cannot make its file in, in one error', () => {
    const missing = path.join(os.tmpdir(), 'tickline-no-such-folder', 'deeper');
    const spill = new FileSpill(missing);
    let error: unknown;
    try {
      spill.park(new Float64Array(4), []);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ColumnSpillError);
    expect((error as ColumnSpillError).code).toBe('COLUMN_SPILL');
    expect((error as Error).message).toContain(missing);
    expect((error as Error).message).toContain('TMPDIR');
  });

  it('leaves no file behind: the file is gone from the folder while the spill still reads it', () => {
    const before = readdirSync(os.tmpdir()).filter((name) => name.startsWith('tickline-columns-'));
    const spill = new FileSpill();
    const numbers = Float64Array.from({ length: 16 }, (_, k) => k - 0.5);
    const at = spill.park(numbers, ['a', null, undefined, { type: 'limit', limitPrice: 0 }, 'é\u{1F600}']);
    const after = readdirSync(os.tmpdir()).filter((name) => name.startsWith('tickline-columns-'));
    expect(after).toEqual(before);
    const into = new Float64Array(16);
    expect(spill.fetch(at, into)).toEqual(['a', null, undefined, { type: 'limit', limitPrice: 0 }, 'é\u{1F600}']);
    expect(into).toEqual(numbers);
  });
});
