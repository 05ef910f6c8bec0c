/**
 * The live adapter's test bench: the simulator on loopback (manual clock unless asked), the fault proxy
 * in front of it, a trading client through the proxy, and a journal, executor and poller on a temporary
 * file. `agreement()` is the check every scenario ends with: the journal, the simulator's orders and
 * positions agree, nothing is unresolved, and no customTag reached the simulator twice.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'vitest';
import { TradingClient } from '../../../src/adapters/gateway/trading.ts';
import { silentLogger } from '../../../src/engine/log.ts';
import { PriceGrid } from '../../../src/engine/ticks.ts';
import type { ContractSpec, OrderCommand } from '../../../src/engine/types.ts';
import { LiveExecutor } from '../../../src/adapters/live/executor.ts';
import { Journal } from '../../../src/adapters/live/journal.ts';
import { Poller } from '../../../src/adapters/live/poller.ts';
import { signedSize } from '../../../src/adapters/live/reconcile.ts';
import { startSimulator, type SimHandle, type SimulatorOptions } from '../../../src/sim/index.ts';
import { startFaultProxy, type FaultProxy } from './fault-proxy.ts';

export const ES = 'CON.F.US.EP.Z25';
/** A Monday, 09:00 in Chicago: the market is open. */
export const START = Date.UTC(2025, 0, 6, 15, 0);
const UNLIMITED = {
  bars: { requests: 1_000_000, windowMs: 30_000 },
  default: { requests: 1_000_000, windowMs: 60_000 },
};

export interface Bench {
  readonly dir: string;
  readonly sim: SimHandle;
  readonly proxy: FaultProxy;
  /** Through the proxy. */
  readonly client: TradingClient;
  /** Straight to the simulator: the test's own eyes. */
  readonly truth: TradingClient;
  readonly contracts: Map<string, ContractSpec>;
  readonly journalFile: string;
  readonly now: () => number;
  close(): Promise<void>;
}

export async function startBench(options: { sim?: SimulatorOptions; timeoutMs?: number } = {}): Promise<Bench> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tickline-live-'));
  const sim = await startSimulator({
    clock: 'manual',
    startTime: START,
    historyDays: 2,
    rateLimits: UNLIMITED,
    ...options.sim,
  });
  const proxy = await startFaultProxy(sim.tradingUrl);
  const now = (): number => sim.clock.now();
  const client = new TradingClient({
    baseUrl: proxy.url,
    userName: sim.demo.userName,
    apiKey: sim.demo.apiKey,
    now,
    timeoutMs: options.timeoutMs ?? 400,
    retry: { maxAttempts: 3, baseDelayMs: 5, maxDelayMs: 20, maxRetryAfterMs: 50 },
    logger: silentLogger,
  });
  const truth = new TradingClient({
    baseUrl: sim.tradingUrl,
    userName: sim.demo.userName,
    apiKey: sim.demo.apiKey,
    now,
    logger: silentLogger,
  });
  await truth.login();
  const c = await truth.contractById(ES);
  const contracts = new Map<string, ContractSpec>([
    [
      ES,
      {
        id: c.id,
        name: c.name,
        symbolId: c.symbolId,
        description: c.description,
        grid: new PriceGrid(c.tickSize, c.tickValue),
      },
    ],
  ]);
  return {
    dir,
    sim,
    proxy,
    client,
    truth,
    contracts,
    journalFile: path.join(dir, 'journal.sqlite'),
    now,
    close: async () => {
      await client.close();
      await truth.close();
      await proxy.close();
      await sim.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface Bot {
  readonly journal: Journal;
  readonly executor: LiveExecutor;
  readonly poller: Poller;
  stop(): Promise<void>;
}

export function startBot(b: Bench, client: TradingClient = b.client, options: { unknownOutcomeMs?: number } = {}): Bot {
  const journal = Journal.open(b.journalFile, { now: b.now });
  const executor = new LiveExecutor({
    client,
    journal,
    accountId: b.sim.demo.accountId,
    contracts: b.contracts,
    logger: silentLogger,
    now: b.now,
    ...options,
  });
  const poller = new Poller({
    client,
    executor,
    journal,
    venueEvents: executor.events,
    accountId: b.sim.demo.accountId,
    contracts: b.contracts,
    intervals: { openOrdersMs: 5_000, ordersMs: 10_000, tradesMs: 5_000, positionsMs: 5_000, accountMs: 15_000 },
    subscriptions: [{ contractId: ES, timeframe: { unit: 'minute', unitNumber: 1 } }],
    logger: silentLogger,
    now: b.now,
    staleAfterMs: 15_000,
  });
  return {
    journal,
    executor,
    poller,
    stop: async () => {
      poller.stop();
      await executor.stop();
      journal.close();
    },
  };
}

export function market(id: string, side: 'buy' | 'sell', size = 1): OrderCommand {
  return { id, contractId: ES, side, size, order: { type: 'market' }, decidedAt: START };
}

export function limit(id: string, side: 'buy' | 'sell', limitPrice: number, size = 1): OrderCommand {
  return { id, contractId: ES, side, size, order: { type: 'limit', limitPrice }, decidedAt: START };
}

/** Poll until `check` holds, or fail after `ms` of wall time. */
export async function until(check: () => boolean | Promise<boolean>, ms = 5_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** Last price of ES in ticks, from the simulator's newest bar. */
export async function lastTicks(b: Bench): Promise<number> {
  const bars = await b.truth.retrieveBars({
    contractId: ES,
    live: false,
    startTime: new Date(b.now() - 10 * 60_000).toISOString(),
    endTime: new Date(b.now()).toISOString(),
    unit: 2,
    unitNumber: 1,
    limit: 20,
    includePartialBar: true,
  });
  const newest = [...bars].sort((x, y) => Date.parse(y.t) - Date.parse(x.t))[0]!;
  return b.contracts.get(ES)!.grid.toTicksExact(newest.c);
}

/** The journal, the simulator's orders and positions agree; nothing unresolved; no tag placed twice. */
export async function agreement(b: Bench, bot: Bot, accountId = b.sim.demo.accountId): Promise<void> {
  await bot.executor.idle();
  await bot.poller.refreshAccountState();
  await bot.executor.idle();
  const simOrders = await b.truth.searchOrders({
    accountId,
    startTimestamp: new Date(START - 3_600_000).toISOString(),
  });
  const tags = simOrders.map((o) => o.customTag).filter((t): t is string => !!t);
  expect(new Set(tags).size, 'a customTag appears on two orders at the simulator').toBe(tags.length);
  for (const [tag, count] of b.proxy.placesByTag(accountId)) expect(count, `places forwarded for ${tag}`).toBe(1);

  const journaled = bot.journal.orders();
  expect(journaled.filter((o) => o.state === 'submitting' || o.state === 'unknown').map((o) => o.tag)).toEqual([]);
  for (const o of journaled) {
    const atSim = simOrders.find((s) => s.customTag === o.tag);
    if (o.state === 'lost' || o.state === 'rejected') {
      if (o.state === 'lost')
        expect(atSim, `${o.tag} is lost in the journal but exists at the simulator`).toBeUndefined();
      continue;
    }
    expect(atSim, `${o.tag} (${o.state}) is not at the simulator`).toBeDefined();
    expect(atSim!.id).toBe(o.venueOrderId);
  }
  const open = await b.truth.searchOpenOrders(accountId);
  const journalOpen = journaled
    .filter((o) => o.state === 'working' || o.state === 'cancelling')
    .map((o) => o.venueOrderId)
    .sort();
  const simOpenOurs = open
    .filter((o) => bot.journal.orderByVenueId(o.id))
    .map((o) => o.id)
    .sort();
  expect(journalOpen).toEqual(simOpenOurs);

  const positions = await b.truth.searchOpenPositions(accountId);
  const simPositions = Object.fromEntries(
    positions.map((p) => [p.contractId, signedSize(p)]).filter(([, s]) => s !== 0),
  );
  expect(Object.fromEntries(bot.journal.positionsFromFills())).toEqual(simPositions);
}
