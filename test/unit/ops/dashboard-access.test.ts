/**
 * The dashboard refuses every request without its token (401, and nothing of the accounts in the answer),
 * takes it from the page's first load into a cookie, and acts only on a confirmed, same-origin request.
 * Real sockets: the server listens on 127.0.0.1 and is asked with fetch.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../../src/engine/log.ts';
import { scrubSecrets } from '../../../src/engine/secrets.ts';
import { COOKIE_NAME, tokenMatches, presentedTokens } from '../../../src/ops/dashboard/access.ts';
import { parseDashboardAddress, startDashboard, type Dashboard } from '../../../src/ops/dashboard/dashboard-server.ts';
import { takeDashboardFlag } from '../../../src/cli/dashboard-option.ts';
import { fixtureFeed, SECRET_BALANCE } from './fixture-feed.ts';

let dashboard: Dashboard;
let feed: ReturnType<typeof fixtureFeed>;

beforeEach(async () => {
  feed = fixtureFeed('101');
  dashboard = await startDashboard({ feed, logger: silentLogger });
});
afterEach(async () => {
  await dashboard.close();
});

const PATHS = ['/', '/api/accounts', '/api/accounts/101/equity', '/api/events', '/?token=wrong', '/no/such/page'];

async function refused(response: Response): Promise<void> {
  expect(response.status).toBe(401);
  const body = await response.text();
  expect(JSON.parse(body)).toEqual({ error: 'unauthorized' });
  expect(body).not.toContain('ACCOUNT-101');
  expect(body).not.toContain(String(SECRET_BALANCE));
  expect(response.headers.get('set-cookie')).toBeNull();
}

describe('dashboard access', () => {
  it('binds 127.0.0.1 on a free port and prints a URL holding a token registered as a secret', () => {
    expect(dashboard.origin).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(dashboard.url).toBe(`${dashboard.origin}/?token=${dashboard.token}`);
    expect(dashboard.token.length).toBeGreaterThanOrEqual(32);
    expect(scrubSecrets(`opened ${dashboard.url}`)).not.toContain(dashboard.token);
  });

  it('answers 401 and no data without a token, with a wrong one, in a header or a cookie', async () => {
    for (const p of PATHS) await refused(await fetch(`${dashboard.origin}${p}`));
    for (const p of PATHS) {
      await refused(await fetch(`${dashboard.origin}${p}`, { headers: { authorization: 'Bearer not-the-token' } }));
      await refused(await fetch(`${dashboard.origin}${p}`, { headers: { cookie: `${COOKIE_NAME}=not-the-token` } }));
      // One character off: the same length, compared in constant time, still refused.
      const near = `${dashboard.token.slice(0, -1)}${dashboard.token.endsWith('A') ? 'B' : 'A'}`;
      await refused(await fetch(`${dashboard.origin}${p}`, { headers: { authorization: `Bearer ${near}` } }));
    }
    await refused(
      await fetch(`${dashboard.origin}/api/actions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ action: 'kill', account: 'all', confirm: true }),
      }),
    );
    expect(feed.accountsById.get('101')!.asked).toEqual([]);
  });

  it('moves the token from the address to an HttpOnly, SameSite=Strict cookie, then serves the page', async () => {
    const first = await fetch(dashboard.url, { redirect: 'manual' });
    expect(first.status).toBe(303);
    expect(first.headers.get('location')).toBe('/');
    const cookie = first.headers.get('set-cookie')!;
    expect(cookie).toContain('HttpOnly');
    expect(cookie).toContain('SameSite=Strict');
    const page = await fetch(`${dashboard.origin}/`, { headers: { cookie: cookie.split(';')[0]! } });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
    const html = await page.text();
    expect(html).toContain('LightweightCharts');
    expect(html).not.toMatch(/<script[^>]+src=|<link[^>]+href="(?!data:)/);
    const api = await fetch(`${dashboard.origin}/api/accounts`, {
      headers: { authorization: `Bearer ${dashboard.token}` },
    });
    expect(api.status).toBe(200);
    expect(((await api.json()) as { accounts: { balance: number }[] }).accounts[0]!.balance).toBe(SECRET_BALANCE);
  });

  it('acts only on a confirmed request from its own origin, and says which account', async () => {
    const post = (body: unknown, headers: Record<string, string> = {}) =>
      fetch(`${dashboard.origin}/api/actions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${dashboard.token}`, ...headers },
        body: JSON.stringify(body),
      });
    const unconfirmed = await post({ action: 'kill', account: '101' });
    expect(unconfirmed.status).toBe(400);
    expect(((await unconfirmed.json()) as { error: string }).error).toMatch(/^bad action: confirm/);
    expect(
      (await post({ action: 'kill', account: '101', confirm: true }, { origin: 'http://evil.example' })).status,
    ).toBe(403);
    expect((await post({ action: 'kill', account: '101', confirm: true }, { origin: 'null' })).status).toBe(403);
    expect((await post({ action: 'kill', account: '999', confirm: true })).status).toBe(404);
    expect(feed.accountsById.get('101')!.asked).toEqual([]);
    // Behind an HTTPS tunnel the page's origin is https on the tunnel's host, which the tunnel forwards.
    const tunnelled = await post(
      { action: 'resume', account: '101', confirm: true },
      { origin: 'https://bot.example.ts.net', 'x-forwarded-host': 'bot.example.ts.net' },
    );
    expect(tunnelled.status).toBe(200);
    const ok = await post({ action: 'pause', account: 'all', confirm: true }, { origin: dashboard.origin });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({
      results: [{ account: '101', action: 'pause', ok: true, message: 'pause done' }],
    });
    expect(feed.accountsById.get('101')!.asked).toEqual([
      { action: 'resume', source: 'dashboard' },
      { action: 'pause', source: 'dashboard' },
    ]);
  });
});

describe('tokens and the flag', () => {
  it('compares tokens whole and reads them from a header, a cookie or the query', () => {
    expect(tokenMatches('abcdef', 'abcdef')).toBe(true);
    expect(tokenMatches('abcdef', 'abcdeF')).toBe(false);
    expect(tokenMatches('abcdef', 'abcdefg')).toBe(false);
    expect(tokenMatches('abcdef', undefined)).toBe(false);
    expect(tokenMatches('abcdef', '')).toBe(false);
    expect(
      presentedTokens({
        headers: { authorization: 'Bearer one', cookie: `x=1; ${COOKIE_NAME}=two` },
        query: { token: 'three' },
      }),
    ).toEqual(['one', 'two', 'three']);
  });

  it('takes --dashboard with or without an address, and refuses a malformed one in one line', () => {
    expect(takeDashboardFlag(['--config', 'a.yaml', '--dashboard'])).toEqual({
      args: ['--config', 'a.yaml'],
      dashboard: '',
    });
    expect(takeDashboardFlag(['--dashboard', '--config', 'a.yaml']).dashboard).toBe('');
    expect(takeDashboardFlag(['--dashboard', '0.0.0.0:8787', '--config', 'a.yaml'])).toEqual({
      args: ['--config', 'a.yaml'],
      dashboard: '0.0.0.0:8787',
    });
    expect(takeDashboardFlag(['--dashboard=:9000']).dashboard).toBe(':9000');
    expect(takeDashboardFlag(['--config', 'a.yaml']).dashboard).toBeUndefined();
    expect(parseDashboardAddress('8787')).toEqual({ host: '127.0.0.1', port: 8787 });
    expect(parseDashboardAddress(':8787')).toEqual({ host: '127.0.0.1', port: 8787 });
    expect(parseDashboardAddress('localhost')).toEqual({ host: 'localhost', port: 0 });
    expect(parseDashboardAddress('[::1]:80')).toEqual({ host: '::1', port: 80 });
    expect(() => takeDashboardFlag(['--dashboard', 'host:99999'])).toThrow(
      "--dashboard port '99999' is not a port number (0-65535)",
    );
    expect(() => parseDashboardAddress('a:b:c')).toThrow(/is not host:port/);
  });
});
