/**
 * The report renders in a real browser: open a generated report in headless Chromium, screenshot it, and
 * check that each chart's canvas has a size and painted pixels, with no page error and no request leaving
 * the page. Chromium must be installed at /usr/bin/chromium (CI installs it); without it this test fails.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeReport } from '../../../src/report/html.ts';
import { generatedRun } from '../../unit/report/fixture.ts';

const CHROMIUM = '/usr/bin/chromium';

// The few DOM shapes the in-page checks touch (the project compiles without the DOM library).
interface PageCanvas {
  readonly width: number;
  readonly height: number;
  getContext(kind: '2d'): { getImageData(x: number, y: number, w: number, h: number): { data: Uint8ClampedArray } } | null;
}
interface PageDocument {
  querySelector(selector: string): PageCanvas | null;
  getElementById(id: string): { textContent: string | null } | null;
}

describe('HTML report in headless Chromium', () => {
  let browser: Browser;
  let directory: string;

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) {
      throw new Error(`${CHROMIUM} is missing: install it (apt-get install -y chromium) to run the report's browser test`);
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

  it('draws the price, equity and drawdown charts and the tables', async () => {
    const input = generatedRun(3000);
    const file = path.join(directory, 'report.html');
    const { statistics } = await writeReport(file, input);

    const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
    const pageErrors: string[] = [];
    const requests: string[] = [];
    page.on('pageerror', (error) => pageErrors.push(error.message));
    page.on('console', (message) => {
      if (message.type() === 'error') pageErrors.push(message.text());
    });
    page.on('request', (request) => {
      if (!request.url().startsWith('file:')) requests.push(request.url());
    });
    await page.goto(pathToFileURL(file).href);
    await page.waitForSelector('body[data-ready="true"]', { timeout: 10_000 });
    await page.screenshot({ path: path.join(process.env.REPORT_SCREENSHOT_DIR ?? directory, 'report.png'), fullPage: true });

    // Each series is drawn in its own colour: count the canvas pixels of that colour, which axes and grid
    // lines (greys) never have.
    const series = [
      { id: 'chart-price', rgb: [0x25, 0x63, 0xeb] },
      { id: 'chart-equity', rgb: [0x7c, 0x3a, 0xed] },
      { id: 'chart-drawdown', rgb: [0xb9, 0x1c, 0x1c] },
    ];
    const canvases = await page.evaluate((wanted) =>
      wanted.map(({ id, rgb }) => {
        const canvas = (globalThis as unknown as { document: PageDocument }).document.querySelector(`#${id} canvas`);
        if (!canvas) return { id, width: 0, height: 0, painted: 0, seriesColoured: 0 };
        const pixels = canvas.getContext('2d')!.getImageData(0, 0, canvas.width, canvas.height).data;
        let painted = 0;
        let seriesColoured = 0;
        for (let i = 0; i < pixels.length; i += 4) {
          if (pixels[i + 3]! === 0) continue;
          painted++;
          const near =
            Math.abs(pixels[i]! - rgb[0]!) < 40 && Math.abs(pixels[i + 1]! - rgb[1]!) < 40 && Math.abs(pixels[i + 2]! - rgb[2]!) < 40;
          if (near && pixels[i + 3]! > 200) seriesColoured++;
        }
        return { id, width: canvas.width, height: canvas.height, painted, seriesColoured };
      }),
      series,
    );
    for (const canvas of canvases) {
      expect(canvas.width, canvas.id).toBeGreaterThan(300);
      expect(canvas.height, canvas.id).toBeGreaterThan(100);
      expect(canvas.painted, canvas.id).toBeGreaterThan(0);
      expect(canvas.seriesColoured, `${canvas.id} series pixels`).toBeGreaterThan(500);
    }

    // Trade markers are drawn: the buy and sell series have points in the data the chart received.
    const markerCounts = await page.evaluate(() => {
      const data = JSON.parse((globalThis as unknown as { document: PageDocument }).document.getElementById('report-data')!.textContent!);
      const count = (values: (number | null)[]) => values.filter((v) => v !== null).length;
      return { buy: count(data.charts.price.buy), sell: count(data.charts.price.sell) };
    });
    expect(markerCounts.buy + markerCounts.sell).toBe(input.trades.length * 2);

    expect(await page.textContent('#verdict')).toBe('FAILED');
    expect(await page.textContent('h1')).toBe('Generated run <ES> & friends');
    expect(await page.locator('#violations table').first().textContent()).toContain('Daily loss limit');
    expect(await page.locator('#daily tbody tr').count()).toBe(statistics.daily.length);
    expect(await page.locator('#trades tbody tr').count()).toBe(input.trades.length);
    expect(pageErrors).toEqual([]);
    expect(requests).toEqual([]);
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
    const page = await browser.newPage();
    const pageErrors: string[] = [];
    page.on('pageerror', (error) => pageErrors.push(error.message));
    await page.goto(pathToFileURL(file).href);
    await page.waitForSelector('body[data-ready="true"]', { timeout: 10_000 });
    expect(await page.textContent('#chart-price')).toBe('No data.');
    expect(await page.textContent('#verdict')).toBe('PASSED');
    expect(pageErrors).toEqual([]);
    await page.close();
  });
});
