/**
 * How the client behaves when the server misbehaves: HTTP errors, rate limiting, timeouts, dropped
 * connections, malformed bodies. Writes (place, modify, cancel) make exactly one attempt.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { GatewayError, OrderSide, OrderType, TradingClient } from '../../../src/adapters/gateway/index.ts';
import { ScriptedServer } from './scripted-server.ts';
import * as F from './fixtures.ts';

let server: ScriptedServer;
let client: TradingClient;
let slept: number[];

function makeClient(overrides: Partial<ConstructorParameters<typeof TradingClient>[0]> = {}): TradingClient {
  return new TradingClient({
    baseUrl: server.url,
    userName: 'trader1',
    apiKey: 'api-key-secret-value',
    timeoutMs: 300,
    retry: { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 4 },
    // Waits are recorded and skipped, so Retry-After and backoff are checked without waiting.
    sleep: async (ms) => {
      slept.push(ms);
    },
    ...overrides,
  });
}

beforeEach(async () => {
  slept = [];
  server = await ScriptedServer.start();
  client = makeClient();
});

afterEach(async () => {
  await client.close();
  await server.close();
});

async function caught(promise: Promise<unknown>): Promise<GatewayError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof GatewayError) return error;
    throw error;
  }
  throw new Error('expected a GatewayError');
}

const place = () =>
  client.placeOrder({
    accountId: 704,
    contractId: 'C',
    type: OrderType.Market,
    side: OrderSide.Bid,
    size: 1,
    customTag: 't-1',
  });
const modify = () => client.modifyOrder({ accountId: 704, orderId: 1, size: 2 });
const cancel = () => client.cancelOrder({ accountId: 704, orderId: 1 });

describe('request validation and HTTP 400', () => {
  it('a login without userName or apiKey never leaves the process', async () => {
    for (const bad of [{ userName: '' }, { apiKey: '' }]) {
      const c = makeClient(bad);
      const error = await caught(c.login());
      expect(error).toMatchObject({ code: 'INVALID_REQUEST', outcome: 'not-sent', endpoint: 'Auth/loginKey' });
      expect(error.issues?.[0]?.path).toBe(Object.keys(bad)[0]);
      await c.close();
    }
    expect(server.count('/api/Auth/loginKey')).toBe(0);
  });

  it('the server answers a login body without apiKey with 400', async () => {
    const response = await fetch(`${server.url}/api/Auth/loginKey`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ userName: 'trader1' }),
    });
    expect(response.status).toBe(400);
  });

  it('an HTTP 400 becomes HTTP_STATUS 400 with the server message, and is not retried', async () => {
    server.script('/api/Auth/loginKey', { status: 400, body: { title: 'One or more validation errors occurred.' } });
    const error = await caught(client.login());
    expect(error).toMatchObject({
      code: 'HTTP_STATUS',
      httpStatus: 400,
      outcome: 'rejected',
      errorMessage: 'One or more validation errors occurred.',
    });
    expect(server.count('/api/Auth/loginKey')).toBe(1);
  });

  it('invalid request fields are named before sending', async () => {
    const error = await caught(client.searchOrders({ accountId: 1.5, startTimestamp: 'yesterday' } as never));
    expect(error.code).toBe('INVALID_REQUEST');
    expect(new Set(error.issues?.map((i) => i.path))).toEqual(new Set(['accountId', 'startTimestamp']));
    expect(server.count('/api/Order/search')).toBe(0);
  });
});

describe('401: log in again once and replay once', () => {
  it('replays the request once with a fresh token', async () => {
    await client.login();
    server.expireTokens();
    const orders = await client.searchOrders({ accountId: 704, startTimestamp: '2025-01-01T00:00:00Z' });
    expect(orders).toHaveLength(1);
    expect(server.count('/api/Auth/loginKey')).toBe(2);
    expect(server.count('/api/Order/search')).toBe(2);
  });

  it('a second 401 is UNAUTHORIZED, after exactly one re-login and one replay', async () => {
    server.script('/api/Order/search', { status: 401 }, { status: 401 });
    const error = await caught(client.searchOrders({ accountId: 704, startTimestamp: '2025-01-01T00:00:00Z' }));
    expect(error).toMatchObject({ code: 'UNAUTHORIZED', httpStatus: 401 });
    expect(server.count('/api/Auth/loginKey')).toBe(2);
    expect(server.count('/api/Order/search')).toBe(2);
  });

  it('a 401 on place is replayed once: a refused token means the order was not taken', async () => {
    server.script('/api/Order/place', { status: 401 });
    expect(await place()).toBe(9056);
    expect(server.count('/api/Order/place')).toBe(2);
  });

  it('concurrent 401s share one re-login', async () => {
    await client.login();
    server.expireTokens();
    await Promise.all([1, 2, 3, 4].map(() => client.searchAccounts(true)));
    expect(server.count('/api/Auth/loginKey')).toBe(2);
  });
});

describe('retries of reads', () => {
  it('429 then success: backs off, honouring Retry-After', async () => {
    server.script('/api/Contract/search', { status: 429, headers: { 'retry-after': '2' } });
    const contracts = await client.searchContracts({ searchText: 'ES', live: false });
    expect(contracts).toEqual([F.contract]);
    expect(server.count('/api/Contract/search')).toBe(2);
    expect(slept).toEqual([expect.any(Number)]);
    expect(slept[0]).toBeGreaterThanOrEqual(2_000);
  });

  it('429 without Retry-After uses exponential backoff; after maxAttempts it is RATE_LIMITED', async () => {
    server.script('/api/Contract/search', { status: 429 }, { status: 429 }, { status: 429 });
    const error = await caught(client.searchContracts({ searchText: 'ES', live: false }));
    expect(error).toMatchObject({ code: 'RATE_LIMITED', httpStatus: 429, attempts: 3 });
    expect(server.count('/api/Contract/search')).toBe(3);
    expect(slept).toHaveLength(2);
    for (const ms of slept) expect(ms).toBeLessThanOrEqual(4);
  });

  it('a Retry-After beyond the limit is not waited out', async () => {
    const c = makeClient({ retry: { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 4, maxRetryAfterMs: 1_000 } });
    server.script('/api/Contract/search', { status: 429, headers: { 'retry-after': '3600' } });
    await expect(c.searchContracts({ searchText: 'ES', live: false })).rejects.toMatchObject({
      code: 'RATE_LIMITED',
      attempts: 1,
    });
    await c.close();
  });

  it('a 503 with Retry-After is honoured too', async () => {
    server.script('/api/Trade/search', { status: 503, headers: { 'retry-after': '1' } });
    await client.searchTrades({ accountId: 704, startTimestamp: '2025-01-01T00:00:00Z' });
    expect(slept[0]).toBeGreaterThanOrEqual(1_000);
  });

  it('503 then success on a read', async () => {
    server.script('/api/Trade/search', { status: 503 }, { status: 500 });
    expect(await client.searchTrades({ accountId: 704, startTimestamp: '2025-01-01T00:00:00Z' })).toEqual([F.trade]);
    expect(server.count('/api/Trade/search')).toBe(3);
  });

  it('a timeout on a read is retried, and after the last attempt is TIMEOUT', async () => {
    server.script('/api/Account/search', { hang: true }, { hang: true }, { hang: true });
    const error = await caught(client.searchAccounts(true));
    expect(error).toMatchObject({ code: 'TIMEOUT', outcome: 'unknown', attempts: 3 });
    expect(server.count('/api/Account/search')).toBe(3);
  });

  it('a dropped connection on a read is retried', async () => {
    server.script('/api/Position/searchOpen', { destroy: true });
    expect(await client.searchOpenPositions(704)).toEqual([F.position]);
    expect(server.count('/api/Position/searchOpen')).toBe(2);
  });

  it('login is retried on 429 and 5xx but not after a timeout', async () => {
    server.script('/api/Auth/loginKey', { status: 429 }, { status: 502 });
    await client.login();
    expect(server.count('/api/Auth/loginKey')).toBe(3);
    server.script('/api/Auth/loginKey', { hang: true });
    await expect(client.login()).rejects.toMatchObject({ code: 'TIMEOUT', attempts: 1 });
    expect(server.count('/api/Auth/loginKey')).toBe(4);
  });

  it('a refused connection is CONNECTION_FAILED, not-sent, after the read retries', async () => {
    const closed = http.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const c = makeClient({ baseUrl: `http://127.0.0.1:${port}` });
    const error = await caught(c.ping());
    expect(error).toMatchObject({ code: 'CONNECTION_FAILED', outcome: 'not-sent', attempts: 3 });
    await c.close();
  });
});

describe('writes make exactly one attempt', () => {
  const writes = [
    ['place', '/api/Order/place', place],
    ['modify', '/api/Order/modify', modify],
    ['cancel', '/api/Order/cancel', cancel],
  ] as const;

  it.each(writes)('%s: a 503 is one attempt', async (_, path, call) => {
    await client.login();
    server.script(path, { status: 503 });
    const error = await caught(call());
    expect(error).toMatchObject({ code: 'HTTP_STATUS', httpStatus: 503, attempts: 1 });
    expect(server.count(path)).toBe(1);
  });

  it.each(writes)('%s: a 429 is one attempt', async (_, path, call) => {
    await client.login();
    server.script(path, { status: 429, headers: { 'retry-after': '1' } });
    const error = await caught(call());
    expect(error).toMatchObject({ code: 'RATE_LIMITED', outcome: 'rejected', attempts: 1 });
    expect(server.count(path)).toBe(1);
  });

  it.each(writes)('%s: a timeout is one attempt with outcome unknown', async (_, path, call) => {
    await client.login();
    server.script(path, { hang: true });
    const error = await caught(call());
    expect(error).toMatchObject({ code: 'OUTCOME_UNKNOWN', outcome: 'unknown', attempts: 1 });
    expect(error.message).toMatch(/reconcile/);
    expect(server.count(path)).toBe(1);
  });

  it.each(writes)(
    '%s: a connection dropped after sending is one attempt with outcome unknown',
    async (_, path, call) => {
      await client.login();
      server.script(path, { destroy: true });
      await expect(call()).rejects.toMatchObject({ code: 'OUTCOME_UNKNOWN', outcome: 'unknown', attempts: 1 });
      expect(server.count(path)).toBe(1);
    },
  );

  it('a refused connection on place is one attempt, CONNECTION_FAILED with outcome not-sent', async () => {
    await client.login();
    const placesBefore = server.count('/api/Order/place');
    await server.close();
    const error = await caught(place());
    expect(error).toMatchObject({
      code: 'CONNECTION_FAILED',
      outcome: 'not-sent',
      attempts: 1,
      endpoint: 'Order/place',
    });
    expect(server.count('/api/Order/place')).toBe(placesBefore);
  });
});

describe('malformed answers', () => {
  it('malformed JSON is MALFORMED_RESPONSE and not retried', async () => {
    server.script('/api/Contract/available', { raw: '{"success": true, "contracts": [' });
    const error = await caught(client.availableContracts(false));
    expect(error).toMatchObject({
      code: 'MALFORMED_RESPONSE',
      endpoint: 'Contract/available',
      issues: [{ path: '(root)' }],
    });
    expect(server.count('/api/Contract/available')).toBe(1);
  });

  it('a missing required field names the endpoint, the field path and the value received', async () => {
    const { tickSize: _dropped, ...partial } = F.contract;
    server.script('/api/Contract/searchById', { body: { ...F.ok, contract: { ...partial, tickValue: '5' } } });
    const error = await caught(client.contractById(F.contract.id));
    expect(error.code).toBe('MALFORMED_RESPONSE');
    expect(error.message).toContain('Contract/searchById');
    expect(error.issues).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ path: 'contract.tickSize', received: undefined }),
        expect.objectContaining({ path: 'contract.tickValue', received: '5' }),
      ]),
    );
  });

  it('extra unknown fields are tolerated', async () => {
    server.script('/api/Contract/search', {
      body: { ...F.ok, nextPage: null, contracts: [{ ...F.contract, exchange: 'CME' }] },
    });
    const contracts = await client.searchContracts({ searchText: 'ENQ', live: true });
    expect(contracts).toEqual([F.contract]);
  });

  it('a malformed validate response never echoes the new token', async () => {
    await client.login();
    server.script('/api/Auth/validate', { body: { success: true, errorCode: 0, newToken: 12345678 } });
    const error = await caught(client.validate());
    expect(JSON.stringify(error)).not.toContain('12345678');
    expect(error.message).not.toContain('12345678');
  });
});

describe('rate budget over HTTP (fake clock)', () => {
  it('retrieveBars never goes over its budget: the fourth call waits for the window', async () => {
    let now = 1_000_000;
    const sentAt: number[] = [];
    server.on('/api/History/retrieveBars', () => {
      sentAt.push(now);
      return { body: { ...F.ok, bars: [] } };
    });
    const c = makeClient({
      now: () => now,
      sleep: async (ms) => {
        slept.push(ms);
        now += ms;
      },
      rateLimits: { bars: { requests: 3, windowMs: 30_000 } },
    });
    const req = {
      contractId: 'C',
      live: false,
      startTime: '2025-01-01T00:00:00Z',
      endTime: '2025-01-02T00:00:00Z',
      unit: 2,
      unitNumber: 1,
      limit: 10,
      includePartialBar: false,
    };
    for (let i = 0; i < 7; i++) await c.retrieveBars(req);
    expect(sentAt).toEqual([1_000_000, 1_000_000, 1_000_000, 1_030_000, 1_030_000, 1_030_000, 1_060_000]);
    // Other endpoints have their own budget: login and searches did not wait.
    await c.searchAccounts(true);
    expect(slept).toEqual([30_000, 30_000]);
    await c.close();
  });
});

describe('reconciling an unknown outcome', () => {
  it('finds the order a timed-out place created by its customTag', async () => {
    server.script('/api/Order/place', { hang: true });
    const error = await caught(place());
    expect(error.outcome).toBe('unknown');
    server.script('/api/Order/search', {
      body: {
        ...F.ok,
        orders: [
          { ...F.order, customTag: 'other' },
          { ...F.order, id: 777, customTag: 't-1' },
        ],
      },
    });
    const found = await client.findOrderByCustomTag(704, 't-1', '2025-07-18T00:00:00Z');
    expect(found?.id).toBe(777);
    expect(await client.findOrderByCustomTag(704, 'missing', new Date('2025-07-18T00:00:00Z'))).toBeUndefined();
    expect(server.count('/api/Order/place')).toBe(1);
  });
});
