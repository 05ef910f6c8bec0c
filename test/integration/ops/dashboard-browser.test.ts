/**
 * The dashboard in headless Chromium against a paper session on the simulator (manual clock, a Monday in
 * January 2025): the page's figures equal the simulator's and the journal's (balance, position, working
 * order, the room under each limit and the floors of the administration record), a journal entry reaches
 * the page in under a second, the kill button (after its confirmation) flattens the account at the
 * simulator, and a browser without the token gets 401 and nothing else. No request leaves for another
 * host, and the page fits a phone's width.
 *
 * Screenshots go to test-artifacts/dashboard/ (gitignored); with TICKLINE_DOCS_SCREENSHOT=1
 * (`npm run docs:dashboard`) the desktop one is also copied to docs/dashboard.png.
 * Chromium must be at /usr/bin/chromium, as for the report's browser test.
 */
import { copyFileSync, existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdminClient } from '../../../src/adapters/gateway/admin-client.ts';
import { signedSize } from '../../../src/adapters/live/reconcile.ts';
import { silentLogger } from '../../../src/engine/log.ts';
import { loadEvaluationRules } from '../../../src/cli/evaluations.ts';
import { startDashboard, type Dashboard } from '../../../src/ops/dashboard/dashboard-server.ts';
import { sessionFeed } from '../../../src/ops/dashboard/session-feed.ts';
import { startDashboardSession, type DashboardBench } from './dashboard-session.ts';

const CHROMIUM = '/usr/bin/chromium';
const ARTIFACTS = path.resolve(import.meta.dirname, '../../../test-artifacts/dashboard');
const DOCS_PICTURE = path.resolve(import.meta.dirname, '../../../docs/dashboard.png');

let browser: Browser;
let d: DashboardBench;
let dashboard: Dashboard;
let feed: ReturnType<typeof sessionFeed>;

beforeAll(async () => {
  if (!existsSync(CHROMIUM))
    throw new Error(
      `${CHROMIUM} is missing: install it (apt-get install -y chromium) to run the dashboard's browser test`,
    );
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
  });
  d = await startDashboardSession({ realtime: true });
  feed = sessionFeed(d.session, { evaluation: loadEvaluationRules('topstep-50k') });
  dashboard = await startDashboard({ feed, logger: silentLogger, refreshMs: 200 });
  mkdirSync(ARTIFACTS, { recursive: true });
}, 30_000);

afterAll(async () => {
  await browser?.close();
  await dashboard?.close();
  feed?.close();
  await d?.close();
});

/** Polls with a deadline (no sleeps to wait for events). */
async function until(check: () => Promise<boolean>, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function value(page: Page, selector: string): Promise<number> {
  return Number(await page.locator(selector).first().getAttribute('data-value'));
}

describe('the dashboard in a browser', () => {
  it('shows the simulator’s and the journal’s figures live, and its kill button flattens the account', async () => {
    const { b, session } = d;
    await d.runBars(5);
    const accountId = b.sim.demo.accountId;
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    const errors: string[] = [];
    const foreign: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text());
    });
    page.on('request', (r) => {
      if (!r.url().startsWith(dashboard.origin)) foreign.push(r.url());
    });
    await page.goto(dashboard.url);
    // The token went to a cookie and left the address bar.
    expect(page.url()).toBe(`${dashboard.origin}/`);
    await page.waitForSelector('body[data-ready="true"]', { timeout: 10_000 });
    const section = `section[data-account="${accountId}"]`;

    // Balance, position and order: the simulator's, and the journal's.
    const simAccount = (await b.truth.searchAccounts(true)).find((a) => a.id === accountId)!;
    const simPositions = await b.truth.searchOpenPositions(accountId);
    const simOrders = await b.truth.searchOpenOrders(accountId);
    await until(
      async () => Math.abs((await value(page, `${section} [data-field=balance]`)) - simAccount.balance) < 1e-6,
      5_000,
      'the page to show the simulator’s balance',
    );
    const pagePositions = await page
      .locator(`${section} tr[data-contract]`)
      .evaluateAll((rows) =>
        rows.map((r) => [
          r.getAttribute('data-contract'),
          Number(r.querySelector('[data-field=position-size]')?.getAttribute('data-value')),
        ]),
      );
    expect(pagePositions).toEqual(simPositions.map((p) => [p.contractId, signedSize(p)]));
    expect(pagePositions).toEqual([...session.journal.positionsFromFills()]);
    const pageOrders = await page
      .locator(`${section} tr[data-order]`)
      .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-order')));
    expect(pageOrders).toHaveLength(simOrders.length);
    expect(pageOrders.map((tag) => session.journal.order(tag!)?.venueOrderId)).toEqual(simOrders.map((o) => o.id));

    // The room under each limit: the guard's (the snapshot of now), on the administration record's floors.
    const admin = new AdminClient({
      baseUrl: b.sim.adminUrl,
      headers: b.sim.adminHeaders,
      logger: silentLogger,
      now: b.now,
    });
    const record = await admin.findTradingAccount(simAccount.name);
    await admin.close();
    const snap = feed.accounts()[0]!.snapshot();
    for (const h of snap.headroom) {
      expect(await value(page, `${section} [data-limit=${h.limit}] [data-field=room]`)).toBeCloseTo(h.room, 6);
    }
    expect(snap.headroom.map((h) => h.limit)).toEqual(['dailyLossLimit', 'maximumLossLimit', 'personalDailyLossLimit']);
    expect(await value(page, `${section} [data-limit=maximumLossLimit] [data-field=floor]`)).toBeCloseTo(
      record.drawDownLimit,
      6,
    );
    expect(await value(page, `${section} [data-limit=dailyLossLimit] [data-field=floor]`)).toBeCloseTo(
      record.startOfDayBalance - record.dailyLoss,
      6,
    );
    expect(await page.locator(`${section} li.refused`).count()).toBe(1);
    expect(await page.locator(`${section} [data-field=state]`).getAttribute('data-value')).toBe('ACTIVE');

    // A journal entry reaches the page in under a second.
    const written = Date.now();
    session.journal.record('dashboard-probe', 'event', null, { note: 'probe' });
    const seq = session.journal.entries({ kind: 'dashboard-probe' })[0]!.seq;
    await until(
      async () => Number(await page.locator('body').getAttribute('data-last-seq')) >= seq,
      1_000,
      'the journal entry to reach the page',
    );
    expect(Date.now() - written).toBeLessThan(1_000);

    await page.screenshot({ path: path.join(ARTIFACTS, 'dashboard.png'), fullPage: true });
    if (process.env.TICKLINE_DOCS_SCREENSHOT === '1') copyFileSync(path.join(ARTIFACTS, 'dashboard.png'), DOCS_PICTURE);

    // Pause and resume from the page, each confirmed; cancelling the dialog does nothing.
    const state = () => page.locator(`${section} [data-field=state]`).getAttribute('data-value');
    await page.locator(`${section} button[data-action=pause]`).click();
    await page.locator('#confirm-no').click();
    expect(session.journal.entries({ kind: 'operator' })).toEqual([]);
    for (const [action, expected] of [
      ['pause', 'REDUCING'],
      ['resume', 'ACTIVE'],
    ] as const) {
      await page.locator(`${section} button[data-action=${action}]`).click();
      await page.locator('#confirm-yes').click();
      await until(async () => (await state()) === expected, 5_000, `the page to show ${expected}`);
      expect(session.engine.tradingState().state).toBe(expected);
    }
    expect(session.journal.entries({ kind: 'operator' }).map((e) => e.payload)).toEqual([
      { action: 'pause', source: 'dashboard', from: 'ACTIVE' },
      { action: 'resume', source: 'dashboard', from: 'REDUCING' },
    ]);
    await page.evaluate('document.body.removeAttribute("data-last-action")');

    // The kill switch: asked, confirmed, done at the simulator, journaled as the dashboard's.
    await page.locator(`${section} button[data-action=kill]`).click();
    await expect.poll(() => page.locator('#confirm').isVisible()).toBe(true);
    expect(await page.locator('#confirm-text').textContent()).toContain('Kill switch on');
    expect(session.journal.entries({ kind: 'kill-switch' })).toEqual([]);
    await page.locator('#confirm-yes').click();
    await page.waitForSelector('body[data-last-action]', { timeout: 15_000 });
    const answer = JSON.parse((await page.locator('body').getAttribute('data-last-action'))!) as {
      results: { ok: boolean; message: string }[];
    };
    expect(answer.results[0]!.ok).toBe(true);
    expect(await b.truth.searchOpenPositions(accountId)).toEqual([]);
    expect(await b.truth.searchOpenOrders(accountId)).toEqual([]);
    expect(
      session.journal.entries({ kind: 'kill-switch' }).map((e) => (e.payload as { source: string }).source),
    ).toEqual(['dashboard', 'dashboard']);
    await until(
      async () => (await page.locator(`${section} [data-field=state]`).getAttribute('data-value')) === 'HALTED',
      5_000,
      'the page to show HALTED',
    );
    expect(await page.locator(`${section} tr[data-contract]`).count()).toBe(0);
    expect(await page.locator(`${section} tr[data-order]`).count()).toBe(0);
    expect(errors).toEqual([]);
    expect(foreign).toEqual([]);

    // A phone: one column, nothing wider than the screen.
    await page.setViewportSize({ width: 390, height: 844 });
    await until(
      async () => (await page.evaluate('document.documentElement.scrollWidth')) === 390,
      2_000,
      'the page to fit a phone',
    );
    await page.screenshot({ path: path.join(ARTIFACTS, 'dashboard-phone.png'), fullPage: true });
    await context.close();
  }, 60_000);

  it('shows a browser without the token, or with a wrong one, 401 and nothing else', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    for (const url of [
      `${dashboard.origin}/`,
      `${dashboard.origin}/?token=wrong`,
      `${dashboard.origin}/api/accounts`,
    ]) {
      const response = await page.goto(url);
      expect(response!.status()).toBe(401);
      const text = await page.locator('body').textContent();
      expect(JSON.parse(text!)).toEqual({ error: 'unauthorized' });
      expect(text).not.toContain(d.b.sim.demo.accountName);
    }
    expect(await context.cookies()).toEqual([]);
    await context.close();
  });
});
