/**
 * The live adapter on the simulator's user hub, through a WebSocket proxy that can discard records and
 * cut connections: fills reach the bot through the hub without a poll; a hub that loses trade events
 * still ends with the right position through the slow poll; a hub that disconnects hands over to polling
 * and takes over again when it is back; no fill is counted twice; a paper session uses the hub.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { UserHubClient } from '../../../src/adapters/gateway/realtime.ts';
import { OrderSide, OrderType } from '../../../src/protocol/codes.ts';
import { liveConfigSchema } from '../../../src/adapters/live/live-config.ts';
import { RealtimeFeed } from '../../../src/adapters/live/realtime-feed.ts';
import { LiveSession } from '../../../src/adapters/live/trading-session.ts';
import { silentLogger } from '../../../src/engine/log.ts';
import type { VenueEvent } from '../../../src/engine/types.ts';
import smaCross from '../../../src/strategies/sma-cross.ts';
import { defineStrategy, type StrategyModule } from '../../../src/engine/strategy.ts';
import type { Quote } from '../../../src/engine/types.ts';
import { EMPTY, mergeMap } from 'rxjs';
import { z } from 'zod';
import { agreement, ES, market, startBench, startBot, until, type Bench, type Bot } from './live-harness.ts';
import { startHubProxy, type HubProxy } from './hub-proxy.ts';

let b: Bench;
let hubProxy: HubProxy;
beforeEach(async () => {
  b = await startBench();
  hubProxy = await startHubProxy(b.sim.realtimeUrl);
});
afterEach(async () => {
  await hubProxy.close();
  await b.close();
});

/** Account-state reads that reached the simulator (a fill seen without one came through the hub). */
const reads = (): number =>
  b.proxy.requests.filter((r) => r.forwarded && /Trade\/search|Order\/search$|Position\/searchOpen/.test(r.path))
    .length;

function withFeed(bot: Bot): { feed: RealtimeFeed; events: VenueEvent[] } {
  const events: VenueEvent[] = [];
  bot.executor.events.subscribe((e) => events.push(e));
  const hub = new UserHubClient({ url: hubProxy.url, token: () => b.client.token(), reconnectDelaysMs: [0, 100, 200] });
  const feed = new RealtimeFeed({
    hub,
    poller: bot.poller,
    executor: bot.executor,
    journal: bot.journal,
    accountId: b.sim.demo.accountId,
    logger: silentLogger,
    retryStartMs: 100,
  });
  feed.start();
  return { feed, events };
}

/** A paper session on the bench's simulator, through the fault proxy, with the realtime host at `realtimeUrl`. */
function startPaper(
  strategy: StrategyModule,
  named: { name: string; id: string; params?: Record<string, unknown> },
  realtimeUrl: string,
): Promise<LiveSession> {
  const config = liveConfigSchema.parse({
    strategy: named,
    contracts: [ES],
    timeframe: { unit: 'minute', unitNumber: 1 },
    account: { id: b.sim.demo.accountId },
    journal: b.journalFile,
  });
  return LiveSession.start({
    config,
    mode: 'paper',
    tradingUrl: b.proxy.url,
    realtimeUrl,
    credentials: { userName: b.sim.demo.userName, apiKey: b.sim.demo.apiKey },
    strategy,
    logger: silentLogger,
    now: b.now,
  });
}

const fillsOf = (events: readonly VenueEvent[], tag: string): number =>
  events.filter((e) => e.kind === 'fill' && e.orderId === tag).length;

describe('live adapter on the user hub', () => {
  it('a fill reaches the bot through the hub, without a poll, and is counted once when the polls see it too', async () => {
    const bot = startBot(b);
    const { feed, events } = withFeed(bot);
    await until(() => bot.poller.realtimeOn, 10_000, 'the hub to connect and the reconciliation to finish');
    const before = reads();
    bot.executor.place(market('rt-1', 'buy'));
    await until(() => fillsOf(events, 'rt-1') === 1, 5_000, 'the fill through the hub');
    expect(reads()).toBe(before);
    expect(bot.journal.order('rt-1')).toMatchObject({ state: 'filled', filledSize: 1 });
    // The safety net reads the same trade: still one fill.
    b.sim.clock.advance(60_000);
    await bot.poller.tick();
    await bot.poller.refreshAccountState();
    expect(fillsOf(events, 'rt-1')).toBe(1);
    await feed.stop();
    await agreement(b, bot);
    await bot.stop();
  });

  it('a hub that loses every trade event: the order event tells the fill at once, the slow poll journals it', async () => {
    const bot = startBot(b);
    const { feed, events } = withFeed(bot);
    await until(() => bot.poller.realtimeOn, 10_000, 'the hub to connect');
    hubProxy.discard((record) => record.includes('"GatewayUserTrade"'));
    bot.executor.place(market('rt-2', 'buy', 2));
    await until(
      () => events.some((e) => e.kind === 'order' && e.orderId === 'rt-2' && (e.reportedFilledSize ?? 0) === 2),
      5_000,
      'the filled order event',
    );
    expect(fillsOf(events, 'rt-2')).toBe(0);
    // The trade poll runs at the slow interval while the hub is connected (30 s by default).
    b.sim.clock.advance(31_000);
    await bot.poller.tick();
    await bot.executor.idle();
    expect(hubProxy.discarded.length).toBeGreaterThan(0);
    expect(bot.journal.order('rt-2')).toMatchObject({ state: 'filled', filledSize: 2 });
    expect(Object.fromEntries(bot.journal.positionsFromFills())).toEqual({ [ES]: 2 });
    await feed.stop();
    await agreement(b, bot);
    await bot.stop();
  });

  it('a hub that disconnects: polling on the normal schedule sees the fills, then the hub takes over again', async () => {
    const bot = startBot(b);
    const { feed, events } = withFeed(bot);
    await until(() => bot.poller.realtimeOn, 10_000, 'the hub to connect');
    hubProxy.cut();
    await until(() => !bot.poller.realtimeOn, 5_000, 'the poller to notice the drop');
    bot.executor.place(market('rt-3', 'buy'));
    await bot.executor.idle();
    // Due at once after the drop, then every 5 s: the normal schedule.
    b.sim.clock.advance(5_000);
    await bot.poller.tick();
    expect(fillsOf(events, 'rt-3')).toBe(1);
    hubProxy.restore();
    await until(() => bot.poller.realtimeOn, 10_000, 'the hub to reconnect and the reconciliation to finish');
    const before = reads();
    bot.executor.place(market('rt-4', 'sell'));
    await until(() => fillsOf(events, 'rt-4') === 1, 5_000, 'the fill through the reconnected hub');
    expect(reads()).toBe(before);
    await feed.stop();
    await agreement(b, bot);
    await bot.stop();
  });

  it('a hub unreachable at start: the bot polls, and takes the hub once it can be reached', async () => {
    hubProxy.cut();
    const bot = startBot(b);
    const { feed } = withFeed(bot);
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(bot.poller.realtimeOn).toBe(false);
    hubProxy.restore();
    await until(() => bot.poller.realtimeOn, 10_000, 'the retried first connection');
    await feed.stop();
    await bot.stop();
  });

  it('a paper session takes the hub: a fill of an order placed by hand reaches its engine without a poll', async () => {
    const session = await startPaper(
      smaCross,
      { name: 'sma-cross', id: 'rtpaper', params: { fast: 2, slow: 4, size: 1 } },
      hubProxy.url,
    );
    session.run();
    await until(() => session.poller.realtimeOn, 10_000, 'the session to take the hub');
    const before = reads();
    await b.truth.placeOrder({
      accountId: b.sim.demo.accountId,
      contractId: ES,
      type: OrderType.Market,
      side: OrderSide.Bid,
      size: 1,
    });
    await until(
      () => session.engine.snapshot().positions.some((p) => p.contractId === ES && p.size === 1),
      5_000,
      'the engine to hold the hand-placed position',
    );
    expect(reads()).toBe(before);
    await session.stop({ flatten: true });
    expect((await b.truth.searchOpenPositions(b.sim.demo.accountId)).filter((p) => p.size !== 0)).toEqual([]);
  });

  it("a paper session's strategy reads the market hub's quotes, and the guard's last price is the quote's", async () => {
    const seen: Quote[] = [];
    const quoteReader = defineStrategy({
      name: 'quote-reader',
      params: z.object({}),
      run: (ctx) => ctx.quotes().pipe(mergeMap((q) => (seen.push(q), EMPTY))),
    });
    const session = await startPaper(quoteReader, { name: 'quote-reader', id: 'rtquotes' }, b.sim.realtimeUrl);
    session.run();
    await until(() => seen.length > 0, 10_000, 'the first quote through the market hub');
    const grid = b.contracts.get(ES)!.grid;
    const atSim = b.sim.quote(ES)!;
    expect(seen[0]).toMatchObject({
      contractId: ES,
      bid: grid.toTicks(atSim.bid),
      ask: grid.toTicks(atSim.ask),
      last: grid.toTicks(atSim.last),
    });
    expect(session.market!.lastPrice(ES)).toBe(grid.toTicks(atSim.last));
    await session.stop();
  });
});
