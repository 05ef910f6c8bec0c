/**
 * One self-contained HTML report: uPlot's script and styles are inlined, the data rides along as JSON,
 * nothing is fetched. Long series are downsampled (min/max buckets) so a million-bar run stays small,
 * and nothing reads the clock, so the same input gives the same file to the byte.
 */
import { readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { PriceGrid } from '../engine/ticks.ts';
import { DEFAULT_MAX_POINTS, downsampleMinMax } from './downsample.ts';
import {
  DURATION_LABELS,
  RULE_LABELS,
  VIOLATION_TYPE_LABELS,
  formatDuration,
  formatFraction,
  formatMoney,
  formatTime,
  statisticRows,
} from './format.ts';
import { cents, computeStatistics } from './statistics.ts';
import type { ClosedTrade, ReportInput, Statistics } from './types.ts';
import { validateReportInput } from './validate.ts';

export interface RenderOptions {
  /** Most points drawn per series; longer series are downsampled. Default 20,000. */
  readonly maxPoints?: number;
  /** Most trade markers drawn on the price chart; beyond it every n-th trade is drawn. Default 20,000. */
  readonly maxMarkers?: number;
}

interface UPlotAssets {
  readonly script: string;
  readonly css: string;
}

let assets: UPlotAssets | undefined;

function uPlotAssets(): UPlotAssets {
  if (assets === undefined) {
    const require = createRequire(import.meta.url);
    const script = readFileSync(require.resolve('uplot/dist/uPlot.iife.min.js'), 'utf8');
    const css = readFileSync(require.resolve('uplot/dist/uPlot.min.css'), 'utf8');
    // Inlined verbatim: a closing tag inside would end the element early.
    if (/<\/script/i.test(script) || /<\/style/i.test(css)) {
      throw new Error('uPlot assets contain a closing script or style tag and cannot be inlined');
    }
    assets = { script, css };
  }
  return assets;
}

function escapeHtml(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

/** JSON that can sit inside a script element: `<` never appears literally. */
function scriptJson(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');
}

// ------------------------------------------------------------------ chart data

interface PriceChart {
  readonly x: number[];
  readonly close: (number | null)[];
  readonly buy: (number | null)[];
  readonly sell: (number | null)[];
  readonly bars: number;
  readonly drawnBars: number;
  readonly markers: number;
  readonly drawnMarkers: number;
}

interface LineChart {
  readonly x: number[];
  readonly y: number[];
  readonly points: number;
}

interface ChartData {
  readonly price: PriceChart;
  readonly equity: LineChart;
  readonly drawdown: LineChart;
}

const seconds = (ms: number): number => ms / 1000;

function priceOf(grid: PriceGrid, ticks: number): number {
  // Averaged entries can sit between ticks; show them with two more decimals than the grid.
  return Number.isInteger(ticks) ? grid.toPrice(ticks) : Number((ticks * grid.tickSize).toFixed(grid.decimals + 2));
}

function priceChart(input: ReportInput, grid: PriceGrid, maxPoints: number, maxMarkers: number): PriceChart {
  const closes = downsampleMinMax(input.bars.time, input.bars.close, maxPoints);
  // Each trade gives two markers: a buy and a sell (entry and exit, in the order of the position's side).
  // Same-side markers at one instant share a point (uPlot holds one value per series and time).
  const stride = Math.max(1, Math.ceil((input.trades.length * 2) / maxMarkers));
  const buys = new Map<number, number>();
  const sells = new Map<number, number>();
  let drawnTrades = 0;
  input.trades.forEach((trade: ClosedTrade, index) => {
    if (index % stride !== 0) return;
    drawnTrades++;
    const [entrySide, exitSide] = trade.side === 'buy' ? [buys, sells] : [sells, buys];
    entrySide.set(trade.entryTime, priceOf(grid, trade.entryPrice));
    exitSide.set(trade.exitTime, priceOf(grid, trade.exitPrice));
  });
  const markerTimes = [...new Set([...buys.keys(), ...sells.keys()])].sort((a, b) => a - b);

  const x: number[] = [];
  const close: (number | null)[] = [];
  const buy: (number | null)[] = [];
  const sell: (number | null)[] = [];
  let i = 0;
  let j = 0;
  while (i < closes.time.length || j < markerTimes.length) {
    const barTime = i < closes.time.length ? closes.time[i]! : Number.POSITIVE_INFINITY;
    const markerTime = j < markerTimes.length ? markerTimes[j]! : Number.POSITIVE_INFINITY;
    const t = Math.min(barTime, markerTime);
    x.push(seconds(t));
    close.push(barTime === t ? grid.toPrice(closes.value[i++]!) : null);
    if (markerTime === t) {
      buy.push(buys.get(t) ?? null);
      sell.push(sells.get(t) ?? null);
      j++;
    } else {
      buy.push(null);
      sell.push(null);
    }
  }
  return {
    x,
    close,
    buy,
    sell,
    bars: input.bars.time.length,
    drawnBars: closes.time.length,
    markers: input.trades.length * 2,
    drawnMarkers: drawnTrades * 2,
  };
}

function equityCharts(input: ReportInput, maxPoints: number): { equity: LineChart; drawdown: LineChart } {
  const { time, equity } = input.equity;
  const length = Math.min(time.length, equity.length);
  const drawdown = new Float64Array(length);
  let peak = input.startingBalance;
  for (let i = 0; i < length; i++) {
    const value = equity[i] as number;
    if (value > peak) peak = value;
    drawdown[i] = Math.min(0, value - peak);
  }
  const equitySeries = downsampleMinMax(time, equity, maxPoints);
  const drawdownSeries = downsampleMinMax(time, drawdown, maxPoints);
  return {
    equity: { x: equitySeries.time.map(seconds), y: equitySeries.value.map(cents), points: length },
    drawdown: { x: drawdownSeries.time.map(seconds), y: drawdownSeries.value.map(cents), points: length },
  };
}

// ------------------------------------------------------------------ HTML pieces

function table(headers: readonly string[], rows: readonly (readonly string[])[], numeric: readonly boolean[]): string {
  const head = headers.map((h, k) => `<th${numeric[k] ? ' class="num"' : ''}>${escapeHtml(h)}</th>`).join('');
  const body = rows
    .map((row) => `<tr>${row.map((cell, k) => `<td${numeric[k] ? ' class="num"' : ''}>${escapeHtml(cell)}</td>`).join('')}</tr>`)
    .join('\n');
  return `<table><thead><tr>${head}</tr></thead><tbody>\n${body}\n</tbody></table>`;
}

function statisticsSection(stats: Statistics): string {
  const cells = statisticRows(stats)
    .map((row) => `<div class="stat"><span>${escapeHtml(row.label)}</span><b>${escapeHtml(row.value)}</b></div>`)
    .join('\n');
  return `<section id="statistics"><h2>Statistics</h2><div class="stats">\n${cells}\n</div></section>`;
}

function rulesSection(input: ReportInput): string {
  const violations =
    input.violations.length === 0
      ? '<p class="muted">No violation would have happened.</p>'
      : table(
          ['Time (UTC)', 'Type', 'Rule', 'Duration', 'Balance', 'Message'],
          input.violations.map((v) => [
            formatTime(v.time),
            VIOLATION_TYPE_LABELS[v.type],
            RULE_LABELS[v.rule],
            DURATION_LABELS[v.duration],
            formatMoney(v.balance),
            v.message,
          ]),
          [false, false, false, false, true, false],
        );
  const approaches =
    input.closestApproach.length === 0
      ? '<p class="muted">No limit configured.</p>'
      : table(
          ['Rule', 'Least room left', 'When (UTC)'],
          input.closestApproach.map((a) => [RULE_LABELS[a.rule], formatMoney(a.minRoom), formatTime(a.time)]),
          [false, true, false],
        );
  return `<section id="violations"><h2>Violations</h2>\n${violations}\n<h3>Closest approach to each limit</h3>\n${approaches}</section>`;
}

function dailySection(stats: Statistics): string {
  if (stats.daily.length === 0) return '<section id="daily"><h2>Daily</h2><p class="muted">No trading day.</p></section>';
  const rows = stats.daily.map((d) => [
    d.tradeDay.slice(0, 10),
    String(d.totalTrades),
    `${d.winningTrades} / ${d.losingTrades} / ${d.neutralTrades}`,
    d.totalTrades === 0 ? '-' : formatFraction(d.winRate),
    formatMoney(d.totalPnL),
    formatMoney(d.totalFees),
    formatMoney(d.totalPnL - d.totalFees),
    formatMoney(d.balance),
    String(d.products.reduce((sum, p) => sum + p.totalTradedContracts, 0)),
  ]);
  return `<section id="daily"><h2>Daily</h2>
<p class="muted">Trading days end at 17:00 America/Chicago. PnL is before fees, as the gateway reports it; balance is realised, after fees.</p>
${table(
  ['Trading day', 'Trades', 'Won / lost / even', 'Win rate', 'PnL', 'Fees', 'Net', 'Balance', 'Contracts'],
  rows,
  [false, true, true, true, true, true, true, true, true],
)}</section>`;
}

/** Most trades listed in the page; beyond it the first and last halves are shown (the CSV has them all). */
const MAX_TRADE_ROWS = 1000;

function tradesSection(input: ReportInput, grid: PriceGrid): string {
  const count = input.trades.length;
  if (count === 0) return '<section id="trades"><h2>Trades</h2><p class="muted">No trade.</p></section>';
  const half = MAX_TRADE_ROWS / 2;
  const indices =
    count <= MAX_TRADE_ROWS
      ? input.trades.map((_, i) => i)
      : [...Array.from({ length: half }, (_, i) => i), ...Array.from({ length: half }, (_, i) => count - half + i)];
  const decimals = (ticks: number) => {
    const price = priceOf(grid, ticks);
    return price.toFixed(Number.isInteger(ticks) ? grid.decimals : grid.decimals + 2);
  };
  const rows = indices.map((i) => {
    const t = input.trades[i]!;
    return [
      String(i + 1),
      t.side === 'buy' ? 'Long' : 'Short',
      String(t.size),
      formatTime(t.entryTime),
      decimals(t.entryPrice),
      formatTime(t.exitTime),
      decimals(t.exitPrice),
      formatMoney(t.pnl),
      formatMoney(t.fees),
      formatMoney(t.pnl - t.fees),
    ];
  });
  const note =
    count <= MAX_TRADE_ROWS
      ? ''
      : `<p class="muted">The first and last ${half} of ${count} trades; the trades CSV has every one.</p>\n`;
  return `<section id="trades"><h2>Trades</h2>\n${note}${table(
    ['#', 'Side', 'Size', 'Entry (UTC)', 'Entry price', 'Exit (UTC)', 'Exit price', 'PnL', 'Fees', 'Net'],
    rows,
    [true, false, true, false, true, false, true, true, true, true],
  )}</section>`;
}

function configSection(input: ReportInput): string {
  const entries = Object.entries(input.config ?? {});
  if (entries.length === 0) return '';
  return `<section id="configuration"><h2>Configuration</h2>\n${table(
    ['Key', 'Value'],
    entries.map(([key, value]) => [key, value === null ? '-' : String(value)]),
    [false, false],
  )}</section>`;
}

function chartNote(charts: ChartData): string {
  const notes: string[] = [];
  if (charts.price.drawnBars < charts.price.bars) {
    notes.push(`price drawn from ${charts.price.drawnBars} of ${charts.price.bars} bars (lowest and highest close of each bucket)`);
  }
  if (charts.price.drawnMarkers < charts.price.markers) {
    notes.push(`${charts.price.drawnMarkers} of ${charts.price.markers} trade markers drawn`);
  }
  if (charts.equity.x.length < charts.equity.points) {
    notes.push(`equity drawn from ${charts.equity.x.length} of ${charts.equity.points} points`);
  }
  return notes.length === 0 ? '' : `<p class="muted">Downsampled: ${escapeHtml(notes.join('; '))}.</p>`;
}

const STYLE = `
body{font:14px/1.4 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;padding:16px 24px;color:#1f2937;background:#fff}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:24px 0 8px;border-bottom:1px solid #e5e7eb;padding-bottom:4px}h3{font-size:15px;margin:16px 0 6px}
.muted{color:#6b7280}.badge{display:inline-block;padding:2px 10px;border-radius:4px;font-weight:700;color:#fff}
.pass{background:#15803d}.fail{background:#b91c1c}code{font-family:ui-monospace,monospace}
.stats{display:grid;grid-template-columns:repeat(auto-fill,minmax(260px,1fr));gap:2px 24px}
.stat{display:flex;justify-content:space-between;border-bottom:1px dotted #e5e7eb;padding:2px 0}.stat b{font-variant-numeric:tabular-nums}
table{border-collapse:collapse;font-variant-numeric:tabular-nums}th,td{padding:3px 10px;border-bottom:1px solid #e5e7eb;text-align:left}
th{background:#f9fafb}.num{text-align:right}.chart{margin:8px 0 16px}
`;

/** The page's own script: draws the three charts from the embedded data, then marks the body ready. */
const CHART_SCRIPT = `
(function () {
  var data = JSON.parse(document.getElementById('report-data').textContent);
  var decimals = data.decimals;
  function width() { return Math.max(320, document.querySelector('main').clientWidth); }
  function base(height) {
    return {
      width: width(), height: height,
      tzDate: function (ts) { return uPlot.tzDate(new Date(ts * 1e3), 'Etc/UTC'); },
      cursor: { sync: { key: 'report' } },
      scales: { x: { time: true } },
      axes: [{}, { size: 80 }],
    };
  }
  var noLine = function () { return null; };
  var charts = [];
  function draw(id, options, columns) {
    var target = document.getElementById(id);
    if (columns[0].length === 0) { target.textContent = 'No data.'; return; }
    charts.push(new uPlot(options, columns, target));
  }
  var price = data.charts.price;
  draw('chart-price', Object.assign(base(360), {
    series: [
      {},
      { label: 'Close', stroke: '#2563eb', width: 1, spanGaps: true, value: function (u, v) { return v == null ? '-' : v.toFixed(decimals); } },
      { label: 'Buy', stroke: '#15803d', fill: '#15803d', paths: noLine, points: { show: true, size: 9, width: 1, stroke: '#14532d', fill: '#22c55e' } },
      { label: 'Sell', stroke: '#b91c1c', fill: '#b91c1c', paths: noLine, points: { show: true, size: 9, width: 1, stroke: '#7f1d1d', fill: '#ef4444' } },
    ],
  }), [price.x, price.close, price.buy, price.sell]);
  var equity = data.charts.equity;
  draw('chart-equity', Object.assign(base(240), {
    series: [{}, { label: 'Equity', stroke: '#7c3aed', width: 1.5 }],
  }), [equity.x, equity.y]);
  var drawdown = data.charts.drawdown;
  draw('chart-drawdown', Object.assign(base(180), {
    series: [{}, { label: 'Drawdown', stroke: '#b91c1c', fill: 'rgba(185,28,28,0.25)', width: 1 }],
  }), [drawdown.x, drawdown.y]);
  window.addEventListener('resize', function () {
    charts.forEach(function (chart) { chart.setSize({ width: width(), height: chart.height }); });
  });
  document.body.setAttribute('data-ready', 'true');
})();
`;

function verdictBadge(passed: boolean): string {
  return passed ? '<span class="badge pass" id="verdict">PASSED</span>' : '<span class="badge fail" id="verdict">FAILED</span>';
}

/** The report as one HTML string. Computes the statistics when they are not given. */
export function renderReport(input: ReportInput, stats: Statistics = computeStatistics(input), options: RenderOptions = {}): string {
  validateReportInput(input);
  const maxPoints = options.maxPoints ?? DEFAULT_MAX_POINTS;
  const maxMarkers = options.maxMarkers ?? DEFAULT_MAX_POINTS;
  const grid = new PriceGrid(input.contract.tickSize, input.contract.tickValue);
  const charts: ChartData = { price: priceChart(input, grid, maxPoints, maxMarkers), ...equityCharts(input, maxPoints) };
  const { script, css } = uPlotAssets();
  const title = escapeHtml(input.title);
  const barCount = input.bars.time.length;
  const period =
    barCount === 0
      ? 'no bars'
      : `${formatTime(input.bars.time[0] as number)} to ${formatTime(input.bars.time[barCount - 1] as number)} UTC, ${barCount} bars`;
  const contract = input.contract;
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
<style>${css}</style>
<style>${STYLE}</style>
</head>
<body>
<main>
<header>
<h1>${title}</h1>
<p>${verdictBadge(input.passed)} ${escapeHtml(input.verdict ?? '')}</p>
<p class="muted">${escapeHtml(contract.name)} (<code>${escapeHtml(contract.id)}</code>), tick ${escapeHtml(String(contract.tickSize))} = ${escapeHtml(formatMoney(contract.tickValue))}; ${escapeHtml(period)}.<br>
Order list hash <code id="order-list-hash">${escapeHtml(input.orderListHash)}</code>; ${escapeHtml(String(input.violations.length))} violation(s); net PnL ${escapeHtml(formatMoney(stats.netPnl))}, max drawdown ${escapeHtml(formatMoney(stats.maxDrawdown))}, longest drawdown ${escapeHtml(formatDuration(stats.maxDrawdownDurationMs))}.</p>
</header>
${statisticsSection(stats)}
<section id="charts"><h2>Charts</h2>
${chartNote(charts)}
<h3>Price (close) with trades</h3><div id="chart-price" class="chart"></div>
<h3>Equity</h3><div id="chart-equity" class="chart"></div>
<h3>Drawdown</h3><div id="chart-drawdown" class="chart"></div>
</section>
${rulesSection(input)}
${dailySection(stats)}
${tradesSection(input, grid)}
${configSection(input)}
<footer><p class="muted">tickline backtest report. Times in UTC. Sharpe and Sortino from daily returns, annualised with sqrt(252), risk-free rate 0.${input.generatedAt ? ` Generated ${escapeHtml(input.generatedAt)}.` : ''}</p></footer>
</main>
<script type="application/json" id="report-data">${scriptJson({ decimals: grid.decimals, charts })}</script>
<script>${script}</script>
<script>${CHART_SCRIPT}</script>
</body>
</html>
`;
}

/** Writes the report (creating the directory) and returns its statistics and size. */
export async function writeReport(
  filePath: string,
  input: ReportInput,
  stats: Statistics = computeStatistics(input),
  options: RenderOptions = {},
): Promise<{ path: string; bytes: number; statistics: Statistics }> {
  const html = renderReport(input, stats, options);
  await mkdir(path.dirname(filePath), { recursive: true });
  await writeFile(filePath, html, 'utf8');
  return { path: filePath, bytes: Buffer.byteLength(html, 'utf8'), statistics: stats };
}
