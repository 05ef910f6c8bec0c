/**
 * The gateway's real rules in the simulator, over HTTP: contract months from the calendar on dates across
 * a roll and an expiry, datetimes in every form the gateway accepts, bad values refused with a clear
 * errorCode 2 (or a 400) that never echoes a large value, and seeded pending answers that settle later.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OrderSide, OrderStatus, OrderType, PlaceErrorCode } from '../../../src/protocol/codes.ts';
import type { TradingClient } from '../../../src/adapters/gateway/trading.ts';
import { resolveFrontMonths } from '../../../src/cli/front-month.ts';
import { silentLogger } from '../../../src/engine/log.ts';
import type { SimHandle } from '../../../src/sim/index.ts';
import {
  ES,
  ISO,
  START,
  TRADER,
  accountIds,
  rawLogin,
  rawPost,
  startTestSimulator,
  tradingClient,
} from './sim-harness.ts';

const _DAY = 86_400_000;

describe('contract months across a roll', () => {
  let sim: SimHandle;
  let client: TradingClient;
  let accountId: number;
  const Z26 = 'CON.F.US.EP.Z26';
  const H27 = 'CON.F.US.EP.H27';

  beforeAll(async () => {
    sim = await startTestSimulator({
      startTime: Date.UTC(2026, 10, 23, 15),
      historyDays: 2,
      users: [{ ...TRADER, accounts: [{ name: 'M-1', template: 'PRACTICE' }] }],
    });
    client = tradingClient(sim);
    accountId = (await accountIds(client))['M-1']!;
  });
  afterAll(async () => {
    await client.close();
    await sim.close();
  });
  const moveTo = (t: number) => sim.clock.advance(t - sim.clock.now());
  const fronts = async () => (await client.availableContracts(false)).filter((c) => c.activeContract).map((c) => c.id);
  const listed = async () => (await client.availableContracts(false)).map((c) => c.id);
  const buy = (contractId: string) =>
    client.placeOrder({ accountId, contractId, type: OrderType.Market, side: OrderSide.Bid, size: 1 });

  it('on 23 November 2026 lists the real front months: ES December, gold December, crude January', async () => {
    expect(await fronts()).toEqual(
      expect.arrayContaining([Z26, 'CON.F.US.MES.Z26', 'CON.F.US.GCE.Z26', 'CON.F.US.CLE.F27']),
    );
    expect(await listed()).toEqual(
      expect.arrayContaining([Z26, H27, 'CON.F.US.EP.M27', 'CON.F.US.EP.U27', 'CON.F.US.EP.Z27']),
    );
    expect(await listed()).not.toContain('CON.F.US.EP.U26');
    expect(await listed()).not.toContain('CON.F.US.CLE.Z26');
    expect(await client.contractById(Z26)).toMatchObject({
      name: 'ESZ6',
      description: 'E-mini S&P 500: December 2026',
      activeContract: true,
    });
    // An expired month is still known (history, positions) but refused for orders; a month not listed yet is unknown.
    expect(await client.contractById('CON.F.US.EP.U26')).toMatchObject({ activeContract: false });
    await expect(buy('CON.F.US.EP.U26')).rejects.toMatchObject({ errorCode: PlaceErrorCode.ContractNotActive });
    await expect(buy('CON.F.US.EP.H28')).rejects.toMatchObject({ errorCode: PlaceErrorCode.ContractNotFound });
    await expect(client.contractById('CON.F.US.EP.H28')).rejects.toMatchObject({ errorCode: 1 });
  });

  it('on the roll date (10 December) March is the front month and December still trades', async () => {
    moveTo(Date.UTC(2026, 11, 10, 15));
    expect(await fronts()).toContain(H27);
    expect(await fronts()).not.toContain(Z26);
    expect(await listed()).toContain(Z26);
    await buy(Z26);
    // A working order in December, far from the market: it expires with the month.
    const last = sim.quote(Z26)!.last;
    await client.placeOrder({
      accountId,
      contractId: Z26,
      type: OrderType.Limit,
      side: OrderSide.Bid,
      size: 1,
      limitPrice: last - 500,
    });
    expect(await client.searchOpenPositions(accountId)).toEqual([
      expect.objectContaining({ contractId: Z26, size: 1 }),
    ]);
  });

  it('leaves a symbol id the session follows as it is, a month as it is, and refuses a symbol the gateway does not list', async () => {
    const credentials = { userName: TRADER.userName, apiKey: TRADER.apiKey };
    // A symbol of the contract calendar is followed month by month (src/adapters/live/month-follower.ts).
    expect(
      await resolveFrontMonths(['F.US.EP', 'CON.F.US.ENQ.H27'], {
        tradingUrl: sim.tradingUrl,
        credentials,
        logger: silentLogger,
      }),
    ).toEqual(['F.US.EP', 'CON.F.US.ENQ.H27']);
    // The month the follower trades now is the one the gateway marks active (March, since the roll).
    const active = (await client.availableContracts(false)).find((c) => c.activeContract && c.symbolId === 'F.US.EP');
    expect(active?.id).toBe(H27);
    await expect(
      resolveFrontMonths(['F.US.NOPE'], { tradingUrl: sim.tradingUrl, credentials, logger: silentLogger }),
    ).rejects.toThrow(/no front month of F.US.NOPE/);
  });

  it('after the last trading day (18 December) December is gone: orders expire, positions settle, places answer 9', async () => {
    moveTo(Date.UTC(2026, 11, 21, 15));
    expect(await listed()).not.toContain(Z26);
    expect(await fronts()).toContain(H27);
    await expect(buy(Z26)).rejects.toMatchObject({
      errorCode: PlaceErrorCode.ContractNotActive,
      errorMessage: `Contract ${Z26} has expired`,
    });
    expect(await client.searchOpenPositions(accountId)).toEqual([]);
    const orders = await client.searchOrders({ accountId, startTimestamp: ISO(Date.UTC(2026, 11, 10)) });
    expect(orders.find((o) => o.type === OrderType.Limit)).toMatchObject({ status: OrderStatus.Expired });
    const trades = await client.searchTrades({ accountId, startTimestamp: ISO(Date.UTC(2026, 11, 10)) });
    // The settlement trade is at the final settlement: 08:30 CST on 18 December, the Special Opening Quotation.
    expect(trades.map((t) => [t.side, t.creationTimestamp])).toEqual([
      [0, expect.stringMatching(/^2026-12-10/)],
      [1, '2026-12-18T14:30:00.000Z'],
    ]);
    await buy(H27);
  });
});

describe("the gateway's rules on values", () => {
  let sim: SimHandle;
  let client: TradingClient;
  let token: string;
  let main: number;

  beforeAll(async () => {
    sim = await startTestSimulator();
    client = tradingClient(sim);
    main = (await accountIds(client))['T-MAIN']!;
    token = await rawLogin(sim);
  });
  afterAll(async () => {
    await client.close();
    await sim.close();
  });
  const post = (endpoint: string, body: unknown) =>
    rawPost(`${sim.tradingUrl}/api/${endpoint}`, typeof body === 'string' ? body : (body as object), {
      authorization: `Bearer ${token}`,
    });

  it.each([
    ['nine fractional digits (Go clients)', '2025-11-03T13:00:00.123456789Z'],
    ['seven fractional digits and an offset', '2025-11-03T14:00:00.1234567+01:00'],
    ['no seconds', '2025-11-03T13:00Z'],
    ['a date alone', '2025-11-03'],
  ])('accepts a datetime with %s', async (_what, startTimestamp) => {
    const r = await post('Order/search', { accountId: main, startTimestamp });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ success: true });
  });

  it.each([
    ['without an offset', '2025-11-03T13:00:00'],
    ['on a day that does not exist', '2025-02-30T13:00:00Z'],
  ])('refuses a datetime %s with a 400 naming the field', async (_what, startTimestamp) => {
    const r = await post('Order/search', { accountId: main, startTimestamp });
    expect(r.status).toBe(400);
    expect(r.json.message).toMatch(/startTimestamp/);
  });

  it.each([
    ['a price of 0', { type: OrderType.Limit, limitPrice: 0 }, /limitPrice 0 is outside the price range of ESZ5/],
    ['a negative price', { type: OrderType.Stop, stopPrice: -6000 }, /stopPrice -6000 is outside the price range/],
    [
      'a price beyond the range',
      { type: OrderType.Limit, limitPrice: 1e15 },
      /limitPrice 1000000000000000 is outside the price range of ESZ5 \(above 0, at most 670000\)/,
    ],
    [
      'a customTag over 128 characters',
      { customTag: 'x'.repeat(129) },
      /customTag is 129 characters long; at most 128/,
    ],
    [
      'a customTag with a control character',
      { customTag: 'tag\u0000' },
      /customTag must not contain control characters/,
    ],
  ])('refuses %s with errorCode 2 and a message', async (_what, change, message) => {
    const r = await post('Order/place', {
      accountId: main,
      contractId: ES,
      type: OrderType.Market,
      side: OrderSide.Bid,
      size: 1,
      ...change,
    });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({
      success: false,
      errorCode: PlaceErrorCode.OrderRejected,
      errorMessage: expect.stringMatching(message),
    });
  });

  it('refuses an out-of-range modify with errorCode 3', async () => {
    const id = await client.placeOrder({
      accountId: main,
      contractId: ES,
      type: OrderType.Limit,
      side: OrderSide.Bid,
      size: 1,
      limitPrice: sim.quote(ES)!.bid - 100,
    });
    await expect(client.modifyOrder({ accountId: main, orderId: id, limitPrice: 1e15 })).rejects.toMatchObject({
      errorCode: 3,
      errorMessage: expect.stringMatching(/outside the price range/),
    });
    await client.cancelOrder({ accountId: main, orderId: id });
  });

  it('answers a 10,000-deep JSON body with a 400 that does not echo it', async () => {
    const deep = '['.repeat(10_000) + ']'.repeat(10_000);
    const r = await post('Order/place', `{"accountId": ${deep}}`);
    expect(r.status).toBe(400);
    expect(r.text.length).toBeLessThan(200);
    expect(r.json.message).toMatch(/nested deeper than 32 levels/);
  });

  it('never echoes a large received value in an error answer', async () => {
    const r = await post('Order/place', {
      accountId: 'x'.repeat(100_000),
      contractId: ES,
      type: OrderType.Market,
      side: OrderSide.Bid,
      size: 1,
    });
    expect(r.status).toBe(400);
    expect(r.json.message).toMatch(/accountId/);
    expect(r.text.length).toBeLessThan(1000);
    const unknown = await post('Order/place', {
      accountId: main,
      contractId: `CON.F.US.${'Q'.repeat(10_000)}`,
      type: OrderType.Market,
      side: OrderSide.Bid,
      size: 1,
    });
    expect(unknown.json).toMatchObject({ success: false, errorCode: PlaceErrorCode.ContractNotFound });
    expect(unknown.text.length).toBeLessThan(300);
  });
});

describe('pending answers (a seeded share of places and cancels)', () => {
  async function pendingSim(pending: { places: number; cancels: number; settleMs?: number; seed?: number }) {
    const sim = await startTestSimulator({
      pending,
      users: [{ ...TRADER, accounts: [{ name: 'P-1', template: 'PRACTICE' }] }],
    });
    const client = tradingClient(sim);
    const accountId = (await accountIds(client))['P-1']!;
    return { sim, client, accountId, close: async () => (await client.close(), await sim.close()) };
  }

  it('answers a place OrderPending (6) with the order in status Pending, which settles and trades later', async () => {
    const { sim, client, accountId, close } = await pendingSim({ places: 1, cancels: 1, settleMs: 500 });
    try {
      const error = await client
        .placeOrder({
          accountId,
          contractId: ES,
          type: OrderType.Market,
          side: OrderSide.Bid,
          size: 1,
          customTag: 'p-1',
        })
        .catch((e: unknown) => e);
      expect(error).toMatchObject({ errorCode: PlaceErrorCode.OrderPending });
      const pending = await client.findOrderByCustomTag(accountId, 'p-1', ISO(START));
      expect(pending).toMatchObject({ status: OrderStatus.Pending, fillVolume: 0 });
      expect(await client.searchOpenOrders(accountId)).toEqual([
        expect.objectContaining({ id: pending!.id, status: OrderStatus.Pending }),
      ]);
      sim.clock.advance(499);
      expect((await client.findOrderByCustomTag(accountId, 'p-1', ISO(START)))?.status).toBe(OrderStatus.Pending);
      sim.clock.advance(1);
      expect(await client.findOrderByCustomTag(accountId, 'p-1', ISO(START))).toMatchObject({
        status: OrderStatus.Filled,
        fillVolume: 1,
      });

      // A cancel answers Pending (4); the order keeps working until the cancel takes effect.
      const far = sim.quote(ES)!.bid - 100;
      await client
        .placeOrder({
          accountId,
          contractId: ES,
          type: OrderType.Limit,
          side: OrderSide.Bid,
          size: 1,
          limitPrice: far,
          customTag: 'p-2',
        })
        .catch(() => undefined);
      sim.clock.advance(500);
      const working = (await client.findOrderByCustomTag(accountId, 'p-2', ISO(START)))!;
      expect(working.status).toBe(OrderStatus.Open);
      await expect(client.cancelOrder({ accountId, orderId: working.id })).rejects.toMatchObject({ errorCode: 4 });
      await expect(client.cancelOrder({ accountId, orderId: working.id })).rejects.toMatchObject({
        errorCode: 4,
        errorMessage: expect.stringMatching(/already pending/),
      });
      expect((await client.findOrderByCustomTag(accountId, 'p-2', ISO(START)))?.status).toBe(OrderStatus.Open);
      sim.clock.advance(500);
      expect((await client.findOrderByCustomTag(accountId, 'p-2', ISO(START)))?.status).toBe(OrderStatus.Cancelled);
    } finally {
      await close();
    }
  });

  it('draws which requests answer pending from its seed: the same seed gives the same answers, about the share asked', async () => {
    async function answers(seed: number): Promise<boolean[]> {
      const { sim, client, accountId, close } = await pendingSim({ places: 0.3, cancels: 0, seed });
      try {
        const far = sim.quote(ES)!.bid - 100;
        const out: boolean[] = [];
        for (let i = 0; i < 40; i++) {
          const pending = await client
            .placeOrder({
              accountId,
              contractId: ES,
              type: OrderType.Limit,
              side: OrderSide.Bid,
              size: 1,
              limitPrice: far,
            })
            .then(
              () => false,
              (e: { errorCode?: number }) => (e.errorCode === PlaceErrorCode.OrderPending ? true : Promise.reject(e)),
            );
          out.push(pending);
        }
        return out;
      } finally {
        await close();
      }
    }
    const first = await answers(7);
    expect(await answers(7)).toEqual(first);
    expect(await answers(8)).not.toEqual(first);
    const share = first.filter(Boolean).length;
    expect(share).toBeGreaterThanOrEqual(4);
    expect(share).toBeLessThanOrEqual(20);
  });
});
