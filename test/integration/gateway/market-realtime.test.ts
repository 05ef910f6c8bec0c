/**
 * The market hub client (official @microsoft/signalr underneath) against the simulator's market hub:
 * quotes, market trades and depth as typed Observables, a refused subscription as an error, counted
 * subscriptions, and after the simulator restarts on the same port, a reconnect that subscribes again.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DomType, OrderSide, OrderType } from '../../../src/protocol/codes.ts';
import type { GatewayDepth, GatewayQuote, GatewayTrade } from '../../../src/protocol/hub-schemas.ts';
import {
  MarketHubClient,
  RealtimeSubscriptionError,
  type RealtimeState,
} from '../../../src/adapters/gateway/realtime.ts';
import { TradingClient } from '../../../src/adapters/gateway/trading.ts';
import { HubHost, type HubDefinition } from '../../../src/sim/hubs/hub-host.ts';
import { startSimulator, type SimHandle, type SimulatorOptions } from '../../../src/sim/index.ts';

const ES = 'CON.F.US.EP.M25';
const NQ = 'CON.F.US.ENQ.M25';
const START = Date.parse('2025-03-04T15:00:00Z');
let sim: SimHandle | undefined;
let client: TradingClient | undefined;
let hub: MarketHubClient | undefined;
let dir: string | undefined;

afterEach(async () => {
  await hub?.stop();
  await client?.close();
  await sim?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
  hub = client = sim = dir = undefined;
});

async function start(
  options: SimulatorOptions = {},
): Promise<{ sim: SimHandle; client: TradingClient; hub: MarketHubClient }> {
  sim = await startSimulator({
    clock: 'manual',
    startTime: START,
    historyDays: 2,
    realtime: { quotesPerSecond: 1_000 },
    ...options,
  });
  const s = sim;
  client = new TradingClient({
    baseUrl: s.tradingUrl,
    userName: s.demo.userName,
    apiKey: s.demo.apiKey,
    now: () => s.clock.now(),
  });
  const c = client;
  hub = new MarketHubClient({ url: s.realtimeUrl, token: () => c.login(), reconnectDelaysMs: [0, 50] });
  return { sim: s, client: c, hub };
}

async function until(check: () => boolean, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

async function advanceUntil(s: SimHandle, check: () => boolean, steps = 120): Promise<void> {
  for (let i = 0; i < steps && !check(); i++) {
    s.clock.advance(1_000);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  await until(check);
}

describe('market hub client', () => {
  it('quotes, market trades and depth of a contract as typed Observables', async () => {
    const { sim: s, client: c, hub: h } = await start();
    const quotes: GatewayQuote[] = [];
    const trades: GatewayTrade[] = [];
    const depth: GatewayDepth[] = [];
    const nq: GatewayQuote[] = [];
    h.quotes(ES).subscribe((q) => quotes.push(q));
    h.marketTrades(ES).subscribe((t) => trades.push(t));
    h.depth(ES).subscribe((d) => depth.push(d));
    h.quotes(NQ).subscribe((q) => nq.push(q));
    await h.start();
    await until(() => quotes.length >= 1 && depth.length >= 11 && nq.length >= 1);
    expect(quotes[0]).toMatchObject({ symbol: 'F.US.EP', lastPrice: s.quote(ES)!.last });
    expect(nq[0]).toMatchObject({ symbol: 'F.US.ENQ', lastPrice: s.quote(NQ)!.last });
    expect(depth[0]!.type).toBe(DomType.Reset);
    await c.placeOrder({
      accountId: s.demo.accountId,
      contractId: ES,
      type: OrderType.Market,
      side: OrderSide.Bid,
      size: 2,
    });
    await advanceUntil(
      s,
      () => trades.some((t) => t.volume === 2 && t.type === 0) && quotes.length >= 3 && depth.length > 11,
    );
    expect(quotes.every((q) => q.symbol === 'F.US.EP')).toBe(true);
    expect(trades.every((t) => t.symbolId === 'F.US.EP')).toBe(true);
  });

  it('a contract the hub refuses errors the Observable with a typed error naming it', async () => {
    const { hub: h } = await start();
    await h.start();
    const error = await new Promise<unknown>((resolve) => h.quotes('CON.F.US.EP.H24').subscribe({ error: resolve }));
    expect(error).toBeInstanceOf(RealtimeSubscriptionError);
    expect((error as RealtimeSubscriptionError).code).toBe('REALTIME_SUBSCRIPTION');
    expect((error as Error).message).toMatch(/SubscribeContractQuotes\("CON\.F\.US\.EP\.H24"\).*has expired/);
  });

  it('subscriptions are counted: the feed stops only when its last subscriber leaves; a later subscriber starts from the last quote', async () => {
    const { sim: s, hub: h } = await start();
    const a: GatewayQuote[] = [];
    const b: GatewayQuote[] = [];
    const first = h.quotes(ES).subscribe((q) => a.push(q));
    const second = h.quotes(ES).subscribe((q) => b.push(q));
    await h.start();
    await until(() => a.length >= 1 && b.length >= 1);
    first.unsubscribe();
    await advanceUntil(s, () => b.length >= 3);
    // A later subscriber of a held feed starts from the last quote (the hub sent its opening one to the first).
    const late: GatewayQuote[] = [];
    h.quotes(ES)
      .subscribe((q) => late.push(q))
      .unsubscribe();
    expect(late).toEqual([b.at(-1)]);
    second.unsubscribe();
    const seen = b.length;
    // Resubscribing gets the opening quote: the hub was asked to unsubscribe, then to subscribe again.
    const again: GatewayQuote[] = [];
    h.quotes(ES).subscribe((q) => again.push(q));
    await until(() => again.length === 1);
    expect(b.length).toBe(seen);
  });

  it('after the simulator restarts on the same port, it reconnects and subscribes again', async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'market-hub-'));
    const dbPath = path.join(dir, 'sim.db');
    const { sim: s, hub: h } = await start({ dbPath });
    const states: RealtimeState[] = [];
    h.state$.subscribe((state) => states.push(state));
    const quotes: GatewayQuote[] = [];
    h.quotes(ES).subscribe((q) => quotes.push(q));
    await h.start();
    await until(() => quotes.length >= 1);
    const port = Number(new URL(s.tradingUrl).port);
    const now = s.clock.now();
    await s.close();
    await until(() => h.state === 'reconnecting');
    sim = await startSimulator({
      clock: 'manual',
      startTime: now + 60_000,
      historyDays: 2,
      dbPath,
      port,
      realtime: { quotesPerSecond: 1_000 },
    });
    await until(() => h.state === 'connected', 10_000);
    // The new process's opening quote arrives only if the client subscribed again.
    await until(() => quotes.some((q) => Date.parse(q.timestamp) >= now + 60_000));
    expect(states).toEqual(expect.arrayContaining(['connecting', 'connected', 'reconnecting']));
    expect(states.at(-1)).toBe('connected');
  });

  it('an event that does not parse goes to malformed$ and is not passed on; batches arrive one record at a time', async () => {
    const server = createServer((_req, res) => res.writeHead(404).end());
    const definition: HubDefinition<string> = {
      path: '/hubs/market',
      authenticate: (token) => (token === 'tok' ? 'user' : undefined),
      methods: {
        SubscribeContractQuotes: (c, args) => void c.groups.add(String(args[0])),
        SubscribeContractTrades: (c, args) => void c.groups.add(`t:${String(args[0])}`),
      },
    };
    const host = new HubHost({ server, hubs: [definition as HubDefinition<unknown>] });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const local = new MarketHubClient({
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      token: async () => 'tok',
    });
    try {
      const quotes: GatewayQuote[] = [];
      const trades: GatewayTrade[] = [];
      const malformed: string[] = [];
      local.malformed$.subscribe((m) => malformed.push(`${m.target}: ${m.error}`));
      local.quotes(ES).subscribe((q) => quotes.push(q));
      local.marketTrades(ES).subscribe((t) => trades.push(t));
      await local.start();
      await until(() => host.hasListeners('/hubs/market', ES) && host.hasListeners('/hubs/market', `t:${ES}`));
      const at = '2025-03-04T15:00:00.000Z';
      const quote = {
        symbol: 'F.US.EP',
        symbolName: '/ES',
        lastPrice: 5000.25,
        bestBid: 5000,
        bestAsk: 5000.25,
        change: 1,
        changePercent: 0.02,
        open: 4999,
        high: 5001,
        low: 4998,
        volume: 10,
        lastUpdated: at,
        timestamp: at,
      };
      host.publish('/hubs/market', ES, 'GatewayQuote', [ES, { ...quote, lastPrice: '5000.25' }]);
      host.publish('/hubs/market', ES, 'GatewayQuote', [42, quote]);
      host.publish('/hubs/market', ES, 'GatewayQuote', [ES, quote]);
      const trade = { symbolId: 'F.US.EP', price: 5000.25, timestamp: at, type: 0, volume: 2 };
      host.publish('/hubs/market', `t:${ES}`, 'GatewayTrade', [ES, [trade, { ...trade, type: 1 }]]);
      host.publish('/hubs/market', `t:${ES}`, 'GatewayTrade', [ES, { ...trade, volume: 3 }]);
      await until(() => quotes.length === 1 && trades.length === 3);
      expect(quotes).toEqual([quote]);
      expect(trades.map((t) => [t.type, t.volume])).toEqual([
        [0, 2],
        [1, 2],
        [0, 3],
      ]);
      expect(malformed).toHaveLength(2);
      expect(malformed[0]).toMatch(/^GatewayQuote: .*lastPrice/);
    } finally {
      await local.stop();
      await host.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
