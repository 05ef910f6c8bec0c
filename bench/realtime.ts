/**
 * How soon a fill reaches the bot: a market order sent by hand to the simulator (a second client), and
 * the time until the bot's executor hands the fill to the engine, through the user hub (the session's
 * realtime feed) and through polling alone (Trade/search every `tradesMs`, the live defaults). Wall
 * time on loopback, from sending the order: the place round trip is included.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { OrderSide, OrderType } from '../src/protocol/codes.ts';
import { UserHubClient } from '../src/adapters/gateway/realtime.ts';
import { TradingClient } from '../src/adapters/gateway/trading.ts';
import { LiveExecutor } from '../src/adapters/live/executor.ts';
import { Journal } from '../src/adapters/live/journal.ts';
import { Poller } from '../src/adapters/live/poller.ts';
import { RealtimeFeed } from '../src/adapters/live/realtime-feed.ts';
import { silentLogger } from '../src/engine/log.ts';
import { PriceGrid } from '../src/engine/ticks.ts';
import type { ContractSpec, VenueEvent } from '../src/engine/types.ts';
import { CALENDAR } from '../src/market/contract-months.ts';
import { startSimulator } from '../src/sim/index.ts';

const UNLIMITED = { requests: 1_000_000, windowMs: 1 };
/** A Tuesday, 15:00 UTC: the day session. */
const START = Date.UTC(2026, 10, 24, 15);

export interface LatencyFigures {
  readonly samples: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
}

export interface FillLatency {
  readonly hub: LatencyFigures;
  readonly polling: LatencyFigures & { readonly tradesMs: number };
}

function figures(values: number[]): LatencyFigures {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  return { samples: sorted.length, p50Ms: at(0.5), p99Ms: at(0.99), maxMs: sorted[sorted.length - 1]! };
}

export async function measureFillLatency(options: {
  hubSamples: number;
  pollSamples: number;
  tradesMs: number;
}): Promise<FillLatency> {
  const hub = await run(true, options.hubSamples, options.tradesMs);
  const polling = await run(false, options.pollSamples, options.tradesMs);
  return { hub, polling: { ...polling, tradesMs: options.tradesMs } };
}

async function run(useHub: boolean, samples: number, tradesMs: number): Promise<LatencyFigures> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tickline-bench-rt-'));
  // No spread: hundreds of round trips at the touch would break the demo account's daily loss limit.
  const sim = await startSimulator({
    clock: { speed: 1 },
    startTime: START,
    historyDays: 1,
    fills: { spread: { type: 'fixed', ticks: 0 } },
    rateLimits: { bars: UNLIMITED, default: UNLIMITED },
  });
  const now = (): number => sim.clock.now();
  const contractId = CALENDAR.contract('ES', CALENDAR.frontMonth('ES', START)).id;
  const bot = new TradingClient({
    baseUrl: sim.tradingUrl,
    userName: sim.demo.userName,
    apiKey: sim.demo.apiKey,
    now,
    logger: silentLogger,
    rateLimits: { bars: UNLIMITED, default: UNLIMITED },
  });
  const hand = new TradingClient({
    baseUrl: sim.tradingUrl,
    userName: sim.demo.userName,
    apiKey: sim.demo.apiKey,
    now,
    logger: silentLogger,
    rateLimits: { bars: UNLIMITED, default: UNLIMITED },
  });
  const journal = Journal.open(path.join(dir, 'journal.sqlite'), { now });
  let feed: RealtimeFeed | undefined;
  let poller: Poller | undefined;
  try {
    await hand.login();
    const c = await hand.contractById(contractId);
    const contracts = new Map<string, ContractSpec>([
      [
        contractId,
        {
          id: c.id,
          name: c.name,
          symbolId: c.symbolId,
          description: c.description,
          grid: new PriceGrid(c.tickSize, c.tickValue),
        },
      ],
    ]);
    const accountId = sim.demo.accountId;
    const executor = new LiveExecutor({ client: bot, journal, accountId, contracts, logger: silentLogger, now });
    poller = new Poller({
      client: bot,
      executor,
      journal,
      venueEvents: executor.events,
      accountId,
      contracts,
      intervals: { openOrdersMs: 3_000, ordersMs: 10_000, tradesMs, positionsMs: 3_000, accountMs: 15_000 },
      subscriptions: [],
      logger: silentLogger,
      now,
    });
    const seen = new Map<number, number>();
    executor.events.subscribe((e: VenueEvent) => {
      if (e.kind === 'fill' && e.orderId.startsWith('venue-'))
        seen.set(Number(e.orderId.slice('venue-'.length)), performance.now());
    });
    await poller.refreshAccountState();
    poller.start();
    if (useHub) {
      const p = poller;
      feed = new RealtimeFeed({
        hub: new UserHubClient({ url: sim.realtimeUrl, token: () => bot.token() }),
        poller: p,
        executor,
        journal,
        accountId,
        logger: silentLogger,
      });
      feed.start();
      await until(() => p.realtimeOn, 10_000);
    }
    const latencies: number[] = [];
    for (let k = 0; k < samples; k++) {
      const sentAt = performance.now();
      const orderId = await hand.placeOrder({
        accountId,
        contractId,
        type: OrderType.Market,
        side: k % 2 === 0 ? OrderSide.Bid : OrderSide.Ask,
        size: 1,
      });
      await until(() => seen.has(orderId), tradesMs * 3 + 5_000);
      latencies.push(seen.get(orderId)! - sentAt);
      // Orders apart, so one sample never rides on another's poll or event.
      await new Promise((resolve) => setTimeout(resolve, useHub ? 5 : Math.random() * tradesMs));
    }
    return figures(latencies);
  } finally {
    await feed?.stop();
    poller?.stop();
    journal.close();
    await bot.close();
    await hand.close();
    await sim.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function until(check: () => boolean, ms: number): Promise<void> {
  const deadline = performance.now() + ms;
  while (!check()) {
    if (performance.now() > deadline) throw new Error('bench: a fill did not reach the bot in time');
    await new Promise((resolve) => setImmediate(resolve));
  }
}
