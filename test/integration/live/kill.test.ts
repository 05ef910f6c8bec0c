import { spawn } from 'node:child_process';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../../src/engine/log.ts';
import { reconcileOnStart } from '../../../src/adapters/live/reconcile.ts';
import { agreement, ES, market, startBench, startBot, until, type Bench } from './live-harness.ts';

let b: Bench;
beforeEach(async () => {
  b = await startBench();
});
afterEach(async () => {
  await b.close();
});

const REPO = path.resolve(import.meta.dirname, '../../..');

/** Start the child bot, wait until its place is at the proxy, then kill -9 it. */
async function killMidPlace(tag: string): Promise<void> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(import.meta.dirname, 'child-bot.ts')], {
    cwd: REPO,
    env: {
      ...process.env,
      SIM_NOW: String(b.now()),
      TRADING_URL: b.proxy.url,
      SIM_USER: b.sim.demo.userName,
      SIM_KEY: b.sim.demo.apiKey,
      ACCOUNT_ID: String(b.sim.demo.accountId),
      JOURNAL: b.journalFile,
      CONTRACT_ID: ES,
      TAG: tag,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
  await Promise.race([
    b.proxy.held(),
    exited.then(() => Promise.reject(new Error(`child bot exited early: ${stderr}`))),
  ]);
  child.kill('SIGKILL');
  expect(await exited).toBe('SIGKILL');
  b.proxy.release({ drop: true });
}

describe('kill -9 between sending a place and receiving its answer', () => {
  it('the order reached the gateway: the restart finds it by customTag, adopts its fill, and never re-sends it', async () => {
    b.proxy.inject({ path: '/api/Order/place', action: { kind: 'hold' } });
    await killMidPlace('k-1');
    expect(b.proxy.placesByTag().get('k-1')).toBe(1);

    const bot = startBot(b);
    // The dead process journaled the order before sending; nothing else.
    expect(bot.journal.order('k-1')?.state).toBe('submitting');
    const report = await reconcileOnStart({
      client: b.client,
      journal: bot.journal,
      executor: bot.executor,
      accountId: b.sim.demo.accountId,
      strategyIds: ['k'],
      now: b.now,
      logger: silentLogger,
    });
    expect(report.resolved).toEqual([{ tag: 'k-1', state: 'filled' }]);
    expect(report.positionDifferences).toEqual([]);
    expect(report.sequenceStart).toEqual({ k: 2 });
    expect(bot.journal.fills().map((f) => f.tag)).toEqual(['k-1']);
    // The strategy carries on with the next tag; the old one is never sent again.
    bot.executor.place(market('k-2', 'sell'));
    await agreement(b, bot);
    expect(b.proxy.placesByTag()).toEqual(
      new Map([
        ['k-1', 1],
        ['k-2', 1],
      ]),
    );
    await bot.stop();
  }, 20_000);

  it('the order never reached the gateway: the restart keeps it unknown for the window, then marks it lost and sends nothing for it', async () => {
    b.proxy.inject({ path: '/api/Order/place', action: { kind: 'hold', forward: false } });
    await killMidPlace('k-1');
    const bot = startBot(b);
    const early = await reconcileOnStart({
      client: b.client,
      journal: bot.journal,
      executor: bot.executor,
      accountId: b.sim.demo.accountId,
      strategyIds: ['k'],
      now: b.now,
      logger: silentLogger,
    });
    // Sent by a process that died: it may still land, so its exposure stands until the window has passed.
    expect(early.resolved).toEqual([{ tag: 'k-1', state: 'unknown' }]);
    b.sim.clock.advance(61_000);
    const report = await reconcileOnStart({
      client: b.client,
      journal: bot.journal,
      executor: bot.executor,
      accountId: b.sim.demo.accountId,
      strategyIds: ['k'],
      now: b.now,
      logger: silentLogger,
    });
    expect(report.resolved).toEqual([{ tag: 'k-1', state: 'lost' }]);
    expect(report.clean).toBe(true);
    await agreement(b, bot);
    expect(b.proxy.placesByTag().size).toBe(0);
    await until(
      async () => (await b.truth.searchOpenPositions(b.sim.demo.accountId)).length === 0,
      1_000,
      'no position',
    );
    await bot.stop();
  }, 20_000);
});
