/**
 * Figure 17: a trading node of ten bots on five accounts of one user, on the simulator's manual clock with the
 * documented request budgets counted on that clock: the requests it sends per endpoint per market minute
 * against the user's budget (counted from the client's own request log), and its CPU per bar (the node and
 * the simulator together: both run on this thread). Bars of one minute, a poll round every 15 s of market
 * time, two market hours from a Monday's open.
 *
 * node --import tsx bench/node-run.ts [--minutes 120]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { parseArgs } from 'node:util';
import { createLogger } from '../src/engine/log.ts';
import type { StrategyModule } from '../src/engine/strategy.ts';
import { nodeConfigSchema } from '../src/node/node-config.ts';
import { TradingNode } from '../src/node/trading-node.ts';
import { Limits } from '../src/protocol/endpoints.ts';
import { startSimulator } from '../src/sim/index.ts';
import smaCross from '../src/strategies/sma-cross.ts';

/** Monday 6 Jan 2025, 09:00 CT: the market is open. */
const START = Date.UTC(2025, 0, 6, 15, 0);
const STEP_MS = 15_000;
const USER = { userName: 'bench-node', apiKey: 'bench-node-key' };
const ACCOUNTS = ['NODE-1', 'NODE-2', 'NODE-3', 'NODE-4', 'NODE-5'];

export interface NodeFigures {
  readonly bots: number;
  readonly accounts: number;
  readonly minutes: number;
  /** Requests of the default bucket per market minute (everything but bars), and of the bars bucket. */
  readonly defaultPerMinute: number;
  readonly barsPerMinute: number;
  readonly perEndpointPerMinute: Readonly<Record<string, number>>;
  /** The plan's worst case in any minute, and the budget. */
  readonly planned: number;
  readonly budget: number;
  readonly refused429: number;
  readonly cpuUsPerBar: number;
  readonly bars: number;
}

export async function measureNode(options: { minutes: number }): Promise<NodeFigures> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tickline-bench-node-'));
  const sim = await startSimulator({
    clock: 'manual',
    startTime: START,
    historyDays: 2,
    rateLimits: { bars: { ...Limits.rate.bars }, default: { ...Limits.rate.default } },
    rateClock: 'market',
    marketHours: 'always',
    users: [{ ...USER, accounts: ACCOUNTS.map((name) => ({ name, template: 'PRACTICE' })) }],
  });
  const counts = new Map<string, number>();
  let refused = 0;
  const lines = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n')) {
        if (!line.includes('gateway request') && !line.includes('"status":429')) continue;
        const record = JSON.parse(line) as { msg?: string; endpoint?: string; status?: number };
        if (record.status === 429) refused++;
        if (record.msg === 'gateway request' && record.endpoint !== undefined)
          counts.set(record.endpoint, (counts.get(record.endpoint) ?? 0) + 1);
      }
      done();
    },
  });
  const logger = createLogger({ level: 'info', destination: lines });
  const bots = Array.from({ length: 10 }, (_, i) => ({
    id: `bot${i}`,
    strategy: 'sma-cross',
    params: { fast: 2 + (i % 3), slow: 6 + (i % 4), size: 1 },
    contracts: ['F.US.EP'],
    accounts: [ACCOUNTS[i % ACCOUNTS.length]!],
  }));
  const config = nodeConfigSchema.parse({
    mode: 'paper',
    journals: dir,
    accounts: ACCOUNTS.map((name) => ({ name })),
    bots,
    poll: { openOrdersMs: 20_000, ordersMs: 30_000, tradesMs: 20_000, positionsMs: 20_000, accountMs: 60_000 },
    gateway: { realtime: false },
    market: { hours: 'none' },
    risk: { maxPositionSize: 10 },
  });
  const node = await TradingNode.start({
    config,
    strategies: new Map<string, StrategyModule>(bots.map((b) => [b.id, smaCross])),
    gateway: { tradingUrl: sim.tradingUrl, credentials: USER, now: () => sim.clock.now() },
    logger,
  });
  try {
    counts.clear();
    const cpu = process.cpuUsage();
    for (let step = 0; step < (options.minutes * 60_000) / STEP_MS; step++) {
      sim.clock.advance(STEP_MS);
      for (const session of node.sessions.values()) {
        await session.poller.tick();
        await session.executor.idle();
      }
    }
    const used = process.cpuUsage(cpu);
    const perMinute = (n: number): number => n / options.minutes;
    const bars = options.minutes * node.sessions.size;
    const barRequests = counts.get('History/retrieveBars') ?? 0;
    const all = [...counts.values()].reduce((a, n) => a + n, 0);
    return {
      bots: bots.length,
      accounts: node.sessions.size,
      minutes: options.minutes,
      defaultPerMinute: perMinute(all - barRequests),
      barsPerMinute: perMinute(barRequests),
      perEndpointPerMinute: Object.fromEntries([...counts].map(([k, n]) => [k, perMinute(n)])),
      planned: node.plan.buckets[1].scheduled + node.plan.buckets[1].reserved,
      budget: node.plan.buckets[1].budget,
      refused429: refused,
      // Every account's engine takes each closed bar: a bar here is one account's one bar.
      cpuUsPerBar: (used.user + used.system) / bars,
      bars,
    };
  } finally {
    await node.stop();
    await sim.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({ options: { minutes: { type: 'string', default: '120' } } });
  console.log(JSON.stringify(await measureNode({ minutes: Number(values.minutes) }), null, 2));
}
