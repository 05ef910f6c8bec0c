/**
 * Figure 16, the dashboard: how long a journal entry takes to reach the page in a browser, and what the
 * dashboard costs the bot's process per entry. A paper session on the simulator (manual clock, a Monday
 * in January 2025, its limits from the administration record) with the dashboard on loopback and the page
 * open in headless Chromium; `events` journal entries written 10 ms apart (what a busy bot writes on a
 * fill burst). Latency: the entry's write to the page's EventSource handler (Date.now() on both sides: one
 * machine, one clock). CPU: this process's (`process.cpuUsage`) over the same writes with one reader of the
 * stream connected (curl, in its own process), less the same writes with none (the journal's own cost), per
 * entry; it includes the coalesced snapshots (at most one per account every 50 ms). Also the cost of one snapshot alone (built, validated,
 * framed), median of 200.
 *
 * node --import tsx bench/dashboard.ts [--events 300]
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { chromium } from 'playwright-core';
import { liveConfigSchema } from '../src/adapters/live/live-config.ts';
import { LiveSession } from '../src/adapters/live/trading-session.ts';
import { silentLogger } from '../src/engine/log.ts';
import { accountSnapshotSchema } from '../src/ops/dashboard/dashboard-feed.ts';
import { startDashboard } from '../src/ops/dashboard/dashboard-server.ts';
import { sessionFeed } from '../src/ops/dashboard/session-feed.ts';
import { sseFrame } from '../src/ops/dashboard/sse.ts';
import { startSimulator } from '../src/sim/index.ts';
import smaCross from '../src/strategies/sma-cross.ts';

const CHROMIUM = '/usr/bin/chromium';
const ES = 'CON.F.US.EP.Z25';
/** A Monday, 09:00 in Chicago: the market is open. */
const START = Date.UTC(2025, 0, 6, 15, 0);

export interface DashboardFigures {
  readonly events: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
  /** The dashboard's CPU per journal entry with one page open (its snapshots included), microseconds. */
  readonly cpuUsPerEvent: number;
  /** One snapshot built, validated and framed, microseconds (median). */
  readonly snapshotUs: number;
}

function cpuUs(): number {
  const u = process.cpuUsage();
  return u.user + u.system;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function measureDashboard(options: { events: number }): Promise<DashboardFigures | undefined> {
  if (!existsSync(CHROMIUM)) return undefined;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tickline-bench-dash-'));
  const sim = await startSimulator({
    clock: 'manual',
    startTime: START,
    historyDays: 2,
    rateLimits: { bars: { requests: 1_000_000, windowMs: 30_000 }, default: { requests: 1_000_000, windowMs: 60_000 } },
  });
  const now = () => sim.clock.now();
  const session = await LiveSession.start({
    config: liveConfigSchema.parse({
      strategy: { name: 'sma-cross', id: 'bench', params: { fast: 2, slow: 4, size: 1 } },
      contracts: [ES],
      timeframe: { unit: 'minute', unitNumber: 1 },
      account: { id: sim.demo.accountId },
      journal: path.join(dir, 'journal.sqlite'),
    }),
    mode: 'paper',
    tradingUrl: sim.tradingUrl,
    credentials: { userName: sim.demo.userName, apiKey: sim.demo.apiKey },
    admin: { url: sim.adminUrl, headers: sim.adminHeaders },
    maximumLossVariant: (id) => sim.maximumLossVariant(id),
    strategy: smaCross,
    logger: silentLogger,
    now,
  });
  const feed = sessionFeed(session);
  const dashboard = await startDashboard({ feed, logger: silentLogger });
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu'],
  });
  try {
    // Some bars first, so the snapshot has decisions, a position, an equity curve to carry.
    for (let i = 0; i < 20; i++) {
      sim.clock.advance(30_000);
      await session.poller.tick();
      await session.executor.idle();
    }
    const account = feed.accounts()[0]!;
    const snapshotTimes: number[] = [];
    for (let k = 0; k < 200; k++) {
      const t0 = process.hrtime.bigint();
      sseFrame('snapshot', accountSnapshotSchema.parse(account.snapshot()));
      snapshotTimes.push(Number(process.hrtime.bigint() - t0) / 1_000);
    }
    snapshotTimes.sort((a, b) => a - b);

    let seq = 0;
    const unsubscribe = session.journal.recorded.subscribe((e) => {
      seq = e.seq;
    });
    const write = async (label: string): Promise<{ cpu: number; written: Map<number, number> }> => {
      const written = new Map<number, number>();
      const before = cpuUs();
      for (let i = 0; i < options.events; i++) {
        const at = Date.now();
        session.journal.record('bench', 'event', null, { label, i, note: 'a fill-sized payload', price: 6000.25 });
        // Journal.recorded runs its subscribers within record(): `seq` is this entry's now.
        written.set(seq, at);
        await sleep(10);
      }
      // The coalesced snapshot of the last entries, sent 50 ms later, is part of the cost.
      await sleep(100);
      return { cpu: cpuUs() - before, written };
    };

    // CPU: the same writes with no page, then with one reader of the stream in another process (curl), twice
    // each, alternating (the machine is shared); the browser's own protocol traffic with playwright would
    // count in this process, so it is left out of the CPU figure and used for the latency only.
    const headers = path.join(dir, 'headers');
    writeFileSync(headers, `authorization: Bearer ${dashboard.token}\n`, { mode: 0o600 });
    let alone = 0;
    let read = 0;
    for (let round = 0; round < 2; round++) {
      alone += (await write('no reader')).cpu;
      const curl = spawn('curl', ['-sN', '-H', `@${headers}`, '-o', '/dev/null', `${dashboard.origin}/api/events`], {
        stdio: 'ignore',
      });
      await sleep(300);
      read += (await write('one reader')).cpu;
      curl.kill();
      await new Promise((resolve) => curl.once('exit', resolve));
    }

    const page = await browser.newPage();
    await page.goto(dashboard.url);
    await page.waitForSelector('body[data-ready="true"]', { timeout: 20_000 });
    const watched = await write('page open');
    const deadline = Date.now() + 10_000;
    let received: { seq: number; at: number }[] = [];
    const last = Math.max(...watched.written.keys());
    while (Date.now() < deadline) {
      received = (await page.evaluate('window.ticklineDashboard.received')) as { seq: number; at: number }[];
      if (received.some((r) => r.seq >= last)) break;
      await sleep(50);
    }
    unsubscribe.unsubscribe();
    const latencies = received
      .filter((r) => watched.written.has(r.seq))
      .map((r) => r.at - watched.written.get(r.seq)!)
      .sort((a, b) => a - b);
    if (latencies.length < options.events)
      throw new Error(`the page received ${latencies.length} of ${options.events} journal entries`);
    const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!;
    return {
      events: latencies.length,
      p50Ms: at(0.5),
      p99Ms: at(0.99),
      maxMs: latencies[latencies.length - 1]!,
      cpuUsPerEvent: Math.max(0, (read - alone) / (2 * options.events)),
      snapshotUs: snapshotTimes[snapshotTimes.length >> 1]!,
    };
  } finally {
    await browser.close();
    await dashboard.close();
    feed.close();
    await session.stop({ flatten: false });
    await sim.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { events: { type: 'string', default: '300' } } });
  const figures = await measureDashboard({ events: Number(values.events) });
  process.stdout.write(`${JSON.stringify(figures ?? `skipped: ${CHROMIUM} is missing`, null, 2)}\n`);
}
