/** The token manager over a real loopback server, and what reaches the logs. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Writable } from 'node:stream';
import { createLogger } from '../../../src/engine/log.ts';
import { AdminClient, GatewayError, Limits, TradingClient } from '../../../src/adapters/gateway/index.ts';
import { ScriptedServer } from './scripted-server.ts';

let server: ScriptedServer;
let clock: number;
let client: TradingClient;

const HOUR = 3_600_000;

beforeEach(async () => {
  server = await ScriptedServer.start();
  clock = Date.parse('2025-03-03T12:00:00Z');
  client = new TradingClient({
    baseUrl: server.url,
    userName: 'trader1',
    apiKey: 'api-key-secret-value',
    timeoutMs: 2_000,
    now: () => clock,
  });
});

afterEach(async () => {
  await client.close();
  await server.close();
});

describe('session token', () => {
  it('concurrent requests share one login', async () => {
    await Promise.all([
      client.searchAccounts(true),
      client.searchOpenOrders(704),
      client.searchOpenPositions(704),
      client.availableContracts(false),
      client.contractById('CON.F.US.ENQ.H25'),
    ]);
    expect(server.count('/api/Auth/loginKey')).toBe(1);
    const tokens = new Set(
      server.requests.filter((r) => r.path !== '/api/Auth/loginKey').map((r) => r.headers.authorization),
    );
    expect(tokens.size).toBe(1);
  });

  it('knows the 24-hour expiry and renews with Auth/validate before it', async () => {
    const first = await client.login();
    expect(client.tokenExpiresAt).toBe(clock + Limits.tokenLifetimeMs);
    clock += 22 * HOUR;
    await client.searchAccounts(true);
    expect(server.count('/api/Auth/validate')).toBe(0);
    clock += 90 * 60_000; // 23.5 h after issue: inside the renewal margin
    await client.searchAccounts(true);
    expect(server.count('/api/Auth/validate')).toBe(1);
    expect(server.last('/api/Auth/validate')?.headers.authorization).toBe(`Bearer ${first}`);
    const renewed = server.last('/api/Account/search')?.headers.authorization;
    expect(renewed).not.toBe(`Bearer ${first}`);
    // The renewed token lives 24 h from its issue.
    expect(client.tokenExpiresAt).toBe(clock + Limits.tokenLifetimeMs);
    expect(server.count('/api/Auth/loginKey')).toBe(1);
  });

  it('concurrent requests near expiry share one renewal', async () => {
    await client.login();
    clock += 23.5 * HOUR;
    await Promise.all([client.searchAccounts(true), client.searchAccounts(false), client.searchOpenOrders(1)]);
    expect(server.count('/api/Auth/validate')).toBe(1);
  });

  it('an expired token is replaced by a new login, not a validate', async () => {
    await client.login();
    clock += 25 * HOUR;
    await client.searchAccounts(true);
    expect(server.count('/api/Auth/validate')).toBe(0);
    expect(server.count('/api/Auth/loginKey')).toBe(2);
  });

  it('a failed renewal falls back to a login', async () => {
    await client.login();
    clock += 23.5 * HOUR;
    server.script('/api/Auth/validate', {
      body: { success: false, errorCode: 3, errorMessage: 'expired', newToken: null },
    });
    await client.searchAccounts(true);
    expect(server.count('/api/Auth/validate')).toBe(1);
    expect(server.count('/api/Auth/loginKey')).toBe(2);
  });

  it('validate errors are named by the validate table', async () => {
    await client.login();
    server.script('/api/Auth/validate', { body: { success: false, errorCode: 2, errorMessage: null } });
    await expect(client.validate()).rejects.toMatchObject({ endpoint: 'Auth/validate', errorName: 'SessionNotFound' });
  });
});

/** A debug logger whose lines are kept in memory. */
function capturedLogger() {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return { lines, logger: createLogger({ level: 'debug', destination }) };
}

describe('secrets never reach a log line or a serialised error', () => {
  it('api key, token, newToken, password, loginToken and Authorization stay out of the logs', async () => {
    const { lines, logger } = capturedLogger();
    const adminSecret = 'admin-bearer-secret-abc';
    const trading = new TradingClient({
      baseUrl: server.url,
      userName: 'trader1',
      apiKey: 'api-key-secret-value',
      logger,
      now: () => clock,
      retry: { baseDelayMs: 1, maxDelayMs: 2 },
    });
    const admin = new AdminClient({ baseUrl: server.url, headers: { authorization: `Bearer ${adminSecret}` }, logger });
    const errors: GatewayError[] = [];
    const keep = (e: unknown) => {
      if (e instanceof GatewayError) errors.push(e);
      else throw e;
    };
    try {
      await trading.login();
      await trading.validate();
      server.expireTokens();
      await trading.searchAccounts(true); // 401, re-login, replay
      server.script('/api/Account/search', { status: 503 });
      await trading.searchAccounts(true);
      server.script('/api/Order/place', { status: 500, body: { message: 'boom' } });
      await trading.placeOrder({ accountId: 1, contractId: 'C', type: 2, side: 0, size: 1 }).catch(keep);
      server.script('/api/Auth/loginKey', { body: { token: null, success: false, errorCode: 3, errorMessage: null } });
      server.expireTokens();
      await trading.searchAccounts(true).catch(keep);
      await admin.register({
        password: 'hunter2-password',
        email: 'a@b.c',
        userName: 'u',
        firstName: 'f',
        lastName: 'l',
        screenName: 's',
        internalTag: 0,
      });
      server.script('/Register', {
        body: { userId: null, loginToken: null, errorMessage: 'Invalid email', result: 3 },
      });
      await admin
        .register({
          password: 'hunter2-password',
          email: 'bad',
          userName: 'u',
          firstName: 'f',
          lastName: 'l',
          screenName: 's',
          internalTag: 0,
        })
        .catch(keep);
      server.script('/User/find', { status: 401 });
      await admin.findUserByEmail('a@b.c').catch(keep);
    } finally {
      await trading.close();
      await admin.close();
    }
    const issued = [
      ...new Set(server.requests.map((r) => r.headers.authorization).filter((h): h is string => typeof h === 'string')),
    ];
    const secrets = [
      'api-key-secret-value',
      'hunter2-password',
      'login-token-secret',
      adminSecret,
      ...issued,
      ...issued.map((h) => h.replace(/^Bearer /, '')),
    ];
    expect(issued.length).toBeGreaterThan(2);
    expect(lines.length).toBeGreaterThan(8);
    expect(errors.length).toBe(4);
    const logged = lines.join('');
    const serialised = errors.map((e) => JSON.stringify(e) + e.message + e.stack).join('');
    for (const secret of secrets) {
      expect(logged).not.toContain(secret);
      expect(serialised).not.toContain(secret);
    }
    // Each request line carries endpoint, status, duration and attempts.
    const requestLine = lines
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .find((l) => l.msg === 'gateway request' && l.endpoint === 'Account/search');
    expect(requestLine).toMatchObject({
      endpoint: 'Account/search',
      status: 200,
      attempts: expect.any(Number),
      durationMs: expect.any(Number),
    });
  });

  it('a truncated login answer (not JSON) never shows its token: not in the error, its serialisation, or the logs', async () => {
    const { lines, logger } = capturedLogger();
    const token = 'tok-9f8e7d6c5b4a39281706f5e4d3c2b1a0';
    const trading = new TradingClient({
      baseUrl: server.url,
      userName: 'trader1',
      apiKey: 'api-key-secret-value',
      logger,
      now: () => clock,
      retry: { maxAttempts: 1 },
    });
    server.script('/api/Auth/loginKey', { raw: `{"token":"${token}","success":true,"errorCode":0,"errorMess` });
    let error: unknown;
    try {
      await trading.login();
    } catch (e) {
      error = e;
    } finally {
      await trading.close();
    }
    expect(error).toBeInstanceOf(GatewayError);
    const text = `${(error as Error).message}${JSON.stringify(error)}${(error as Error).stack}${lines.join('')}`;
    expect(text).toContain('not JSON');
    expect(text).not.toContain(token);
    expect(text).not.toContain(token.slice(0, 20));
  });

  it('a registered secret is scrubbed wherever it appears: in a message, a nested field, a URL', async () => {
    const { registerSecret, scrubSecrets } = await import('../../../src/engine/secrets.ts');
    const secret = 'very-secret-admin-credential-42';
    registerSecret(secret);
    const { lines, logger } = capturedLogger();
    logger.warn(
      { deep: { nested: [`x ${secret} y`] }, url: `https://h/p?access_token=${secret}` },
      `message with ${secret}`,
    );
    expect(lines.join('')).not.toContain(secret);
    expect(lines.join('')).toContain('[redacted]');
    expect(scrubSecrets(`Bearer ${secret}`)).toBe('Bearer [redacted]');
  });
});
