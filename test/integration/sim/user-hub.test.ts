/**
 * The simulator's user hub with the official `@microsoft/signalr` client: order, trade, position and
 * account events for the token's own accounts, in the shapes of the REST records, in the order they
 * happened; another user's account refused; unsubscribing stops them; a wrong token cannot connect.
 */
import {
  HttpTransportType,
  HubConnectionBuilder,
  HubConnectionState,
  LogLevel,
  type HubConnection,
} from '@microsoft/signalr';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { OrderSide, OrderStatus, OrderType } from '../../../src/protocol/codes.ts';
import * as S from '../../../src/protocol/schemas.ts';
import { TradingClient } from '../../../src/adapters/gateway/trading.ts';
import { startSimulator, type SimHandle } from '../../../src/sim/index.ts';

const ES = 'CON.F.US.EP.Z25';
let sim: SimHandle;
let client: TradingClient;
let hub: HubConnection | undefined;

beforeEach(async () => {
  sim = await startSimulator({ clock: 'manual', startTime: Date.parse('2025-03-04T15:00:00Z'), historyDays: 1 });
  client = new TradingClient({
    baseUrl: sim.tradingUrl,
    userName: sim.demo.userName,
    apiKey: sim.demo.apiKey,
    now: () => sim.clock.now(),
  });
});

afterEach(async () => {
  await hub?.stop();
  hub = undefined;
  await client.close();
  await sim.close();
});

function connect(token: string): HubConnection {
  return new HubConnectionBuilder()
    .withUrl(`${sim.realtimeUrl}/hubs/user`, {
      skipNegotiation: true,
      transport: HttpTransportType.WebSockets,
      accessTokenFactory: () => token,
    })
    .configureLogging(LogLevel.None)
    .build();
}

async function until(check: () => boolean, ms = 3_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('simulator user hub', () => {
  it('orders, trades and positions of a subscribed account arrive as they happen, in the REST shapes', async () => {
    const accountId = sim.demo.accountId;
    hub = connect(await client.login());
    const events: Array<{ name: string; record: unknown }> = [];
    for (const name of ['GatewayUserOrder', 'GatewayUserTrade', 'GatewayUserPosition', 'GatewayUserAccount'])
      hub.on(name, (record) => events.push({ name, record }));
    await hub.start();
    for (const method of ['SubscribeOrders', 'SubscribeTrades', 'SubscribePositions'])
      await hub.invoke(method, accountId);
    await hub.invoke('SubscribeAccounts');

    const orderId = await client.placeOrder({
      accountId,
      contractId: ES,
      type: OrderType.Market,
      side: OrderSide.Bid,
      size: 1,
      customTag: 'hub-1',
    });
    await until(() => events.some((e) => e.name === 'GatewayUserPosition'));
    const order = events.find((e) => e.name === 'GatewayUserOrder')!.record;
    expect(S.Order.parse(order)).toMatchObject({
      id: orderId,
      status: OrderStatus.Filled,
      customTag: 'hub-1',
      fillVolume: 1,
    });
    const trade = S.Trade.parse(events.find((e) => e.name === 'GatewayUserTrade')!.record);
    expect(trade.orderId).toBe(orderId);
    expect(S.Position.parse(events.find((e) => e.name === 'GatewayUserPosition')!.record)).toMatchObject({
      contractId: ES,
      size: 1,
    });
    // The REST answer and the event are the same record.
    const [rest] = (
      await client.searchOrders({ accountId, startTimestamp: new Date(sim.clock.now() - 60_000).toISOString() })
    ).filter((o) => o.id === orderId);
    expect(order).toEqual(JSON.parse(JSON.stringify(rest)));

    await client.closePosition({ accountId, contractId: ES });
    await until(() => events.filter((e) => e.name === 'GatewayUserPosition').length === 2);
    expect(events.filter((e) => e.name === 'GatewayUserPosition').at(-1)!.record).toMatchObject({
      contractId: ES,
      size: 0,
    });
    await until(() => events.some((e) => e.name === 'GatewayUserAccount'));
    expect(S.Account.parse(events.find((e) => e.name === 'GatewayUserAccount')!.record).id).toBeGreaterThan(0);
    // Order of events: the order's fill before its trade's position change.
    const names = events.map((e) => e.name);
    expect(names.indexOf('GatewayUserOrder')).toBeLessThan(names.indexOf('GatewayUserPosition'));
  });

  it("another user's account is refused; unsubscribing stops the events; a wrong token cannot connect", async () => {
    hub = connect(await client.login());
    const orders: unknown[] = [];
    hub.on('GatewayUserOrder', (o) => orders.push(o));
    await hub.start();
    await expect(hub.invoke('SubscribeOrders', 999_999)).rejects.toThrow(/Account 999999 not found/);
    await hub.invoke('SubscribeOrders', sim.demo.accountId);
    await hub.invoke('UnsubscribeOrders', sim.demo.accountId);
    await client.placeOrder({
      accountId: sim.demo.accountId,
      contractId: ES,
      type: OrderType.Market,
      side: OrderSide.Bid,
      size: 1,
    });
    sim.clock.advance(1_000);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(orders).toEqual([]);
    await expect(connect('not-a-token').start()).rejects.toThrow();
  });

  it('every Unsubscribe twin stops its events, the others keep coming', async () => {
    const accountId = sim.demo.accountId;
    hub = connect(await client.login());
    const events: Array<{ name: string; record: unknown }> = [];
    for (const name of ['GatewayUserOrder', 'GatewayUserTrade', 'GatewayUserPosition', 'GatewayUserAccount'])
      hub.on(name, (record) => events.push({ name, record }));
    await hub.start();
    for (const method of ['SubscribeOrders', 'SubscribeTrades', 'SubscribePositions'])
      await hub.invoke(method, accountId);
    await hub.invoke('SubscribeAccounts');
    await hub.invoke('UnsubscribeTrades', accountId);
    await hub.invoke('UnsubscribeAccounts');
    await client.placeOrder({ accountId, contractId: ES, type: OrderType.Market, side: OrderSide.Bid, size: 1 });
    await until(
      () => events.some((e) => e.name === 'GatewayUserPosition') && events.some((e) => e.name === 'GatewayUserOrder'),
    );
    await hub.invoke('UnsubscribePositions', accountId);
    await hub.invoke('UnsubscribeOrders', accountId);
    const seen = events.length;
    await client.closePosition({ accountId, contractId: ES });
    sim.clock.advance(1_000);
    // A round trip after the close: an event sent before its answer would have arrived first.
    await expect(hub.invoke('SubscribeOrders', 999_999)).rejects.toThrow(/not found/);
    expect(events.length).toBe(seen);
    expect(events.map((e) => e.name)).not.toContain('GatewayUserTrade');
    expect(events.map((e) => e.name)).not.toContain('GatewayUserAccount');
    for (const method of ['UnsubscribeOrders', 'UnsubscribeTrades', 'UnsubscribePositions'])
      await expect(hub.invoke(method, 999_999)).rejects.toThrow(/Account 999999 not found/);
  });

  it('a token that expires while connected closes the connection with an error', async () => {
    await sim.close();
    sim = await startSimulator({
      clock: 'manual',
      startTime: Date.parse('2025-03-04T15:00:00Z'),
      historyDays: 1,
      realtime: { authCheckMs: 20 },
    });
    await client.close();
    client = new TradingClient({
      baseUrl: sim.tradingUrl,
      userName: sim.demo.userName,
      apiKey: sim.demo.apiKey,
      now: () => sim.clock.now(),
    });
    hub = connect(await client.login());
    let closedWith: Error | undefined;
    hub.onclose((error) => (closedWith = error));
    await hub.start();
    await hub.invoke('SubscribeOrders', sim.demo.accountId);
    sim.clock.advance(24 * 3_600_000 + 1_000);
    await until(() => hub!.state === HubConnectionState.Disconnected);
    expect(closedWith?.message).toMatch(/Unauthorized: the session token expired/);
  });
});
