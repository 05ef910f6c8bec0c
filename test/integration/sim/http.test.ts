/** HTTP-level behaviour of the simulator: status codes, body handling, credentials, rate limits, token expiry. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import type { SimHandle } from '../../../src/sim/index.ts';
import { rawLogin, rawPost, startTestSimulator, tradingClient } from './sim-harness.ts';

describe('simulator over HTTP', () => {
  let sim: SimHandle;
  beforeAll(async () => {
    sim = await startTestSimulator({
      rateLimits: { default: { requests: 40, windowMs: 60_000 }, bars: { requests: 3, windowMs: 30_000 } },
    });
  });
  afterAll(() => sim.close());

  it('answers a malformed JSON body with 400 and a message', async () => {
    const r = await rawPost(`${sim.tradingUrl}/api/Auth/loginKey`, '{"userName": "x", ');
    expect(r.status).toBe(400);
    expect(r.json.message).toMatch(/Malformed JSON/);
  });

  it('rejects a login missing userName or apiKey with 400 before any login check', async () => {
    for (const body of [{ apiKey: 'k' }, { userName: 'demo' }, {}]) {
      const r = await rawPost(`${sim.tradingUrl}/api/Auth/loginKey`, body);
      expect(r.status).toBe(400);
      expect(r.json.message).toMatch(/userName|apiKey/);
    }
  });

  it('refuses bodies over the size limit with 413', async () => {
    const r = await rawPost(`${sim.tradingUrl}/api/Auth/loginKey`, {
      userName: 'x'.repeat(2 * 1024 * 1024),
      apiKey: 'k',
    });
    expect(r.status).toBe(413);
  });

  it('answers unknown paths with 404', async () => {
    expect((await rawPost(`${sim.tradingUrl}/api/Nope/nothing`, {})).status).toBe(404);
    expect((await request(`${sim.adminUrl}/Nothing`, { headers: sim.adminHeaders })).statusCode).toBe(404);
  });

  it('answers ping with the text pong without a token', async () => {
    const r = await request(`${sim.tradingUrl}/api/Status/ping`);
    expect(r.statusCode).toBe(200);
    expect(await r.body.text()).toBe('pong');
  });

  it('requires a session token on trading endpoints (401 without or with a wrong one)', async () => {
    expect(
      (await rawPost(`${sim.tradingUrl}/api/Order/search`, { accountId: 1, startTimestamp: '2025-01-01T00:00:00Z' }))
        .status,
    ).toBe(401);
    expect(
      (
        await rawPost(
          `${sim.tradingUrl}/api/Order/search`,
          { accountId: 1, startTimestamp: '2025-01-01T00:00:00Z' },
          { authorization: 'Bearer nope' },
        )
      ).status,
    ).toBe(401);
  });

  it('requires the admin credential on the administration interface (401 without it)', async () => {
    expect((await request(`${sim.adminUrl}/AccountTemplate`)).statusCode).toBe(401);
    expect(
      (await request(`${sim.adminUrl}/AccountTemplate`, { headers: { authorization: 'Bearer wrong' } })).statusCode,
    ).toBe(401);
    expect((await request(`${sim.adminUrl}/AccountTemplate`, { headers: sim.adminHeaders })).statusCode).toBe(200);
  });

  it('validates request bodies against the shared schemas (400 naming the field)', async () => {
    const token = await rawLogin(sim);
    const r = await rawPost(
      `${sim.tradingUrl}/api/Order/search`,
      { accountId: 'one', startTimestamp: '2025-01-01T00:00:00Z' },
      { authorization: `Bearer ${token}` },
    );
    expect(r.status).toBe(400);
    expect(r.json.message).toMatch(/accountId/);
  });

  it('expires tokens after 24 hours of simulator time; a newer login keeps working and older tokens are not invalidated by it', async () => {
    const first = await rawLogin(sim);
    sim.clock.advance(12 * 3_600_000);
    const second = await rawLogin(sim);
    const search = (token: string) =>
      rawPost(
        `${sim.tradingUrl}/api/Account/search`,
        { onlyActiveAccounts: false },
        { authorization: `Bearer ${token}` },
      );
    expect((await search(first)).status).toBe(200);
    sim.clock.advance(12 * 3_600_000 + 1000);
    expect((await search(first)).status).toBe(401);
    expect((await search(second)).status).toBe(200);
    // The client logs in again on a 401 and carries on.
    const client = tradingClient(sim);
    await client.login();
    sim.clock.advance(25 * 3_600_000);
    expect((await client.searchAccounts(false)).length).toBeGreaterThan(0);
    await client.close();
  });

  it('gives Auth/validate a fresh token and makes logout revoke the token', async () => {
    const token = await rawLogin(sim);
    const validated = await rawPost(`${sim.tradingUrl}/api/Auth/validate`, '', { authorization: `Bearer ${token}` });
    expect(validated.json).toMatchObject({ success: true, errorCode: 0 });
    expect(validated.json.newToken).toEqual(expect.any(String));
    expect(validated.json.newToken).not.toBe(token);
    const out = await rawPost(`${sim.tradingUrl}/api/Auth/logout`, '', { authorization: `Bearer ${token}` });
    expect(out.json).toMatchObject({ success: true, errorCode: 0 });
    expect(
      (
        await rawPost(
          `${sim.tradingUrl}/api/Account/search`,
          { onlyActiveAccounts: false },
          { authorization: `Bearer ${token}` },
        )
      ).status,
    ).toBe(401);
    const fresh = await rawPost(
      `${sim.tradingUrl}/api/Account/search`,
      { onlyActiveAccounts: false },
      { authorization: `Bearer ${validated.json.newToken}` },
    );
    expect(fresh.status).toBe(200);
  });

  it('answers a burst over the budget with 429 and Retry-After, per token and per bucket', async () => {
    const token = await rawLogin(sim);
    const other = await rawLogin(sim);
    const bars = (t: string) =>
      rawPost(
        `${sim.tradingUrl}/api/History/retrieveBars`,
        {
          contractId: 'CON.F.US.EP.Z25',
          live: false,
          startTime: '2025-11-03T00:00:00Z',
          endTime: '2025-11-04T00:00:00Z',
          unit: 2,
          unitNumber: 1,
          limit: 1,
          includePartialBar: false,
        },
        { authorization: `Bearer ${t}` },
      );
    const statuses = [];
    for (let i = 0; i < 5; i++) statuses.push((await bars(token)).status);
    expect(statuses).toEqual([200, 200, 200, 429, 429]);
    const limited = await bars(token);
    expect(limited.status).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    // Another token has its own budget, and the default bucket is separate from the bars bucket.
    expect((await bars(other)).status).toBe(200);
    expect(
      (
        await rawPost(
          `${sim.tradingUrl}/api/Account/search`,
          { onlyActiveAccounts: false },
          { authorization: `Bearer ${token}` },
        )
      ).status,
    ).toBe(200);
  });

  it('limits logins too (keyed by caller address)', async () => {
    const results = [];
    for (let i = 0; i < 45; i++)
      results.push((await rawPost(`${sim.tradingUrl}/api/Auth/loginKey`, { userName: 'nobody', apiKey: 'x' })).status);
    expect(results).toContain(429);
  });
});
