/**
 * The fault suite's own tools, checked before they are trusted: the proxy injects what its rules say
 * (which requests, how many, what the client sees), and the audit's position path finds every excursion
 * beyond the target.
 */
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TradeSide } from '../../../src/protocol/codes.ts';
import type * as S from '../../../src/protocol/schemas.ts';
import { TradingClient } from '../../../src/adapters/gateway/trading.ts';
import { silentLogger } from '../../../src/engine/log.ts';
import { startSimulator, type SimHandle } from '../../../src/sim/index.ts';
import { startFaultProxy, type FaultProxy } from './fault-proxy.ts';
import { CONTRACT, positionPath } from './fault-world.ts';
import { CALENDAR } from '../../../src/market/contract-months.ts';

let sim: SimHandle;
let proxy: FaultProxy;
let client: TradingClient;

const START = Date.UTC(2025, 0, 6, 15, 0);
/** ES's front month at START (the suite's own CONTRACT is today's: its simulator runs on the wall clock). */
const ES = CALENDAR.contract('ES', CALENDAR.frontMonth('ES', START)).id;

beforeEach(async () => {
  sim = await startSimulator({ clock: 'manual', startTime: START, historyDays: 1 });
  proxy = await startFaultProxy(sim.tradingUrl);
  // One attempt per call: what the client sees is what the proxy did.
  client = new TradingClient({
    baseUrl: proxy.url,
    userName: sim.demo.userName,
    apiKey: sim.demo.apiKey,
    now: () => sim.clock.now(),
    timeoutMs: 500,
    retry: { maxAttempts: 1 },
    logger: silentLogger,
  });
});
afterEach(async () => {
  await client.close();
  await proxy.close();
  await sim.close();
});

const POSITIONS = '/api/Position/searchOpen';
const outcome = (p: Promise<unknown>): Promise<string> =>
  p.then(
    () => 'ok',
    (e: { code?: string; httpStatus?: number }) => `${e.code}${e.httpStatus ? ` ${e.httpStatus}` : ''}`,
  );

describe('fault proxy', () => {
  it('a rule hits every n-th matching request, as many times as asked, only while its condition holds', async () => {
    let open = true;
    proxy.inject({
      path: [POSITIONS, '/api/Order/searchOpen'],
      action: { kind: 'status', status: 503 },
      every: 2,
      times: 2,
      when: () => open,
    });
    const seen: string[] = [];
    for (let i = 0; i < 6; i++) seen.push(await outcome(client.searchOpenPositions(sim.demo.accountId)));
    expect(seen).toEqual(['ok', 'HTTP_STATUS 503', 'ok', 'HTTP_STATUS 503', 'ok', 'ok']);
    proxy.clear();
    proxy.inject({ path: '*', action: { kind: 'status', status: 429 }, times: 5, when: () => open });
    open = false;
    expect(await outcome(client.searchOpenPositions(sim.demo.accountId))).toBe('ok');
    open = true;
    expect(await outcome(client.searchOpenOrders(sim.demo.accountId))).toBe('RATE_LIMITED 429');
  });

  it('status-after and drop-after let the gateway act first; status and drop-before do not', async () => {
    const place = (tag: string) =>
      client.placeOrder({ accountId: sim.demo.accountId, contractId: ES, type: 2, side: 0, size: 1, customTag: tag });
    proxy.inject({ path: '/api/Order/place', action: { kind: 'status', status: 503 } });
    expect(await outcome(place('a'))).toBe('HTTP_STATUS 503');
    proxy.inject({ path: '/api/Order/place', action: { kind: 'drop-before' } });
    expect(await outcome(place('b'))).toBe('OUTCOME_UNKNOWN');
    proxy.inject({ path: '/api/Order/place', action: { kind: 'status-after', status: 500 } });
    expect(await outcome(place('c'))).toBe('HTTP_STATUS 500');
    proxy.inject({ path: '/api/Order/place', action: { kind: 'drop-after' } });
    expect(await outcome(place('d'))).toBe('OUTCOME_UNKNOWN');
    const tags = (
      await client.searchOrders({
        accountId: sim.demo.accountId,
        startTimestamp: new Date(sim.clock.now() - 60_000).toISOString(),
      })
    ).map((o) => o.customTag);
    expect(tags.sort()).toEqual(['c', 'd']);
    expect(proxy.placesByTag()).toEqual(
      new Map([
        ['c', 1],
        ['d', 1],
      ]),
    );
  });

  it('truncate cuts the transfer mid-body; malformed changes the body; late-answer answers after the client gave up', async () => {
    proxy.inject({ path: POSITIONS, action: { kind: 'truncate', keep: (b) => b.length / 2 } });
    expect(await outcome(client.searchOpenPositions(sim.demo.accountId))).toMatch(
      /^(CONNECTION_FAILED|MALFORMED_RESPONSE)/,
    );
    proxy.inject({ path: POSITIONS, action: { kind: 'malformed', corrupt: (b) => b.slice(0, 5) } });
    expect(await outcome(client.searchOpenPositions(sim.demo.accountId))).toBe('MALFORMED_RESPONSE 200');
    proxy.inject({ path: POSITIONS, action: { kind: 'late-answer', delayMs: 800 } });
    expect(await outcome(client.searchOpenPositions(sim.demo.accountId))).toBe('TIMEOUT');
    expect(proxy.requests.filter((r) => r.path === POSITIONS).map((r) => r.forwarded)).toEqual([true, true, true]);
  });

  it('a delayed request is logged as it arrives and forwarded later', async () => {
    proxy.inject({ path: POSITIONS, action: { kind: 'delay', delayMs: 800 } });
    expect(await outcome(client.searchOpenPositions(sim.demo.accountId))).toBe('TIMEOUT');
    // The client gave up after its 500 ms timeout and the request has not left the proxy yet.
    const [seen] = proxy.requests.filter((r) => r.path === POSITIONS);
    expect(seen?.forwarded).toBe(false);
    const deadline = Date.now() + 5_000;
    while (!seen!.forwarded && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(seen!.forwarded).toBe(true);
  });

  it('expireTokens refuses every token issued so far with 401 until the client logs in again; tokens are collected, also from a corrupted answer', async () => {
    proxy.inject({ path: '/api/Auth/loginKey', action: { kind: 'malformed', corrupt: (b) => b.slice(0, -2) } });
    expect(await outcome(client.login())).toBe('MALFORMED_RESPONSE 200');
    await client.login();
    expect(proxy.tokens()).toHaveLength(2);
    proxy.expireTokens();
    // The client meets the 401, logs in once more and replays: the caller sees nothing.
    expect(await outcome(client.searchOpenPositions(sim.demo.accountId))).toBe('ok');
    expect(proxy.requests.map((r) => `${r.path} ${r.fault ?? r.answeredStatus}`).slice(-3)).toEqual([
      `${POSITIONS} expired-token`,
      '/api/Auth/loginKey 200',
      `${POSITIONS} 200`,
    ]);
    expect(proxy.tokens()).toHaveLength(3);
  });
});

describe('position path of the audit', () => {
  const trade = (id: number, side: 'buy' | 'sell', size: number, time: number): S.Trade => ({
    id,
    accountId: 1,
    contractId: CONTRACT,
    creationTimestamp: new Date(time).toISOString(),
    price: 100,
    profitAndLoss: null,
    fees: 0,
    side: side === 'buy' ? TradeSide.Buy : TradeSide.Sell,
    size,
    voided: false,
    orderId: id,
  });

  it('finds the largest position and every stretch beyond the limit, in the order the gateway executed the trades', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ buy: fc.boolean(), size: fc.integer({ min: 1, max: 3 }) }), { maxLength: 40 }),
        fc.integer({ min: 0, max: 3 }),
        (steps, limit) => {
          const trades = steps.map((s, i) => trade(i + 1, s.buy ? 'buy' : 'sell', s.size, 1_000 * (i + 1)));
          // Shuffled input: the path follows trade ids, not the order of the answer.
          const path = positionPath([...trades].reverse(), limit, 1_000_000);
          const positions = steps.reduce<number[]>(
            (acc, s) => [...acc, (acc.at(-1) ?? 0) + (s.buy ? s.size : -s.size)],
            [],
          );
          expect(path.maxAbs).toBe(Math.max(0, ...positions.map(Math.abs)));
          expect(path.final).toBe(positions.at(-1) ?? 0);
          const beyond = positions.map((p, i) => (Math.abs(p) > limit ? 1_000 * (i + 1) : undefined));
          const starts = beyond.filter((t, i) => t !== undefined && beyond[i - 1] === undefined);
          expect(path.excesses.map((e) => e.from)).toEqual(starts);
          for (const e of path.excesses) {
            expect(e.closed).toBe(e.to !== 1_000_000);
            expect(e.peak).toBe(
              Math.max(
                ...positions.filter((_, i) => 1_000 * (i + 1) >= e.from && 1_000 * (i + 1) < e.to).map(Math.abs),
              ),
            );
          }
        },
      ),
    );
  });
});
