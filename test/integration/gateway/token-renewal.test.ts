/**
 * Long-run hygiene: a session that runs for days keeps one login. Against the simulator on a manual
 * clock (its tokens live 24 hours of simulator time, as the gateway's do), the client renews with
 * Auth/validate before each expiry, so no request is ever refused for an expired token.
 */
import { Writable } from 'node:stream';
import { afterEach, expect, it } from 'vitest';
import { TradingClient } from '../../../src/adapters/gateway/trading.ts';
import { createLogger } from '../../../src/engine/log.ts';
import { Limits } from '../../../src/protocol/endpoints.ts';
import { startSimulator, type SimHandle } from '../../../src/sim/index.ts';

const HOUR = 3_600_000;
let sim: SimHandle | undefined;
let client: TradingClient | undefined;
afterEach(async () => {
  await client?.close();
  await sim?.close();
});

it('over 60 hours of the simulator clock: one login, renewals by Auth/validate before each 24-hour expiry, no 401', async () => {
  sim = await startSimulator({ clock: 'manual', startTime: Date.UTC(2026, 10, 24, 15), seed: 5, historyDays: 1 });
  const lines: Array<{ endpoint?: string; status?: number; msg: string }> = [];
  const logger = createLogger({
    level: 'debug',
    destination: new Writable({
      write(chunk, _encoding, done) {
        for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
        done();
      },
    }),
  });
  const handle = sim;
  client = new TradingClient({
    baseUrl: handle.tradingUrl,
    userName: handle.demo.userName,
    apiKey: handle.demo.apiKey,
    logger,
    now: () => handle.clock.now(),
  });
  await client.login();
  const tokens = new Set<string>([await client.token()]);
  for (let hour = 1; hour <= 60; hour++) {
    handle.clock.advance(HOUR);
    const accounts = await client.searchAccounts(true);
    expect(accounts.length).toBeGreaterThan(0);
    tokens.add(await client.token());
    // The token held is always valid for a while yet: renewed inside the last hour, never after expiry.
    expect(client.tokenExpiresAt! - handle.clock.now()).toBeGreaterThan(0);
    expect(client.tokenExpiresAt! - handle.clock.now()).toBeLessThanOrEqual(Limits.tokenLifetimeMs);
  }
  const count = (endpoint: string) =>
    lines.filter((l) => l.msg === 'gateway request' && l.endpoint === endpoint).length;
  expect(count('Auth/loginKey')).toBe(1);
  // 60 hours: renewed at 23 h and 46 h (the default margin is one hour before expiry).
  expect(count('Auth/validate')).toBe(2);
  expect(tokens.size).toBe(3);
  expect(lines.filter((l) => l.status === 401 || l.msg.includes('token refused'))).toEqual([]);
}, 60_000);
