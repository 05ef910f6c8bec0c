/**
 * The simulator's market hub with the official `@microsoft/signalr` client: every method and event, in the
 * shapes of the shared schemas and agreeing with the simulator's own book; unknown and expired contracts
 * refused by name; unsubscribing stops events; the quote throttle; a wrong token refused and a token that
 * expires while connected; 200 connections receiving quotes while orders still fill.
 */
import {
  HttpTransportType,
  HubConnectionBuilder,
  HubConnectionState,
  LogLevel,
  type HubConnection,
} from '@microsoft/signalr';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { DomType, OrderSide, OrderStatus, OrderType } from '../../../src/protocol/codes.ts';
import { GatewayDepth, GatewayQuote, GatewayTrade } from '../../../src/protocol/hub-schemas.ts';
import { encode } from '../../../src/sim/hubs/hub-framing.ts';
import { TradingClient } from '../../../src/adapters/gateway/trading.ts';
import { startSimulator, type SimHandle, type SimulatorOptions } from '../../../src/sim/index.ts';

const ES = 'CON.F.US.EP.M25';
const START = Date.parse('2025-03-04T15:00:00Z');
let sim: SimHandle | undefined;
let client: TradingClient | undefined;
const hubs: HubConnection[] = [];

afterEach(async () => {
  await Promise.all(hubs.splice(0).map((h) => h.stop()));
  await client?.close();
  await sim?.close();
  client = undefined;
  sim = undefined;
});

async function start(
  options: SimulatorOptions = {},
): Promise<{ sim: SimHandle; client: TradingClient; token: string }> {
  sim = await startSimulator({ clock: 'manual', startTime: START, historyDays: 2, ...options });
  const s = sim;
  client = new TradingClient({
    baseUrl: s.tradingUrl,
    userName: s.demo.userName,
    apiKey: s.demo.apiKey,
    now: () => s.clock.now(),
  });
  return { sim: s, client, token: await client.login() };
}

function connect(token: string): HubConnection {
  const hub = new HubConnectionBuilder()
    .withUrl(`${sim!.realtimeUrl}/hubs/market`, {
      skipNegotiation: true,
      transport: HttpTransportType.WebSockets,
      accessTokenFactory: () => token,
    })
    .configureLogging(LogLevel.None)
    .build();
  hubs.push(hub);
  return hub;
}

async function until(check: () => boolean, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Events of one target, each checked to carry the contract id first. */
function collect(hub: HubConnection, target: string): unknown[] {
  const got: unknown[] = [];
  hub.on(target, (contractId: unknown, data: unknown) => {
    expect(contractId).toBe(ES);
    got.push(data);
  });
  return got;
}

/** Advances the market a second at a time until `check` holds (the price path moves every few seconds). */
async function advanceUntil(s: SimHandle, check: () => boolean, steps = 120): Promise<void> {
  for (let i = 0; i < steps && !check(); i++) {
    s.clock.advance(1_000);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  await until(check);
}

describe('simulator market hub', () => {
  it('quotes: the current one on subscribing, then every change, agreeing with the simulator book', async () => {
    const { sim: s, token } = await start({ realtime: { quotesPerSecond: 1_000 } });
    const hub = connect(token);
    const quotes = collect(hub, 'GatewayQuote');
    await hub.start();
    await hub.invoke('SubscribeContractQuotes', ES);
    await until(() => quotes.length === 1);
    const first = GatewayQuote.parse(quotes[0]);
    const book = s.quote(ES)!;
    expect(first).toMatchObject({
      symbol: 'F.US.EP',
      symbolName: '/ES',
      lastPrice: book.last,
      bestBid: book.bid,
      bestAsk: book.ask,
      timestamp: new Date(s.clock.now()).toISOString(),
    });
    expect(first.low).toBeLessThanOrEqual(first.lastPrice);
    expect(first.high).toBeGreaterThanOrEqual(first.lastPrice);
    expect(first.volume).toBeGreaterThan(0);

    await advanceUntil(s, () => quotes.length >= 3);
    for (const raw of quotes) {
      const quote = GatewayQuote.parse(raw);
      expect(quote.bestBid).toBeLessThanOrEqual(quote.lastPrice);
      expect(quote.bestAsk).toBeGreaterThanOrEqual(quote.lastPrice);
      expect(Number.isInteger(quote.lastPrice / 0.25)).toBe(true);
    }
    // The last quote sent is the book now (no change is left unsent).
    await until(() => GatewayQuote.parse(quotes.at(-1)).lastPrice === s.quote(ES)!.last);
    expect(GatewayQuote.parse(quotes.at(-1))).toMatchObject({ bestBid: s.quote(ES)!.bid, bestAsk: s.quote(ES)!.ask });
  });

  it('quotes are throttled per contract, and the latest one is sent when the window ends', async () => {
    const { sim: s, token } = await start({ realtime: { quotesPerSecond: 2 } });
    const hub = connect(token);
    const quotes = collect(hub, 'GatewayQuote');
    await hub.start();
    await hub.invoke('SubscribeContractQuotes', ES);
    await until(() => quotes.length === 1);
    const began = Date.now();
    // Every second of market time changes the quote (the day's volume grows with the bar).
    for (let i = 0; i < 60; i++) s.clock.advance(1_000);
    const elapsed = Date.now() - began;
    await until(
      () =>
        GatewayQuote.parse(quotes.at(-1)).lastPrice === s.quote(ES)!.last &&
        GatewayQuote.parse(quotes.at(-1)).timestamp === new Date(s.clock.now()).toISOString(),
    );
    // At most one quote per 500 ms window the changes spanned, plus the one that ends the last window.
    expect(quotes.length - 1).toBeLessThanOrEqual(Math.floor(elapsed / 500) + 2);
  });

  it('trades: the market prints along the price path and the accounts fills, in time order', async () => {
    const { sim: s, client: c, token } = await start();
    const hub = connect(token);
    const batches = collect(hub, 'GatewayTrade');
    await hub.start();
    await hub.invoke('SubscribeContractTrades', ES);
    await advanceUntil(s, () => batches.length >= 2);
    const prints = batches.flatMap((b) => GatewayTrade.array().parse(b));
    for (const print of prints) {
      expect(print.symbolId).toBe('F.US.EP');
      expect(Number.isInteger(print.price / 0.25)).toBe(true);
      expect(print.volume).toBeGreaterThan(0);
    }
    const times = prints.map((p) => Date.parse(p.timestamp));
    expect(times).toEqual([...times].sort((a, b) => a - b));
    // Consecutive prints are at different prices, the aggressor's side following the move.
    for (let i = 1; i < prints.length; i++) {
      expect(prints[i]!.price).not.toBe(prints[i - 1]!.price);
      expect(prints[i]!.type).toBe(prints[i]!.price > prints[i - 1]!.price ? 0 : 1);
    }

    const before = batches.length;
    const orderId = await c.placeOrder({
      accountId: s.demo.accountId,
      contractId: ES,
      type: OrderType.Market,
      side: OrderSide.Ask,
      size: 3,
    });
    const [fill] = (
      await c.searchTrades({ accountId: s.demo.accountId, startTimestamp: new Date(START - 60_000).toISOString() })
    ).filter((t) => t.orderId === orderId);
    await until(() => batches.length > before);
    const sent = batches.slice(before).flatMap((b) => GatewayTrade.array().parse(b));
    expect(sent).toContainEqual({
      symbolId: 'F.US.EP',
      price: fill!.price,
      timestamp: new Date(Date.parse(fill!.creationTimestamp)).toISOString(),
      type: 1,
      volume: 3,
    });
  });

  it('depth: Reset and the whole book on subscribing, then the levels that changed, which rebuild the book', async () => {
    const { sim: s, token } = await start();
    const hub = connect(token);
    const batches = collect(hub, 'GatewayDepth');
    await hub.start();
    await hub.invoke('SubscribeContractMarketDepth', ES);
    await until(() => batches.length === 1);
    const [reset, ...levels] = GatewayDepth.array().parse(batches[0]);
    expect(reset!.type).toBe(DomType.Reset);
    expect(levels).toHaveLength(10);
    const book = new Map<number, { type: number; volume: number }>();
    const apply = (entries: GatewayDepth[]) => {
      for (const e of entries) {
        if (e.type === DomType.Reset) book.clear();
        else if (e.volume === 0) book.delete(e.price);
        else book.set(e.price, { type: e.type, volume: e.volume });
      }
    };
    apply(levels);
    await advanceUntil(s, () => batches.length >= 4);
    for (const batch of batches.slice(1)) apply(GatewayDepth.array().parse(batch));
    await until(() => s.quote(ES)!.bid === [...book].find(([, l]) => l.type === DomType.BestBid)?.[0]);
    const q = s.quote(ES)!;
    const expected = new Map<number, { type: number; volume: number }>();
    q.bids.forEach((l, k) => expected.set(l.price, { type: k === 0 ? DomType.BestBid : DomType.Bid, volume: l.size }));
    q.asks.forEach((l, k) => expected.set(l.price, { type: k === 0 ? DomType.BestAsk : DomType.Ask, volume: l.size }));
    expect(new Map([...book].sort(([a], [b]) => a - b))).toEqual(new Map([...expected].sort(([a], [b]) => a - b)));
  });

  it('refuses unknown and expired contracts by name and a call without a contract id', async () => {
    const { token } = await start();
    const hub = connect(token);
    await hub.start();
    for (const method of ['SubscribeContractQuotes', 'SubscribeContractTrades', 'SubscribeContractMarketDepth']) {
      await expect(hub.invoke(method, 'CON.F.US.NOPE.M25')).rejects.toThrow(/Contract CON\.F\.US\.NOPE\.M25 not found/);
      await expect(hub.invoke(method, 'CON.F.US.EP.H24')).rejects.toThrow(/Contract CON\.F\.US\.EP\.H24 has expired/);
      await expect(hub.invoke(method, 42)).rejects.toThrow(new RegExp(`${method} takes a contract id`));
    }
    await expect(hub.invoke('UnsubscribeContractQuotes')).rejects.toThrow(/takes a contract id/);
  });

  it('unsubscribing stops each feed (a connection still subscribed keeps receiving all three)', async () => {
    const { sim: s, token } = await start({ realtime: { quotesPerSecond: 1_000 } });
    const hub = connect(token);
    const control = connect(token);
    const targets = ['GatewayQuote', 'GatewayTrade', 'GatewayDepth'];
    const got = targets.map((target) => collect(hub, target));
    const controlGot = targets.map((target) => collect(control, target));
    await hub.start();
    await control.start();
    for (const feed of ['Quotes', 'Trades', 'MarketDepth']) {
      await hub.invoke(`SubscribeContract${feed}`, ES);
      await control.invoke(`SubscribeContract${feed}`, ES);
    }
    await advanceUntil(s, () => got.every((events) => events.length >= 2));
    for (const feed of ['Quotes', 'Trades', 'MarketDepth']) await hub.invoke(`UnsubscribeContract${feed}`, ES);
    const counts = got.map((events) => events.length);
    const controlCounts = controlGot.map((events) => events.length);
    await advanceUntil(s, () => controlGot.every((events, k) => events.length > controlCounts[k]!));
    // A round trip after the moves: anything sent to it before the answer would have arrived first.
    await hub.invoke('UnsubscribeContractQuotes', ES);
    expect(got.map((events) => events.length)).toEqual(counts);
  });

  it('refuses a wrong token, closes a connection whose token expires with an error, then refuses that token', async () => {
    const { sim: s, token } = await start({ realtime: { authCheckMs: 20 } });
    await expect(connect('not-a-token').start()).rejects.toThrow();
    const hub = connect(token);
    let closedWith: Error | undefined;
    hub.onclose((error) => (closedWith = error));
    await hub.start();
    await hub.invoke('SubscribeContractQuotes', ES);
    s.clock.advance(25 * 3_600_000);
    await until(() => hub.state === HubConnectionState.Disconnected);
    expect(closedWith?.message).toMatch(/token expired/);
    // The expired token cannot connect again.
    await expect(connect(token).start()).rejects.toThrow();
  });

  it('200 connections each receive quotes while orders still fill', async () => {
    const { sim: s, client: c, token } = await start({ realtime: { quotesPerSecond: 1_000 } });
    const connections = Array.from({ length: 200 }, () => connect(token));
    const received = connections.map(() => [] as number[]);
    connections.forEach((hub, k) =>
      hub.on('GatewayQuote', (_id: string, quote: unknown) => received[k]!.push(GatewayQuote.parse(quote).lastPrice)),
    );
    await Promise.all(connections.map((hub) => hub.start()));
    await Promise.all(connections.map((hub) => hub.invoke('SubscribeContractQuotes', ES)));
    await until(() => received.every((r) => r.length >= 1));
    const orderId = await c.placeOrder({
      accountId: s.demo.accountId,
      contractId: ES,
      type: OrderType.Market,
      side: OrderSide.Bid,
      size: 1,
    });
    await advanceUntil(s, () => received.every((r) => r.at(-1) === s.quote(ES)!.last && r.length >= 2));
    const [order] = (
      await c.searchOrders({ accountId: s.demo.accountId, startTimestamp: new Date(START - 60_000).toISOString() })
    ).filter((o) => o.id === orderId);
    expect(order!.status).toBe(OrderStatus.Filled);
    const positions = await c.searchOpenPositions(s.demo.accountId);
    expect(positions.find((p) => p.contractId === ES)?.size).toBe(1);
  });

  it('a subscriber that stops reading is dropped once realtime.maxBufferedBytes is unsent; a reading one stays', async () => {
    const {
      sim: s,
      client: c,
      token,
    } = await start({ realtime: { quotesPerSecond: 1_000_000, maxBufferedBytes: 16 * 1024 } });
    const contracts = (await c.availableContracts(false)).map((contract) => contract.id);
    const reader = connect(token);
    let read = 0;
    reader.on('GatewayQuote', () => read++);
    await reader.start();
    await reader.invoke('SubscribeContractQuotes', ES);
    const ws = new WebSocket(`${s.realtimeUrl.replace('http', 'ws')}/hubs/market?access_token=${token}`);
    await new Promise<void>((resolve, reject) => ws.on('open', () => resolve()).on('error', reject));
    ws.send(encode({ protocol: 'json', version: 1 }));
    let invocation = 0;
    for (const contractId of contracts) {
      for (const feed of ['Quotes', 'Trades', 'MarketDepth'])
        ws.send(
          encode({
            type: 1,
            target: `SubscribeContract${feed}`,
            arguments: [contractId],
            invocationId: String(invocation++),
          }),
        );
    }
    await until(() => s.hubConnections().market === 2);
    // Give the subscriptions a round trip, then stop reading: what the hub sends piles up on its side.
    await reader.invoke('SubscribeContractQuotes', ES);
    (ws as unknown as { _socket: { pause(): void } })._socket.pause();
    // Market time stays well inside the token's lifetime: only the slow consumer check can drop it.
    for (let i = 0; i < 20_000 && s.hubConnections().market === 2; i++) {
      s.clock.advance(1_000);
      if (i % 20 === 0) await new Promise((resolve) => setImmediate(resolve));
    }
    await until(() => s.hubConnections().market === 1);
    expect(reader.state).toBe(HubConnectionState.Connected);
    const before = read;
    await advanceUntil(s, () => read > before);
    ws.terminate();
  });
});
