/**
 * The trading node on the simulator (manual clock, a chosen Monday): three bots on two accounts, two of
 * them on the same contract of one account, over one login. Each account's journal agrees with the
 * simulator, every bar request is shared, and a daily loss breach on one account halts that account only.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { map } from 'rxjs';
import { z } from 'zod';
import smaCross from '../../../src/strategies/sma-cross.ts';
import { target } from '../../../src/engine/intents.ts';
import { defineStrategy } from '../../../src/engine/strategy.ts';
import meanReversion from '../../../src/strategies/mean-reversion.ts';
import { silentLogger } from '../../../src/engine/log.ts';
import type { StrategyModule } from '../../../src/engine/strategy.ts';
import { signedSize } from '../../../src/adapters/live/reconcile.ts';
import { nodeConfigSchema, type NodeConfig } from '../../../src/node/node-config.ts';
import { TradingNode } from '../../../src/node/trading-node.ts';
import type { LiveSession } from '../../../src/adapters/live/trading-session.ts';
import { agreement, ES, startBench, until, type Bench, type Bot } from '../live/live-harness.ts';

const ACCOUNTS = ['NODE-A', 'NODE-B'];
let b: Bench;
beforeEach(async () => {
  // NODE-B on the template without rules: its own losses on the seeded market never stop it here.
  b = await startBench({
    sim: {
      demoAccounts: [
        { name: 'NODE-A', template: '50K' },
        { name: 'NODE-B', template: 'PRACTICE' },
      ],
    },
  });
});
afterEach(async () => {
  await b.close();
});

function nodeConfig(overrides: Partial<Record<'limitsA', unknown>> = {}): NodeConfig {
  return nodeConfigSchema.parse({
    mode: 'paper',
    journals: b.dir,
    accounts: [
      { name: 'NODE-A', ...(overrides.limitsA === undefined ? {} : { limits: overrides.limitsA }) },
      { name: 'NODE-B' },
    ],
    bots: [
      {
        id: 'fast',
        strategy: 'sma-cross',
        params: { fast: 2, slow: 4, size: 1 },
        contracts: [ES],
        accounts: ['NODE-A', { name: 'NODE-B', size: 2 }],
      },
      {
        id: 'slow',
        strategy: 'sma-cross',
        params: { fast: 3, slow: 7, size: 1 },
        contracts: [ES],
        accounts: ['NODE-A'],
      },
      { id: 'revert', strategy: 'mean-reversion', params: {}, contracts: [ES], accounts: ['NODE-B'] },
    ],
    poll: {
      openOrdersMs: 5_000,
      ordersMs: 10_000,
      tradesMs: 5_000,
      positionsMs: 5_000,
      accountMs: 15_000,
      closeDelayMs: 500,
      staleAfterMs: 20_000,
    },
    gateway: { realtime: false },
    market: { hours: 'none' },
    risk: { maxPositionSize: 6 },
  });
}

const strategies = new Map<string, StrategyModule>([
  ['fast', smaCross],
  ['slow', smaCross],
  ['revert', meanReversion],
]);

async function startNode(config: NodeConfig): Promise<TradingNode> {
  return TradingNode.start({
    config,
    strategies,
    gateway: {
      tradingUrl: b.proxy.url,
      credentials: { userName: b.sim.demo.userName, apiKey: b.sim.demo.apiKey },
      now: b.now,
    },
    logger: silentLogger,
  });
}

/** Move the simulator's clock bar by bar (two poll rounds per bar), every account reacting each time. */
async function runBars(node: TradingNode, bars: number): Promise<void> {
  for (let i = 0; i < bars * 2; i++) {
    b.sim.clock.advance(30_000);
    for (const s of node.sessions.values()) {
      await s.poller.tick();
      await s.executor.idle();
    }
  }
}

const asBot = (s: LiveSession): Bot => ({
  journal: s.journal,
  executor: s.executor,
  poller: s.poller,
  stop: () => s.stop(),
});

async function accountId(name: string): Promise<number> {
  return (await b.truth.searchAccounts(true)).find((a) => a.name === name)!.id;
}

describe('trading node on the simulator', () => {
  it('runs three bots on two accounts over one login: journals agree with the gateway, bars are fetched once', async () => {
    const node = await startNode(nodeConfig());
    expect([...node.sessions.keys()]).toEqual(ACCOUNTS);
    await runBars(node, 40);
    for (const [name, session] of node.sessions) {
      await agreement(b, asBot(session), await accountId(name));
      // The engine's netted position is the gateway's.
      const positions = await b.truth.searchOpenPositions(await accountId(name));
      const engine = session.engine.snapshot().positions.find((p) => p.contractId === ES)?.size ?? 0;
      expect(engine, name).toBe(positions.reduce((a, p) => a + signedSize(p), 0));
      const balance = (await b.truth.searchAccounts(true)).find((a) => a.name === name)!.balance;
      expect(session.engine.snapshot().balance, name).toBeCloseTo(balance, 6);
    }
    // Two strategies on one contract of NODE-A: each keeps its own line, and the lines sum to the gateway's
    // netted position; their PnL sums to the account's.
    for (const [name, session] of node.sessions) {
      const lines = session.engine.strategyPositions().filter((p) => p.contractId === ES);
      const positions = await b.truth.searchOpenPositions(await accountId(name));
      expect(
        lines.reduce((a, p) => a + p.size, 0),
        name,
      ).toBe(positions.reduce((a, p) => a + signedSize(p), 0));
      const ids = name === 'NODE-A' ? ['fast', 'slow'] : ['fast', 'revert'];
      const net = ids.reduce((a, id) => a + session.engine.strategySnapshot(id).netPnl, 0);
      const unattributed = lines.filter((p) => !ids.includes(p.strategyId));
      const rest = unattributed.reduce((a, p) => a + p.realizedPnl + p.unrealizedPnl - p.fees, 0);
      const account = session.engine.snapshot();
      const start = name === 'NODE-A' ? 50_000 : 100_000;
      expect(net + rest, name).toBeCloseTo(account.equity - start, 4);
    }
    expect(node.session('NODE-A').engine.strategySnapshot('slow').trades).toBeGreaterThan(0);
    const tags = (name: string) =>
      node
        .session(name)
        .journal.orders()
        .map((o) => o.tag);
    // Each account's orders carry its own bots' prefixes only.
    expect(tags('NODE-A').every((t) => /^(fast|slow|node-risk)-\d+$/.test(t))).toBe(true);
    expect(tags('NODE-B').every((t) => /^(fast|revert|node-risk)-\d+$/.test(t))).toBe(true);
    expect(tags('NODE-A').some((t) => t.startsWith('fast-'))).toBe(true);
    expect(tags('NODE-A').some((t) => t.startsWith('slow-'))).toBe(true);
    // The copy on NODE-B trades twice the size of the same signal on NODE-A.
    const sizes = (name: string) =>
      node
        .session(name)
        .journal.orders()
        .filter((o) => o.tag.startsWith('fast-'))
        .map((o) => o.size);
    expect(sizes('NODE-B').length).toBeGreaterThan(0);
    // Every order of the copy on NODE-B is an even size: its strategy's, times 2.
    expect(sizes('NODE-B').every((size) => size % 2 === 0)).toBe(true);
    // One bar request per bar for both accounts: the second account's is answered from the first's.
    expect(node.barRequests.counts.shared).toBeGreaterThan(0);
    expect(node.barRequests.counts.sent).toBeLessThanOrEqual(node.barRequests.counts.shared + 2);
    // One login for the whole node (the harness's own client logged in once too).
    expect(b.proxy.requests.filter((r) => r.path === '/api/Auth/loginKey').length).toBe(1);
    const results = await node.killSwitch('test', 'command', 'NODE-A');
    expect([...results.keys()]).toEqual(['NODE-A']);
    expect(await b.truth.searchOpenPositions(await accountId('NODE-A'))).toEqual([]);
    expect(node.session('NODE-A').engine.tradingState().state).toBe('HALTED');
    expect(node.session('NODE-B').engine.tradingState().state).toBe('ACTIVE');
    await node.stop();
  }, 60_000);

  it('a daily loss breach on one account halts that account only; the other trades on', async () => {
    const node = await startNode(nodeConfig({ limitsA: { dailyLossLimit: 1 } }));
    await runBars(node, 40);
    const a = node.session('NODE-A');
    const bSession = node.session('NODE-B');
    expect(a.journal.entries({ kind: 'breach' }).length).toBeGreaterThan(0);
    expect(a.engine.tradingState().state).not.toBe('ACTIVE');
    expect(bSession.engine.tradingState().state).toBe('ACTIVE');
    expect(bSession.journal.entries({ kind: 'breach' })).toEqual([]);
    const before = bSession.journal.orders().length;
    await runBars(node, 30);
    expect(bSession.journal.orders().length).toBeGreaterThan(before);
    await agreement(b, asBot(bSession), await accountId('NODE-B'));
    await node.stop();
  }, 60_000);

  it('pausing a bot stops its new risk on every account it trades, the other bots go on; resuming lets it trade again', async () => {
    const node = await startNode(nodeConfig());
    await runBars(node, 10);
    expect(node.setBotPaused('fast', true, 'command')).toEqual(['NODE-A', 'NODE-B']);
    const placedBy = (name: string, id: string) =>
      node
        .session(name)
        .journal.orders()
        .filter((o) => o.tag.startsWith(`${id}-`)).length;
    const fastBefore = ['NODE-A', 'NODE-B'].map((n) => placedBy(n, 'fast'));
    const others = () => placedBy('NODE-A', 'slow') + placedBy('NODE-B', 'revert');
    const othersBefore = others();
    await runBars(node, 40);
    // On NODE-B (no account rules on its template, so nothing else refuses there).
    const refusals = node
      .session('NODE-B')
      .journal.entries({ kind: 'risk-rejected' })
      .map((e) => e.payload as { strategyId: string; result: { code?: string } })
      .filter((d) => d.strategyId === 'fast');
    expect(refusals.length).toBeGreaterThan(0);
    expect(refusals.map((d) => d.result.code)).toEqual(refusals.map(() => 'STRATEGY_PAUSED'));
    expect(others()).toBeGreaterThan(othersBefore);
    expect(
      node
        .session('NODE-A')
        .journal.entries({ kind: 'control' })
        .map((e) => e.payload),
    ).toEqual([{ action: 'pause', bot: 'fast', source: 'command' }]);
    node.setBotPaused('fast', false, 'command');
    const fastPaused = ['NODE-A', 'NODE-B'].map((n) => placedBy(n, 'fast'));
    await runBars(node, 40);
    expect(['NODE-A', 'NODE-B'].map((n) => placedBy(n, 'fast')).some((count, i) => count > fastPaused[i]!)).toBe(true);
    // While paused only a reduction of its own line may have gone out: one order at most on each account.
    expect(fastPaused.every((count, i) => count - fastBefore[i]! <= 1)).toBe(true);
    await node.stop();
  }, 60_000);

  it('a bot that fails stops alone: its own line is closed, the account and its other bot trade on', async () => {
    // Holds +1 from its first bar, then throws at its twelfth.
    let seen = 0;
    const failing = defineStrategy({
      name: 'fails-later',
      params: z.strictObject({}),
      run: ({ bars }) =>
        bars().pipe(
          map(() => {
            seen++;
            if (seen === 12) throw new Error('fails-later: broken on purpose');
            return target(1);
          }),
        ),
    });
    const config = nodeConfig();
    const node = await TradingNode.start({
      config: { ...config, bots: [...config.bots.slice(0, 2), { ...config.bots[2]!, id: 'fragile' }] },
      strategies: new Map([...strategies, ['fragile', failing]]),
      gateway: {
        tradingUrl: b.proxy.url,
        credentials: { userName: b.sim.demo.userName, apiKey: b.sim.demo.apiKey },
        now: b.now,
      },
      logger: silentLogger,
    });
    const session = node.session('NODE-B');
    await runBars(node, 10);
    expect(session.engine.strategySnapshot('fragile').positions.find((p) => p.contractId === ES)?.size).toBe(1);
    const before = session.journal.orders().filter((o) => o.tag.startsWith('fast-')).length;
    await runBars(node, 30);
    expect(session.failure).toBeUndefined();
    expect([...session.botFailures.keys()]).toEqual(['fragile']);
    expect(session.journal.entries({ kind: 'strategy-error' }).map((e) => e.payload)).toEqual([
      expect.objectContaining({ strategyId: 'fragile', action: 'flatten', scope: 'bot' }),
    ]);
    // Its own line is flat; the account and its other bot were not stopped.
    expect(session.engine.strategySnapshot('fragile').positions.every((p) => p.size === 0)).toBe(true);
    expect(session.engine.tradingState().state).toBe('ACTIVE');
    expect(session.journal.orders().filter((o) => o.tag.startsWith('fast-')).length).toBeGreaterThan(before);
    await agreement(b, asBot(session), await accountId('NODE-B'));
    const lines = session.engine.strategyPositions().filter((p) => p.contractId === ES);
    const gateway = await b.truth.searchOpenPositions(await accountId('NODE-B'));
    expect(lines.reduce((a, p) => a + p.size, 0)).toBe(gateway.reduce((a, p) => a + signedSize(p), 0));
    await node.stop();
  }, 60_000);

  it('holds one connection to each realtime hub for both accounts, each feed on it', async () => {
    const config = nodeConfigSchema.parse({ ...nodeConfig(), gateway: { realtime: true } });
    const node = await TradingNode.start({
      config,
      strategies,
      gateway: {
        tradingUrl: b.proxy.url,
        realtimeUrl: b.sim.realtimeUrl,
        credentials: { userName: b.sim.demo.userName, apiKey: b.sim.demo.apiKey },
        now: b.now,
      },
      logger: silentLogger,
    });
    node.run();
    await until(() => [...node.sessions.values()].every((s) => s.realtime?.state === 'connected'), 10_000, 'the hubs');
    expect(b.sim.hubConnections()).toEqual({ user: 1, market: 1 });
    await runBars(node, 6);
    expect(b.sim.hubConnections()).toEqual({ user: 1, market: 1 });
    await node.stop();
    await until(() => b.sim.hubConnections().user === 0 && b.sim.hubConnections().market === 0, 10_000, 'closed hubs');
  }, 60_000);

  it('restarts on the same journals: nothing to reconcile, ids go on, positions known', async () => {
    const first = await startNode(nodeConfig());
    await runBars(first, 30);
    const next = first.session('NODE-A').engine.nextSequence('fast');
    const positions = new Map(
      [...first.sessions].map(([n, s]) => [
        n,
        s.engine.snapshot().positions.find((p) => p.contractId === ES)?.size ?? 0,
      ]),
    );
    const lines = (node: TradingNode) =>
      node
        .session('NODE-B')
        .engine.strategyPositions()
        .filter((p) => p.size !== 0)
        .map((p) => [p.strategyId, p.size]);
    const linesBefore = lines(first);
    await first.stop();
    const second = await startNode(nodeConfig());
    // Each strategy's own line comes back from the journal's fills (attributed by their tags).
    expect(linesBefore.length).toBeGreaterThan(0);
    expect(lines(second)).toEqual(linesBefore);
    for (const [name, session] of second.sessions) {
      expect(session.reconcile.clean, name).toBe(true);
      expect(session.engine.snapshot().positions.find((p) => p.contractId === ES)?.size ?? 0).toBe(positions.get(name));
    }
    // Ids go on past every tag the account's journal holds (an id decided but never sent may be used again).
    const placed = second
      .session('NODE-A')
      .journal.orders()
      .map((o) => /^fast-(\d+)$/.exec(o.tag)?.[1])
      .filter((n) => n !== undefined)
      .map(Number);
    expect(placed.length).toBeGreaterThan(0);
    expect(second.session('NODE-A').reconcile.sequenceStart.fast).toBe(Math.max(...placed) + 1);
    expect(next).toBeGreaterThanOrEqual(Math.max(...placed) + 1);
    await runBars(second, 10);
    for (const name of ACCOUNTS)
      for (const [tag, count] of b.proxy.placesByTag(await accountId(name))) expect(count, `${name} ${tag}`).toBe(1);
    await second.stop();
  }, 60_000);
});
