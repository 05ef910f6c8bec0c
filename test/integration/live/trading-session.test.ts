import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import smaCross from '../../../src/strategies/sma-cross.ts';
import { silentLogger } from '../../../src/engine/log.ts';
import { liveConfigSchema } from '../../../src/adapters/live/live-config.ts';
import { LiveSession } from '../../../src/adapters/live/trading-session.ts';
import { signedSize } from '../../../src/adapters/live/reconcile.ts';
import { agreement, ES, startBench, type Bench, type Bot } from './live-harness.ts';

let b: Bench;
beforeEach(async () => {
  b = await startBench();
});
afterEach(async () => {
  await b.close();
});

function config(): ReturnType<typeof liveConfigSchema.parse> {
  return liveConfigSchema.parse({
    strategy: { name: 'sma-cross', id: 'smacross', params: { fast: 2, slow: 4, size: 1 } },
    contracts: [ES],
    timeframe: { unit: 'minute', unitNumber: 1 },
    account: { id: b.sim.demo.accountId },
    journal: b.journalFile,
    poll: {
      openOrdersMs: 5_000,
      ordersMs: 10_000,
      tradesMs: 5_000,
      positionsMs: 5_000,
      accountMs: 15_000,
      closeDelayMs: 500,
      staleAfterMs: 20_000,
    },
    risk: { maxPositionSize: 2 },
  });
}

async function startSession(): Promise<LiveSession> {
  return LiveSession.start({
    config: config(),
    mode: 'paper',
    tradingUrl: b.proxy.url,
    credentials: { userName: b.sim.demo.userName, apiKey: b.sim.demo.apiKey },
    strategy: smaCross,
    logger: silentLogger,
    now: b.now,
    client: { timeoutMs: 400, retry: { maxAttempts: 3, baseDelayMs: 5, maxDelayMs: 20, maxRetryAfterMs: 50 } },
  });
}

/** Move the simulator's clock bar by bar (two polls per bar), letting the session react each time. */
async function runBars(s: LiveSession, bars: number): Promise<void> {
  for (let i = 0; i < bars * 2; i++) {
    b.sim.clock.advance(30_000);
    await s.poller.tick();
    await s.executor.idle();
  }
}

const asBot = (s: LiveSession): Bot => ({
  journal: s.journal,
  executor: s.executor,
  poller: s.poller,
  stop: () => s.stop(),
});

describe('paper session on the simulator', () => {
  it('trades the reference strategy through faults, survives a restart, and the kill switch leaves it flat', async () => {
    const s1 = await startSession();
    expect(s1.reconcile.clean).toBe(true);
    const states: string[] = [];
    s1.engine.tradingState$.subscribe((t) => states.push(t.state));
    b.proxy.inject({ path: '/api/Order/place', action: { kind: 'drop-after' } });
    b.proxy.inject({ path: '/api/Position/searchOpen', action: { kind: 'status', status: 500 }, times: 3 });
    await runBars(s1, 25);
    expect(states).toContain('REDUCING');
    expect(s1.engine.tradingState().state).toBe('ACTIVE');
    const placed = s1.journal.orders();
    expect(placed.length).toBeGreaterThan(1);
    expect(s1.journal.fills().length).toBeGreaterThan(1);
    // The first place's answer was dropped: it was looked up by customTag, not re-sent.
    expect(s1.journal.entries({ kind: 'lookup' }).length).toBeGreaterThan(0);
    expect(b.proxy.requests.some((r) => r.fault === 'drop-after')).toBe(true);
    await agreement(b, asBot(s1));
    const positions = await b.truth.searchOpenPositions(b.sim.demo.accountId);
    const enginePosition = s1.engine.snapshot().positions.find((p) => p.contractId === ES)?.size ?? 0;
    expect(enginePosition).toBe(positions.reduce((a, p) => a + signedSize(p), 0));
    const simBalance = async (): Promise<number> =>
      (await b.truth.searchAccounts(true)).find((a) => a.id === b.sim.demo.accountId)!.balance;
    expect(s1.engine.snapshot().balance).toBeCloseTo(await simBalance(), 6);
    const next = s1.engine.nextSequence('smacross');
    await s1.stop();

    // Restart on the same journal: nothing to fix, ids continue, the engine knows the position.
    const s2 = await startSession();
    expect(s2.reconcile.clean).toBe(true);
    expect(s2.reconcile.sequenceStart.smacross).toBe(next);
    expect(s2.engine.snapshot().positions.find((p) => p.contractId === ES)?.size ?? 0).toBe(enginePosition);
    // The journal's fills replayed on top of the balance before them: nothing counted twice.
    expect(s2.engine.snapshot().balance).toBeCloseTo(await simBalance(), 6);
    await runBars(s2, 10);
    await agreement(b, asBot(s2));
    for (const [, count] of b.proxy.placesByTag()) expect(count).toBe(1);

    const result = await s2.killSwitch('test');
    expect(result.flat).toBe(true);
    expect(s2.engine.tradingState().state).toBe('HALTED');
    await agreement(b, asBot(s2));
    expect(await b.truth.searchOpenPositions(b.sim.demo.accountId)).toEqual([]);
    await s2.stop();
  }, 25_000);

  it('refuses a journal that belongs to another account', async () => {
    const s1 = await startSession();
    await s1.stop();
    const other = (await b.truth.searchAccounts(true)).find((a) => a.simulated && a.id !== b.sim.demo.accountId)!;
    await expect(
      LiveSession.start({
        config: { ...config(), account: { id: other.id } },
        mode: 'paper',
        tradingUrl: b.proxy.url,
        credentials: { userName: b.sim.demo.userName, apiKey: b.sim.demo.apiKey },
        strategy: smaCross,
        logger: silentLogger,
        now: b.now,
      }),
    ).rejects.toThrow(/belongs to account/);
  });

  it('paper refuses a live account', async () => {
    const live = (await b.truth.searchAccounts(true)).find((a) => !a.simulated)!;
    await expect(
      LiveSession.start({
        config: { ...config(), account: { id: live.id } },
        mode: 'paper',
        tradingUrl: b.proxy.url,
        credentials: { userName: b.sim.demo.userName, apiKey: b.sim.demo.apiKey },
        strategy: smaCross,
        logger: silentLogger,
        now: b.now,
      }),
    ).rejects.toThrow(/not simulated/);
  });
});
