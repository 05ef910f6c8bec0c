/**
 * The evaluation's pass-lock, one rule in three places: a strategy that would trade every other bar for
 * ever, on a market that only rises (a bar file written here), meets its evaluation's pass conditions on
 * its third trading day (profit target 12,000 reached on the second, three trading days needed). In a
 * backtest, in `tickline evaluate` and in a paper session on the local simulator (same file, manual
 * clock), the account then opens no more risk: the guard refuses with PASS_LOCKED, `flatten` closes the
 * position at once, `hold` keeps it until the strategy's own exit, `off` trades on.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { executeBacktest } from '../../src/adapters/backtest/execute.ts';
import { loadBacktestConfig } from '../../src/cli/backtest.ts';
import { main } from '../../src/cli/main.ts';
import { loadTradingConfig } from '../../src/cli/trading-config.ts';
import { silentLogger } from '../../src/engine/log.ts';
import type { PassLockEvent } from '../../src/engine/pass-lock.ts';
import { sessionFeed } from '../../src/ops/dashboard/session-feed.ts';
import { LiveSession } from '../../src/adapters/live/trading-session.ts';
import { loadStrategy } from '../../src/strategies/index.ts';
import { notifySession } from '../../src/ops/notify/start-notifications.ts';
import { ES, startBench, type Bench } from './live/live-harness.ts';

const MINUTE = 60_000;
const BAR_MS = 15 * MINUTE;
/** Monday 6 January 2025, 00:00 UTC (Sunday 18:00 CT): trading day 2025-01-06. */
const FROM = Date.UTC(2025, 0, 6);
/** Day three, 2025-01-08, opens on Tuesday at 17:00 CT. */
const DAY_THREE = Date.UTC(2025, 0, 7, 23);
const TO = Date.UTC(2025, 0, 9);
const STRATEGY = path.resolve(import.meta.dirname, 'fixtures/half-long.ts');

let dir: string;
let csv: string;
let rules: string;

beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'tickline-pass-lock-'));
  // A tick a minute up, from Sunday noon to Thursday: every 15 minutes long earns about 15 ticks.
  const rows = ['t,o,h,l,c,v'];
  let price = 5_000;
  for (let t = Date.UTC(2025, 0, 5, 12); t < TO + 6 * 3_600_000; t += MINUTE) {
    rows.push(`${new Date(t).toISOString()},${price},${price + 0.25},${price},${price + 0.25},100`);
    price += 0.25;
  }
  csv = path.join(dir, 'rising.csv');
  writeFileSync(csv, `${rows.join('\n')}\n`);
  rules = path.join(dir, 'rules.yaml');
  writeFileSync(
    rules,
    [
      'name: Pass-lock test',
      'startingBalance: 50000',
      'profitTarget: 12000',
      'maximumLossLimit: { amount: 2000, variant: static }',
      'minimumTradingDays: 3',
      'source: written by test/integration/pass-lock.test.ts',
      'readOn: 2026-11-27',
      "note: a test's rules; check the firm's current rules",
    ].join('\n'),
  );
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function definition(passLock?: string): string {
  const file = path.join(dir, `run-${passLock ?? 'default'}.yaml`);
  writeFileSync(
    file,
    [
      `strategy: { name: ${STRATEGY} }`,
      'contract: ESH5',
      'timeframe: { unit: minute, unitNumber: 15 }',
      `data: { source: csv, file: ${csv} }`,
      `from: ${new Date(FROM).toISOString()}`,
      `to: ${new Date(TO).toISOString()}`,
      'market: { hours: none }',
      passLock === undefined ? `evaluation: ${rules}` : `evaluation: { rules: ${rules}, passLock: ${passLock} }`,
      `out: ${path.join(dir, `out-${passLock ?? 'default'}`)}`,
    ].join('\n'),
  );
  return file;
}

async function backtest(passLock?: string) {
  const { config, name, strategy, evaluation } = await loadBacktestConfig({ config: definition(passLock), params: [] });
  return executeBacktest(config, name, { strategy, evaluation: evaluation!, monteCarlo: { paths: 50 } });
}

describe('pass-lock in a backtest', () => {
  it('flatten (the default): the lock engages on day three, the position is closed at once, nothing opens again', async () => {
    const { result, report } = await backtest();
    const lock = result.passLock!;
    expect(lock).toMatchObject({ mode: 'flatten', tradingDay: '2025-01-08', tradingDays: 3, profitTarget: 12_000 });
    expect(lock.profit).toBeGreaterThanOrEqual(12_000);
    expect(lock.time).toBeGreaterThanOrEqual(DAY_THREE);
    expect(lock.message).toMatch(
      /the evaluation "Pass-lock test" met its pass conditions \(profit [\d.]+ of 12000\.00, 3 trading days\): no new risk \(evaluation\.passLock: flatten, positions closed\)/,
    );
    // Locked while long (the entry was day three's first fill): the engine's flatten is the last fill.
    const after = result.fills.filter((f) => f.time >= lock.time);
    expect(after.map((f) => f.side)).toEqual(['buy', 'sell']);
    expect(after[1]!.orderId).toMatch(/^risk-/);
    expect(result.openPosition).toBe(0);
    // The strategy went on asking: every later entry was refused with the reason.
    const refused = [...result.decisions].filter((d) => !d.result.accepted && d.result.code === 'PASS_LOCKED');
    expect(refused.length).toBeGreaterThan(20);
    expect(refused[0]!.time).toBeGreaterThanOrEqual(lock.time);
    expect(result.rejections.PASS_LOCKED).toBe(refused.length);
    expect(report.evaluation!.outcome).toMatchObject({ status: 'passed', day: '2025-01-08', dayNumber: 3 });
    expect(report.evaluation!.passLock).toEqual({ mode: 'flatten', engaged: lock });
  });

  it('hold: new risk is refused, the open position stays until the strategy exits; off: it trades on', async () => {
    const held = (await backtest('hold')).result;
    const lock = held.passLock!;
    expect(lock).toMatchObject({ mode: 'hold', tradingDay: '2025-01-08' });
    const after = held.fills.filter((f) => f.time >= lock.time);
    // The entry that engaged the lock, then the strategy's own exit a bar later (a reducing order passes).
    expect(after.map((f) => f.side)).toEqual(['buy', 'sell']);
    expect(after[1]!.orderId).not.toMatch(/^risk-/);
    expect(after[1]!.time - after[0]!.time).toBe(BAR_MS);
    expect(held.rejections.PASS_LOCKED).toBeGreaterThan(20);

    const free = (await backtest('off')).result;
    expect(free.passLock).toBeUndefined();
    expect(free.rejections.PASS_LOCKED).toBeUndefined();
    // Without the lock the same strategy trades to the end of the data.
    expect(free.fills.filter((f) => f.time >= lock.time).length).toBeGreaterThan(50);
  });
});

describe('pass-lock in tickline evaluate', () => {
  let out: string[];
  beforeEach(() => {
    out = [];
    vi.spyOn(process.stdout, 'write').mockImplementation(
      (chunk: string | Uint8Array) => (out.push(String(chunk)), true),
    );
    vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
  });
  afterEach(() => vi.restoreAllMocks());

  it('says the lock in its output and in evaluation.json; --pass-lock overrides the definition', async () => {
    const file = definition('off');
    expect(await main(['evaluate', '--config', file, '--pass-lock', 'hold', '--paths', '50'])).toBe(0);
    const text = out.join('');
    expect(text).toMatch(/Evaluation: Pass-lock test: passed on trading day 3 \(2025-01-08\)/);
    expect(text).toMatch(
      /\n {2}Pass-lock \(hold\): engaged at 2025-01-0[78]T[\d:.]+Z \(trading day 2025-01-08\): the evaluation "Pass-lock test" met its pass conditions/,
    );
    const saved = JSON.parse(readFileSync(path.join(dir, 'out-off', 'evaluation.json'), 'utf8'));
    expect(saved.passLock).toMatchObject({ mode: 'hold', engaged: { tradingDay: '2025-01-08', tradingDays: 3 } });
    expect(Date.parse(saved.passLock.engaged.time)).toBeGreaterThanOrEqual(DAY_THREE);
    // The report's evaluation section says it, and decisions.csv holds the refusals.
    expect(readFileSync(path.join(dir, 'out-off', 'report.html'), 'utf8')).toMatch(
      /<p id="evaluation-pass-lock">Pass-lock \(hold\): engaged at [^<]+the evaluation &quot;Pass-lock test&quot; met its pass conditions/,
    );
    expect(readFileSync(path.join(dir, 'out-off', 'decisions.csv'), 'utf8')).toContain('PASS_LOCKED');
  });

  it('refuses a bad mode with one line at the flag, and a lock without an evaluation', async () => {
    const errors: string[] = [];
    vi.mocked(process.stderr.write).mockImplementation(
      (chunk: string | Uint8Array) => (errors.push(String(chunk)), true),
    );
    expect(await main(['evaluate', '--config', definition(), '--pass-lock', 'sometimes'])).toBe(2);
    expect(errors.join('')).toMatch(
      /--pass-lock sometimes: evaluation\.passLock: .*"flatten"\|"hold"\|"off"|expected one of "flatten"\|"hold"\|"off"/,
    );
    const bad = path.join(dir, 'bad.yaml');
    writeFileSync(
      bad,
      `${readFileSync(definition(), 'utf8').replace(/evaluation: .*/, `evaluation: { rules: ${rules}, passlock: hold }`)}\n`,
    );
    errors.length = 0;
    expect(await main(['backtest', '--config', bad])).toBe(2);
    expect(errors.join('')).toContain(`${bad}:8:`);
    expect(errors.join('')).toMatch(/passlock/);
  });
});

describe('pass-lock in a paper session on the simulator', () => {
  let b: Bench | undefined;
  afterEach(async () => {
    await b?.close();
    b = undefined;
  });

  it('engages on day three: journaled once, notified, the engine flattens, the strategy is refused, nothing opens after', async () => {
    // A local webhook that takes the pass-lock notification.
    const got: Array<{ event: string; text: string }> = [];
    const receiver = createServer((req, res) => {
      let text = '';
      req.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
      req.on('end', () => {
        got.push(JSON.parse(text));
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const hook = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    b = await startBench({
      sim: { startTime: FROM, market: { source: 'csv', path: csv, contractId: ES }, marketHours: 'always' },
    });
    const file = path.join(b.dir, 'paper.yaml');
    writeFileSync(
      file,
      [
        `strategy: { name: ${STRATEGY}, id: halflong }`,
        `contracts: [${ES}]`,
        'timeframe: { unit: minute, unitNumber: 15 }',
        `account: { id: ${b.sim.demo.accountId} }`,
        `journal: ${b.journalFile}`,
        `evaluation: ${rules}`,
        'market: { hours: none }',
        'gateway: { realtime: false, adminEveryMs: 1800000 }',
        'poll: { openOrdersMs: 5000, tradesMs: 5000, positionsMs: 5000, closeDelayMs: 500, staleAfterMs: 1200000 }',
        `notify: [{ type: webhook, url: '${hook}', events: [passLock] }]`,
      ].join('\n'),
    );
    const config = loadTradingConfig(file);
    expect(config.passLock).toMatchObject({ mode: 'flatten', profitTarget: 12_000, minimumTradingDays: 3 });
    const bench = b;
    let refusedBefore = 0;
    const strategy = await loadStrategy(STRATEGY);
    const start = () =>
      LiveSession.start({
        config,
        mode: 'paper',
        tradingUrl: bench.sim.tradingUrl,
        credentials: { userName: bench.sim.demo.userName, apiKey: bench.sim.demo.apiKey },
        strategy,
        logger: silentLogger,
        account: config.limits,
        passLock: config.passLock!,
        now: bench.now,
      });
    const drive = async (s: LiveSession, end: number) => {
      // Bar by bar on the manual clock: a second after each bar's end, the poller asks for it.
      while (bench.now() < end) {
        bench.sim.clock.advance(Math.floor(bench.now() / BAR_MS) * BAR_MS + BAR_MS + 1_000 - bench.now());
        await s.poller.tick();
        await s.executor.idle();
      }
    };
    const session = await start();
    const notifier = notifySession(config.notify, session, silentLogger)!;
    try {
      session.run();
      await drive(session, DAY_THREE + 12 * 3_600_000);
      const entries = session.journal.entries({ kind: 'pass-lock' });
      expect(entries).toHaveLength(1);
      const lock = entries[0]!.payload as PassLockEvent;
      expect(lock).toMatchObject({ mode: 'flatten', tradingDay: '2025-01-08', tradingDays: 3 });
      expect(lock.profit).toBeGreaterThanOrEqual(12_000);
      expect(session.engine.passLocked()).toEqual(lock);
      // The dashboard says so on the account.
      const feed = sessionFeed(session);
      expect(feed.accounts()[0]!.snapshot().passLock).toEqual({ locked: true, mode: 'flatten', reason: lock.message });
      feed.close();
      const refused = session.journal
        .entries({ kind: 'risk-rejected' })
        .map((e) => e.payload as { result: { code: string; message: string }; time: number });
      expect(refused.length).toBeGreaterThan(5);
      refusedBefore = refused.length;
      expect(refused.every((d) => d.result.code === 'PASS_LOCKED' && d.result.message === lock.message)).toBe(true);
      // At the simulator: flat, and after the lock only the engine's flatten was placed.
      const accountId = b.sim.demo.accountId;
      expect((await b.truth.searchOpenPositions(accountId)).filter((p) => p.size !== 0)).toEqual([]);
      const orders = await b.truth.searchOrders({ accountId, startTimestamp: new Date(FROM).toISOString() });
      // The entry whose fill engaged the lock (day three's first), then the engine's flatten: no entry after.
      const later = orders.filter((o) => Date.parse(o.creationTimestamp) >= lock.time);
      expect(later.map((o) => [o.customTag, o.side])).toEqual([
        [expect.stringMatching(/^halflong-\d+$/), 0],
        [expect.stringMatching(/^halflong-risk-\d+$/), 1],
      ]);
      expect(orders.length).toBeGreaterThan(100);
      // The notification: the lock's message, once.
      await notifier.queues.get('webhook-1')!.drain();
      expect(got).toEqual([expect.objectContaining({ event: 'passLock', text: lock.message })]);
    } finally {
      await notifier.stop(100);
      await session.stop();
      await new Promise((resolve) => receiver.close(resolve));
    }

    // A restart replays the journal's fills: the lock is back before the first bar, journaled once, and the
    // replay sends nothing (the fill that engaged it is followed by the flatten's own fill in the journal).
    const stoppedAt = bench.now();
    const again = await start();
    try {
      expect(again.engine.passLocked()).toMatchObject({ tradingDay: '2025-01-08', mode: 'flatten' });
      again.run();
      await drive(again, stoppedAt + 2 * 3_600_000);
      expect(again.journal.entries({ kind: 'pass-lock' })).toHaveLength(1);
      const accountId = bench.sim.demo.accountId;
      const orders = await bench.truth.searchOrders({ accountId, startTimestamp: new Date(stoppedAt).toISOString() });
      expect(orders.filter((o) => Date.parse(o.creationTimestamp) >= stoppedAt)).toEqual([]);
      expect((await bench.truth.searchOpenPositions(accountId)).filter((p) => p.size !== 0)).toEqual([]);
      expect(again.engine.accounting.position(ES)).toBe(0);
      expect(again.journal.entries({ kind: 'risk-rejected' }).length).toBeGreaterThan(refusedBefore);
    } finally {
      await again.stop();
    }
  }, 180_000);
});
