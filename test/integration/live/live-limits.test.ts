/**
 * The account's rule limits reach the risk guard from the gateway's TradingAccount/find: an account on a
 * template with a daily loss limit and an intraday-trailing maximum loss limit, which traded before the
 * session started (so today's starting balance, the balance and the trailing floor all differ).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import smaCross from '../../../src/strategies/sma-cross.ts';
import { silentLogger } from '../../../src/engine/log.ts';
import type { Decision } from '../../../src/engine/runner.ts';
import type { AccountConfig } from '../../../src/engine/account-rules.ts';
import { AdminClient } from '../../../src/adapters/gateway/admin-client.ts';
import { TradingClient } from '../../../src/adapters/gateway/trading.ts';
import { liveConfigSchema } from '../../../src/adapters/live/live-config.ts';
import type { RiskConfig } from '../../../src/engine/risk.ts';
import { LiveSession } from '../../../src/adapters/live/trading-session.ts';
import { MaximumSource } from '../../../src/sim/index.ts';
import { ES, startBench, type Bench } from './live-harness.ts';

const TRADER = { userName: 'limits-trader', apiKey: 'limits-key' };
const ACCOUNT = 'LIM-25K-1';

let b: Bench;
let trader: TradingClient;
let admin: AdminClient;
let accountId: number;

beforeEach(async () => {
  b = await startBench({
    sim: {
      templates: [
        {
          name: 'LIM-25K',
          startingBalance: 25_000,
          margin: 25_000,
          dailyLossLimit: { limit: 500 },
          maximumLossLimit: { limit: 1_500, maximumSource: MaximumSource.HighestIntradayEquity },
        },
      ],
      users: [{ ...TRADER, accounts: [{ name: ACCOUNT, template: 'LIM-25K' }] }],
    },
  });
  trader = new TradingClient({ baseUrl: b.sim.tradingUrl, ...TRADER, now: b.now, logger: silentLogger });
  admin = new AdminClient({ baseUrl: b.sim.adminUrl, headers: b.sim.adminHeaders, logger: silentLogger, now: b.now });
  await trader.login();
  accountId = (await trader.searchAccounts(true)).find((a) => a.name === ACCOUNT)!.id;
  // A round trip before the session: the balance moves off today's starting balance, and the intraday
  // high-water mark (hence the maximum loss floor) is wherever the market took the open position.
  await trader.placeOrder({ accountId, contractId: ES, type: 2, side: 0, size: 2 });
  for (let i = 0; i < 10; i++) b.sim.clock.advance(60_000);
  await trader.closePosition({ accountId, contractId: ES });
  b.sim.clock.advance(60_000);
});
afterEach(async () => {
  await trader.close();
  await admin.close();
  await b.close();
});

function start(
  o: { limits?: Partial<AccountConfig>; risk?: RiskConfig; adminUrl?: string } = {},
): Promise<LiveSession> {
  const config = liveConfigSchema.parse({
    strategy: { name: 'sma-cross', id: 'smacross', params: { fast: 2, slow: 4, size: 1 } },
    contracts: [ES],
    timeframe: { unit: 'minute', unitNumber: 1 },
    account: { name: ACCOUNT },
    journal: b.journalFile,
    risk: o.risk ?? {},
  });
  return LiveSession.start({
    config,
    mode: 'paper',
    tradingUrl: b.sim.tradingUrl,
    credentials: TRADER,
    admin: { url: o.adminUrl ?? b.sim.adminUrl, headers: b.sim.adminHeaders },
    strategy: smaCross,
    logger: silentLogger,
    now: b.now,
    ...(o.limits === undefined ? {} : { account: o.limits }),
  });
}

describe('account limits from TradingAccount/find', () => {
  it('with no limits in the config, the guard uses the gateway floors and rejects new risk at them', async () => {
    const record = await admin.findTradingAccount(ACCOUNT);
    const balance = record.balance;
    expect(Math.abs(balance - record.startOfDayBalance)).toBeGreaterThan(1);
    // A safety buffer that puts the current equity exactly at the gateway's daily floor plus the buffer.
    const dailyFloor = record.startOfDayBalance - 500;
    const s = await start({ risk: { safetyBuffer: balance - dailyFloor + 0.01 } });
    try {
      const rules = s.engine.rules;
      expect(rules.config.dailyLossLimit).toBe(500);
      expect(rules.config.maximumLossLimit).toEqual({ amount: 1_500, variant: 'trailingEndOfDay' });
      expect(rules.config.personalDailyLossLimit).toBeUndefined();
      // Measured from the gateway's start-of-day balance, not from the balance at start.
      expect(rules.dailyLossFloor()).toBeCloseTo(dailyFloor, 6);
      expect(rules.maximumLossFloor()).toBeCloseTo(record.drawDownLimit, 6);
      expect(s.engine.snapshot().balance).toBeCloseTo(balance, 6);
      expect(s.executor.anomalies).toEqual([]);

      const decisions: Decision[] = [];
      s.engine.decisions$.subscribe((d) => decisions.push(d));
      s.engine.submit('smacross', { kind: 'place', contractId: ES, side: 'buy', size: 1, order: { type: 'market' } });
      expect(decisions).toHaveLength(1);
      expect(decisions[0]!.result).toMatchObject({ accepted: false, code: 'DAILY_LOSS_LIMIT' });
      await s.executor.idle();
      expect(await trader.searchOpenOrders(accountId)).toEqual([]);
    } finally {
      await s.stop();
    }
  });

  it('config limits override the gateway and a disagreement is reported as an anomaly', async () => {
    const s = await start({ limits: { dailyLossLimit: 800, personalDailyLossLimit: 300 } });
    try {
      expect(s.engine.rules.config.dailyLossLimit).toBe(800);
      expect(s.engine.rules.config.personalDailyLossLimit).toBe(300);
      // What the config leaves out still comes from the gateway.
      expect(s.engine.rules.config.maximumLossLimit?.amount).toBe(1_500);
      expect(s.executor.anomalies.map((a) => a.message)).toEqual([
        expect.stringContaining('dailyLossLimit: guard 800, gateway 500'),
      ]);
      const journaled = s.journal.entries({ kind: 'anomaly' });
      expect(journaled).toHaveLength(1);
      // Polling the same record again does not repeat the report.
      b.sim.clock.advance(120_000);
      await s.poller.tick();
      expect(s.executor.anomalies).toHaveLength(1);
    } finally {
      await s.stop();
    }
  });

  it('a limit changed at the gateway during the run is journaled and reaches the guard at once', async () => {
    // The administration answers go through the proxy, which rewrites the record as a changed limit would.
    const adminUrl = `${b.proxy.url}/admin`;
    const s = await start({ adminUrl });
    try {
      expect(s.engine.rules.config.personalDailyLossLimit).toBeUndefined();
      b.proxy.inject({
        path: '/admin/TradingAccount/find',
        action: {
          kind: 'malformed',
          corrupt: (body) => JSON.stringify({ ...JSON.parse(body), personalDailyLossLimit: 200, dailyLoss: 400 }),
        },
      });
      b.sim.clock.advance(120_000);
      await s.poller.tick();
      const seen = s.journal.entries({ kind: 'trading-account' }).map((e) => e.payload);
      expect(seen).toHaveLength(2);
      expect(seen[1]).toMatchObject({ personalDailyLossLimit: 200, dailyLossLimit: 400 });
      expect(s.engine.rules.config.personalDailyLossLimit).toBe(200);
      expect(s.engine.rules.config.dailyLossLimit).toBe(400);
      expect(s.engine.rules.dailyLossFloor()).toBeCloseTo(
        (await admin.findTradingAccount(ACCOUNT)).startOfDayBalance - 400,
        6,
      );
      // The guard now agrees with the gateway: nothing to report.
      expect(s.executor.anomalies).toEqual([]);
    } finally {
      await s.stop();
    }
  });

  it('a config override still wins over a limit changed at the gateway, and the difference is reported', async () => {
    const adminUrl = `${b.proxy.url}/admin`;
    const s = await start({ adminUrl, limits: { dailyLossLimit: 450 } });
    try {
      b.proxy.inject({
        path: '/admin/TradingAccount/find',
        action: {
          kind: 'malformed',
          corrupt: (body) => JSON.stringify({ ...JSON.parse(body), personalDailyProfitTarget: 900, dailyLoss: 400 }),
        },
      });
      b.sim.clock.advance(120_000);
      await s.poller.tick();
      expect(s.engine.rules.config.dailyLossLimit).toBe(450);
      expect(s.engine.rules.config.personalDailyProfitTarget).toBe(900);
      expect(s.executor.anomalies.map((a) => a.message).at(-1)).toContain('dailyLossLimit: guard 450, gateway 400');
    } finally {
      await s.stop();
    }
  });
});
