import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Accounting } from '../../../src/engine/accounting.ts';
import type { ClosedTrade } from '../../../src/engine/accounting.ts';
import { mappedTradeList, TradeColumns, tradeReader, type TradeList } from '../../../src/engine/trade-columns.ts';
import { isSequenceId, sequenceFillId, type BlockSpill } from '../../../src/engine/column-blocks.ts';
import { BlockStock } from '../../../src/engine/block-stock.ts';

/** A spill that keeps copies of what it was given, and counts what was parked and read back. */
class MemorySpill implements BlockSpill {
  readonly parked: { numbers: Float64Array; refs: unknown[] }[] = [];
  fetches = 0;
  park(numbers: Float64Array, refs: readonly unknown[]): number {
    this.parked.push({ numbers: numbers.slice(), refs: [...refs] });
    // The columns let the block go: what they would read of it now is only what was parked.
    numbers.fill(Number.NaN);
    return this.parked.length - 1;
  }
  fetch(ticket: number, numbers: Float64Array): unknown[] {
    this.fetches++;
    numbers.set(this.parked[ticket]!.numbers);
    return [...this.parked[ticket]!.refs];
  }
}
import { PriceGrid } from '../../../src/engine/ticks.ts';
import type { Fill } from '../../../src/engine/types.ts';

const price = fc.oneof(fc.integer({ min: -1_000_000, max: 1_000_000 }), fc.double({ noNaN: true }));

const trade: fc.Arbitrary<ClosedTrade> = fc.record({
  contractId: fc.constantFrom('CON.F.US.EP.Z25', 'CON.F.US.MES.H26', ''),
  side: fc.constantFrom('buy', 'sell'),
  size: fc.integer({ min: 1, max: 1_000 }),
  entryPrice: price,
  exitPrice: price,
  entryTime: fc.integer({ min: 0, max: 2 ** 45 }),
  exitTime: fc.integer({ min: 0, max: 2 ** 45 }),
  pnl: price,
  fees: fc.double({ min: 0, max: 100, noNaN: true }),
  exitFillId: fc.string(),
  tradingDay: fc.constantFrom('2026-11-23', '2026-11-24'),
  label: fc.option(fc.string(), { nil: undefined }),
});

function push(columns: TradeColumns, t: ClosedTrade, number = 0): number {
  return columns.push(
    t.contractId,
    t.side === 'buy' ? 1 : -1,
    t.size,
    t.entryPrice,
    t.exitPrice,
    t.entryTime,
    t.exitTime,
    t.pnl,
    t.fees,
    t.exitFillId,
    number,
    t.tradingDay,
    t.label,
  );
}

describe('trade columns', () => {
  it('keep every trade: each made again equals the one pushed, key for key', () => {
    fc.assert(
      fc.property(fc.array(trade, { maxLength: 2_500 }), (trades) => {
        const columns = new TradeColumns();
        trades.forEach((t, k) => expect(push(columns, t)).toBe(k));
        expect(columns.length).toBe(trades.length);
        trades.forEach((t, k) => {
          const made = columns.trade(k);
          expect(made).toEqual(t);
          expect(Object.keys(made)).toEqual(Object.keys(t));
        });
      }),
      { numRuns: 30 },
    );
  });

  it('keep a window when told to forget the oldest: the kept ones unchanged, whole blocks let go', () => {
    fc.assert(
      fc.property(fc.array(trade, { minLength: 1_000, maxLength: 3_000 }), fc.nat(3_000), (trades, cut) => {
        const columns = new TradeColumns();
        for (const t of trades) push(columns, t);
        columns.dropBefore(cut);
        expect(columns.first).toBe(Math.min(cut, trades.length));
        for (let k = columns.first; k < trades.length; k++) expect(columns.trade(k)).toEqual(trades[k]);
      }),
      { numRuns: 30 },
    );
  });
});

/** What a reader reads of each trade of `list`, one row after another. */
function readRows(list: TradeList): unknown[] {
  const rows: unknown[] = [];
  for (const reader = tradeReader(list); reader.next(); ) rows.push({ ...reader.row });
  return rows;
}

const NUMBERS = ['side', 'size', 'entryPrice', 'exitPrice', 'entryTime', 'exitTime', 'pnl', 'fees'] as const;

describe('a trade reader', () => {
  it('reads the numbers and side of each trade kept, from the columns (spilled or not) as from the objects', () => {
    fc.assert(
      fc.property(fc.array(trade, { maxLength: 3_000 }), fc.nat(3_000), fc.boolean(), (trades, cut, spilled) => {
        const columns = new TradeColumns(spilled ? new MemorySpill() : undefined);
        for (const t of trades) push(columns, t);
        columns.dropBefore(cut);
        const kept = trades.slice(Math.min(cut, trades.length));
        const expected = kept.map((t) => Object.fromEntries(NUMBERS.map((field) => [field, t[field]])));
        expect(readRows(columns.list())).toEqual(expected);
        expect(readRows(kept)).toEqual(expected);
        expect(readRows(mappedTradeList(columns.list(), (t) => t))).toEqual(expected);
      }),
      { numRuns: 25 },
    );
  });
});

describe('trade columns with a spill', () => {
  it('park each full block once, when the next starts, and read every trade back equal, in order and at random, with a window dropped', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 5_000 }),
        fc.nat(6_000),
        fc.array(fc.nat(), { maxLength: 100 }),
        fc.integer(),
        (count, cut, picks, seed) => {
          const trades = fc.sample(trade, { numRuns: count, seed });
          const spill = new MemorySpill();
          const columns = new TradeColumns(spill);
          for (const t of trades) push(columns, t);
          expect(spill.parked).toHaveLength(Math.max(0, Math.ceil(count / 1_024) - 1));
          for (const pick of picks) if (count > 0) expect(columns.trade(pick % count)).toEqual(trades[pick % count]);
          const fetches = spill.fetches;
          expect([...columns.list()]).toEqual(trades);
          // In order, each parked block is read back once.
          expect(spill.fetches - fetches).toBeLessThanOrEqual(spill.parked.length);
          columns.dropBefore(cut);
          expect([...columns.list()]).toEqual(trades.slice(Math.min(cut, count)));
        },
      ),
      { numRuns: 15 },
    );
  });
});

describe('trade columns on a lease (the runs of a sweep, one after another in a thread)', () => {
  it("read back each run's trades equal, in blocks an earlier run filled; a run's columns are emptied when its lease ends", () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(trade, { maxLength: 2_600 }), { minLength: 1, maxLength: 4 }),
        fc.boolean(),
        (runs, withSpill) => {
          const stock = new BlockStock();
          let blocksBefore = 0;
          for (const trades of runs) {
            const lease = stock.lease();
            const columns = new TradeColumns(withSpill ? new MemorySpill() : undefined, lease);
            for (const t of trades) push(columns, t);
            // Every run but the first takes back the blocks of the one before, written over.
            expect([...columns.list()]).toEqual(trades);
            lease.end();
            const blocks = Math.ceil(trades.length / 1_024);
            // Columns with a spill keep blocks of their own (parked ones leave before the run ends).
            expect(stock.spares).toBe(withSpill ? 0 : Math.max(blocksBefore, blocks));
            blocksBefore = Math.max(blocksBefore, withSpill ? 0 : blocks);
            if (trades.length > 0 && !withSpill) expect(() => columns.trade(0)).toThrow();
          }
        },
      ),
      { numRuns: 25 },
    );
  });
});

describe('the list of trade columns', () => {
  it('reads as the array of the kept trades does: length, at (any index, negative ones from the end), iteration; it follows trades pushed or dropped after it was made', () => {
    fc.assert(
      fc.property(
        fc.array(trade, { maxLength: 2_200 }),
        fc.array(trade, { maxLength: 300 }),
        fc.nat(2_500),
        fc.array(fc.oneof(fc.integer({ min: -3_000, max: 3_000 }), fc.double()), { maxLength: 30 }),
        (before, after, cut, indexes) => {
          const columns = new TradeColumns();
          const list = columns.list();
          const check = (kept: readonly ClosedTrade[]) => {
            expect(list.length).toBe(kept.length);
            for (const index of indexes) expect(list.at(index)).toEqual(kept.at(index));
            expect([...list]).toEqual(kept);
            // Each read makes the trade anew: nothing is kept between reads.
            if (kept.length > 0) expect(list.at(0)).not.toBe(list.at(0));
          };
          for (const t of before) push(columns, t);
          check(before);
          columns.dropBefore(cut);
          const kept = before.slice(Math.min(cut, before.length));
          check(kept);
          for (const t of after) push(columns, t);
          check([...kept, ...after]);
          const sizes = mappedTradeList(list, (t) => t.size);
          expect(sizes.length).toBe(list.length);
          expect([...sizes]).toEqual([...kept, ...after].map((t) => t.size));
          expect(sizes.at(-1)).toEqual([...kept, ...after].at(-1)?.size);
        },
      ),
      { numRuns: 30 },
    );
  });
});

describe("the account's trades", () => {
  const grid = new PriceGrid(0.25, 12.5);
  const contract = { id: 'ES', grid } as unknown as ConstructorParameters<typeof Accounting>[0][number];
  const fill = (n: number, side: 'buy' | 'sell', price: number): Fill => ({
    kind: 'fill',
    fillId: `F${n}`,
    orderId: `o-${n}`,
    contractId: 'ES',
    side,
    size: 1,
    price,
    fees: 0.5,
    time: n * 60_000,
  });

  it('as objects equal what applyFill returned, the latest `tradeMemory` of them when a window is kept', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 400 }),
        fc.integer({ min: 1, max: 50 }),
        (prices, memory) => {
          const all = new Accounting([contract], 50_000, { rememberFills: false });
          const window = new Accounting([contract], 50_000, { rememberFills: false, tradeMemory: memory });
          const returned: ClosedTrade[] = [];
          prices.forEach((p, n) => {
            const f = fill(n + 1, n % 2 === 0 ? 'buy' : 'sell', p);
            const closed = all.applyFill(f, 'd');
            window.applyFill(f, 'd');
            if (closed !== undefined && closed !== null) returned.push(closed);
            // Read midway too: the objects made so far stay, later ones are added.
            if (n % 7 === 0) expect(window.trades).toEqual(returned.slice(-memory));
          });
          expect(all.trades).toEqual(returned);
          expect(window.trades).toEqual(returned.slice(-memory));
        },
      ),
      { numRuns: 50 },
    );
  });
});

describe('fill ids of the form F<n>', () => {
  /** What `isSequenceId` answers, read from the text alone. */
  const plain = (id: string, n: number) => /^F[1-9][0-9]{0,15}$/.test(id) && Number(id.slice(1)) === n;
  it('property: whatever was made or checked before, an id is F<n> exactly when its text says so', () => {
    const step = fc.oneof(
      fc.record({ made: fc.integer({ min: 1, max: 10_000 }) }),
      // An id read that names its own number (the fill columns' check).
      fc.integer({ min: 1, max: 10_000 }).map((n) => ({ id: `F${n}`, n })),
      fc.record({
        id: fc.oneof(
          fc.integer({ min: 0, max: 10_000 }).map((n) => `F${n}`),
          fc.constantFrom('F', 'F01', 'G12', 'F1x', 'F12345678901234567'),
          fc.string({ maxLength: 6 }),
        ),
        n: fc.integer({ min: 0, max: 10_000 }),
      }),
    );
    fc.assert(
      fc.property(fc.array(step, { maxLength: 40 }), (steps) => {
        let last = '';
        for (const s of steps) {
          if ('made' in s) {
            last = sequenceFillId(s.made);
            expect(last).toBe(`F${s.made}`);
            expect(isSequenceId(last, s.made)).toBe(true);
            expect(isSequenceId(last, s.made + 1)).toBe(false);
          } else {
            // Twice: the second answer is the one remembered from the first.
            expect(isSequenceId(s.id, s.n)).toBe(plain(s.id, s.n));
            expect(isSequenceId(s.id, s.n)).toBe(plain(s.id, s.n));
            // The same text as the id made last, in a string of its own.
            if (last !== '') expect(isSequenceId(`${last} `.trimEnd(), s.n)).toBe(plain(last, s.n));
          }
        }
      }),
    );
  });
});
