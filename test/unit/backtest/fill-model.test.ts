import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  SimulatedVenue,
  UnknownOrderError,
  type FillModelOptions,
} from '../../../src/adapters/backtest/simulated-venue.ts';
import { orderListHash } from '../../../src/adapters/backtest/order-list-hash.ts';
import { DEFAULT_BOOK } from '../../../src/market/quotes.ts';
import type {
  BarChunk,
  BracketSpec,
  Fill,
  OrderSpec,
  OrderUpdate,
  Side,
  VenueEvent,
} from '../../../src/engine/types.ts';

const MINUTE = 60_000;
const T0 = Date.UTC(2024, 0, 2, 15, 0);

/** Bars as [open, high, low, close] in ticks, one minute apart. */
function chunkOf(bars: ReadonlyArray<readonly [number, number, number, number]>, start = T0): BarChunk {
  const col = (k: number) => Float64Array.from(bars, (b) => b[k]!);
  return {
    contractId: 'ES',
    timeframe: { unit: 'minute', unitNumber: 1 },
    length: bars.length,
    time: Float64Array.from(bars, (_, i) => start + i * MINUTE),
    open: col(0),
    high: col(1),
    low: col(2),
    close: col(3),
    volume: new Float64Array(bars.length).fill(1),
  };
}

interface Harness {
  model: SimulatedVenue;
  events: VenueEvent[];
  fills: () => Fill[];
  place: (id: string, side: Side, order: OrderSpec, size?: number, bracket?: BracketSpec) => void;
  bar: (chunk: BarChunk, i: number) => void;
  stateOf: (id: string) => OrderUpdate['state'] | undefined;
}

function harness(options: Partial<FillModelOptions> = {}): Harness {
  const model = new SimulatedVenue({ slippageTicks: 0, feePerContractPerSide: 0, ...options });
  const events: VenueEvent[] = [];
  model.events.subscribe((e) => events.push(e));
  return {
    model,
    events,
    fills: () => events.filter((e): e is Fill => e.kind === 'fill'),
    place: (id, side, order, size = 1, bracket) =>
      model.place({ id, contractId: 'ES', side, size, order, decidedAt: T0, ...(bracket ? { bracket } : {}) }),
    bar: (chunk, i) => model.onBar(chunk, i),
    stateOf: (id) => model.orders().find((o) => o.id === id)?.state,
  };
}

/** Runs every bar of `bars`, placing `setup` after bar 0 (as a strategy deciding at bar 0's close would). */
function run(
  bars: ReadonlyArray<readonly [number, number, number, number]>,
  setup: (h: Harness) => void,
  options: Partial<FillModelOptions> = {},
): Harness {
  const h = harness(options);
  const chunk = chunkOf(bars);
  h.bar(chunk, 0);
  setup(h);
  for (let i = 1; i < chunk.length; i++) h.bar(chunk, i);
  return h;
}

const priceTime = (h: Harness) => h.fills().map((f) => [f.orderId, f.side, f.price, (f.time - T0) / MINUTE]);

describe('market orders', () => {
  it('fill at the next bar open with adverse slippage, never on the bar that decided them', () => {
    const h = run(
      [
        [100, 104, 99, 103],
        [105, 106, 101, 102],
        [102, 103, 100, 101],
      ],
      (x) => {
        x.place('b', 'buy', { type: 'market' });
        x.place('s', 'sell', { type: 'market' }, 2);
      },
      { slippageTicks: 2, feePerContractPerSide: 1.5 },
    );
    expect(priceTime(h)).toEqual([
      ['b', 'buy', 107, 1],
      ['s', 'sell', 103, 1],
    ]);
    expect(h.fills().map((f) => f.fees)).toEqual([1.5, 3]);
  });

  it('wait over a session gap and fill at the next session open', () => {
    const h = harness();
    const day1 = chunkOf([[100, 101, 99, 100]]);
    const day2 = chunkOf([[120, 121, 119, 120]], T0 + 3 * 24 * 60 * MINUTE);
    h.bar(day1, 0);
    h.place('b', 'buy', { type: 'market' });
    h.bar(day2, 0);
    expect(h.fills()).toMatchObject([{ price: 120, time: day2.time[0] }]);
  });
});

describe('limit orders', () => {
  it('fill at the limit when touched, at the open when the bar opens through it, never when not reached', () => {
    const bars = [
      [100, 100, 100, 100],
      [100, 101, 97, 99], // touches 98 -> fill at 98
      [100, 102, 99, 101],
    ] as const;
    expect(priceTime(run(bars, (x) => x.place('b', 'buy', { type: 'limit', limitPrice: 98 })))).toEqual([
      ['b', 'buy', 98, 1],
    ]);
    expect(priceTime(run(bars, (x) => x.place('s', 'sell', { type: 'limit', limitPrice: 101 })))).toEqual([
      ['s', 'sell', 101, 1],
    ]);
    expect(priceTime(run(bars, (x) => x.place('b', 'buy', { type: 'limit', limitPrice: 96 })))).toEqual([]);
    // Gap: the open is already better than the limit.
    const gap = [
      [100, 100, 100, 100],
      [95, 96, 94, 95],
    ] as const;
    expect(priceTime(run(gap, (x) => x.place('b', 'buy', { type: 'limit', limitPrice: 98 })))).toEqual([
      ['b', 'buy', 95, 1],
    ]);
  });
});

describe('stop orders', () => {
  it('fill at the stop when touched, at the open when the bar gaps through, with stop slippage', () => {
    const bars = [
      [100, 100, 100, 100],
      [100, 103, 99, 102],
    ] as const;
    expect(priceTime(run(bars, (x) => x.place('b', 'buy', { type: 'stop', stopPrice: 102 })))).toEqual([
      ['b', 'buy', 102, 1],
    ]);
    expect(
      priceTime(run(bars, (x) => x.place('b', 'buy', { type: 'stop', stopPrice: 102 }), { stopSlippageTicks: 1 })),
    ).toEqual([['b', 'buy', 103, 1]]);
    expect(priceTime(run(bars, (x) => x.place('s', 'sell', { type: 'stop', stopPrice: 98 })))).toEqual([]);
    const gap = [
      [100, 100, 100, 100],
      [94, 95, 90, 92],
    ] as const;
    expect(priceTime(run(gap, (x) => x.place('s', 'sell', { type: 'stop', stopPrice: 98 })))).toEqual([
      ['s', 'sell', 94, 1],
    ]);
  });
});

describe('stop-limit orders', () => {
  it('fill at the stop when the limit accepts it', () => {
    const bars = [
      [100, 100, 100, 100],
      [100, 104, 99, 103],
    ] as const;
    expect(
      priceTime(run(bars, (x) => x.place('b', 'buy', { type: 'stopLimit', stopPrice: 102, limitPrice: 103 }))),
    ).toEqual([['b', 'buy', 102, 1]]);
  });

  it('after a gap beyond the limit, fill at the limit only when the price comes back, else rest as a limit', () => {
    const bars = [
      [100, 100, 100, 100],
      [106, 107, 105, 106], // triggered at the open (106 >= 102), limit 103 not reached
      [105, 105, 103, 104], // now a resting buy limit at 103: touched
    ] as const;
    const h = run(bars, (x) => x.place('b', 'buy', { type: 'stopLimit', stopPrice: 102, limitPrice: 103 }));
    expect(priceTime(h)).toEqual([['b', 'buy', 103, 2]]);
  });

  it('a limit below the stop waits for the next bar after an inside trigger', () => {
    const bars = [
      [100, 100, 100, 100],
      [100, 103, 99, 101], // stop 102 reached inside the bar; limit 101 < stop: order unknown -> no fill
      [101, 102, 100, 101], // resting limit 101 touched
    ] as const;
    expect(
      priceTime(run(bars, (x) => x.place('b', 'buy', { type: 'stopLimit', stopPrice: 102, limitPrice: 101 }))),
    ).toEqual([['b', 'buy', 101, 2]]);
  });
});

describe('trailing stops (spec 4.1 semantics)', () => {
  it('take the distance from the last close at acceptance and trail the best price in whole ticks', () => {
    // Last close 100, trailPrice 96 -> distance 4. Sell stop at 96 trails highs.
    const bars = [
      [99, 100, 98, 100],
      [100, 105, 99, 104], // low 99 > 96; high 105 -> stop 101; close 104 > 101
      [104, 104, 102, 103], // stop 101 not reached
      [103, 103, 100, 100], // low 100 <= 101 -> fill at 101
    ] as const;
    const h = run(bars, (x) => x.place('t', 'sell', { type: 'trailingStop', trailPrice: 96 }));
    expect(priceTime(h)).toEqual([['t', 'sell', 101, 3]]);
  });

  it('test the stop before advancing it (adverse extreme first), and test the close after', () => {
    const bars = [
      [100, 100, 100, 100],
      // distance 3 -> buy stop at 103 protecting a short. High 103 touches first: fill at 103.
      [101, 103, 95, 96],
    ] as const;
    expect(priceTime(run(bars, (x) => x.place('t', 'buy', { type: 'trailingStop', trailPrice: 103 })))).toEqual([
      ['t', 'buy', 103, 1],
    ]);
    const closeHit = [
      [100, 100, 100, 100],
      // low 90 moves the buy stop to 93; the close 94 is above it -> fill at 93.
      [100, 101, 90, 94],
    ] as const;
    expect(priceTime(run(closeHit, (x) => x.place('t', 'buy', { type: 'trailingStop', trailPrice: 103 })))).toEqual([
      ['t', 'buy', 93, 1],
    ]);
  });

  it('a trailPrice modify restarts the trail from the last close; a gap through fills at the open', () => {
    const h = harness();
    const chunk = chunkOf([
      [100, 100, 100, 100],
      [100, 110, 100, 110],
      [95, 96, 94, 95],
    ]);
    h.bar(chunk, 0);
    h.place('t', 'sell', { type: 'trailingStop', trailPrice: 80 }); // distance 20
    h.bar(chunk, 1); // high 110 -> stop 90
    h.model.modify({ orderId: 't', trailPrice: 108 }); // last close 110 -> distance 2 -> stop 108
    expect(h.model.orders()[0]!.stopPrice).toBe(108);
    h.bar(chunk, 2); // opens at 95 below 108
    expect(priceTime(h)).toEqual([['t', 'sell', 95, 2]]);
  });

  it('is rejected without a last price', () => {
    const h = harness();
    h.place('t', 'sell', { type: 'trailingStop', trailPrice: 96 });
    expect(h.stateOf('t')).toBe('rejected');
  });
});

describe('brackets', () => {
  it('attach a stop loss and a take profit at ticks from the fill, one cancels the other', () => {
    const bars = [
      [100, 100, 100, 100],
      [101, 102, 100, 101], // entry at 101 (open + 0); SL 97, TP 105, neither touched
      [101, 106, 100, 105], // TP 105 touched
      [100, 100, 90, 90],
    ] as const;
    const h = run(bars, (x) => x.place('e', 'buy', { type: 'market' }, 2, { stopLossTicks: 4, takeProfitTicks: 4 }));
    expect(priceTime(h)).toEqual([
      ['e', 'buy', 101, 1],
      ['e:tp', 'sell', 105, 2],
    ]);
    expect(h.fills()[1]!.size).toBe(2);
    expect(h.stateOf('e:sl')).toBe('cancelled');
  });

  it('same-bar rule: stop-first (default), target-first, nearest-to-open', () => {
    const bars = [
      [100, 100, 100, 100],
      [100, 100, 100, 100], // short entry at 100: SL 104, TP 90
      [101, 105, 89, 95], // touches both
    ] as const;
    const setup = (x: Harness) =>
      x.place('e', 'sell', { type: 'market' }, 1, { stopLossTicks: 4, takeProfitTicks: 10 });
    expect(priceTime(run(bars, setup))).toEqual([
      ['e', 'sell', 100, 1],
      ['e:sl', 'buy', 104, 2],
    ]);
    expect(priceTime(run(bars, setup, { sameBar: 'target-first' }))[1]).toEqual(['e:tp', 'buy', 90, 2]);
    // Open 101: stop 104 is 3 away, target 90 is 11 away.
    expect(priceTime(run(bars, setup, { sameBar: 'nearest-to-open' }))[1]).toEqual(['e:sl', 'buy', 104, 2]);
  });

  it('legs can fill in the entry bar after a fill at the open; a gap through the stop fills at the open', () => {
    const sameBar = [
      [100, 100, 100, 100],
      [100, 101, 95, 96], // buy entry at 100, SL 97 reached in the same bar
    ] as const;
    expect(
      priceTime(
        run(sameBar, (x) => x.place('e', 'buy', { type: 'market' }, 1, { stopLossTicks: 3, takeProfitTicks: 3 })),
      ),
    ).toEqual([
      ['e', 'buy', 100, 1],
      ['e:sl', 'sell', 97, 1],
    ]);
    const gap = [
      [100, 100, 100, 100],
      [100, 101, 99, 100],
      [90, 92, 88, 91], // opens below SL 97
    ] as const;
    expect(
      priceTime(
        run(gap, (x) => x.place('e', 'buy', { type: 'market' }, 1, { stopLossTicks: 3, takeProfitTicks: 3 })),
      )[1],
    ).toEqual(['e:sl', 'sell', 90, 2]);
  });

  it('after an entry filled inside the bar only the favoured leg is tested on that bar', () => {
    const bars = [
      [100, 100, 100, 100],
      [100, 103, 95, 100], // buy limit 98 fills inside; SL 96 and TP 101 both inside the range
    ] as const;
    const setup = (x: Harness) =>
      x.place('e', 'buy', { type: 'limit', limitPrice: 98 }, 1, { stopLossTicks: 2, takeProfitTicks: 3 });
    expect(priceTime(run(bars, setup))[1]).toEqual(['e:sl', 'sell', 96, 1]);
    expect(priceTime(run(bars, setup, { sameBar: 'target-first' }))[1]).toEqual(['e:tp', 'sell', 101, 1]);
    expect(priceTime(run(bars, setup, { sameBar: 'nearest-to-open' }))).toHaveLength(1);
  });
});

describe('modify, cancel and validation', () => {
  it('modify moves a limit, cancel removes an order, unknown ids throw, bad prices are rejected', () => {
    const h = harness();
    const chunk = chunkOf([
      [100, 100, 100, 100],
      [100, 101, 97, 99],
    ]);
    h.bar(chunk, 0);
    h.place('a', 'buy', { type: 'limit', limitPrice: 90 });
    h.place('c', 'buy', { type: 'limit', limitPrice: 99 });
    h.place('bad', 'buy', { type: 'limit', limitPrice: 99.5 });
    h.model.modify({ orderId: 'a', limitPrice: 97 });
    h.model.cancel('c');
    expect(() => h.model.cancel('nope')).toThrow(UnknownOrderError);
    h.bar(chunk, 1);
    expect(priceTime(h)).toEqual([['a', 'buy', 97, 1]]);
    expect(h.stateOf('c')).toBe('cancelled');
    expect(h.stateOf('bad')).toBe('rejected');
    h.model.cancel('a');
    h.model.modify({ orderId: 'c', limitPrice: 95 });
    const refused = h.events.filter((e): e is OrderUpdate => e.kind === 'order' && e.reason !== undefined);
    expect(refused.map((e) => [e.orderId, e.state, e.reason])).toEqual([
      ['bad', 'rejected', 'limitPrice 99.5 is not a whole number of ticks'],
      ['a', 'filled', 'cancel refused: order is filled'],
      ['c', 'cancelled', 'modify refused: order is cancelled'],
    ]);
  });

  it('does nothing on bars with no working order', () => {
    const h = harness();
    const chunk = chunkOf([[100, 101, 99, 100]]);
    h.bar(chunk, 0);
    expect(h.events).toEqual([]);
    expect(h.model.lastPrice('ES')).toBe(100);
  });
});

describe('settled orders made over into new ones', () => {
  it('an order a listener places while a fill is under way never takes the object of the order filling', () => {
    const model = new SimulatedVenue({ slippageTicks: 0, feePerContractPerSide: 0 });
    const chunk = chunkOf([
      [100, 101, 99, 100],
      [102, 103, 101, 102],
      [104, 105, 103, 104],
      [106, 107, 105, 106],
    ]);
    const placeMarket = (id: string): void =>
      model.place({ id, contractId: 'ES', side: 'buy', size: 1, order: { type: 'market' }, decidedAt: T0 });
    // 'x' fills and settles inside the venue's bar; its filled update makes a listener place 'y' with a
    // bracket at once. Had 'y' been made over from 'x' then, the fill rules, still holding 'x', would read
    // 'y''s bracket and attach legs to an entry that never filled.
    model.listen((e) => {
      if (e.kind === 'order' && e.orderId === 'x' && e.state === 'filled')
        model.place({
          id: 'y',
          contractId: 'ES',
          side: 'sell',
          size: 1,
          order: { type: 'limit', limitPrice: 150 },
          bracket: { stopLossTicks: 2, takeProfitTicks: 4 },
          decidedAt: T0,
        });
    });
    model.onBar(chunk, 0);
    placeMarket('w');
    model.onBar(chunk, 1);
    // 'w' settled in that bar: 'x' is made over from it, outside any call of the venue.
    placeMarket('x');
    model.onBar(chunk, 2);
    placeMarket('z');
    model.onBar(chunk, 3);
    expect(model.orders().map((o) => [o.id, o.state, o.fillPrice, o.role])).toEqual([
      ['w', 'filled', 102, 'entry'],
      ['x', 'filled', 104, 'entry'],
      ['y', 'working', null, 'entry'],
      ['z', 'filled', 106, 'entry'],
    ]);
  });

  it('an order made over from a settled one keeps nothing of it: the same records and fills as on a fresh venue', () => {
    const chunk = chunkOf([
      [100, 101, 99, 100],
      [103, 104, 102, 103],
      [103, 104, 102, 103],
      [103, 104, 102, 103],
    ]);
    const stopLimit = (id: string, stopPrice: number, limitPrice: number, bar: number) => ({
      id,
      contractId: 'ES',
      side: 'buy' as const,
      size: 1,
      order: { type: 'stopLimit' as const, stopPrice, limitPrice },
      decidedAt: T0 + bar * MINUTE,
    });
    const used = new SimulatedVenue({ slippageTicks: 0, feePerContractPerSide: 0 });
    const fresh = new SimulatedVenue({ slippageTicks: 0, feePerContractPerSide: 0 });
    const fills = (v: SimulatedVenue) => {
      const out: Fill[] = [];
      v.events.subscribe((e) => {
        if (e.kind === 'fill' && e.orderId.startsWith('n')) out.push(e);
      });
      return out;
    };
    const usedFills = fills(used);
    const freshFills = fills(fresh);
    for (const v of [used, fresh]) v.onBar(chunk, 0);
    // Three orders that end modified, triggered and filled: the state a made-over order must not keep.
    for (const id of ['h1', 'h2', 'h3']) {
      used.place(stopLimit(id, 102, 103, 0));
      used.modify({ orderId: id, limitPrice: 104 });
    }
    for (const v of [used, fresh]) v.onBar(chunk, 1);
    expect(used.orders().map((o) => o.state)).toEqual(['filled', 'filled', 'filled']);
    // Not reached by the next bars: triggered (made over from a triggered order) they would fill as limits.
    for (const v of [used, fresh]) for (const id of ['n1', 'n2', 'n3']) v.place(stopLimit(id, 110, 104, 1));
    for (const v of [used, fresh]) for (let i = 2; i < chunk.length; i++) v.onBar(chunk, i);
    expect(used.orders().slice(3)).toEqual(fresh.orders());
    expect(fresh.orders().map((o) => [o.id, o.state, o.modifies])).toEqual([
      ['n1', 'working', 0],
      ['n2', 'working', 0],
      ['n3', 'working', 0],
    ]);
    expect(usedFills).toEqual(freshFills);
  });

  it('a bracket leg that settles while its sibling works is never made over (the sibling still points at it)', () => {
    const h = harness();
    const chunk = chunkOf([
      [100, 101, 99, 100],
      [100, 101, 99, 100],
      [100, 101, 99, 100],
      [100, 101, 99, 100],
      [104, 106, 103, 105],
    ]);
    h.bar(chunk, 0);
    h.place('e', 'buy', { type: 'market' }, 1, { stopLossTicks: 10, takeProfitTicks: 5 });
    h.bar(chunk, 1);
    // The stop loss goes, so the entry and it settle; the take profit still works, linked to the stop loss.
    h.model.cancel('e:sl');
    h.bar(chunk, 2);
    h.place('n', 'sell', { type: 'limit', limitPrice: 150 });
    h.bar(chunk, 3);
    h.bar(chunk, 4);
    expect(h.model.orders().map((o) => [o.id, o.state, o.fillPrice])).toEqual([
      ['e', 'filled', 100],
      ['e:sl', 'cancelled', null],
      ['e:tp', 'filled', 105],
      ['n', 'working', null],
    ]);
  });
});

/** Bars of [open, high, low, close] around 100 ticks, each consistent. */
const barArb = fc
  .tuple(
    fc.integer({ min: 50, max: 150 }),
    fc.integer({ min: 0, max: 8 }),
    fc.integer({ min: 0, max: 8 }),
    fc.integer({ min: 0, max: 100 }),
  )
  .map(([o, up, down, c]) => {
    const high = o + up;
    const low = o - down;
    return [o, high, low, low + Math.round(((high - low) * c) / 100)] as const;
  });

const specArb = fc.oneof(
  fc.constant<OrderSpec>({ type: 'market' }),
  fc.integer({ min: 40, max: 160 }).map((p): OrderSpec => ({ type: 'limit', limitPrice: p })),
  fc.integer({ min: 40, max: 160 }).map((p): OrderSpec => ({ type: 'stop', stopPrice: p })),
  fc
    .tuple(fc.integer({ min: 40, max: 160 }), fc.integer({ min: -5, max: 5 }))
    .map(([p, d]): OrderSpec => ({ type: 'stopLimit', stopPrice: p, limitPrice: p + d })),
  fc.integer({ min: 40, max: 160 }).map((p): OrderSpec => ({ type: 'trailingStop', trailPrice: p })),
);

describe('properties', () => {
  it('every fill lies inside its bar (no slippage) and no order fills on the bar that decided it', () => {
    fc.assert(
      fc.property(
        fc.array(barArb, { minLength: 2, maxLength: 12 }),
        fc.array(fc.tuple(fc.integer({ min: 0, max: 10 }), fc.boolean(), specArb, fc.boolean()), { maxLength: 6 }),
        (bars, orders) => {
          const h = harness();
          const chunk = chunkOf(bars);
          const decided = new Map<string, number>();
          for (let i = 0; i < chunk.length; i++) {
            h.bar(chunk, i);
            orders.forEach(([at, buy, order, bracket], k) => {
              if (at !== i) return;
              const id = `o${k}`;
              decided.set(id, i);
              h.place(
                id,
                buy ? 'buy' : 'sell',
                order,
                1,
                bracket ? { stopLossTicks: 2, takeProfitTicks: 3 } : undefined,
              );
            });
          }
          for (const f of h.fills()) {
            const i = (f.time - T0) / MINUTE;
            expect(f.price).toBeGreaterThanOrEqual(chunk.low[i]!);
            expect(f.price).toBeLessThanOrEqual(chunk.high[i]!);
            const parent = f.orderId.replace(/:(sl|tp)$/, '');
            expect(i).toBeGreaterThan(decided.get(parent)!);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('keeps every order in placement order while most settle and a few rest for long (the unsettled list moves to its front)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom('market', 'rest', 'cancel'), { minLength: 100, maxLength: 400 }),
        (script) => {
          const h = harness();
          const chunk = chunkOf(Array.from({ length: script.length + 1 }, () => [100, 101, 99, 100] as const));
          const expected: Array<[string, string]> = [];
          const resting: string[] = [];
          script.forEach((step, i) => {
            h.bar(chunk, i);
            if (step === 'cancel' && resting.length > 0) {
              const id = resting.shift()!;
              h.model.cancel(id);
              expected.find((e) => e[0] === id)![1] = 'cancelled';
              return;
            }
            const id = `o${i}`;
            if (step === 'rest') {
              h.place(id, 'buy', { type: 'limit', limitPrice: 50 });
              resting.push(id);
              expected.push([id, 'working']);
            } else {
              h.place(id, 'buy', { type: 'market' });
              expected.push([id, 'filled']);
            }
          });
          h.bar(chunk, script.length);
          expect(h.model.orders().map((o) => [o.id, o.state])).toEqual(expected);
          // The hash reads the settled orders from their columns and the rest from the list.
          expect(h.model.orderListHash()).toBe(orderListHash(h.model.orders()));
        },
      ),
      { numRuns: 100 },
    );
  });

  it('a listener reads the same events a subscriber keeps, its order updates and fills each in one object the venue rewrites', () => {
    type Action = readonly [
      at: number,
      kind: 'place' | 'modify' | 'cancel',
      order: number,
      buy: boolean,
      spec: OrderSpec,
    ];
    const action = fc.tuple(
      fc.integer({ min: 0, max: 10 }),
      fc.constantFrom('place', 'place', 'modify', 'cancel'),
      fc.integer({ min: 0, max: 4 }),
      fc.boolean(),
      specArb,
    ) as fc.Arbitrary<Action>;
    fc.assert(
      fc.property(
        fc.array(barArb, { minLength: 2, maxLength: 12 }),
        fc.array(action, { maxLength: 10 }),
        fc.boolean(),
        (bars, actions, touch) => {
          const options: FillModelOptions = {
            slippageTicks: 1,
            feePerContractPerSide: 0.5,
            ...(touch
              ? { touch: { spread: { type: 'fixed', ticks: 1 }, book: DEFAULT_BOOK, partialFills: true, queue: false } }
              : {}),
          };
          const kept = new SimulatedVenue(options);
          const heard = new SimulatedVenue(options);
          const subscribed: VenueEvent[] = [];
          kept.events.subscribe((e) => subscribed.push(e));
          const listened: VenueEvent[] = [];
          const updateObjects = new Set<VenueEvent>();
          const fillObjects = new Set<VenueEvent>();
          heard.listen((e) => {
            listened.push({ ...e });
            if (e.kind === 'order') updateObjects.add(e);
            if (e.kind === 'fill') fillObjects.add(e);
          });
          const chunk = chunkOf(bars);
          const placedBy = new Map<SimulatedVenue, number>();
          for (let i = 0; i < chunk.length; i++) {
            for (const venue of [kept, heard]) {
              let placed = placedBy.get(venue) ?? 0;
              venue.onBar(chunk, i);
              for (const [at, kind, k, buy, spec] of actions) {
                if (at !== i) continue;
                if (kind === 'place') {
                  venue.place({
                    id: `o${placed}`,
                    contractId: 'ES',
                    side: buy ? 'buy' : 'sell',
                    size: 2,
                    order: spec,
                    decidedAt: chunk.time[i]!,
                    ...(buy ? { bracket: { stopLossTicks: 2, takeProfitTicks: 3 } } : {}),
                  });
                  placed++;
                  continue;
                }
                // Modifies and cancels of orders placed so far, working or not (refused ones are reported too).
                if (k >= placed) continue;
                if (kind === 'cancel') venue.cancel(`o${k}`);
                else venue.modify({ orderId: `o${k}`, size: 3 });
              }
              placedBy.set(venue, placed);
            }
          }
          expect(listened).toEqual(subscribed);
          // Undefined fields aside, the same keys: a kept update has no `reason` when there is none.
          for (const [k, e] of subscribed.entries())
            if (e.kind === 'order' && e.reason === undefined) expect('reason' in e, `update ${k}`).toBe(false);
          expect(updateObjects.size).toBeLessThanOrEqual(1);
          expect(fillObjects.size).toBeLessThanOrEqual(1);
          const fills = subscribed.filter((e) => e.kind === 'fill');
          expect(new Set(fills).size).toBe(fills.length);
          expect(kept.orderListHash()).toBe(heard.orderListHash());
        },
      ),
      { numRuns: 200 },
    );
  });
});
