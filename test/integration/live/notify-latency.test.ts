/**
 * A notification target that never answers does not move the time from a bar's close to its order. Two
 * paper sessions trade side by side on two accounts of one simulator (manual clock), the same strategy
 * (an order on every bar): one without notifications, one whose every event goes to a Discord-shaped
 * receiver that accepts connections and never answers. At each bar both poll, in turns, and the wall time
 * from the poll that brings the bar to the order's answer from the gateway (the journal's `place` after)
 * is measured; the median of the per-bar differences (the two sessions' latencies of one bar, measured back
 * to back) must stay within a few milliseconds (a generous bound: 10 ms, or half the quiet median on a
 * loaded machine; measured 0.4 to 0.6 ms, with medians of 27 to 28 ms each). The hanging target's queue stays within its bound and drops with log lines.
 */
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger, silentLogger } from '../../../src/engine/log.ts';
import { liveConfigSchema } from '../../../src/adapters/live/live-config.ts';
import { LiveSession } from '../../../src/adapters/live/trading-session.ts';
import { notifySession } from '../../../src/ops/notify/start-notifications.ts';
import flip from './fixtures/flip-strategy.ts';
import { ES, startBench, type Bench } from './live-harness.ts';

const MINUTE = 60_000;
const BARS = 30;
const USER = { userName: 'latency', apiKey: 'latency-api-key' };
const TEMPLATE = {
  name: 'ROOMY',
  startingBalance: 1_000_000,
  dailyLossLimit: { limit: 100_000 },
  maximumLossLimit: { limit: 200_000 },
};

let b: Bench | undefined;
let stopReceiver: (() => Promise<void>) | undefined;
afterEach(async () => {
  await stopReceiver?.();
  await b?.close();
  b = undefined;
});

function median(values: readonly number[]): number {
  const sorted = [...values].sort((x, y) => x - y);
  return sorted[Math.floor(sorted.length / 2)]!;
}

describe('a notification target that hangs', () => {
  it("does not delay a bar's order: the bar-to-order medians with and without it stay within a few ms", async () => {
    // Accepts every connection and request, answers none.
    const hanging: ServerResponse[] = [];
    let requests = 0;
    const server = createServer((_req, res) => {
      requests++;
      hanging.push(res);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const hook = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/webhooks/1/secret`;
    stopReceiver = () =>
      new Promise((resolve) => {
        for (const res of hanging) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      });

    b = await startBench({
      sim: {
        templates: [TEMPLATE],
        users: [
          {
            ...USER,
            accounts: [
              { name: 'QUIET', template: 'ROOMY' },
              { name: 'LOUD', template: 'ROOMY' },
            ],
          },
        ],
      },
    });
    const bench = b;
    const start = (account: string, id: string) =>
      LiveSession.start({
        config: liveConfigSchema.parse({
          strategy: { name: 'flip', id },
          contracts: [ES],
          timeframe: { unit: 'minute', unitNumber: 1 },
          account: { name: account },
          journal: `${bench.dir}/${id}.sqlite`,
          gateway: { realtime: false },
          notify: [{ type: 'discord', name: 'hanging', url: hook, queue: 5, timeoutMs: 600_000 }],
        }),
        mode: 'paper',
        tradingUrl: bench.sim.tradingUrl,
        credentials: USER,
        strategy: flip,
        logger: silentLogger,
        now: bench.now,
      });
    const quiet = await start('QUIET', 'quiet');
    const loud = await start('LOUD', 'loud');
    const lines: string[] = [];
    const logger = createLogger({ level: 'warn', destination: { write: (line: string) => void lines.push(line) } });
    const notifier = notifySession(loud.options.config.notify, loud, logger)!;

    // The wall instant each session's journal answered a place (the order is at the gateway).
    const placed = new Map<LiveSession, number[]>([
      [quiet, []],
      [loud, []],
    ]);
    for (const s of [quiet, loud])
      s.journal.recorded.subscribe((e) => {
        if (e.kind === 'place' && e.phase === 'after') placed.get(s)!.push(performance.now());
      });
    const latency = new Map<LiveSession, number[]>([
      [quiet, []],
      [loud, []],
    ]);
    try {
      quiet.run();
      loud.run();
      /** Both sessions' latencies of one bar, measured back to back: load drifts less within a pair. */
      const pairs: Array<[number, number]> = [];
      for (let bar = 0; bar < BARS; bar++) {
        const step = new Map<LiveSession, number>();
        bench.sim.clock.advance(Math.floor(bench.now() / MINUTE) * MINUTE + MINUTE + 1_000 - bench.now());
        // Turns alternate, so neither session always polls on a warmer process.
        for (const s of bar % 2 === 0 ? [quiet, loud] : [loud, quiet]) {
          const before = placed.get(s)!.length;
          const t0 = performance.now();
          await s.poller.tick();
          await s.executor.idle();
          const after = placed.get(s)!;
          if (after.length > before) {
            latency.get(s)!.push(after[before]! - t0);
            step.set(s, after[before]! - t0);
          }
        }
        if (step.has(quiet) && step.has(loud)) pairs.push([step.get(quiet)!, step.get(loud)!]);
      }
      const q = latency.get(quiet)!;
      const l = latency.get(loud)!;
      // Both traded at (nearly) every bar; the loud one's target got its first message and hangs on it.
      // A step whose bar came late (a loaded machine) joins the next one's order: such bars are not measured.
      expect(q.length, `quiet bars measured: ${q.join(', ')}`).toBeGreaterThanOrEqual(BARS / 2);
      expect(l.length, `loud bars measured: ${l.join(', ')}`).toBeGreaterThanOrEqual(BARS / 2);
      expect(requests).toBe(1);
      const queue = notifier.queues.get('hanging')!;
      expect(queue.size).toBeLessThanOrEqual(5);
      expect(queue.dropped).toBeGreaterThan(0);
      expect(lines.filter((line) => line.includes('"notification dropped"'))).toHaveLength(queue.dropped);
      expect(lines.join('')).not.toContain('secret');
      const [mq, ml] = [median(q), median(l)];
      const extra = median(pairs.map(([x, y]) => y - x));
      console.log(
        `notify latency: bar-to-order median ${mq.toFixed(1)} ms without notifications, ${ml.toFixed(1)} ms with a hanging target, median difference per bar ${extra.toFixed(1)} ms (${q.length} and ${l.length} bars; ${queue.dropped} dropped)`,
      );
      expect(pairs.length).toBeGreaterThanOrEqual(BARS / 2);
      // A target on the trading path would add its whole wait (it never answers); load on the shared cores
      // moves both medians by tens of ms, so the bound is the larger of 10 ms and half the quiet median.
      expect(extra, `per-bar differences: ${pairs.map(([x, y]) => (y - x).toFixed(1)).join(', ')}`).toBeLessThan(
        Math.max(10, mq / 2),
      );
    } finally {
      await notifier.stop(50);
      await quiet.stop();
      await loud.stop();
    }
  }, 120_000);
});
