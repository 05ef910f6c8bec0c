/**
 * The backtest's fill model at the touch (`fills.spread`): the simulator's book from the bars (tick-rule
 * quote at the open, levels of a quarter of the bar before's volume), walking the book, touch fills a
 * level per bar, trading through, the queue model, brackets following the filled size, stops filling as
 * market orders; and the `path` same-bar rule.
 */
import { describe, expect, it } from 'vitest';
import { SimulatedVenue, type FillModelOptions } from '../../../src/adapters/backtest/simulated-venue.ts';
import type {
  BarChunk,
  BracketSpec,
  Fill,
  OrderSpec,
  OrderUpdate,
  Side,
  VenueEvent,
} from '../../../src/engine/types.ts';
import { DEFAULT_BOOK, type TouchFills } from '../../../src/market/quotes.ts';

const MINUTE = 60_000;
const T0 = Date.UTC(2024, 0, 2, 15, 0);
type Bar = readonly [open: number, high: number, low: number, close: number, volume: number];

function chunkOf(bars: readonly Bar[]): BarChunk {
  const col = (k: number) => Float64Array.from(bars, (b) => b[k]!);
  return {
    contractId: 'ES',
    timeframe: { unit: 'minute', unitNumber: 1 },
    length: bars.length,
    time: Float64Array.from(bars, (_, i) => T0 + i * MINUTE),
    open: col(0),
    high: col(1),
    low: col(2),
    close: col(3),
    volume: col(4),
  };
}

const TOUCH = (over: Partial<TouchFills> = {}): TouchFills => ({
  spread: { type: 'fixed', ticks: 1 },
  book: DEFAULT_BOOK,
  partialFills: true,
  queue: false,
  ...over,
});

/** Runs the bars, placing what `setup` places after bar 0 (decided at its close). */
function run(
  bars: readonly Bar[],
  setup: (place: (id: string, side: Side, order: OrderSpec, size?: number, bracket?: BracketSpec) => void) => void,
  options: Partial<FillModelOptions> = {},
) {
  const model = new SimulatedVenue({ slippageTicks: 0, feePerContractPerSide: 0, touch: TOUCH(), ...options });
  const events: VenueEvent[] = [];
  model.events.subscribe((e) => events.push(e));
  const chunk = chunkOf(bars);
  model.onBar(chunk, 0);
  setup((id, side, order, size = 1, bracket) =>
    model.place({ id, contractId: 'ES', side, size, order, decidedAt: T0, ...(bracket ? { bracket } : {}) }),
  );
  for (let i = 1; i < chunk.length; i++) model.onBar(chunk, i);
  const fills = events.filter((e): e is Fill => e.kind === 'fill');
  return {
    model,
    events,
    /** [order, price, size, bar] of every fill. */
    fills: () => fills.map((f) => [f.orderId, f.price, f.size, (f.time - T0) / MINUTE]),
    last: (id: string) => events.filter((e): e is OrderUpdate => e.kind === 'order' && e.orderId === id).at(-1),
  };
}

// Bar 0: up bar 100 -> 99 -> 101 -> 100, its last move down. 40 contracts: levels of 10.
const B0: Bar = [100, 101, 99, 100, 40];

describe('backtest fills at the touch', () => {
  it('puts the open on the ask after an up move and on the bid after a down move (the jump, else the last move before)', () => {
    const up = run(
      [B0, [102, 103, 101, 102, 40]],
      (place) => (place('b', 'buy', { type: 'market' }), place('s', 'sell', { type: 'market' })),
    );
    expect(up.fills()).toEqual([
      ['b', 102, 1, 1],
      ['s', 101, 1, 1],
    ]);
    const down = run(
      [B0, [98, 99, 97, 98, 40]],
      (place) => (place('b', 'buy', { type: 'market' }), place('s', 'sell', { type: 'market' })),
    );
    expect(down.fills()).toEqual([
      ['b', 99, 1, 1],
      ['s', 98, 1, 1],
    ]);
    // No jump: bar 0 last moved down (101 -> 100), so the open is the bid.
    const flat = run(
      [B0, [100, 101, 99, 100, 40]],
      (place) => (place('b', 'buy', { type: 'market' }), place('s', 'sell', { type: 'market' })),
    );
    expect(flat.fills()).toEqual([
      ['b', 101, 1, 1],
      ['s', 100, 1, 1],
    ]);
  });

  it('walks the book beyond a level with partial fills, and fills whole at the touch without', () => {
    const bars: Bar[] = [B0, [102, 103, 101, 102, 40]];
    expect(run(bars, (place) => place('b', 'buy', { type: 'market' }, 25)).fills()).toEqual([
      ['b', 102, 10, 1],
      ['b', 103, 10, 1],
      ['b', 104, 5, 1],
    ]);
    expect(
      run(bars, (place) => place('b', 'buy', { type: 'market' }, 25), {
        touch: TOUCH({ partialFills: false }),
      }).fills(),
    ).toEqual([['b', 102, 25, 1]]);
    // A marketable limit walks only as far as its price; the rest rests (and the bar trades through it).
    const limited = run(bars, (place) => place('l', 'buy', { type: 'limit', limitPrice: 103 }, 25));
    expect(limited.fills()).toEqual([
      ['l', 102, 10, 1],
      ['l', 103, 10, 1],
      ['l', 103, 5, 1],
    ]);
  });

  it('fills a resting limit a level per touching bar, the rest when a bar trades through, brackets following the filled size', () => {
    const touching: Bar = [97, 98, 95, 96, 40]; // range 3: 10 contracts at each price
    const bars: Bar[] = [B0, [97, 98, 95, 96, 40], touching, touching, [96, 96, 93, 94, 40]];
    const h = run(bars, (place) =>
      place('e', 'buy', { type: 'limit', limitPrice: 95 }, 35, { stopLossTicks: 10, takeProfitTicks: 20 }),
    );
    expect(h.fills().filter((f) => f[0] === 'e')).toEqual([
      ['e', 95, 10, 1],
      ['e', 95, 10, 2],
      ['e', 95, 10, 3],
      ['e', 95, 5, 4],
    ]);
    expect(h.last('e')).toMatchObject({ state: 'filled', filledSize: 35 });
    // The legs were placed at the first fill and grew with each one.
    const legSizes = h.events
      .filter((e): e is OrderUpdate => e.kind === 'order' && e.orderId === 'e:sl')
      .map((u) => u.size);
    expect(legSizes).toEqual([10, 20, 30, 35]);
    expect(h.last('e:tp')).toMatchObject({ state: 'working', size: 35, order: { type: 'limit', limitPrice: 115 } });
    expect(h.last('e:sl')).toMatchObject({ state: 'working', order: { type: 'stop', stopPrice: 85 } });
  });

  it('with the queue model lets the size ahead trade first', () => {
    const touching: Bar = [97, 98, 95, 96, 40];
    const h = run(
      [B0, touching, touching, touching],
      (place) => place('e', 'buy', { type: 'limit', limitPrice: 95 }, 25),
      { touch: TOUCH({ queue: true }) },
    );
    // It joined 10 contracts at 95 (not better than the bid): the first touch works through them.
    expect(h.fills()).toEqual([
      ['e', 95, 10, 2],
      ['e', 95, 10, 3],
    ]);
  });

  it('fills a triggered stop as a market order from the touch of the trigger, walking the book', () => {
    const h = run([B0, [100, 100, 96, 97, 40]], (place) => place('s', 'sell', { type: 'stop', stopPrice: 98 }, 25));
    expect(h.fills()).toEqual([
      ['s', 98, 10, 1],
      ['s', 97, 10, 1],
      ['s', 96, 5, 1],
    ]);
  });

  it('cuts the other leg of a bracket by what one leg filled, and cancels it when the position is closed', () => {
    const bars: Bar[] = [B0, [102, 103, 101, 102, 40], [102, 105, 102, 105, 40], [105, 107, 105, 106, 40]];
    // Long 25 from the walk at bar 1 (its legs from the first part's 102); the target at 105 is touched at
    // bar 2's high (10 of 25) and traded through at bar 3.
    const h = run(bars, (place) =>
      place('e', 'buy', { type: 'market' }, 25, { stopLossTicks: 50, takeProfitTicks: 3 }),
    );
    expect(h.fills().filter((f) => f[0] !== 'e')).toEqual([
      ['e:tp', 105, 10, 2],
      ['e:tp', 105, 15, 3],
    ]);
    expect(
      h.events
        .filter((e): e is OrderUpdate => e.kind === 'order' && e.orderId === 'e:sl')
        .map((u) => [u.state, u.size]),
    ).toEqual([
      ['working', 10],
      ['working', 20],
      ['working', 25],
      ['working', 15],
      ['cancelled', 15],
    ]);
  });
});

describe('the path same-bar rule', () => {
  it("fills the leg the simulator's path reaches first: the low on an up bar, the high on a down bar", () => {
    const legs = (bar: Bar) =>
      run(
        [B0, [100, 100, 100, 100, 40], bar],
        (place) => place('e', 'buy', { type: 'market' }, 1, { stopLossTicks: 3, takeProfitTicks: 3 }),
        { touch: undefined, sameBar: 'path' },
      )
        .fills()
        .filter((f) => f[0] !== 'e')
        .map((f) => f[0]);
    expect(legs([100, 104, 96, 102, 40])).toEqual(['e:sl']);
    expect(legs([100, 104, 96, 98, 40])).toEqual(['e:tp']);
  });
});
