/**
 * Paper trading on the local simulator across the 17:00 CT boundary, with the administration record
 * compared at every poll: the guard's trading day turns at 17:00 by the clock as the gateway's does, and
 * the maximum loss limit's variant is the simulator template's (`static` for the default 50K), so a
 * winning day leaves no floor disagreement behind. No anomaly.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import smaCross from '../../../src/strategies/sma-cross.ts';
import { silentLogger } from '../../../src/engine/log.ts';
import { AdminClient } from '../../../src/adapters/gateway/admin-client.ts';
import { TradingClient } from '../../../src/adapters/gateway/trading.ts';
import { liveConfigSchema } from '../../../src/adapters/live/live-config.ts';
import { LiveSession } from '../../../src/adapters/live/trading-session.ts';
import { ES, startBench, type Bench } from './live-harness.ts';

/** Monday 2025-01-06, 09:00 CT: a winning day is made before the session starts at 16:55. */
const DAY = Date.UTC(2025, 0, 6, 15, 0);

let b: Bench;
let trader: TradingClient;
let admin: AdminClient;

beforeEach(async () => {
  b = await startBench({ sim: { startTime: DAY } });
  trader = new TradingClient({
    baseUrl: b.sim.tradingUrl,
    userName: b.sim.demo.userName,
    apiKey: b.sim.demo.apiKey,
    now: b.now,
    logger: silentLogger,
  });
  admin = new AdminClient({ baseUrl: b.sim.adminUrl, headers: b.sim.adminHeaders, logger: silentLogger, now: b.now });
  await trader.login();
});
afterEach(async () => {
  await trader.close();
  await admin.close();
  await b.close();
});

/** A long held until it is 10 ticks in profit, then closed (the simulator's market is seeded): a winning day. */
async function winTheDay(accountId: number): Promise<number> {
  await trader.placeOrder({ accountId, contractId: ES, type: 2, side: 0, size: 1 });
  b.sim.clock.advance(30_000);
  const entry = (await trader.searchOpenPositions(accountId))[0]!.averagePrice;
  for (let step = 0; step < 400; step++) {
    b.sim.clock.advance(15_000);
    const last = b.sim.quote(ES)?.last;
    if (last !== undefined && last >= entry + 2.5) break;
  }
  await trader.closePosition({ accountId, contractId: ES });
  b.sim.clock.advance(10_000);
  const balance = (await trader.searchAccounts(true)).find((a) => a.id === accountId)!.balance;
  expect(balance).toBeGreaterThan(50_000);
  return balance;
}

function start(variant: boolean): Promise<LiveSession> {
  const config = liveConfigSchema.parse({
    strategy: { name: 'sma-cross', id: 'smacross', params: { fast: 2, slow: 4, size: 1 } },
    contracts: [ES],
    timeframe: { unit: 'minute', unitNumber: 1 },
    account: { id: b.sim.demo.accountId },
    journal: b.journalFile,
    gateway: { adminEveryMs: 30_000 },
  });
  return LiveSession.start({
    config,
    mode: 'paper',
    tradingUrl: b.sim.tradingUrl,
    credentials: { userName: b.sim.demo.userName, apiKey: b.sim.demo.apiKey },
    admin: { url: b.sim.adminUrl, headers: b.sim.adminHeaders },
    strategy: smaCross,
    logger: silentLogger,
    now: b.now,
    ...(variant ? { maximumLossVariant: (id: number) => b.sim.maximumLossVariant(id) } : {}),
  });
}

async function runUntil(s: LiveSession, until: number): Promise<void> {
  while (b.now() < until) {
    b.sim.clock.advance(15_000);
    await s.poller.tick();
    await s.executor.idle();
  }
}

describe('paper on the local simulator across 17:00 CT', () => {
  it('the trading day turns with the gateway and the MLL variant is the template: no anomaly', async () => {
    expect(b.sim.maximumLossVariant(b.sim.demo.accountId)).toBe('static');
    await winTheDay(b.sim.demo.accountId);
    b.sim.clock.advance(Date.UTC(2025, 0, 6, 22, 55) - b.now()); // 16:55 CT
    const s = await start(true);
    try {
      expect(s.engine.rules.config.maximumLossLimit).toEqual({ amount: 2_000, variant: 'static' });
      s.run();
      await runUntil(s, Date.UTC(2025, 0, 6, 23, 6)); // 17:06 CT: the new day's session is trading
      expect(s.engine.rules.tradingDay).toBe('2025-01-07');
      const record = await admin.findTradingAccount(b.sim.demo.accountName);
      expect(s.engine.rules.maximumLossFloor()).toBeCloseTo(record.drawDownLimit, 2);
      expect(s.engine.rules.dailyLossFloor()).toBeCloseTo(record.startOfDayBalance - 1_000, 2);
      expect(s.executor.anomalies).toEqual([]);
    } finally {
      await s.stop();
    }
  });

  it('without the template variant (a gateway that cannot tell it) the winning day shows the floors apart', async () => {
    await winTheDay(b.sim.demo.accountId);
    b.sim.clock.advance(Date.UTC(2025, 0, 6, 22, 55) - b.now());
    const s = await start(false);
    try {
      s.run();
      await runUntil(s, Date.UTC(2025, 0, 6, 23, 6));
      expect(s.executor.anomalies.map((a) => a.message).join('\n')).toMatch(/maximumLossFloor: guard/);
    } finally {
      await s.stop();
    }
  });
});
