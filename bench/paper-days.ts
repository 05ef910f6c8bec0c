/**
 * Figure 15: memory and CPU per market day of a paper session at high speed. The simulator in this process
 * on its manual clock, and a `LiveSession` on `F.US.EP` (sma-cross 3/8 on 5-minute bars, a roomy account so
 * the rules never stop it) driven bar by bar as fast as the process goes: a step to a second after each
 * bar's end while ES is open, half-hour steps while it is closed, a poll round at every step. It starts at
 * the open of trading day 2026-12-09 and runs N market days (through the ES roll of 10 Dec and a weekend).
 * At each turn of the trading day (ES opens, 17:00 CT) the day's CPU time (`process.cpuUsage`, the
 * session and the simulator together: both run on this thread) and wall time are taken, and the heap is
 * sampled after a forced full collection. The trend is the least-squares slope of the heap over the days.
 *
 * node --import tsx bench/paper-days.ts [--days 5]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { liveConfigSchema } from '../src/adapters/live/live-config.ts';
import { LiveSession } from '../src/adapters/live/trading-session.ts';
import { silentLogger } from '../src/engine/log.ts';
import { EXCHANGE_CALENDAR } from '../src/market/exchange-hours.ts';
import { startSimulator } from '../src/sim/index.ts';
import smaCross from '../src/strategies/sma-cross.ts';

const MINUTE = 60_000;
const BAR_MS = 5 * MINUTE;
const OFFSET_MS = 1_000;
const CLOSED_STEP_MS = 30 * MINUTE;
/** Tue 8 Dec 2026, 17:00 CT: trading day 2026-12-09 opens. */
const START = Date.UTC(2026, 11, 8, 23, 0) + OFFSET_MS;
const USER = { userName: 'bench-paper', apiKey: 'bench-paper-key' };

export interface PaperDay {
  readonly tradingDay: string;
  readonly cpuMs: number;
  readonly wallMs: number;
  readonly heapMb: number;
  readonly orders: number;
}

export interface PaperDaysFigures {
  readonly days: readonly PaperDay[];
  /** Median CPU ms per market day. */
  readonly cpuMsPerDay: number;
  readonly wallMsPerDay: number;
  readonly ordersPerDay: number;
  readonly heapFirstMb: number;
  readonly heapLastMb: number;
  /** Least-squares slope of the heap over the days, MB per market day. */
  readonly heapTrendMbPerDay: number;
  /** Whether the heap was sampled after a forced collection. */
  readonly forcedGc: boolean;
  readonly anomalies: number;
  readonly rolled: boolean;
}

const gc: (() => void) | undefined = (() => {
  try {
    setFlagsFromString('--expose-gc');
    return runInNewContext('gc') as () => void;
  } catch {
    return undefined;
  }
})();

export async function measurePaperDays(options: { days: number }): Promise<PaperDaysFigures> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tickline-bench-paper-'));
  const sim = await startSimulator({
    clock: 'manual',
    startTime: START,
    historyDays: 2,
    rateLimits: { bars: { requests: 1_000_000, windowMs: 30_000 }, default: { requests: 1_000_000, windowMs: 60_000 } },
    templates: [
      {
        name: 'BENCH',
        startingBalance: 1_000_000,
        dailyLossLimit: { limit: 100_000 },
        maximumLossLimit: { limit: 200_000 },
      },
    ],
    users: [{ ...USER, accounts: [{ name: 'BENCH-PAPER', template: 'BENCH' }] }],
  });
  const now = (): number => sim.clock.now();
  let session: LiveSession | undefined;
  try {
    session = await LiveSession.start({
      config: liveConfigSchema.parse({
        strategy: { name: 'sma-cross', id: 'bench', params: { fast: 3, slow: 8, size: 1 } },
        contracts: ['F.US.EP'],
        timeframe: { unit: 'minute', unitNumber: 5 },
        account: { name: 'BENCH-PAPER' },
        journal: path.join(dir, 'journal.sqlite'),
        poll: { openOrdersMs: 5_000, tradesMs: 5_000, positionsMs: 5_000, staleAfterMs: 60 * MINUTE },
        gateway: { adminEveryMs: 30 * MINUTE },
        risk: { maxPositionSize: 2 },
      }),
      mode: 'paper',
      tradingUrl: sim.tradingUrl,
      credentials: USER,
      admin: { url: sim.adminUrl, headers: sim.adminHeaders },
      maximumLossVariant: (id) => sim.maximumLossVariant(id),
      strategy: smaCross,
      logger: silentLogger,
      now,
    });
    const s = session;
    const days: PaperDay[] = [];
    let tradingDay = EXCHANGE_CALENDAR.tradingDay('ES', now());
    gc?.();
    let cpu = process.cpuUsage();
    let wall = performance.now();
    let orders = 0;
    while (days.length < options.days) {
      const t = now();
      let next = Math.floor(t / BAR_MS) * BAR_MS + BAR_MS + OFFSET_MS;
      if (!EXCHANGE_CALENDAR.isOpen('ES', t)) {
        const opens = EXCHANGE_CALENDAR.nextOpen('ES', t) + OFFSET_MS;
        next = Math.max(next, Math.min(opens, Math.floor(t / BAR_MS) * BAR_MS + CLOSED_STEP_MS + OFFSET_MS));
      }
      // The day's last step ends where the next day opens: the session's round at the open belongs to the new day.
      const day = EXCHANGE_CALENDAR.tradingDay('ES', next);
      sim.clock.advance(next - t);
      if (day !== tradingDay) {
        const used = process.cpuUsage(cpu);
        const wallMs = performance.now() - wall;
        gc?.();
        const total = s.journal.orders().length;
        days.push({
          tradingDay,
          cpuMs: (used.user + used.system) / 1000,
          wallMs,
          heapMb: process.memoryUsage().heapUsed / 1e6,
          orders: total - orders,
        });
        orders = total;
        tradingDay = day;
        cpu = process.cpuUsage();
        wall = performance.now();
      }
      await s.poller.tick();
      await s.executor.idle();
    }
    const heaps = days.map((d) => d.heapMb);
    return {
      days,
      cpuMsPerDay: median(days.map((d) => d.cpuMs)),
      wallMsPerDay: median(days.map((d) => d.wallMs)),
      ordersPerDay: median(days.map((d) => d.orders)),
      heapFirstMb: heaps[0]!,
      heapLastMb: heaps.at(-1)!,
      heapTrendMbPerDay: slope(heaps),
      forcedGc: gc !== undefined,
      anomalies: s.journal.entries({ kind: 'anomaly' }).length,
      rolled: s.journal.entries({ kind: 'roll' }).some((e) => e.phase === 'after'),
    };
  } finally {
    await session?.stop();
    await sim.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Least-squares slope of `values` against their index. */
function slope(values: readonly number[]): number {
  const n = values.length;
  if (n < 2) return 0;
  const meanX = (n - 1) / 2;
  const meanY = values.reduce((a, b) => a + b, 0) / n;
  let num = 0;
  let den = 0;
  values.forEach((y, x) => {
    num += (x - meanX) * (y - meanY);
    den += (x - meanX) ** 2;
  });
  return num / den;
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { days: { type: 'string', default: '5' } } });
  const figures = await measurePaperDays({ days: Number(values.days) });
  for (const d of figures.days)
    process.stdout.write(
      `${d.tradingDay}: CPU ${d.cpuMs.toFixed(0)} ms, wall ${d.wallMs.toFixed(0)} ms, heap ${d.heapMb.toFixed(1)} MB, ${d.orders} orders\n`,
    );
  const { days: _, ...summary } = figures;
  process.stdout.write(`${JSON.stringify(summary)}\n`);
}
