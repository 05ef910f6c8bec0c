/** Every trading endpoint (spec 4.1 and extras) against a real loopback server, with each documented error code. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  CancelAccountRejected,
  CancelErrorCode,
  CancelRejectionMessage,
  CloseContractErrorCode,
  GatewayError,
  GatewayRejection,
  LoginError,
  OrderSide,
  OrderType,
  PartialCloseErrorCode,
  PlaceErrorCode,
  RetrieveBarsErrorCode,
  TradingClient,
  AGREEMENTS_NOT_SIGNED_MESSAGE,
} from '../../../src/adapters/gateway/index.ts';
import { ScriptedServer } from './scripted-server.ts';
import * as F from './fixtures.ts';

let server: ScriptedServer;
let client: TradingClient;

beforeEach(async () => {
  server = await ScriptedServer.start();
  client = new TradingClient({
    baseUrl: server.url,
    userName: 'trader1',
    apiKey: 'api-key-secret-value',
    timeoutMs: 2_000,
    retry: { baseDelayMs: 1, maxDelayMs: 4 },
  });
});

afterEach(async () => {
  await client.close();
  await server.close();
});

function rejectWith(errorCode: number, errorMessage: string | null = null) {
  return { body: { success: false, errorCode, errorMessage } };
}

async function caught(promise: Promise<unknown>): Promise<GatewayError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof GatewayError) return error;
    throw error;
  }
  throw new Error('expected a GatewayError');
}

describe('trading endpoints: happy paths with typed results', () => {
  it('logs in once and sends the token as a bearer on every later request', async () => {
    const token = await client.login();
    expect(token).toMatch(/^token-1-/);
    expect(server.last('/api/Auth/loginKey')?.body).toEqual({ userName: 'trader1', apiKey: 'api-key-secret-value' });
    await client.searchAccounts(true);
    await client.searchOpenPositions(704);
    expect(server.count('/api/Auth/loginKey')).toBe(1);
    expect(server.last('/api/Position/searchOpen')?.headers.authorization).toBe(`Bearer ${token}`);
  });

  it('searches orders, open orders and trades', async () => {
    const orders = await client.searchOrders({ accountId: 704, startTimestamp: '2025-07-18T00:00:00Z' });
    expect(orders).toEqual([F.order]);
    expect(server.last('/api/Order/search')?.body).toEqual({ accountId: 704, startTimestamp: '2025-07-18T00:00:00Z' });
    expect(await client.searchOpenOrders(704)).toEqual([F.openOrder]);
    expect(server.last('/api/Order/searchOpen')?.body).toEqual({ accountId: 704 });
    const trades = await client.searchTrades({
      accountId: 704,
      startTimestamp: '2025-01-01T00:00:00Z',
      endTimestamp: null,
    });
    expect(trades[0]?.profitAndLoss).toBeNull();
    expect(server.last('/api/Trade/search')?.body).toEqual({
      accountId: 704,
      startTimestamp: '2025-01-01T00:00:00Z',
      endTimestamp: null,
    });
  });

  it('places an order with prices as JSON numbers and returns the order id', async () => {
    const orderId = await client.placeOrder({
      accountId: 704,
      contractId: F.contract.id,
      type: OrderType.Limit,
      side: OrderSide.Bid,
      size: 1,
      limitPrice: 0.1 + 0.2 + 6400,
      customTag: 'entry-1',
      stopLossBracket: { ticks: -10, type: OrderType.Stop },
    });
    expect(orderId).toBe(9056);
    const sent = server.last('/api/Order/place');
    expect(sent?.body).toMatchObject({
      limitPrice: 6400.3,
      customTag: 'entry-1',
      stopLossBracket: { ticks: -10, type: 4 },
    });
    expect(typeof (sent?.body as { limitPrice: unknown }).limitPrice).toBe('number');
  });

  it('modifies (trailPrice as a price), cancels, closes and partially closes', async () => {
    await client.modifyOrder({ accountId: 704, orderId: 36599, trailPrice: 6390.25, size: null });
    expect(server.last('/api/Order/modify')?.body).toEqual({
      accountId: 704,
      orderId: 36599,
      trailPrice: 6390.25,
      size: null,
    });
    await client.cancelOrder({ accountId: 704, orderId: 36599 });
    expect(server.last('/api/Order/cancel')?.body).toEqual({ accountId: 704, orderId: 36599 });
    await client.closePosition({ accountId: 704, contractId: F.position.contractId });
    await client.partialClosePosition({ accountId: 704, contractId: F.position.contractId, size: 1 });
    expect(server.last('/api/Position/partialCloseContract')?.body).toEqual({
      accountId: 704,
      contractId: F.position.contractId,
      size: 1,
    });
  });

  it('lists, searches and looks up contracts', async () => {
    expect(await client.availableContracts(false)).toEqual([F.contract]);
    expect(server.last('/api/Contract/available')?.body).toEqual({ live: false });
    expect(await client.searchContracts({ searchText: 'NQ', live: false })).toEqual([F.contract]);
    expect(await client.contractById(F.contract.id)).toEqual(F.contract);
    expect(server.last('/api/Contract/searchById')?.body).toEqual({ contractId: F.contract.id });
  });

  it('retrieves bars as the server sent them', async () => {
    const newestFirst = [
      { ...F.bar, t: '2025-07-18T21:02:00+00:00' },
      { ...F.bar, t: '2025-07-18T21:01:00+00:00' },
    ];
    server.script('/api/History/retrieveBars', { body: { ...F.ok, bars: newestFirst } });
    const request = {
      contractId: F.contract.id,
      live: false,
      startTime: '2025-07-18T21:00:00Z',
      endTime: '2025-07-18T22:00:00Z',
      unit: 2,
      unitNumber: 1,
      limit: 100,
      includePartialBar: false,
    };
    expect(await client.retrieveBars(request)).toEqual(newestFirst);
    expect(server.last('/api/History/retrieveBars')?.body).toEqual(request);
  });

  it('validates (newToken replaces the token), pings without a token and logs out', async () => {
    const first = await client.login();
    const renewed = await client.validate();
    expect(renewed).not.toBe(first);
    await client.searchAccounts(false);
    expect(server.last('/api/Account/search')?.headers.authorization).toBe(`Bearer ${renewed}`);
    expect(await client.ping()).toBe('pong');
    expect(server.last('/api/Status/ping')?.method).toBe('GET');
    expect(server.last('/api/Status/ping')?.headers.authorization).toBeUndefined();
    await client.logout();
    expect(server.count('/api/Auth/logout')).toBe(1);
    // After logout the next call logs in again.
    await client.searchAccounts(true);
    expect(server.count('/api/Auth/loginKey')).toBe(2);
  });
});

describe('documented error codes', () => {
  it.each([
    [3, null, 'InvalidCredentials'],
    [7, AGREEMENTS_NOT_SIGNED_MESSAGE, 'AgreementsNotSigned'],
    [9, null, 'ApiSubscriptionNotFound'],
    [10, null, 'ApiKeyAuthenticationDisabled'],
  ])('login errorCode %i is a LoginError named %s', async (code, message, name) => {
    server.script('/api/Auth/loginKey', {
      body: { token: null, success: false, errorCode: code, errorMessage: message },
    });
    const error = await caught(client.login());
    expect(error).toBeInstanceOf(LoginError);
    expect(error).toMatchObject({
      code: 'LOGIN_FAILED',
      endpoint: 'Auth/loginKey',
      errorCode: code,
      errorName: name,
      errorMessage: message,
    });
    expect(server.count('/api/Auth/loginKey')).toBe(1);
  });

  it('a failed login fails the request that needed it, without sending that request', async () => {
    server.script('/api/Auth/loginKey', { body: { token: null, success: false, errorCode: 3, errorMessage: null } });
    await expect(client.searchAccounts(true)).rejects.toBeInstanceOf(LoginError);
    expect(server.count('/api/Account/search')).toBe(0);
  });

  it.each(Object.entries(CancelErrorCode).filter(([, c]) => c !== 0 && c !== 6))('cancel %s', async (name, code) => {
    server.script('/api/Order/cancel', rejectWith(code, 'no'));
    const error = await caught(client.cancelOrder({ accountId: 1, orderId: 2 }));
    expect(error).toBeInstanceOf(GatewayRejection);
    expect(error).toMatchObject({
      code: 'GATEWAY_REJECTED',
      endpoint: 'Order/cancel',
      errorCode: code,
      errorName: name,
      outcome: 'rejected',
    });
  });

  it('cancel success is errorCode 0', async () => {
    server.script('/api/Order/cancel', rejectWith(0));
    server.script('/api/Order/cancel', { body: F.ok });
    await expect(client.cancelOrder({ accountId: 1, orderId: 2 })).rejects.toMatchObject({ errorCode: 0 });
    await expect(client.cancelOrder({ accountId: 1, orderId: 2 })).resolves.toBeUndefined();
  });

  it.each([
    [CancelRejectionMessage.Follower, 'follower'],
    [CancelRejectionMessage.Live, 'live'],
    ['Something else', 'other'],
  ])('cancel errorCode 6 with %j is CancelAccountRejected(%s)', async (message, reason) => {
    server.script('/api/Order/cancel', rejectWith(6, message));
    const error = await caught(client.cancelOrder({ accountId: 1, orderId: 2 }));
    expect(error).toBeInstanceOf(CancelAccountRejected);
    expect(error).toMatchObject({ errorCode: 6, errorName: 'AccountRejected', reason, errorMessage: message });
    expect(JSON.parse(JSON.stringify(error))).toMatchObject({ reason });
  });

  it('modify errorCode 3 is Rejected, 7 ContractNotFound', async () => {
    server.script('/api/Order/modify', rejectWith(3, 'trailPrice not aligned'), rejectWith(7));
    await expect(client.modifyOrder({ accountId: 1, orderId: 2, trailPrice: 1.3 })).rejects.toMatchObject({
      errorCode: 3,
      errorName: 'Rejected',
    });
    await expect(client.modifyOrder({ accountId: 1, orderId: 2, size: 2 })).rejects.toMatchObject({
      errorCode: 7,
      errorName: 'ContractNotFound',
    });
  });

  it.each(Object.entries(PlaceErrorCode).filter(([, c]) => c !== 0))('place %s', async (name, code) => {
    server.script('/api/Order/place', rejectWith(code));
    await expect(
      client.placeOrder({ accountId: 1, contractId: 'C', type: OrderType.Market, side: OrderSide.Ask, size: 1 }),
    ).rejects.toMatchObject({ endpoint: 'Order/place', errorCode: code, errorName: name, outcome: 'rejected' });
    expect(server.count('/api/Order/place')).toBe(1);
  });

  it.each(Object.entries(RetrieveBarsErrorCode).filter(([, c]) => c !== 0))('retrieveBars %s', async (name, code) => {
    server.script('/api/History/retrieveBars', rejectWith(code));
    await expect(
      client.retrieveBars({
        contractId: 'C',
        live: false,
        startTime: '2025-01-01T00:00:00Z',
        endTime: '2025-01-02T00:00:00Z',
        unit: 2,
        unitNumber: 1,
        limit: 10,
        includePartialBar: false,
      }),
    ).rejects.toMatchObject({ endpoint: 'History/retrieveBars', errorCode: code, errorName: name });
  });

  it.each(Object.entries(CloseContractErrorCode).filter(([, c]) => c !== 0))('closeContract %s', async (name, code) => {
    server.script('/api/Position/closeContract', rejectWith(code));
    await expect(client.closePosition({ accountId: 1, contractId: 'C' })).rejects.toMatchObject({
      errorCode: code,
      errorName: name,
    });
  });

  it.each(Object.entries(PartialCloseErrorCode).filter(([, c]) => c !== 0))(
    'partialCloseContract %s',
    async (name, code) => {
      server.script('/api/Position/partialCloseContract', rejectWith(code));
      await expect(client.partialClosePosition({ accountId: 1, contractId: 'C', size: 1 })).rejects.toMatchObject({
        errorCode: code,
        errorName: name,
      });
    },
  );

  it('search endpoints name AccountNotFound; contract by id names ContractNotFound', async () => {
    server.script('/api/Order/search', rejectWith(1));
    server.script('/api/Contract/searchById', rejectWith(1));
    await expect(client.searchOrders({ accountId: 9, startTimestamp: '2025-01-01T00:00:00Z' })).rejects.toMatchObject({
      errorName: 'AccountNotFound',
    });
    await expect(client.contractById('X')).rejects.toMatchObject({ errorName: 'ContractNotFound' });
  });

  it('an undocumented code is named Code<N>', async () => {
    server.script('/api/Contract/search', rejectWith(42, 'odd'));
    await expect(client.searchContracts({ searchText: 'x', live: false })).rejects.toMatchObject({
      errorCode: 42,
      errorName: 'Code42',
    });
  });

  it('a limit over 20,000 bars is refused before sending', async () => {
    const error = await caught(
      client.retrieveBars({
        contractId: 'C',
        live: false,
        startTime: '2025-01-01T00:00:00Z',
        endTime: '2025-01-02T00:00:00Z',
        unit: 2,
        unitNumber: 1,
        limit: 20_001,
        includePartialBar: false,
      }),
    );
    expect(error).toMatchObject({ code: 'RANGE_REFUSED', outcome: 'not-sent' });
    expect(server.count('/api/History/retrieveBars')).toBe(0);
  });
});
