/** Every administration endpoint (spec 4.2) with its verb and parameter placement, exports and violations. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  AdminClient,
  type GatewayError,
  GatewayRejection,
  violationKind,
} from '../../../src/adapters/gateway/index.ts';
import { ScriptedServer } from './scripted-server.ts';
import * as F from './fixtures.ts';

let server: ScriptedServer;
let admin: AdminClient;

beforeEach(async () => {
  server = await ScriptedServer.start();
  admin = new AdminClient({
    baseUrl: server.url,
    headers: { 'x-api-key': 'admin-key' },
    timeoutMs: 2_000,
    retry: { baseDelayMs: 1, maxDelayMs: 2 },
  });
});

afterEach(async () => {
  await admin.close();
  await server.close();
});

const DAY = 86_400_000;

describe('administration endpoints', () => {
  it('templates: list, by id (path parameter), create', async () => {
    expect(await admin.listTemplates()).toEqual([F.template]);
    expect(server.last('/AccountTemplate')).toMatchObject({ method: 'GET', headers: { 'x-api-key': 'admin-key' } });
    expect(await admin.templateById(77)).toEqual({ ...F.template, id: 77 });
    expect(server.last('/AccountTemplate/id/77')?.method).toBe('GET');
    const created = await admin.createTemplate({
      title: '100K',
      name: '100K Combine',
      description: 'd',
      tag: 1,
      startingBalance: 100000,
    });
    expect(created).toMatchObject({ id: 13, title: '100K', tag: 1 });
    expect(server.last('/AccountTemplate/create')).toMatchObject({
      method: 'POST',
      body: { title: '100K', name: '100K Combine', description: 'd', tag: 1, startingBalance: 100000 },
    });
  });

  it('template create with success false is GATEWAY_REJECTED with the message', async () => {
    server.script('/AccountTemplate/create', { body: { success: false, errorMessage: 'name taken', template: null } });
    await expect(admin.createTemplate({ title: 't', name: 'n', description: 'd', tag: 0 })).rejects.toMatchObject({
      code: 'GATEWAY_REJECTED',
      endpoint: 'AccountTemplate/create',
      errorMessage: 'name taken',
      outcome: 'rejected',
    });
    expect(server.count('/AccountTemplate/create')).toBe(1);
  });

  it('rule configuration by two path parameters', async () => {
    const rule = await admin.ruleConfiguration(12, 7);
    expect(rule).toEqual(F.ruleConfiguration('daily', 7, 12));
    expect(server.last('/AccountTemplateRule/rules/12/7')?.method).toBe('GET');
  });

  it('users are found with PUT and a query parameter', async () => {
    expect(await admin.findUserByName('trader1')).toEqual(F.user);
    expect(server.last('/User/find/username')).toMatchObject({
      method: 'PUT',
      query: { userName: 'trader1' },
      body: undefined,
    });
    expect(await admin.findUserByEmail('trader1@example.com')).toEqual(F.user);
    expect(server.last('/User/find')).toMatchObject({ method: 'PUT', query: { email: 'trader1@example.com' } });
  });

  it('register: result 0 returns the record, result 3 is InvalidEmail', async () => {
    const req = {
      password: 'p',
      email: 'a@b.c',
      userName: 'u',
      firstName: 'f',
      lastName: 'l',
      screenName: null,
      internalTag: 0,
    };
    expect(await admin.register(req)).toMatchObject({ userId: 992, result: 0 });
    expect(server.last('/Register')?.body).toEqual(req);
    server.script('/Register', {
      body: { userId: null, loginToken: null, errorMessage: 'Invalid email format', result: 3 },
    });
    const error = await admin.register({ ...req, email: 'nope' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GatewayRejection);
    expect(error).toMatchObject({ errorCode: 3, errorName: 'InvalidEmail', errorMessage: 'Invalid email format' });
  });

  it('violations export', async () => {
    expect(await admin.exportViolations()).toEqual([F.violation]);
    expect(server.last('/Violations/export')?.body).toEqual({});
    await admin.exportViolations({ startTime: '2025-02-01T00:00:00Z', endTime: null });
    expect(server.last('/Violations/export')?.body).toEqual({ startTime: '2025-02-01T00:00:00Z', endTime: null });
  });

  it('accounts and positions exports, with and without after', async () => {
    expect(await admin.exportAccounts()).toEqual([F.exportedAccount]);
    expect(server.last('/DataExport/accounts')?.body).toEqual({});
    await admin.exportAccounts('2025-02-01T00:00:00Z');
    expect(server.last('/DataExport/accounts')?.body).toEqual({ after: '2025-02-01T00:00:00Z' });
    expect(await admin.exportPositions(null)).toEqual([F.exportedPosition]);
    expect(server.last('/DataExport/positions')?.body).toEqual({ after: null });
  });

  it('statistics: daily and day stats', async () => {
    const req = { tradingAccountId: 704, startTradeDay: '2025-02-01T00:00:00Z' };
    expect(await admin.dailyStatistics(req)).toEqual([F.dailyStatistics]);
    expect(server.last('/Statistics/admin/daily')).toMatchObject({ method: 'POST', body: req });
    expect(await admin.dayStatistics(req)).toEqual([F.dayStatistics]);
    expect(server.last('/Statistics/admin/daystats')?.body).toEqual(req);
  });

  it('trading account: declared POST with accountName in the query, and the GET form', async () => {
    expect(await admin.findTradingAccount('PRAC-V2-1')).toEqual(F.tradingAccount);
    expect(server.last('/TradingAccount/find')).toMatchObject({ method: 'POST', query: { accountName: 'PRAC-V2-1' } });
    await admin.findTradingAccount('PRAC V2/1', { via: 'GET' });
    expect(server.last('/TradingAccount/find')).toMatchObject({
      method: 'GET',
      query: { accountName: 'PRAC V2/1' },
      headers: { accept: 'application/json' },
    });
  });

  it('an HTTP 401 is UNAUTHORIZED and not retried', async () => {
    server.script('/AccountTemplate', { status: 401 });
    await expect(admin.listTemplates()).rejects.toMatchObject({ code: 'UNAUTHORIZED', httpStatus: 401 });
    expect(server.count('/AccountTemplate')).toBe(1);
  });

  it('a bare record missing a field names its path', async () => {
    const { email: _gone, ...partial } = F.user;
    server.script('/User/find/username', { body: partial });
    const error = (await admin.findUserByName('x').catch((e: unknown) => e)) as GatewayError;
    expect(error).toMatchObject({ code: 'MALFORMED_RESPONSE', endpoint: 'User/find/username' });
    expect(error.issues?.[0]).toMatchObject({ path: 'email', received: undefined });
  });
});

describe('trades export and its 30-day windows', () => {
  it('a range over 30 days is refused before sending', async () => {
    const error = (await admin
      .exportTrades({ from: '2025-01-01T00:00:00Z', to: '2025-01-31T00:00:01Z' })
      .catch((e: unknown) => e)) as GatewayError;
    expect(error).toMatchObject({ code: 'RANGE_REFUSED', outcome: 'not-sent', endpoint: 'DataExport/trades' });
    expect(error.message).toMatch(/30-day/);
    expect(server.count('/DataExport/trades')).toBe(0);
  });

  it('exactly 30 days is sent', async () => {
    await admin.exportTrades({ from: new Date('2025-01-01T00:00:00Z'), to: '2025-01-31T00:00:00Z' });
    expect(server.last('/DataExport/trades')?.body).toEqual({
      from: '2025-01-01T00:00:00.000Z',
      to: '2025-01-31T00:00:00.000Z',
    });
  });

  it('a long range is split into windows of at most 30 days and merged without duplicates', async () => {
    // Trade i is created on day i; each window returns the trades inside its bounds, edges included.
    const base = Date.parse('2025-01-01T00:00:00Z');
    server.on('/DataExport/trades', (r) => {
      const { from, to } = r.body as { from: string; to: string };
      const data = [];
      for (let day = 0; day <= 100; day++) {
        const t = base + day * DAY;
        if (t >= Date.parse(from) && t <= Date.parse(to)) data.push(F.exportedTrade(day, new Date(t).toISOString()));
      }
      return { body: { ...F.exportOk, data } };
    });
    const trades = await admin.exportTradesRange('2025-01-01T00:00:00Z', new Date(base + 95 * DAY));
    expect(trades.map((t) => t.id)).toEqual(Array.from({ length: 96 }, (_, i) => i));
    const windows = server.requests
      .filter((r) => r.path === '/DataExport/trades')
      .map((r) => r.body as { from: string; to: string });
    expect(windows).toHaveLength(4);
    for (const w of windows) expect(Date.parse(w.to) - Date.parse(w.from)).toBeLessThanOrEqual(30 * DAY);
  });
});

describe('violation kind', () => {
  it('asks the rule of a type 6 violation from its template', async () => {
    server.on('/AccountTemplate', () => ({ body: [{ ...F.template, id: 11 }, F.template] }));
    server.on('/AccountTemplateRule/rules/11/7', () => ({ status: 404 }));
    server.on('/AccountTemplateRule/rules/12/7', () => ({ body: F.ruleConfiguration('maximum', 7, 12) }));
    expect(await violationKind(F.violation, admin)).toBe('maximumLossLimit');
    expect(await violationKind(F.violation, admin, { accountTemplateId: 12 })).toBe('maximumLossLimit');
    expect(await violationKind({ ...F.violation, type: 3, ruleId: null }, admin)).toBe('personalDailyLossLimit');
    expect(await violationKind({ ...F.violation, type: 5, ruleId: null }, admin)).toBe('personalDailyProfitTarget');
  });
});
