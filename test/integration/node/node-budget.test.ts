/**
 * Twenty bots on four accounts of one user, on the simulator with the documented request budgets counted on
 * its own clock: the node's plan fits, and over twenty minutes of market time not one request is refused
 * with 429. The requests per endpoint per minute are printed.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import smaCross from '../../../src/strategies/sma-cross.ts';
import { silentLogger } from '../../../src/engine/log.ts';
import type { StrategyModule } from '../../../src/engine/strategy.ts';
import { Limits } from '../../../src/protocol/endpoints.ts';
import { nodeConfigSchema } from '../../../src/node/node-config.ts';
import { TradingNode } from '../../../src/node/trading-node.ts';
import { ES, startBench, type Bench } from '../live/live-harness.ts';

const ACCOUNTS = ['NODE-1', 'NODE-2', 'NODE-3', 'NODE-4'];
let b: Bench;
beforeEach(async () => {
  b = await startBench({
    sim: {
      demoAccounts: ACCOUNTS.map((name) => ({ name, template: 'PRACTICE' })),
      rateLimits: { bars: { ...Limits.rate.bars }, default: { ...Limits.rate.default } },
      rateClock: 'market',
    },
  });
});
afterEach(async () => {
  await b.close();
});

describe('a node within the user budget', () => {
  it('twenty bots on four accounts run twenty market minutes without a single 429', async () => {
    const bots = Array.from({ length: 20 }, (_, i) => ({
      id: `bot${i}`,
      strategy: 'sma-cross',
      params: { fast: 2 + (i % 3), slow: 5 + (i % 4), size: 1 },
      contracts: [ES],
      accounts: [ACCOUNTS[i % 4]!],
    }));
    const config = nodeConfigSchema.parse({
      mode: 'paper',
      journals: b.dir,
      accounts: ACCOUNTS.map((name) => ({ name })),
      bots,
      poll: {
        openOrdersMs: 15_000,
        ordersMs: 30_000,
        tradesMs: 15_000,
        positionsMs: 15_000,
        accountMs: 60_000,
        closeDelayMs: 500,
        staleAfterMs: 60_000,
      },
      gateway: { realtime: false },
      market: { hours: 'none' },
      risk: { maxPositionSize: 10 },
    });
    const strategies = new Map<string, StrategyModule>(bots.map((bot) => [bot.id, smaCross]));
    const node = await TradingNode.start({
      config,
      strategies,
      gateway: {
        tradingUrl: b.proxy.url,
        credentials: { userName: b.sim.demo.userName, apiKey: b.sim.demo.apiKey },
        now: b.now,
      },
      logger: silentLogger,
    });
    expect(node.plan.ok).toBe(true);
    const from = b.proxy.requests.length;
    const minutes = 20;
    for (let step = 0; step < minutes * 4; step++) {
      b.sim.clock.advance(15_000);
      for (const session of node.sessions.values()) {
        await session.poller.tick();
        await session.executor.idle();
      }
    }
    const seen = b.proxy.requests.slice(from);
    const perEndpoint = new Map<string, number>();
    for (const r of seen) perEndpoint.set(r.path, (perEndpoint.get(r.path) ?? 0) + 1);
    const table = [...perEndpoint]
      .sort((x, y) => y[1] - x[1])
      .map(([path, n]) => `${path.padEnd(28)} ${(n / minutes).toFixed(1).padStart(6)} a minute`)
      .join('\n');
    process.stdout.write(`node of 20 bots on 4 accounts, requests per endpoint per minute:\n${table}\n`);
    expect(seen.filter((r) => r.answeredStatus === 429)).toEqual([]);
    expect(seen.some((r) => r.path === '/api/Order/place')).toBe(true);
    const places = seen.filter((r) => r.path === '/api/Order/place').length;
    // Every request of the window, writes included, stayed under the user's 200 a minute.
    expect((seen.length - perEndpoint.get('/api/History/retrieveBars')!) / minutes).toBeLessThan(200);
    expect(places).toBeGreaterThan(0);
    await node.stop();
  }, 120_000);
});
