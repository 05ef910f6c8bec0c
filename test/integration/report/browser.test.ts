/**
 * The report renders in a real browser: open generated reports in headless Chromium and check the
 * structure of what the chart library drew (not pixels): the candles, one entry and one exit marker per
 * trade, the overlays in their panes, the guard's refusals and the roll marked, equity and drawdown on the
 * candles' time index, hours without data taking no room, the evaluation's fan chart and histogram; no
 * page error and no request leaving the page. Chromium must be at /usr/bin/chromium (CI installs it):
 * without it this test fails.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeReport } from '../../../src/report/html.ts';
import { writeSweepReport } from '../../../src/report/sweep-page.ts';
import { annotatedRun, GAP_MS, generatedRun, twoEraRun } from '../../unit/report/fixture.ts';

const CHROMIUM = '/usr/bin/chromium';

// The few shapes of the page the checks touch (the project compiles without the DOM library).
interface Series {
  data(): readonly { time: number; value?: number }[];
  getPane(): { paneIndex(): number };
  priceScale(): { getVisibleRange(): { from: number; to: number } | null };
}
interface ReportHandle {
  chart: {
    timeScale(): {
      timeToCoordinate(time: number): number | null;
      setVisibleLogicalRange(range: { from: number; to: number }): void;
      getVisibleLogicalRange(): { from: number; to: number } | null;
    };
  };
  price: Series;
  overlays: Series[];
  equity: Series;
  drawdown: Series;
  markers: { markers(): readonly { id?: string; time: number; price?: number }[] };
  panes: number;
}
type PageWindow = {
  ticklineReport: ReportHandle;
  document: { querySelectorAll(selector: string): { length: number } };
};

async function open(browser: Browser, file: string): Promise<{ page: Page; errors: string[]; requests: string[] }> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const errors: string[] = [];
  const requests: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(message.text());
  });
  page.on('request', (request) => {
    if (!request.url().startsWith('file:')) requests.push(request.url());
  });
  await page.goto(pathToFileURL(file).href);
  await page.waitForSelector('body[data-ready="true"]', { timeout: 20_000 });
  return { page, errors, requests };
}

describe('HTML report in headless Chromium', () => {
  let browser: Browser;
  let directory: string;

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) {
      throw new Error(
        `${CHROMIUM} is missing: install it (apt-get install -y chromium) to run the report's browser test`,
      );
    }
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
    directory = await mkdtemp(path.join(os.tmpdir(), 'tickline-report-'));
  });

  afterAll(async () => {
    await browser?.close();
    if (directory) await rm(directory, { recursive: true, force: true });
  });

  it('draws candles, a marker per entry and exit, overlays in their panes, equity and drawdown, and compresses the gap', async () => {
    const bars = 3000;
    const gapAfter = 1000;
    const input = annotatedRun(bars, gapAfter);
    const file = path.join(directory, 'report.html');
    const { statistics } = await writeReport(file, input);
    const { page, errors, requests } = await open(browser, file);
    await page.screenshot({
      path: path.join(process.env.REPORT_SCREENSHOT_DIR ?? directory, 'report.png'),
      fullPage: true,
    });

    const seconds = (ms: number) => ms / 1000;
    const drawn = await page.evaluate(
      ({ before, after, first, second }) => {
        const report = (globalThis as unknown as PageWindow).ticklineReport;
        const scale = report.chart.timeScale();
        const markers = report.markers.markers();
        const count = (id: string) => markers.filter((m) => m.id === id).length;
        return {
          candles: report.price.data().length,
          panes: report.panes,
          entries: count('entry'),
          exits: count('exit'),
          decisions: count('decision'),
          rolls: count('roll'),
          overlays: report.overlays.map((o) => ({
            pane: o.getPane().paneIndex(),
            values: o.data().filter((d) => d.value !== undefined).length,
          })),
          equity: report.equity.data().length,
          equityPane: report.equity.getPane().paneIndex(),
          drawdownPane: report.drawdown.getPane().paneIndex(),
          spacing: scale.timeToCoordinate(second)! - scale.timeToCoordinate(first)!,
          acrossGap: scale.timeToCoordinate(after)! - scale.timeToCoordinate(before)!,
          canvases: (globalThis as unknown as PageWindow).document.querySelectorAll('#chart canvas').length,
        };
      },
      {
        before: seconds(input.bars.time[gapAfter - 1]!),
        after: seconds(input.bars.time[gapAfter]!),
        first: seconds(input.bars.time[gapAfter - 2]!),
        second: seconds(input.bars.time[gapAfter - 1]!),
      },
    );
    expect(drawn.candles).toBe(bars);
    expect(drawn.entries).toBe(input.trades.length);
    expect(drawn.exits).toBe(input.trades.length);
    // The two refused reasons (their first occurrences) and the strategy that stopped trading after the last one.
    expect(drawn.decisions).toBe(3);
    expect(drawn.rolls).toBe(1);
    expect(drawn.panes).toBe(4);
    expect(drawn.overlays).toEqual([
      // One value per candle, none while the indicator warms up nor where the contract month changes.
      { pane: 0, values: bars - 10 },
      { pane: 0, values: bars - 30 },
      { pane: 1, values: bars - 6 },
    ]);
    expect(drawn.equity).toBe(bars);
    expect([drawn.equityPane, drawn.drawdownPane]).toEqual([2, 3]);
    expect(drawn.canvases).toBeGreaterThan(0);
    // Two days without bars take the room of one bar.
    expect(input.bars.time[gapAfter]! - input.bars.time[gapAfter - 1]!).toBe(GAP_MS + 60_000);
    expect(drawn.spacing).toBeGreaterThan(0);
    expect(drawn.acrossGap).toBeCloseTo(drawn.spacing, 5);

    // The sections a reader scans.
    // One verdict: the evaluation's, at the top and in its section.
    expect(await page.textContent('#verdict')).toBe('FAILED');
    expect(await page.textContent('#evaluation-verdict')).toBe('FAILED');
    expect(await page.textContent('#verdict-text')).toContain(input.evaluation!.outcome.summary);
    expect(await page.textContent('h1')).toBe('Generated run <ES> & friends');
    expect(await page.locator('#parameters tbody tr').first().textContent()).toContain('generated');
    expect(await page.locator('#parameters').textContent()).toContain('fast');
    expect(await page.locator('#decision-counts tbody tr').count()).toBe(2);
    expect(await page.locator('#stopped').textContent()).toContain('strategy generated stopped trading');
    expect(await page.textContent('#evaluation h2')).toBe('Evaluation: Generated 50K');
    expect(await page.locator('#evaluation-fan polygon').count()).toBe(2);
    expect(await page.locator('#evaluation-fan polyline.median').count()).toBe(1);
    const passing = input.evaluation!.monteCarlo!.daysToPass;
    if (passing !== null)
      expect(await page.locator('#evaluation-histogram rect.bar').count()).toBe(
        passing.counts.filter((c) => c > 0).length,
      );
    expect(await page.locator('#violations table').first().textContent()).toContain('Daily loss limit');
    expect(await page.locator('#daily tbody tr').count()).toBe(statistics.daily.length);
    expect(await page.locator('#trades tbody tr').count()).toBe(input.trades.length);
    expect(await page.locator('#trade-analysis #by-hour tbody tr').count()).toBeGreaterThan(0);
    // A click on a trade zooms the chart to its candles.
    const pick = Math.floor(input.trades.length / 2);
    await page.locator('#trade-list tbody tr').nth(pick).click();
    const zoomed = await page.evaluate(async () => {
      await new Promise((resolve) => setTimeout(resolve, 250));
      const report = (globalThis as unknown as PageWindow).ticklineReport as ReportHandle & {
        zoomed: { from: number; to: number };
      };
      return { candles: report.zoomed, range: report.chart.timeScale().getVisibleLogicalRange() };
    });
    const picked = input.trades.at(pick)!;
    const index = (t: number) => Array.from(input.bars.time).indexOf(t);
    expect(zoomed.candles).toEqual({ from: index(picked.entryTime), to: index(picked.exitTime) });
    expect(zoomed.range!.from).toBeLessThan(zoomed.candles.from);
    expect(zoomed.range!.to).toBeGreaterThan(zoomed.candles.to);
    expect(zoomed.range!.to - zoomed.range!.from).toBeLessThan(bars / 10);
    expect(errors).toEqual([]);
    expect(requests).toEqual([]);
    await page.close();
  });

  it('breaks overlays at a gap of years and scales the price to the era in view', async () => {
    const bars = 3000;
    const gapAfter = 1500;
    const input = twoEraRun(bars, gapAfter);
    const file = path.join(directory, 'eras.html');
    await writeReport(file, input);
    const { page, errors } = await open(browser, file);
    const frame = () => new Promise((resolve) => setTimeout(resolve, 250));
    const zoom = async (from: number, to: number) => {
      await page.evaluate(
        ({ from, to }) =>
          (globalThis as unknown as PageWindow).ticklineReport.chart.timeScale().setVisibleLogicalRange({ from, to }),
        { from, to },
      );
      await page.evaluate(frame);
      return page.evaluate(() =>
        (globalThis as unknown as PageWindow).ticklineReport.price.priceScale().getVisibleRange(),
      );
    };
    const gapTime = input.bars.time[gapAfter]! / 1000;
    const overlay = await page.evaluate(
      (t) => (globalThis as unknown as PageWindow).ticklineReport.overlays[0]!.data().find((d) => d.time === t),
      gapTime,
    );
    // The first candle after the gap is whitespace for the overlay: no line drawn across the years.
    expect(overlay?.value).toBeUndefined();
    const prices = (from: number, to: number) => {
      let low = Number.POSITIVE_INFINITY;
      let high = Number.NEGATIVE_INFINITY;
      for (let i = from; i < to; i++) {
        low = Math.min(low, input.bars.low[i]! * 0.25);
        high = Math.max(high, input.bars.high[i]! * 0.25);
      }
      return { low, high };
    };
    // Zoomed to either side (the moving average mixing both eras right after the gap included), the
    // price scale spans that side's prices, not the whole history's.
    for (const [from, to] of [
      [0, gapAfter - 1],
      [gapAfter, bars - 1],
    ] as const) {
      const range = (await zoom(from, to))!;
      const side = prices(from, to + 1);
      expect(range.from).toBeGreaterThanOrEqual(side.low - 1);
      expect(range.to).toBeLessThanOrEqual(side.high + 1);
      expect(range.to - range.from).toBeLessThan(2 * (side.high - side.low));
    }
    expect(errors).toEqual([]);
    await page.close();
  });

  it('merges bars into candles for a long run and still marks every trade', async () => {
    const input = annotatedRun(60_000, 30_000);
    const file = path.join(directory, 'long.html');
    await writeReport(file, input, undefined, { maxPoints: 5_000 });
    const { page, errors } = await open(browser, file);
    const drawn = await page.evaluate(() => {
      const report = (globalThis as unknown as PageWindow).ticklineReport;
      return {
        candles: report.price.data().length,
        entries: report.markers.markers().filter((m) => m.id === 'entry').length,
      };
    });
    expect(drawn.candles).toBe(5_000);
    expect(drawn.entries).toBe(input.trades.length);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('renders a run without bars or trades without a page error', async () => {
    const empty = {
      ...generatedRun(10),
      bars: { time: [], open: [], high: [], low: [], close: [] },
      trades: [],
      equity: { time: [], equity: [] },
      violations: [],
      closestApproach: [],
      passed: true,
    };
    const file = path.join(directory, 'empty.html');
    await writeReport(file, empty);
    const { page, errors } = await open(browser, file);
    expect(await page.textContent('#chart')).toBe('No data.');
    expect(await page.textContent('#verdict')).toBe('PASSED');
    expect(errors).toEqual([]);
    await page.close();
  });

  it('draws the sweep report: the table sorted by the metric and a heatmap cell per pair', async () => {
    const rows = [];
    for (const fast of [5, 10, 20]) {
      for (const slow of [30, 50])
        rows.push({
          rank: 0,
          params: { fast, slow },
          metrics: { sharpe: fast / slow, netPnl: fast * 10 - slow },
          passed: fast > 5,
          error: null,
        });
    }
    rows.push({
      rank: 0,
      params: { fast: 40, slow: 30 },
      metrics: null,
      passed: null,
      error: 'fast must be shorter than slow',
    });
    const file = path.join(directory, 'sweep.html');
    await writeSweepReport(file, { title: 'Sweep', metric: 'sharpe', rows, axes: ['fast', 'slow'], data: 'generated' });
    const { page, errors, requests } = await open(browser, file);
    expect(await page.locator('#sweep-table tbody tr').count()).toBe(rows.length);
    expect(await page.locator('#heatmap td.cell').count()).toBe(4 * 2);
    expect(await page.locator('#heatmap td.cell[data-value]').count()).toBe(6);
    expect(errors).toEqual([]);
    expect(requests).toEqual([]);
    await page.close();
  });
});
