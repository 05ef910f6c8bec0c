/**
 * The user hub client (official @microsoft/signalr underneath) against the simulator's hub: typed events
 * as an Observable, connection state, and subscriptions made again after a reconnect.
 */
import { firstValueFrom, filter, take, toArray } from 'rxjs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { OrderSide, OrderType } from '../../../src/protocol/codes.ts';
import { UserHubClient, type UserEvent } from '../../../src/adapters/gateway/realtime.ts';
import { TradingClient } from '../../../src/adapters/gateway/trading.ts';
import { startSimulator, type SimHandle } from '../../../src/sim/index.ts';

const ES = 'CON.F.US.EP.Z25';
let sim: SimHandle;
let client: TradingClient;
let hub: UserHubClient;
let hubToken = '';

beforeEach(async () => {
  sim = await startSimulator({ clock: 'manual', startTime: Date.parse('2025-03-04T15:00:00Z'), historyDays: 1 });
  client = new TradingClient({
    baseUrl: sim.tradingUrl,
    userName: sim.demo.userName,
    apiKey: sim.demo.apiKey,
    now: () => sim.clock.now(),
  });
  hub = new UserHubClient({
    url: sim.realtimeUrl,
    token: async () => (hubToken = await client.login()),
    reconnectDelaysMs: [0, 50],
  });
});

afterEach(async () => {
  await hub.stop();
  await client.close();
  await sim.close();
});

async function until(check: () => boolean, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('user hub client', () => {
  it('typed events of the account as an Observable; the connection state as another', async () => {
    const states: string[] = [];
    hub.state$.subscribe((s) => states.push(s));
    const events: UserEvent[] = [];
    const subscription = hub.userEvents(sim.demo.accountId).subscribe((e) => events.push(e));
    await hub.start();
    const kinds = firstValueFrom(
      hub.userEvents(sim.demo.accountId).pipe(
        filter((e) => e.kind !== 'account'),
        take(3),
        toArray(),
      ),
    );
    await new Promise((resolve) => setTimeout(resolve, 50));
    const orderId = await client.placeOrder({
      accountId: sim.demo.accountId,
      contractId: ES,
      type: OrderType.Market,
      side: OrderSide.Bid,
      size: 1,
    });
    expect((await kinds).map((e) => e.kind).sort()).toEqual(['order', 'position', 'trade']);
    const order = events.find((e): e is Extract<UserEvent, { kind: 'order' }> => e.kind === 'order');
    expect(order?.order.id).toBe(orderId);
    expect(states).toEqual(['disconnected', 'connecting', 'connected']);
    subscription.unsubscribe();
  });

  it('after the connection drops it reconnects and subscribes again: events keep coming', async () => {
    const events: UserEvent[] = [];
    hub.userEvents(sim.demo.accountId).subscribe((e) => events.push(e));
    await hub.start();
    // Every state is recorded: with a first retry at 0 ms the reconnecting state can last less than a poll.
    const states: string[] = [];
    hub.state$.subscribe((s) => states.push(s));
    // Logging out revokes the hub's token: the hub closes the connection, the client reconnects with a fresh one.
    const revoked = hubToken;
    await fetch(`${sim.tradingUrl}/api/Auth/logout`, {
      method: 'POST',
      headers: { authorization: `Bearer ${revoked}` },
    });
    await until(() => states.includes('reconnecting') || states.includes('disconnected'));
    await until(() => hub.state === 'connected' && hubToken !== revoked);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const orderId = await client.placeOrder({
      accountId: sim.demo.accountId,
      contractId: ES,
      type: OrderType.Market,
      side: OrderSide.Bid,
      size: 1,
    });
    await until(() => events.some((e) => e.kind === 'order' && e.order.id === orderId));
  });
});
