/**
 * Market data that goes silent: a WebSocket proxy keeps the market hub connected but drops its quote
 * records. The session's watchdog notices within its bound (no quote while the market is open and bars
 * advance), logs it, the guard prices from the last bar meanwhile, and the hub is reconnected and
 * subscribed again, after which quotes come back.
 */
import { Writable } from 'node:stream';
import { EMPTY } from 'rxjs';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { z } from 'zod';
import { liveConfigSchema } from '../../../src/adapters/live/live-config.ts';
import { LiveSession } from '../../../src/adapters/live/trading-session.ts';
import { createLogger } from '../../../src/engine/log.ts';
import { defineStrategy } from '../../../src/engine/strategy.ts';
import { startHubProxy, type HubProxy } from './hub-proxy.ts';
import { ES, startBench, until, type Bench } from './live-harness.ts';

const SPEED = 60;
const BOUND_MS = 60_000;
let b: Bench;
let hubProxy: HubProxy;
let session: LiveSession | undefined;
beforeEach(async () => {
  // An accelerated market (a 1-minute bar a second), open at the bench's start (a Monday, 09:00 CT).
  b = await startBench({ sim: { clock: { speed: SPEED } }, timeoutMs: 2_000 });
  hubProxy = await startHubProxy(b.sim.realtimeUrl);
});
afterEach(async () => {
  await session?.stop();
  await hubProxy.close();
  await b.close();
});

const idle = defineStrategy({ name: 'idle', params: z.object({}), run: () => EMPTY });

it('a connected market hub whose quotes stop: detected within the bound, the guard prices from the bars, quotes back after the reconnect', async () => {
  const lines: Array<{ level: number; msg: string; contractId?: string; silentMs?: number }> = [];
  const logger = createLogger({
    level: 'info',
    destination: new Writable({
      write(chunk, _encoding, done) {
        for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
        done();
      },
    }),
  });
  const config = liveConfigSchema.parse({
    strategy: { name: 'idle', id: 'watchdog' },
    contracts: [ES],
    timeframe: { unit: 'minute', unitNumber: 1 },
    account: { id: b.sim.demo.accountId },
    journal: b.journalFile,
    gateway: { quoteSilenceMs: BOUND_MS },
  });
  session = await LiveSession.start({
    config,
    mode: 'paper',
    tradingUrl: b.proxy.url,
    realtimeUrl: hubProxy.url,
    credentials: { userName: b.sim.demo.userName, apiKey: b.sim.demo.apiKey },
    strategy: idle,
    logger,
    now: b.now,
    speed: SPEED,
  });
  session.run();
  const market = session.market!;
  await until(() => market.lastPrice(ES) !== undefined, 10_000, 'quotes through the market hub');

  let lastClose = Number.NaN;
  session.poller.bars(ES, config.timeframe).subscribe((chunk) => {
    if (!chunk.partial) lastClose = chunk.close[chunk.length - 1]!;
  });

  // The connection open now keeps running, but no quote reaches the bot any more, on it or on the next one.
  hubProxy.discard((record, _connection, path) => path.startsWith('/hubs/market') && record.includes('"GatewayQuote"'));
  const mutedAt = b.now();
  await until(() => market.silent.includes(ES), 15_000, 'the watchdog to notice the silence');
  const detectedAfter = b.now() - mutedAt;
  // Not before the bound; within it plus a bar (the bars must advance) and a check.
  expect(detectedAfter).toBeGreaterThanOrEqual(BOUND_MS - 20_000);
  expect(detectedAfter).toBeLessThanOrEqual(BOUND_MS + 60_000 + 30_000);
  expect(lines.some((l) => l.level === 40 && /quotes stopped/.test(l.msg) && l.contractId === ES)).toBe(true);

  // Meanwhile the guard and trailing stops price from the last bar: no quoted price, the bar's close.
  expect(market.lastPrice(ES)).toBeUndefined();
  await until(() => Number.isFinite(lastClose), 5_000, 'a closed bar');
  // Bar prices are in ticks already (converted at the poller).
  await until(
    () => session!.engine.accounting.lastPrice(ES) === lastClose,
    5_000,
    'the engine to price from the last bar',
  );
  // A reconnect that brings no quote is tried again after the bound.
  await until(() => market.restarts >= 2, 15_000, 'a second reconnect while quotes stay silent');
  expect(market.silent).toEqual([ES]);

  // From now on only the connections open now are muted: the watchdog's next reconnect brings quotes back.
  const stale = hubProxy.accepted;
  hubProxy.discard(
    (record, connection, path) =>
      connection <= stale && path.startsWith('/hubs/market') && record.includes('"GatewayQuote"'),
  );
  await until(
    () => market.silent.length === 0 && market.lastPrice(ES) !== undefined,
    15_000,
    'quotes after the reconnect',
  );
  expect(hubProxy.accepted).toBeGreaterThan(stale);
  expect(hubProxy.discarded.some((r) => r.includes('"GatewayQuote"'))).toBe(true);
  expect(lines.some((l) => /quotes back/.test(l.msg) && l.contractId === ES)).toBe(true);
  const journaled = session.journal.entries().filter((e) => e.kind === 'market-hub');
  expect(journaled.length).toBeGreaterThanOrEqual(2);
}, 60_000);
