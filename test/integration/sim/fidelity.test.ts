/**
 * The simulator's market model over HTTP with the project's client: fills at the touch on both sides,
 * walking the book, partial fills over time and the cancel of the rest, trading through, brackets that
 * follow the filled size, stops that fill as market orders, JoinBid/JoinAsk, the queue model, and partial
 * fills turned off. On a bar file written here, so every price is known: ES around 5000, 40 contracts a
 * minute (levels of 10), each touching 5000.00 exactly, then one trading through it.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OrderSide, OrderStatus, OrderType, PlaceErrorCode, PositionType } from '../../../src/protocol/codes.ts';
import type { TradingClient } from '../../../src/adapters/gateway/trading.ts';
import { flattenAccount } from '../../../src/adapters/live/kill-switch.ts';
import { silentLogger } from '../../../src/engine/log.ts';
import type { SimFillOptions, SimHandle } from '../../../src/sim/index.ts';
import { ISO, TRADER, accountIds, startTestSimulator, tradingClient } from './sim-harness.ts';

const T0 = Date.UTC(2025, 10, 3, 14, 0);
const MINUTE = 60_000;
const ES = 'CON.F.US.EP.Z25';
const TICK = 0.25;
/** [open, high, low, close, volume]; each bar's range is three ticks, so 10 contracts trade at each price. */
const BARS: ReadonlyArray<readonly [number, number, number, number, number]> = [
  [5001.0, 5001.25, 5000.5, 5001.0, 40],
  [5000.75, 5000.75, 5000.0, 5000.5, 40], // touches 5000.00 (down bar: high, then low)
  [5000.5, 5000.75, 5000.0, 5000.75, 40], // touches (up bar: low first)
  [5000.75, 5000.75, 5000.0, 5000.25, 40],
  [5000.25, 5000.75, 5000.0, 5000.5, 40],
  [5000.5, 5000.75, 5000.0, 5000.75, 40],
  [5000.75, 5000.75, 4999.5, 4999.75, 40], // trades through 5000.00
  ...Array.from({ length: 20 }, () => [4999.75, 5000.0, 4999.5, 4999.75, 40] as const),
];
const ACCOUNTS = ['F-WALK', 'F-PART', 'F-THRU', 'F-STOP', 'F-JOIN', 'F-QUEUE', 'F-WHOLE'];

const dir = mkdtempSync(path.join(tmpdir(), 'tickline-sim-fidelity-'));
const FILE = path.join(dir, 'es.csv');
writeFileSync(FILE, `${['t,o,h,l,c,v', ...BARS.map((b, i) => `${ISO(T0 + i * MINUTE)},${b.join(',')}`)].join('\n')}\n`);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Venue {
  sim: SimHandle;
  client: TradingClient;
  ids: Record<string, number>;
  close(): Promise<void>;
}

async function venue(fills: SimFillOptions = {}): Promise<Venue> {
  const sim = await startTestSimulator({
    market: { source: 'csv', path: FILE },
    startTime: T0 + 30_000,
    fills,
    users: [{ ...TRADER, accounts: ACCOUNTS.map((name) => ({ name, template: 'PRACTICE' })) }],
  });
  const client = tradingClient(sim);
  return { sim, client, ids: await accountIds(client), close: async () => (await client.close(), await sim.close()) };
}

/** Moves the clock to the end of bar `i` (its last millisecond). */
const toEndOf = (sim: SimHandle, i: number) => sim.clock.advance(T0 + (i + 1) * MINUTE - 1 - sim.clock.now());

async function orderOf(v: Venue, accountId: number, id: number) {
  return (await v.client.searchOrders({ accountId, startTimestamp: ISO(T0) })).find((o) => o.id === id)!;
}
async function tradesOf(v: Venue, accountId: number, orderId: number) {
  return (await v.client.searchTrades({ accountId, startTimestamp: ISO(T0) }))
    .filter((t) => t.orderId === orderId)
    .map((t) => [t.price, t.size]);
}

describe('simulator market model (default fills: spread, partial fills, no queue)', () => {
  let v: Venue;
  beforeAll(async () => {
    v = await venue();
  });
  afterAll(() => v.close());

  it('quotes a bid and an ask on the grid around the last trade, with sizes and depth', () => {
    const quote = v.sim.quote(ES)!;
    expect(quote).toMatchObject({ last: 5001.0, ask: 5001.0, bid: 5000.75, askSize: 10, bidSize: 10 });
    expect(quote.asks.map((l) => l.price)).toEqual([5001.0, 5001.25, 5001.5, 5001.75, 5002.0]);
    expect(quote.bids.map((l) => l.price)).toEqual([5000.75, 5000.5, 5000.25, 5000.0, 4999.75]);
  });

  it('fills a market buy at the ask and a sell at the bid, walking the book beyond the top size (several trades of one order)', async () => {
    const accountId = v.ids['F-WALK']!;
    const { ask, bid, askSize } = v.sim.quote(ES)!;
    const buy = await v.client.placeOrder({
      accountId,
      contractId: ES,
      type: OrderType.Market,
      side: OrderSide.Bid,
      size: 25,
    });
    expect(await tradesOf(v, accountId, buy)).toEqual([
      [ask, askSize],
      [ask + TICK, askSize],
      [ask + 2 * TICK, 25 - 2 * askSize],
    ]);
    expect(await orderOf(v, accountId, buy)).toMatchObject({
      status: OrderStatus.Filled,
      fillVolume: 25,
      filledPrice: (10 * 5001 + 10 * 5001.25 + 5 * 5001.5) / 25,
    });
    const sell = await v.client.placeOrder({
      accountId,
      contractId: ES,
      type: OrderType.Market,
      side: OrderSide.Ask,
      size: 12,
    });
    expect(await tradesOf(v, accountId, sell)).toEqual([
      [bid, 10],
      [bid - TICK, 2],
    ]);
    expect(await v.client.searchOpenPositions(accountId)).toEqual([
      expect.objectContaining({ type: PositionType.Long, size: 13 }),
    ]);
  });

  it('places JoinBid and JoinAsk orders as limits at the current best bid and ask', async () => {
    const accountId = v.ids['F-JOIN']!;
    const { bid, ask } = v.sim.quote(ES)!;
    const joinBid = await v.client.placeOrder({
      accountId,
      contractId: ES,
      type: OrderType.JoinBid,
      side: OrderSide.Bid,
      size: 1,
    });
    const joinAsk = await v.client.placeOrder({
      accountId,
      contractId: ES,
      type: OrderType.JoinAsk,
      side: OrderSide.Ask,
      size: 1,
    });
    expect(await orderOf(v, accountId, joinBid)).toMatchObject({
      type: OrderType.JoinBid,
      status: OrderStatus.Open,
      limitPrice: bid,
    });
    expect(await orderOf(v, accountId, joinAsk)).toMatchObject({
      type: OrderType.JoinAsk,
      status: OrderStatus.Open,
      limitPrice: ask,
    });
    await expect(
      v.client.placeOrder({
        accountId,
        contractId: ES,
        type: OrderType.JoinBid,
        side: OrderSide.Bid,
        size: 1,
        limitPrice: bid,
      }),
    ).rejects.toMatchObject({
      errorCode: PlaceErrorCode.OrderRejected,
      errorMessage: 'limitPrice does not apply to order type 6',
    });
  });

  it('fills a resting limit a level per touch (status Open, fillVolume growing), brackets following the filled size; a cancel ends the rest', async () => {
    const part = v.ids['F-PART']!;
    const thru = v.ids['F-THRU']!;
    const stop = v.ids['F-STOP']!;
    const id = await v.client.placeOrder({
      accountId: part,
      contractId: ES,
      type: OrderType.Limit,
      side: OrderSide.Bid,
      size: 25,
      limitPrice: 5000,
      stopLossBracket: { ticks: -8, type: OrderType.Stop },
      takeProfitBracket: { ticks: 8, type: OrderType.Limit },
    });
    const big = await v.client.placeOrder({
      accountId: thru,
      contractId: ES,
      type: OrderType.Limit,
      side: OrderSide.Bid,
      size: 100,
      limitPrice: 5000,
    });
    const stopId = await v.client.placeOrder({
      accountId: stop,
      contractId: ES,
      type: OrderType.Stop,
      side: OrderSide.Ask,
      size: 25,
      stopPrice: 5000,
    });
    expect(await orderOf(v, part, id)).toMatchObject({ status: OrderStatus.Open, fillVolume: 0 });
    const legs = async () =>
      (await v.client.searchOpenOrders(part))
        .filter((o) => o.id !== id)
        .map((o) => [o.type, o.side, o.size, o.stopPrice ?? o.limitPrice])
        .sort();

    toEndOf(v.sim, 1);
    expect(await orderOf(v, part, id)).toMatchObject({ status: OrderStatus.Open, fillVolume: 10, filledPrice: 5000 });
    expect(await legs()).toEqual([
      [OrderType.Limit, OrderSide.Ask, 10, 5002],
      [OrderType.Stop, OrderSide.Ask, 10, 4998],
    ]);
    // The stop was triggered by the last trade reaching 5000.00 and filled as a market order, walking the bids.
    expect(await tradesOf(v, stop, stopId)).toEqual([
      [5000, 10],
      [4999.75, 10],
      [4999.5, 5],
    ]);

    toEndOf(v.sim, 2);
    expect(await orderOf(v, part, id)).toMatchObject({ status: OrderStatus.Open, fillVolume: 20 });
    expect(await legs()).toEqual([
      [OrderType.Limit, OrderSide.Ask, 20, 5002],
      [OrderType.Stop, OrderSide.Ask, 20, 4998],
    ]);
    await v.client.cancelOrder({ accountId: part, orderId: id });
    expect(await orderOf(v, part, id)).toMatchObject({ status: OrderStatus.Cancelled, fillVolume: 20 });
    expect(await tradesOf(v, part, id)).toEqual([
      [5000, 10],
      [5000, 10],
    ]);
    expect(await v.client.searchOpenPositions(part)).toEqual([
      expect.objectContaining({ size: 20, averagePrice: 5000 }),
    ]);
    // Closing leaves the legs working (as the real service does); the live adapter's flatten cancels them itself.
    const flat = await flattenAccount(v.client, part, silentLogger);
    expect(flat).toMatchObject({ flat: true, closed: [ES] });
    expect(flat.cancelled.length).toBe(2);
    expect(await v.client.searchOpenOrders(part)).toEqual([]);

    // A touch per bar until the market trades through the price, which fills all the rest at once.
    toEndOf(v.sim, 6);
    expect(await tradesOf(v, thru, big)).toEqual([
      [5000, 10],
      [5000, 10],
      [5000, 10],
      [5000, 10],
      [5000, 10],
      [5000, 50],
    ]);
    expect(await orderOf(v, thru, big)).toMatchObject({
      status: OrderStatus.Filled,
      fillVolume: 100,
      filledPrice: 5000,
    });
  });
});

describe('simulator fill options', () => {
  it('with the queue model a resting limit waits behind the size shown at its price', async () => {
    const v = await venue({ queue: true });
    try {
      const accountId = v.ids['F-QUEUE']!;
      const id = await v.client.placeOrder({
        accountId,
        contractId: ES,
        type: OrderType.Limit,
        side: OrderSide.Bid,
        size: 25,
        limitPrice: 5000,
      });
      // 10 ahead of it; each touching bar trades 10 at 5000.00: the first works through the queue.
      toEndOf(v.sim, 1);
      expect((await orderOf(v, accountId, id)).fillVolume).toBe(0);
      toEndOf(v.sim, 2);
      expect((await orderOf(v, accountId, id)).fillVolume).toBe(10);
      toEndOf(v.sim, 3);
      expect(await orderOf(v, accountId, id)).toMatchObject({ status: OrderStatus.Open, fillVolume: 20 });
    } finally {
      await v.close();
    }
  });

  it('without partial fills every order fills whole: a market order at the touch, a limit on its first touch', async () => {
    const v = await venue({ partialFills: false });
    try {
      const accountId = v.ids['F-WHOLE']!;
      const { ask } = v.sim.quote(ES)!;
      const market = await v.client.placeOrder({
        accountId,
        contractId: ES,
        type: OrderType.Market,
        side: OrderSide.Bid,
        size: 25,
      });
      expect(await tradesOf(v, accountId, market)).toEqual([[ask, 25]]);
      const limit = await v.client.placeOrder({
        accountId,
        contractId: ES,
        type: OrderType.Limit,
        side: OrderSide.Bid,
        size: 25,
        limitPrice: 5000,
      });
      toEndOf(v.sim, 1);
      expect(await tradesOf(v, accountId, limit)).toEqual([[5000, 25]]);
    } finally {
      await v.close();
    }
  });

  it('with no spread, bid = ask = last', async () => {
    const v = await venue({ spread: { type: 'fixed', ticks: 0 } });
    try {
      expect(v.sim.quote(ES)).toMatchObject({ bid: 5001, ask: 5001, last: 5001 });
    } finally {
      await v.close();
    }
  });
});
