/** The trading interface of the simulator, driven by the project's own client over loopback. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TradingClient } from '../../../src/adapters/gateway/trading.ts';
import {
  CancelRejectionMessage,
  OrderSide,
  OrderStatus,
  OrderType,
  PositionType,
  AGREEMENTS_NOT_SIGNED_MESSAGE,
} from '../../../src/protocol/codes.ts';
import type { SimHandle } from '../../../src/sim/index.ts';
import {
  ES,
  ISO,
  MES,
  START,
  TRADER,
  accountIds,
  advanceUntil,
  rawPost,
  startTestSimulator,
  tradingClient,
} from './sim-harness.ts';

const TICK = 0.25;

describe('simulator trading interface', () => {
  let sim: SimHandle;
  let client: TradingClient;
  let ids: Record<string, number>;
  let main: number;

  beforeAll(async () => {
    sim = await startTestSimulator();
    client = tradingClient(sim);
    ids = await accountIds(client);
    main = ids['T-MAIN']!;
  });
  afterAll(async () => {
    await client.close();
    await sim.close();
  });

  /** The last traded price: the close of the partial one-second bar now. */
  async function last(contractId = ES): Promise<number> {
    const now = sim.clock.now();
    const [bar] = await client.retrieveBars({
      contractId,
      live: false,
      startTime: ISO(now - 5000),
      endTime: ISO(now),
      unit: 1,
      unitNumber: 1,
      limit: 1,
      includePartialBar: true,
    });
    return bar!.c;
  }
  async function order(accountId: number, id: number) {
    const orders = await client.searchOrders({ accountId, startTimestamp: ISO(START - 86_400_000) });
    return orders.find((o) => o.id === id)!;
  }
  async function flatten(accountId: number) {
    for (const p of await client.searchOpenPositions(accountId))
      await client.closePosition({ accountId, contractId: p.contractId });
    for (const o of await client.searchOpenOrders(accountId)) await client.cancelOrder({ accountId, orderId: o.id });
  }

  describe('login', () => {
    it('logs in with a case-insensitive user name', async () => {
      const c = tradingClient(sim, { userName: TRADER.userName.toUpperCase(), apiKey: TRADER.apiKey });
      expect(await c.login()).toEqual(expect.any(String));
      await c.close();
    });

    it.each([
      { what: 'a wrong key', user: { userName: TRADER.userName, apiKey: 'wrong' }, errorCode: 3, errorMessage: null },
      { what: 'an unknown user', user: { userName: 'ghost', apiKey: TRADER.apiKey }, errorCode: 3, errorMessage: null },
      {
        what: 'unsigned agreements',
        user: { userName: 'unsigned', apiKey: 'unsigned-key' },
        errorCode: 7,
        errorMessage: AGREEMENTS_NOT_SIGNED_MESSAGE,
      },
      { what: 'no subscription', user: { userName: 'lapsed', apiKey: 'lapsed-key' }, errorCode: 9, errorMessage: null },
      {
        what: 'API key login disabled',
        user: { userName: 'keyless', apiKey: 'keyless-key' },
        errorCode: 10,
        errorMessage: null,
      },
    ])('answers $what with errorCode $errorCode', async ({ user, errorCode, errorMessage }) => {
      const c = tradingClient(sim, user);
      await expect(c.login()).rejects.toMatchObject({ code: 'LOGIN_FAILED', errorCode, errorMessage });
      await c.close();
    });

    it('answers ping, and logs out the session (the next call logs in again)', async () => {
      const c = tradingClient(sim);
      expect(await c.ping()).toBe('pong');
      await c.login();
      await c.logout();
      expect((await c.searchAccounts(true)).length).toBeGreaterThan(0);
      await c.close();
    });

    it('validate returns a new working token', async () => {
      const token = await client.validate();
      expect(token).toEqual(expect.any(String));
      expect((await client.searchAccounts(true)).length).toBeGreaterThan(0);
    });
  });

  describe('contracts', () => {
    it('searches at most 20 contracts, by name or description', async () => {
      const all = await client.searchContracts({ searchText: '', live: false });
      expect(all.length).toBeGreaterThan(7);
      expect(all.length).toBeLessThanOrEqual(20);
      const es = await client.searchContracts({ searchText: 'ESZ5', live: false });
      expect(es.map((c) => c.id)).toEqual(expect.arrayContaining([ES, MES]));
      // Gold lists its next four even months on 3 November 2025; December is the front one.
      const gold = await client.searchContracts({ searchText: 'gold', live: false });
      expect(gold.map((c) => c.name).sort()).toEqual([
        'GCG6',
        'GCJ6',
        'GCM6',
        'GCZ5',
        'MGCG6',
        'MGCJ6',
        'MGCM6',
        'MGCZ5',
      ]);
      expect(
        gold
          .filter((c) => c.activeContract)
          .map((c) => c.name)
          .sort(),
      ).toEqual(['GCZ5', 'MGCZ5']);
    });

    it('lists available contracts with real tick specifications, one front month (activeContract) per symbol', async () => {
      const available = await client.availableContracts(false);
      const spec = Object.fromEntries(available.map((c) => [c.name, [c.tickSize, c.tickValue]]));
      expect(spec).toMatchObject({
        ESZ5: [0.25, 12.5],
        MESZ5: [0.25, 1.25],
        NQZ5: [0.25, 5],
        MNQZ5: [0.25, 0.5],
        GCG6: [0.1, 10],
        MGCG6: [0.1, 1],
        CLF6: [0.01, 10],
      });
      const fronts = available.filter((c) => c.activeContract);
      expect(new Set(fronts.map((c) => c.symbolId)).size).toBe(fronts.length);
      expect(new Set(available.map((c) => c.symbolId)).size).toBe(fronts.length);
      expect(fronts.map((c) => c.name)).toEqual(
        expect.arrayContaining(['ESZ5', 'NQZ5', 'GCZ5', 'CLZ5', 'SIZ5', 'ZNZ5', '6EZ5']),
      );
    });

    it('finds a contract by id, and answers errorCode 1 for an unknown one', async () => {
      expect(await client.contractById(ES)).toMatchObject({
        id: ES,
        name: 'ESZ5',
        symbolId: 'F.US.EP',
        tickSize: 0.25,
      });
      await expect(client.contractById('CON.F.US.NOPE.Z25')).rejects.toMatchObject({ errorCode: 1 });
    });
  });

  describe('bars', () => {
    const base = { contractId: ES, live: false, includePartialBar: false };

    it('serves every unit newest first, within the limit, on the tick grid', async () => {
      const now = sim.clock.now();
      for (const [unit, unitNumber, span] of [
        [1, 5, 600_000],
        [2, 1, 86_400_000],
        [2, 15, 86_400_000],
        [3, 1, 5 * 86_400_000],
        [4, 1, 25 * 86_400_000],
        [5, 1, 25 * 86_400_000],
        [6, 1, 25 * 86_400_000],
      ] as const) {
        // Weeks and months of a 25-day window are all partial or cut by the start: ask for the forming one.
        const bars = await client.retrieveBars({
          ...base,
          startTime: ISO(now - span),
          endTime: ISO(now),
          unit,
          unitNumber,
          limit: 50,
          includePartialBar: unit >= 5,
        });
        expect(bars.length, `unit ${unit}`).toBeGreaterThan(0);
        expect(bars.length).toBeLessThanOrEqual(50);
        const times = bars.map((b) => Date.parse(b.t));
        for (let i = 1; i < times.length; i++) expect(times[i]).toBeLessThan(times[i - 1]!);
        for (const b of bars) {
          expect(b.h).toBeGreaterThanOrEqual(Math.max(b.o, b.c));
          expect(b.l).toBeLessThanOrEqual(Math.min(b.o, b.c));
          expect(Number.isInteger(b.c / TICK)).toBe(true);
        }
      }
    });

    it('aggregates hours from minutes', async () => {
      const from = START - 6 * 3_600_000;
      const minutes = await client.retrieveBars({
        ...base,
        startTime: ISO(from),
        endTime: ISO(from + 3_600_000 - 1),
        unit: 2,
        unitNumber: 1,
        limit: 1000,
      });
      const [hour] = await client.retrieveBars({
        ...base,
        startTime: ISO(from),
        endTime: ISO(from),
        unit: 3,
        unitNumber: 1,
        limit: 1,
      });
      expect(minutes).toHaveLength(60);
      expect(hour).toMatchObject({
        t: ISO(from),
        o: minutes.at(-1)!.o,
        c: minutes[0]!.c,
        h: Math.max(...minutes.map((m) => m.h)),
        l: Math.min(...minutes.map((m) => m.l)),
        v: minutes.reduce((s, m) => s + m.v, 0),
      });
    });

    it('includes the forming bar only when asked', async () => {
      const now = sim.clock.now() + 30_000;
      sim.clock.advance(30_000);
      const req = { ...base, startTime: ISO(now - 3_600_000), endTime: ISO(now), unit: 2, unitNumber: 5, limit: 3 };
      const complete = await client.retrieveBars(req);
      const partial = await client.retrieveBars({ ...req, includePartialBar: true });
      expect(Date.parse(partial[0]!.t)).toBeGreaterThan(Date.parse(complete[0]!.t));
      expect(Date.parse(partial[0]!.t) + 5 * 60_000).toBeGreaterThan(now);
    });

    it('never shows bars from the future', async () => {
      const now = sim.clock.now();
      const bars = await client.retrieveBars({
        ...base,
        startTime: ISO(now - 3_600_000),
        endTime: ISO(now + 86_400_000),
        unit: 2,
        unitNumber: 1,
        limit: 20_000,
        includePartialBar: true,
      });
      expect(Date.parse(bars[0]!.t)).toBeLessThanOrEqual(now);
    });

    it.each([
      [{ contractId: 'CON.F.US.NOPE.Z25' }, 1],
      [{ unit: 7 }, 2],
      [{ unit: 0 }, 2],
      [{ unitNumber: 0 }, 3],
      [{ limit: 0 }, 4],
    ])('answers %o with errorCode %i', async (change, errorCode) => {
      const now = sim.clock.now();
      const req = {
        ...base,
        startTime: ISO(now - 3_600_000),
        endTime: ISO(now),
        unit: 2,
        unitNumber: 1,
        limit: 10,
        ...change,
      };
      await expect(client.retrieveBars(req)).rejects.toMatchObject({ errorCode });
    });

    it('answers a limit over 20,000 with errorCode 4 (sent raw: the client refuses to send it)', async () => {
      const now = sim.clock.now();
      const token = await client.validate();
      const r = await rawPost(
        `${sim.tradingUrl}/api/History/retrieveBars`,
        { ...base, startTime: ISO(now - 3_600_000), endTime: ISO(now), unit: 2, unitNumber: 1, limit: 20_001 },
        { authorization: `Bearer ${token}` },
      );
      expect(r.json).toMatchObject({ success: false, errorCode: 4 });
    });
  });

  describe('orders', () => {
    it('fills a market order at the touch, with a half-turn trade (null P&L) and fees per contract', async () => {
      const price = sim.quote(MES)!.ask;
      const id = await client.placeOrder({
        accountId: main,
        contractId: MES,
        type: OrderType.Market,
        side: OrderSide.Bid,
        size: 2,
        customTag: 'mkt-1',
      });
      expect(await order(main, id)).toMatchObject({
        status: OrderStatus.Filled,
        filledPrice: price,
        fillVolume: 2,
        customTag: 'mkt-1',
        symbolId: 'F.US.MES',
      });
      const [position] = await client.searchOpenPositions(main);
      expect(position).toMatchObject({ contractId: MES, type: PositionType.Long, size: 2, averagePrice: price });
      sim.clock.advance(5 * 60_000);
      const exit = sim.quote(MES)!.bid;
      const closeId = await client.placeOrder({
        accountId: main,
        contractId: MES,
        type: OrderType.Market,
        side: OrderSide.Ask,
        size: 2,
      });
      const trades = await client.searchTrades({ accountId: main, startTimestamp: ISO(START) });
      const opening = trades.find((t) => t.orderId === id)!;
      const closing = trades.find((t) => t.orderId === closeId)!;
      expect(opening).toMatchObject({ profitAndLoss: null, fees: 0.74, size: 2, side: 0, price });
      expect(closing).toMatchObject({ fees: 0.74, size: 2, side: 1, price: exit });
      expect(closing.profitAndLoss).toBeCloseTo(((exit - price) / TICK) * 1.25 * 2, 6);
      expect(await client.searchOpenPositions(main)).toEqual([]);
    });

    it('keeps a limit order open until the market touches it, then fills at the limit or better', async () => {
      const limit = (await last()) - 8 * TICK;
      const id = await client.placeOrder({
        accountId: main,
        contractId: ES,
        type: OrderType.Limit,
        side: OrderSide.Bid,
        size: 1,
        limitPrice: limit,
      });
      expect((await client.searchOpenOrders(main)).map((o) => o.id)).toContain(id);
      await advanceUntil(sim, async () => (await order(main, id)).status === OrderStatus.Filled);
      const filled = await order(main, id);
      expect(filled.filledPrice!).toBeLessThanOrEqual(limit);
      expect((await client.searchOpenOrders(main)).map((o) => o.id)).not.toContain(id);
      await flatten(main);
    });

    it('fills a stop order once the market reaches the stop, at the stop or worse', async () => {
      const stop = (await last()) + 8 * TICK;
      const id = await client.placeOrder({
        accountId: main,
        contractId: ES,
        type: OrderType.Stop,
        side: OrderSide.Bid,
        size: 1,
        stopPrice: stop,
      });
      expect((await order(main, id)).status).toBe(OrderStatus.Open);
      await advanceUntil(sim, async () => (await order(main, id)).status === OrderStatus.Filled);
      expect((await order(main, id)).filledPrice!).toBeGreaterThanOrEqual(stop);
      await flatten(main);
    });

    it('triggers a stop-limit at its stop and fills it at its limit or better', async () => {
      const price = await last();
      const stop = price - 8 * TICK;
      const limit = stop - 4 * TICK;
      const id = await client.placeOrder({
        accountId: main,
        contractId: ES,
        type: OrderType.StopLimit,
        side: OrderSide.Ask,
        size: 1,
        stopPrice: stop,
        limitPrice: limit,
      });
      expect(await order(main, id)).toMatchObject({ status: OrderStatus.Open, stopPrice: stop, limitPrice: limit });
      await advanceUntil(sim, async () => (await order(main, id)).status === OrderStatus.Filled);
      expect((await order(main, id)).filledPrice!).toBeGreaterThanOrEqual(limit);
      await flatten(main);
    });

    it('trails a trailing stop behind the market by whole ticks and fills it', async () => {
      await client.placeOrder({
        accountId: main,
        contractId: MES,
        type: OrderType.Market,
        side: OrderSide.Bid,
        size: 1,
      });
      const price = await last(MES);
      const id = await client.placeOrder({
        accountId: main,
        contractId: MES,
        type: OrderType.TrailingStop,
        side: OrderSide.Ask,
        size: 1,
        trailPrice: price - 40 * TICK,
      });
      const stops: number[] = [];
      await advanceUntil(sim, async () => {
        const o = await order(main, id);
        if (o.status === OrderStatus.Open) stops.push(o.stopPrice!);
        return o.status === OrderStatus.Filled;
      });
      expect(stops[0]).toBe(price - 40 * TICK);
      for (let i = 1; i < stops.length; i++) expect(stops[i]).toBeGreaterThanOrEqual(stops[i - 1]!);
      expect(Math.max(...stops)).toBeGreaterThan(stops[0]!);
      expect((await order(main, id)).filledPrice!).toBeLessThanOrEqual(stops.at(-1)!);
      expect(await client.searchOpenPositions(main)).toEqual([]);
    });

    it('places bracket orders on the entry fill (signed ticks) and cancels the survivor when one fills', async () => {
      const id = await client.placeOrder({
        accountId: main,
        contractId: ES,
        type: OrderType.Market,
        side: OrderSide.Bid,
        size: 1,
        stopLossBracket: { ticks: -12, type: OrderType.Stop },
        takeProfitBracket: { ticks: 12, type: OrderType.Limit },
      });
      const entry = (await order(main, id)).filledPrice!;
      const open = await client.searchOpenOrders(main);
      expect(open.find((o) => o.type === OrderType.Stop)).toMatchObject({
        side: OrderSide.Ask,
        stopPrice: entry - 12 * TICK,
      });
      expect(open.find((o) => o.type === OrderType.Limit)).toMatchObject({
        side: OrderSide.Ask,
        limitPrice: entry + 12 * TICK,
      });
      await advanceUntil(sim, async () => (await client.searchOpenPositions(main)).length === 0);
      expect(await client.searchOpenOrders(main)).toEqual([]);
      const orders = await client.searchOrders({ accountId: main, startTimestamp: ISO(START) });
      const children = orders.filter((o) => o.id > id && o.id <= id + 2);
      expect(children.map((o) => o.status).sort()).toEqual([OrderStatus.Filled, OrderStatus.Cancelled]);
    });

    it('a sell entry takes its stop above (positive ticks) and its target below (negative)', async () => {
      const id = await client.placeOrder({
        accountId: main,
        contractId: ES,
        type: OrderType.Market,
        side: OrderSide.Ask,
        size: 1,
        stopLossBracket: { ticks: 8, type: OrderType.Stop },
        takeProfitBracket: { ticks: -16, type: OrderType.Limit },
      });
      const entry = (await order(main, id)).filledPrice!;
      const open = await client.searchOpenOrders(main);
      expect(open.find((o) => o.type === OrderType.Stop)).toMatchObject({
        side: OrderSide.Bid,
        stopPrice: entry + 8 * TICK,
      });
      expect(open.find((o) => o.type === OrderType.Limit)).toMatchObject({
        side: OrderSide.Bid,
        limitPrice: entry - 16 * TICK,
      });
      // Closing the position leaves the legs working, as the real service does: the client cancels them.
      await client.closePosition({ accountId: main, contractId: ES });
      expect(await client.searchOpenPositions(main)).toEqual([]);
      expect((await client.searchOpenOrders(main)).map((o) => o.type).sort()).toEqual([
        OrderType.Limit,
        OrderType.Stop,
      ]);
      await flatten(main);
      expect(await client.searchOpenOrders(main)).toEqual([]);
      // The next test searches by time from "now": these orders belong to an earlier moment.
      sim.clock.advance(1_000);
    });

    it.each([
      [
        'an unsigned stop on a buy',
        OrderSide.Bid,
        { stopLossBracket: { ticks: 40, type: OrderType.Stop } },
        'Invalid stop loss ticks (40). Ticks should be less than zero when longing.',
      ],
      [
        'a negative target on a buy',
        OrderSide.Bid,
        { takeProfitBracket: { ticks: -40, type: OrderType.Limit } },
        'Invalid take profit ticks (-40). Ticks should be greater than zero when longing.',
      ],
      [
        'a negative stop on a sell',
        OrderSide.Ask,
        { stopLossBracket: { ticks: -40, type: OrderType.Stop } },
        'Invalid stop loss ticks (-40). Ticks should be greater than zero when shorting.',
      ],
      [
        'a positive target on a sell',
        OrderSide.Ask,
        { takeProfitBracket: { ticks: 40, type: OrderType.Limit } },
        'Invalid take profit ticks (40). Ticks should be less than zero when shorting.',
      ],
      [
        'a stop leg of type Limit',
        OrderSide.Bid,
        { stopLossBracket: { ticks: -40, type: OrderType.Limit } },
        'Invalid stop loss type (Limit).',
      ],
      [
        'a target leg of type Stop',
        OrderSide.Bid,
        { takeProfitBracket: { ticks: 40, type: OrderType.Stop } },
        'Invalid take profit type (Stop).',
      ],
      [
        'a zero stop offset',
        OrderSide.Bid,
        { stopLossBracket: { ticks: 0, type: OrderType.Stop } },
        'Invalid stop loss ticks (0). Ticks should be less than zero when longing.',
      ],
    ])(
      "refuses %s with errorCode 2 and the gateway's message, in a success: false envelope",
      async (_what, side, brackets, message) => {
        const response = await fetch(`${sim.tradingUrl}/api/Order/place`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${await client.login()}` },
          body: JSON.stringify({ accountId: main, contractId: ES, type: OrderType.Market, side, size: 1, ...brackets }),
        });
        expect(response.status).toBe(200);
        expect(await response.json()).toMatchObject({ success: false, errorCode: 2, errorMessage: message });
      },
    );

    it('searches orders by time range', async () => {
      const t0 = sim.clock.now();
      const a = await client.placeOrder({
        accountId: main,
        contractId: ES,
        type: OrderType.Limit,
        side: OrderSide.Bid,
        size: 1,
        limitPrice: (await last()) - 400 * TICK,
      });
      sim.clock.advance(60_000);
      const t1 = sim.clock.now();
      const b = await client.placeOrder({
        accountId: main,
        contractId: ES,
        type: OrderType.Limit,
        side: OrderSide.Bid,
        size: 1,
        limitPrice: (await last()) - 400 * TICK,
      });
      const first = await client.searchOrders({ accountId: main, startTimestamp: ISO(t0), endTimestamp: ISO(t1 - 1) });
      expect(first.map((o) => o.id)).toEqual([a]);
      const both = await client.searchOrders({ accountId: main, startTimestamp: ISO(t0) });
      expect(both.map((o) => o.id)).toEqual([a, b]);
      await flatten(main);
    });

    it.each([
      ['an unknown account', { accountId: 9999 }, 1],
      ['an unsupported order type', { type: 8 }, 2],
      ['a misaligned limit price', { type: OrderType.Limit, limitPrice: 6000.1 }, 2],
      ['a limit order without a price', { type: OrderType.Limit }, 2],
      ['a price the order type does not use', { limitPrice: 6000 }, 2],
      ['a market stop-loss bracket', { stopLossBracket: { ticks: 4, type: OrderType.Market } }, 2],
      ['a zero size', { size: 0 }, 2],
      ['an unknown contract', { contractId: 'CON.F.US.NOPE.Z25' }, 8],
      ['an expired contract', { contractId: 'CON.F.US.EP.U25' }, 9],
    ])('rejects a place with %s', async (_what, change, errorCode) => {
      const req = { accountId: main, contractId: ES, type: OrderType.Market, side: OrderSide.Bid, size: 1, ...change };
      await expect(client.placeOrder(req)).rejects.toMatchObject({ errorCode });
    });

    it('rejects a place beyond the account margin (3) and on an inactive account (10)', async () => {
      await expect(
        client.placeOrder({
          accountId: ids['T-MARGIN']!,
          contractId: ES,
          type: OrderType.Market,
          side: OrderSide.Bid,
          size: 2,
        }),
      ).rejects.toMatchObject({ errorCode: 3 });
      await expect(
        client.placeOrder({
          accountId: ids['T-CLOSED']!,
          contractId: ES,
          type: OrderType.Market,
          side: OrderSide.Bid,
          size: 1,
        }),
      ).rejects.toMatchObject({ errorCode: 10 });
    });

    it('refuses a duplicate customTag on the same account but not on another', async () => {
      const far = (await last()) - 400 * TICK;
      const req = {
        contractId: ES,
        type: OrderType.Limit,
        side: OrderSide.Bid,
        size: 1,
        limitPrice: far,
        customTag: 'dup-tag',
      };
      await client.placeOrder({ accountId: main, ...req });
      await expect(client.placeOrder({ accountId: main, ...req })).rejects.toMatchObject({
        errorCode: 2,
        errorMessage: expect.stringMatching(/customTag/),
      });
      await client.placeOrder({ accountId: ids['T-FOLLOWER']!, ...req });
      expect((await client.findOrderByCustomTag(main, 'dup-tag', ISO(START)))?.customTag).toBe('dup-tag');
      await flatten(main);
    });
  });

  describe('modify', () => {
    it('changes size and limit price of a working order', async () => {
      const far = (await last()) - 400 * TICK;
      const id = await client.placeOrder({
        accountId: main,
        contractId: ES,
        type: OrderType.Limit,
        side: OrderSide.Bid,
        size: 1,
        limitPrice: far,
      });
      await client.modifyOrder({ accountId: main, orderId: id, size: 3, limitPrice: far - TICK });
      expect(await order(main, id)).toMatchObject({ size: 3, limitPrice: far - TICK, status: OrderStatus.Open });
      await flatten(main);
    });

    it('reads trailPrice as an absolute price: the gap to the last price becomes the trail, with no maximum distance', async () => {
      const price = await last();
      const id = await client.placeOrder({
        accountId: main,
        contractId: ES,
        type: OrderType.TrailingStop,
        side: OrderSide.Ask,
        size: 1,
        trailPrice: price - 20 * TICK,
      });
      await client.modifyOrder({ accountId: main, orderId: id, trailPrice: price - 10 * TICK });
      expect((await order(main, id)).stopPrice).toBe(price - 10 * TICK);
      // A "distance" of 2.5 sent by mistake is a price level near zero: a huge trail, accepted.
      await client.modifyOrder({ accountId: main, orderId: id, trailPrice: 2.5 });
      expect((await order(main, id)).stopPrice).toBe(2.5);
      await flatten(main);
    });

    it.each([
      ['a misaligned trailPrice', 'trailing', { trailPrice: 6000.1 }, 3],
      ['trailPrice on a limit order', 'limit', { trailPrice: 6000 }, 3],
      ['a misaligned limit price', 'limit', { limitPrice: 6000.1 }, 3],
      ['stopPrice on a limit order', 'limit', { stopPrice: 6000 }, 3],
      ['an unknown order', 'limit', { orderId: 999_999 }, 2],
      ['an unknown account', 'limit', { accountId: 9999 }, 1],
    ])('rejects %s', async (_what, kind, change, errorCode) => {
      const price = await last();
      const id = await client.placeOrder(
        kind === 'trailing'
          ? {
              accountId: main,
              contractId: ES,
              type: OrderType.TrailingStop,
              side: OrderSide.Ask,
              size: 1,
              trailPrice: price - 400 * TICK,
            }
          : {
              accountId: main,
              contractId: ES,
              type: OrderType.Limit,
              side: OrderSide.Bid,
              size: 1,
              limitPrice: price - 400 * TICK,
            },
      );
      await expect(client.modifyOrder({ accountId: main, orderId: id, ...change })).rejects.toMatchObject({
        errorCode,
      });
      await flatten(main);
    });

    it('rejects modifying an order that is no longer open (3)', async () => {
      const id = await client.placeOrder({
        accountId: main,
        contractId: ES,
        type: OrderType.Market,
        side: OrderSide.Bid,
        size: 1,
      });
      await expect(client.modifyOrder({ accountId: main, orderId: id, size: 2 })).rejects.toMatchObject({
        errorCode: 3,
      });
      await flatten(main);
    });
  });

  describe('cancel', () => {
    it('cancels a working order (0) and then refuses it as not open (3)', async () => {
      const id = await client.placeOrder({
        accountId: main,
        contractId: ES,
        type: OrderType.Limit,
        side: OrderSide.Bid,
        size: 1,
        limitPrice: (await last()) - 400 * TICK,
      });
      await client.cancelOrder({ accountId: main, orderId: id });
      expect((await order(main, id)).status).toBe(OrderStatus.Cancelled);
      await expect(client.cancelOrder({ accountId: main, orderId: id })).rejects.toMatchObject({ errorCode: 3 });
    });

    it('answers an unknown account with 1 and an unknown order with 2', async () => {
      await expect(client.cancelOrder({ accountId: 9999, orderId: 1 })).rejects.toMatchObject({ errorCode: 1 });
      await expect(client.cancelOrder({ accountId: main, orderId: 999_999 })).rejects.toMatchObject({ errorCode: 2 });
    });

    it('answers 6 with the documented message for follower and live accounts', async () => {
      const far = (await last()) - 400 * TICK;
      for (const [name, message] of [
        ['T-FOLLOWER', CancelRejectionMessage.Follower],
        ['T-LIVE', CancelRejectionMessage.Live],
      ] as const) {
        const accountId = ids[name]!;
        const id = await client.placeOrder({
          accountId,
          contractId: ES,
          type: OrderType.Limit,
          side: OrderSide.Bid,
          size: 1,
          limitPrice: far,
        });
        await expect(client.cancelOrder({ accountId, orderId: id })).rejects.toMatchObject({
          errorCode: 6,
          errorMessage: message,
        });
      }
    });
  });

  describe('pending answers (account test hook)', () => {
    it('answers the first place with OrderPending (6), placing nothing, then places', async () => {
      const accountId = ids['T-PENDING']!;
      const req = {
        accountId,
        contractId: ES,
        type: OrderType.Limit,
        side: OrderSide.Bid,
        size: 1,
        limitPrice: (await last()) - 400 * TICK,
        customTag: 'pending-hook-1',
      };
      await expect(client.placeOrder(req)).rejects.toMatchObject({
        code: 'GATEWAY_REJECTED',
        errorCode: 6,
        errorName: 'OrderPending',
      });
      expect(await client.searchOpenOrders(accountId)).toEqual([]);
      const id = await client.placeOrder(req);
      expect(await client.searchOpenOrders(accountId)).toEqual([expect.objectContaining({ id })]);
    });

    it('answers the next two cancels with Pending (4), cancelling nothing, then cancels', async () => {
      const accountId = ids['T-PENDING']!;
      const [working] = await client.searchOpenOrders(accountId);
      for (let i = 0; i < 2; i++) {
        await expect(client.cancelOrder({ accountId, orderId: working!.id })).rejects.toMatchObject({
          code: 'GATEWAY_REJECTED',
          errorCode: 4,
          errorName: 'Pending',
        });
        expect((await order(accountId, working!.id)).status).toBe(OrderStatus.Open);
      }
      await client.cancelOrder({ accountId, orderId: working!.id });
      expect((await order(accountId, working!.id)).status).toBe(OrderStatus.Cancelled);
    });
  });

  describe('positions', () => {
    it('partially closes and closes a position at the market', async () => {
      await client.placeOrder({
        accountId: main,
        contractId: ES,
        type: OrderType.Market,
        side: OrderSide.Ask,
        size: 3,
      });
      expect((await client.searchOpenPositions(main))[0]).toMatchObject({ type: PositionType.Short, size: 3 });
      await expect(client.partialClosePosition({ accountId: main, contractId: ES, size: 4 })).rejects.toMatchObject({
        errorCode: 5,
      });
      await client.partialClosePosition({ accountId: main, contractId: ES, size: 1 });
      expect((await client.searchOpenPositions(main))[0]).toMatchObject({ type: PositionType.Short, size: 2 });
      await client.closePosition({ accountId: main, contractId: ES });
      expect(await client.searchOpenPositions(main)).toEqual([]);
    });

    it.each([
      ['an unknown account', { accountId: 9999 }, 1],
      ['no position', {}, 2],
      ['an unknown contract', { contractId: 'CON.F.US.NOPE.Z25' }, 3],
      ['an inactive account', { accountId: -1 }, 8],
    ])('refuses a close with %s', async (_what, change, errorCode) => {
      const req = { accountId: main, contractId: ES, ...change };
      if (req.accountId === -1) req.accountId = ids['T-CLOSED']!;
      await expect(client.closePosition(req)).rejects.toMatchObject({ errorCode });
    });

    it('answers the search endpoints with 1 for an account of someone else', async () => {
      await expect(client.searchOpenPositions(9999)).rejects.toMatchObject({ errorCode: 1 });
      await expect(client.searchOpenOrders(9999)).rejects.toMatchObject({ errorCode: 1 });
      await expect(client.searchOrders({ accountId: 9999, startTimestamp: ISO(START) })).rejects.toMatchObject({
        errorCode: 1,
      });
      await expect(client.searchTrades({ accountId: 9999, startTimestamp: ISO(START) })).rejects.toMatchObject({
        errorCode: 1,
      });
    });
  });

  it('copies the fills of a leader account to the follower accounts of the same user', async () => {
    const leader = ids['T-LEADER']!;
    const follower = ids['T-FOLLOWER']!;
    const id = await client.placeOrder({
      accountId: leader,
      contractId: MES,
      type: OrderType.Market,
      side: OrderSide.Bid,
      size: 3,
    });
    const price = (await order(leader, id)).filledPrice;
    expect(await client.searchOpenPositions(follower)).toEqual([
      expect.objectContaining({ contractId: MES, type: PositionType.Long, size: 3, averagePrice: price }),
    ]);
    await client.closePosition({ accountId: leader, contractId: MES });
    expect(await client.searchOpenPositions(follower)).toEqual([]);
    expect(await client.searchOpenPositions(leader)).toEqual([]);
  });

  it('lists the accounts of the user with balance, simulated flag and canTrade', async () => {
    const accounts = await client.searchAccounts(false);
    const byName = Object.fromEntries(accounts.map((a) => [a.name, a]));
    expect(byName['T-LIVE']).toMatchObject({ simulated: false, canTrade: true });
    expect(byName['T-CLOSED']).toMatchObject({ canTrade: false });
    expect((await client.searchAccounts(true)).map((a) => a.name)).not.toContain('T-CLOSED');
    expect(byName['DEMO-50K-1']).toBeUndefined();
  });
});
