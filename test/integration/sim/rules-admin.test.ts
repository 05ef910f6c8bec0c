/** The rule engine and the administration interface, driven by the project's clients over loopback. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AdminClient } from '../../../src/adapters/gateway/admin-client.ts';
import type { TradingClient } from '../../../src/adapters/gateway/trading.ts';
import { OrderSide, OrderType, PlaceErrorCode, ViolationDuration, ViolationType } from '../../../src/protocol/codes.ts';
import type { SimHandle } from '../../../src/sim/index.ts';
import { ES, ISO, MES, START, advanceUntil, openSession, rawPost, type Session } from './sim-harness.ts';

describe('simulator rules and administration', () => {
  let sim: SimHandle;
  let client: TradingClient;
  let admin: AdminClient;
  let ids: Record<string, number>;

  let session: Session;

  beforeAll(async () => {
    session = await openSession();
    ({ sim, client, admin, ids } = session);
  });
  afterAll(() => session.close());

  /**
   * Buy and sell `size` at once: no market move, so the day's loss is the fees and the spread (bought at the
   * ask, sold at the bid); returns that loss.
   */
  async function roundTrip(accountId: number, size = 2, contractId = ES): Promise<number> {
    const quote = sim.quote(contractId)!;
    await client.placeOrder({ accountId, contractId, type: OrderType.Market, side: OrderSide.Bid, size });
    // Bought at the ask and marked at the last trade, the position can break a tight limit at once: then
    // the rule engine has sold it (at the bid) and the account is locked.
    await client
      .placeOrder({ accountId, contractId, type: OrderType.Market, side: OrderSide.Ask, size })
      .catch((error: { errorCode?: number }) => {
        if (error.errorCode !== PlaceErrorCode.AccountViolation) throw error;
      });
    const tick = contractId === ES ? { size: 0.25, value: 12.5, fee: 1.4 } : { size: 0.25, value: 1.25, fee: 0.37 };
    return Math.round((((quote.ask - quote.bid) / tick.size) * tick.value * size + 2 * size * tick.fee) * 100) / 100;
  }
  const market = (accountId: number) => ({
    accountId,
    contractId: ES,
    type: OrderType.Market,
    side: OrderSide.Bid,
    size: 1,
  });
  const violationsOf = async (accountId: number) =>
    (await admin.exportViolations({})).filter((v) => v.accountId === accountId);

  describe('rule engine', () => {
    it('records a temporary daily-loss-limit break (type 6, duration 2, ruleId) and locks the account until the next trade day', async () => {
      const accountId = ids['T-DAILY']!;
      const loss = await roundTrip(accountId);
      const [violation] = await violationsOf(accountId);
      expect(violation).toMatchObject({
        type: ViolationType.RuleBreak,
        duration: ViolationDuration.Temporary,
        accountName: 'T-DAILY',
        realizedPnl: -loss,
        dailyLossLimit: 5,
        voided: false,
      });
      const template = (await admin.listTemplates()).find((t) => t.name === 'TIGHT-DAILY')!;
      const rule = await admin.ruleConfiguration(template.id, violation!.ruleId!);
      expect(rule.configuration.dailyLossLimit).toMatchObject({ limit: 5 });
      expect(rule.configuration.maximumLossLimit).toBeNull();
      expect(rule.configuration.violationDuration).toBe(2);
      await expect(client.placeOrder(market(accountId))).rejects.toMatchObject({ errorCode: 4 });
      expect((await client.searchAccounts(false)).find((a) => a.id === accountId)?.canTrade).toBe(false);
      // The next trading day starts at 17:00 Chicago: 23:00 UTC in November (CST), not 22:00 UTC.
      expect(violation!.expiresAt).toBe('2025-11-03T23:00:00.000Z');
      sim.clock.advance(Math.max(0, Date.UTC(2025, 10, 3, 22, 30) - sim.clock.now()));
      await expect(client.placeOrder(market(accountId))).rejects.toMatchObject({ errorCode: 4 });
      sim.clock.advance(Date.UTC(2025, 10, 3, 23, 0, 1) - sim.clock.now());
      await client.placeOrder(market(accountId));
      await client.closePosition({ accountId, contractId: ES });
    });

    it('records a permanent maximum-loss-limit break (type 6, duration 1) that stops the account for good', async () => {
      const accountId = ids['T-MAX']!;
      await roundTrip(accountId);
      const [violation] = await violationsOf(accountId);
      expect(violation).toMatchObject({
        type: ViolationType.RuleBreak,
        duration: ViolationDuration.Permanent,
        minimumBalance: 49_995,
      });
      const template = (await admin.listTemplates()).find((t) => t.name === 'TIGHT-MAX')!;
      expect(
        (await admin.ruleConfiguration(template.id, violation!.ruleId!)).configuration.maximumLossLimit,
      ).toMatchObject({ limit: 5 });
      sim.clock.advance(3 * 86_400_000);
      await expect(client.placeOrder(market(accountId))).rejects.toMatchObject({
        errorCode: 4,
        errorMessage: expect.stringMatching(/permanently/),
      });
      expect((await admin.findTradingAccount('T-MAX')).status).toBe(2);
      expect((await admin.exportAccounts()).find((a) => a.id === accountId)).toMatchObject({ ineligible: true });
    });

    it('records a personal daily loss limit violation (type 3, duration 0, no ruleId)', async () => {
      const accountId = ids['T-PERSONAL-LOSS']!;
      await roundTrip(accountId);
      expect(await violationsOf(accountId)).toEqual([
        expect.objectContaining({
          type: ViolationType.PersonalDailyLossLimit,
          duration: ViolationDuration.Personal,
          ruleId: null,
          personalDailyLossLimit: 5,
        }),
      ]);
      await expect(client.placeOrder(market(accountId))).rejects.toMatchObject({ errorCode: 4 });
    });

    it('records a personal daily profit target (type 5) as the market moves, and flattens the account', async () => {
      const accountId = ids['T-PERSONAL-TARGET']!;
      await client.placeOrder({ accountId, contractId: MES, type: OrderType.Market, side: OrderSide.Bid, size: 1 });
      await advanceUntil(sim, async () => (await violationsOf(accountId)).length > 0);
      expect((await violationsOf(accountId))[0]).toMatchObject({
        type: ViolationType.PersonalDailyProfitTarget,
        duration: 0,
        ruleId: null,
        personalDailyProfitTarget: 1,
      });
      expect(await client.searchOpenPositions(accountId)).toEqual([]);
    });

    it('liquidates a loss-limit break while a position is open, cancelling working orders', async () => {
      const accountId = ids['T-MAIN']!;
      const pair = [accountId, ids['T-FOLLOWER']!];
      const brokenIn = async () =>
        (await admin.exportViolations({})).filter(
          (v) => v.type === ViolationType.RuleBreak && pair.includes(v.accountId),
        );
      expect(await brokenIn()).toEqual([]);
      // 50K: $1,000 daily loss limit; 40 MES short or long moves $50 a tick.
      const [mes] = await client.retrieveBars({
        contractId: MES,
        live: false,
        startTime: ISO(sim.clock.now() - 5000),
        endTime: ISO(sim.clock.now()),
        unit: 1,
        unitNumber: 1,
        limit: 1,
        includePartialBar: true,
      });
      await client.placeOrder({
        accountId,
        contractId: MES,
        type: OrderType.Limit,
        side: OrderSide.Bid,
        size: 1,
        limitPrice: mes!.c - 500,
      });
      await client.placeOrder({ accountId, contractId: MES, type: OrderType.Market, side: OrderSide.Bid, size: 40 });
      await client.placeOrder({
        accountId: ids['T-FOLLOWER']!,
        contractId: MES,
        type: OrderType.Market,
        side: OrderSide.Ask,
        size: 40,
      });
      // One of the two accounts loses $1,000 as the market moves either way.
      await advanceUntil(sim, async () => (await brokenIn()).length > 0, { stepMs: 5 * 60_000 });
      const broken = await brokenIn();
      expect(broken).toHaveLength(1);
      const loser = broken[0]!.accountId;
      expect(await client.searchOpenPositions(loser)).toEqual([]);
      expect(await client.searchOpenOrders(loser)).toEqual([]);
      expect(broken[0]!.violationTotalDayPnl).toBeLessThanOrEqual(-1000);
      await client.closePosition({ accountId: loser === accountId ? ids['T-FOLLOWER']! : accountId, contractId: MES });
    });
  });

  describe('administration', () => {
    it('lists, reads and creates account templates', async () => {
      const templates = await admin.listTemplates();
      expect(templates.map((t) => t.name)).toEqual(expect.arrayContaining(['50K', 'PRACTICE', 'TIGHT-DAILY']));
      const fifty = templates.find((t) => t.name === '50K')!;
      expect(await admin.templateById(fifty.id)).toEqual(fifty);
      const created = await admin.createTemplate({
        title: '100K Combine',
        name: '100K',
        description: 'bigger',
        startingBalance: 100_000,
        margin: 80_000,
        titleColor: '#112233',
        tag: 0,
      });
      expect(created).toMatchObject({
        name: '100K',
        startingBalance: 100_000,
        margin: 80_000,
        titleColor: '#112233',
        isActive: true,
        tag: 0,
      });
      expect(await admin.templateById(created.id)).toEqual(created);
      await expect(
        admin.createTemplate({ title: 'again', name: '100K', description: '', tag: 0 }),
      ).rejects.toMatchObject({ code: 'GATEWAY_REJECTED' });
      await expect(admin.templateById(9999)).rejects.toMatchObject({ httpStatus: 404 });
    });

    it('reads the rule configurations of a template with the fields of spec 2.11', async () => {
      const fifty = (await admin.listTemplates()).find((t) => t.name === '50K')!;
      const daily = await admin.ruleConfiguration(fifty.id, 1);
      const maximum = await admin.ruleConfiguration(fifty.id, 2);
      expect(daily).toMatchObject({
        accountTemplateId: fifty.id,
        ruleId: 1,
        configuration: { violationDuration: 2, dailyLossLimit: { limit: 1000, source: 0 }, maximumLossLimit: null },
      });
      expect(maximum.configuration).toMatchObject({
        violationDuration: 1,
        dailyLossLimit: null,
        maximumLossLimit: { limit: 2000, maximumSource: 0 },
      });
      await expect(admin.ruleConfiguration(fifty.id, 999)).rejects.toMatchObject({ httpStatus: 404 });
    });

    it('finds users by user name (case-insensitive) and by email', async () => {
      expect(await admin.findUserByName('TRADER')).toMatchObject({
        userName: 'Trader',
        email: 'trader@example.com',
        hasSignedAgreements: true,
      });
      expect(await admin.findUserByEmail('trader@example.com')).toMatchObject({ userName: 'Trader' });
      expect(await admin.findUserByName('unsigned')).toMatchObject({ hasSignedAgreements: false });
      await expect(admin.findUserByName('ghost')).rejects.toMatchObject({ httpStatus: 404 });
    });

    it('registers users: result 3 for a bad email, a user id and login token otherwise', async () => {
      const base = {
        password: 'secret',
        userName: 'newbie',
        firstName: 'New',
        lastName: 'Bie',
        screenName: 'nb',
        internalTag: 0,
      };
      await expect(admin.register({ ...base, email: 'not-an-email' })).rejects.toMatchObject({ errorCode: 3 });
      const ok = await admin.register({ ...base, email: 'newbie@example.com' });
      expect(ok).toMatchObject({
        result: 0,
        errorMessage: null,
        userId: expect.any(Number),
        loginToken: expect.any(String),
      });
      expect(await admin.findUserByEmail('newbie@example.com')).toMatchObject({
        userName: 'newbie',
        userId: ok.userId,
      });
      const accounts = await rawPost(
        `${sim.tradingUrl}/api/Account/search`,
        { onlyActiveAccounts: false },
        { authorization: `Bearer ${ok.loginToken}` },
      );
      expect(accounts.json).toMatchObject({ success: true, accounts: [] });
      await expect(admin.register({ ...base, email: 'other@example.com' })).rejects.toMatchObject({ errorCode: 1 });
    });

    it('finds a trading account by name through POST and GET, with personal limits', async () => {
      const viaPost = await admin.findTradingAccount('T-PERSONAL-LOSS');
      const viaGet = await admin.findTradingAccount('T-PERSONAL-LOSS', { via: 'GET' });
      expect(viaGet).toEqual(viaPost);
      expect(viaPost).toMatchObject({
        accountName: 'T-PERSONAL-LOSS',
        accountId: ids['T-PERSONAL-LOSS'],
        personalDailyLossLimit: 5,
        startingBalance: 100_000,
        isFollower: false,
      });
      expect(await admin.findTradingAccount('T-FOLLOWER')).toMatchObject({
        isFollower: true,
        dailyLoss: 1000,
        maximumLoss: 2000,
        drawDownLimit: 48_000,
      });
      await expect(admin.findTradingAccount('NOPE')).rejects.toMatchObject({ httpStatus: 404 });
    });

    it('exports trades within 30 days and refuses a longer range', async () => {
      const now = sim.clock.now();
      const trades = await admin.exportTrades({ from: ISO(START - 86_400_000), to: ISO(now) });
      expect(trades.length).toBeGreaterThan(0);
      const closing = trades.find((t) => t.exitPrice !== null)!;
      expect(closing).toMatchObject({ contractGroupName: expect.any(String), exitedAt: expect.any(String) });
      const refused = await rawPost(
        `${sim.adminUrl}/DataExport/trades`,
        { from: ISO(now - 31 * 86_400_000), to: ISO(now) },
        sim.adminHeaders,
      );
      expect(refused.json).toMatchObject({ success: false, errorMessage: expect.stringMatching(/30 days/) });
    });

    it('exports accounts and positions, all of them or those updated after a time', async () => {
      const accounts = await admin.exportAccounts();
      expect(accounts.map((a) => a.accountName)).toEqual(expect.arrayContaining(['T-MAIN', 'DEMO-50K-1']));
      expect(await admin.exportAccounts(ISO(sim.clock.now() + 1000))).toEqual([]);
      const accountId = ids['T-LIVE']!;
      const stamp = sim.clock.now();
      sim.clock.advance(1000);
      await client.placeOrder({ accountId, contractId: ES, type: OrderType.Market, side: OrderSide.Ask, size: 2 });
      const recent = await admin.exportAccounts(ISO(stamp));
      expect(recent.map((a) => a.id)).toEqual([accountId]);
      const positions = await admin.exportPositions(ISO(stamp));
      expect(positions).toEqual([expect.objectContaining({ symbolId: 'F.US.EP', positionSize: -2, contract: 'ESZ5' })]);
      expect((await admin.exportPositions()).length).toBeGreaterThanOrEqual(1);
      expect(await admin.exportPositions(ISO(sim.clock.now() + 1000))).toEqual([]);
      await client.closePosition({ accountId, contractId: ES });
    });

    it('computes daily and day statistics from the trades', async () => {
      const accountId = ids['T-STATS']!;
      await client.placeOrder({ accountId, contractId: ES, type: OrderType.Market, side: OrderSide.Bid, size: 1 });
      sim.clock.advance(10 * 60_000);
      await client.placeOrder({ accountId, contractId: ES, type: OrderType.Market, side: OrderSide.Ask, size: 1 });
      const trades = await client.searchTrades({ accountId, startTimestamp: ISO(START) });
      const pnl = trades.reduce((s, t) => s + (t.profitAndLoss ?? 0), 0);
      const [daily] = await admin.dailyStatistics({ tradingAccountId: accountId });
      expect(daily).toMatchObject({
        totalTrades: 1,
        totalFees: 2.8,
        totalPnL: pnl,
        winningTrades: pnl > 0 ? 1 : 0,
        losingTrades: pnl < 0 ? 1 : 0,
        neutralTrades: pnl === 0 ? 1 : 0,
        balance: Math.round((100_000 + pnl - 2.8) * 100) / 100,
        products: [expect.objectContaining({ symbolId: 'F.US.EP', totalTradedContracts: 2 })],
      });
      const [day] = await admin.dayStatistics({ tradingAccountId: accountId });
      expect(day).toMatchObject({ tradeDate: daily!.tradeDate, totalTrades: 1, totalFees: 2.8, totalPnL: pnl });
      expect(await admin.dayStatistics({ tradingAccountId: accountId, startTradeDay: '2030-01-01T00:00:00Z' })).toEqual(
        [],
      );
    });
  });
});
