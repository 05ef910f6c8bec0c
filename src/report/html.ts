/**
 * One self-contained HTML report: TradingView's lightweight-charts is inlined (candles, overlays, markers,
 * equity and drawdown in panes of one chart, so zoom and crosshair are shared and a time without bars
 * takes no room), the data rides along as JSON, the evaluation's pictures are inline SVG, nothing is
 * fetched. Long runs are downsampled (k bars merged to a candle), and nothing reads the clock, so the
 * same input gives the same file to the byte.
 */
import { readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { EVALUATION_FAILURE_LABELS, EVALUATION_FAILURES, type EvaluationSource } from '../engine/evaluation-rules.ts';
import { MLL_VARIANT_DESCRIPTIONS } from '../engine/account-rules.ts';
import { REASON_CODES } from '../engine/risk.ts';
import { PriceGrid } from '../engine/ticks.ts';
import { chartData, type ChartData, type DecisionMark } from './chart-data.ts';
import { stoppedWarning, summarizeRunDecisions, type DecisionSummary } from './decisions.ts';
import { monteCarloLine, passLockLine, type RunEvaluation } from './evaluation-report.ts';
import {
  DURATION_LABELS,
  RULE_LABELS,
  VIOLATION_TYPE_LABELS,
  formatDuration,
  formatFraction,
  formatMoney,
  formatTime,
  headlineVerdict,
  statisticRows,
} from './format.ts';
import { cents, computeStatistics } from './statistics.ts';
import { daysToPassHistogram, fanChart } from './svg.ts';
import { analyseTrades, type TradeAnalysis, type TradeBreakdown } from './trade-analysis.ts';
import type { ReportInput, Statistics } from './report-types.ts';
import { validateReportInput } from './validate.ts';

export interface RenderOptions {
  /** Most candles drawn; above it consecutive bars are merged into one candle. Default 20,000. */
  readonly maxPoints?: number;
  /** Most trade markers drawn on the price chart; beyond it every n-th trade is drawn. Default 20,000. */
  readonly maxMarkers?: number;
  /**
   * The input's trade analysis when the caller has it already (the result files write the same facts to
   * trades.csv): its excursions walk every bar a trade was open, which need not be done twice.
   */
  readonly analysis?: TradeAnalysis;
}

export const DEFAULT_MAX_POINTS = 20_000;

let chartScript: string | undefined;

/** The chart library's standalone build, read once; inlined verbatim, so it may hold no closing script tag. */
export function chartLibrary(): string {
  if (chartScript === undefined) {
    const require = createRequire(import.meta.url);
    // The package exports only its modules; the standalone build (one global, no imports) sits beside them.
    const root = path.dirname(require.resolve('lightweight-charts/package.json'));
    const script = readFileSync(path.join(root, 'dist', 'lightweight-charts.standalone.production.js'), 'utf8');
    if (/<\/script/i.test(script))
      throw new Error('the chart library contains a closing script tag and cannot be inlined');
    chartScript = script;
  }
  return chartScript;
}

export function escapeHtml(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

/** JSON that can sit inside a script element: `<` never appears literally. */
export function scriptJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

export function table(
  headers: readonly string[],
  rows: readonly (readonly string[])[],
  numeric: readonly boolean[],
  id?: string,
  rowAttributes?: (index: number) => string,
): string {
  const head = headers.map((h, k) => `<th${numeric[k] ? ' class="num"' : ''}>${escapeHtml(h)}</th>`).join('');
  const body = rows
    .map(
      (row, index) =>
        `<tr${rowAttributes === undefined ? '' : rowAttributes(index)}>${row.map((cell, k) => `<td${numeric[k] ? ' class="num"' : ''}>${escapeHtml(cell)}</td>`).join('')}</tr>`,
    )
    .join('\n');
  return `<table${id === undefined ? '' : ` id="${id}"`}><thead><tr>${head}</tr></thead><tbody>\n${body}\n</tbody></table>`;
}

// ------------------------------------------------------------------ sections

function runSection(input: ReportInput): string {
  const row = (label: string, value: string, cls = '') =>
    `<tr${cls}><th>${escapeHtml(label)}</th><td>${escapeHtml(value)}</td></tr>`;
  const rows: string[] = [];
  if (input.strategy !== undefined) {
    rows.push(row('Strategy', input.strategy.name));
    for (const [key, value] of Object.entries(input.strategy.params))
      rows.push(row(key, typeof value === 'string' ? value : JSON.stringify(value), ' class="param"'));
  }
  if (input.data !== undefined) rows.push(row('Data', input.data));
  if (input.timeframe !== undefined) rows.push(row('Timeframe', input.timeframe));
  const { count, first, last } = barSpan(input);
  if (count > 0) rows.push(row('Range (UTC)', `${formatTime(first)} to ${formatTime(last)}`));
  rows.push(row('Bars', String(count)));
  return `<section id="run"><h2>Run</h2>\n<table id="parameters"><tbody>\n${rows.join('\n')}\n</tbody></table></section>`;
}

function strategiesSection(input: ReportInput): string {
  const lines = input.strategies;
  if (lines === undefined) return '';
  const rows = lines.map((s) => [
    s.id,
    s.strategy,
    s.size === 1 ? '1' : `x${s.size}`,
    s.timeframe,
    formatMoney(s.netPnl),
    formatMoney(s.realizedPnl),
    formatMoney(s.unrealizedPnl),
    formatMoney(s.fees),
    String(s.trades),
    s.winRate === null ? '-' : `${(s.winRate * 100).toFixed(1)}%`,
    s.profitFactor === null ? '-' : s.profitFactor.toFixed(2),
    String(s.position),
  ]);
  const headers = [
    'Strategy',
    'Module',
    'Size',
    'Timeframe',
    'Net PnL',
    'Realized',
    'Open',
    'Fees',
    'Trades',
    'Win rate',
    'Profit factor',
    'Position',
  ];
  const numeric = headers.map((_, k) => k >= 4);
  return `<section id="strategies"><h2>Strategies</h2>
<p class="muted">Each strategy's own line of the account: its fills, attributed by order id, booked at average cost. The lines sum to the account's position and PnL.</p>
${table(headers, rows, numeric, 'strategy-lines')}</section>
`;
}

function statisticsSection(stats: Statistics): string {
  const cells = statisticRows(stats)
    .map((row) => `<div class="stat"><span>${escapeHtml(row.label)}</span><b>${escapeHtml(row.value)}</b></div>`)
    .join('\n');
  return `<section id="statistics"><h2>Statistics</h2><div class="stats">\n${cells}\n</div></section>`;
}

function chartNote(chart: ChartData): string {
  const notes: string[] = [];
  if (chart.candles.barsPerCandle > 1)
    notes.push(
      `each candle merges ${chart.candles.barsPerCandle} bars (${chart.candles.t.length} candles for ${chart.candles.bars} bars)`,
    );
  if (chart.drawnTrades < chart.trades) notes.push(`markers of ${chart.drawnTrades} of ${chart.trades} trades drawn`);
  return notes.length === 0 ? '' : `<p class="muted">Downsampled: ${escapeHtml(notes.join('; '))}.</p>`;
}

const OVERLAY_COLOURS = ['#f59e0b', '#0ea5e9', '#a855f7', '#10b981', '#ec4899', '#64748b'];

function chartSection(chart: ChartData): string {
  const legend = chart.overlays
    .map(
      (o, k) =>
        `<span class="key"><i style="background:${OVERLAY_COLOURS[k % OVERLAY_COLOURS.length]}"></i>${escapeHtml(o.name)}${o.pane === 'own' ? ' (own pane)' : ''}</span>`,
    )
    .join('');
  return `<section id="charts"><h2>Chart</h2>
${chartNote(chart)}<p class="muted">Candles with the strategy's indicators; <b class="up">&#9650;</b> buys and <b class="down">&#9660;</b> sells at their fill prices (entries and exits; the trades table has each one), <b class="warn">&#9632;</b> the guard's first refusal of each reason, <b class="muted">&#9679;</b> a change of contract month in the data. Below: equity and drawdown. Times in UTC; hours without bars take no room. Drag or scroll to zoom: every pane follows.</p>
<div class="legend">${legend}</div>
<div id="chart" class="chart" style="height:${chart.overlays.some((o) => o.pane === 'own') ? 860 : 720}px"></div>
</section>`;
}

function decisionMarks(summary: DecisionSummary): DecisionMark[] {
  const marks: DecisionMark[] = summary.firsts
    .filter((f) => f.outcome === 'rejected')
    .map((f) => ({ time: f.time, text: f.code }));
  for (const stop of summary.stopped) marks.push({ time: stop.since, text: `stopped: ${stop.codes[0]?.code ?? ''}` });
  return marks;
}

/** How many bars the run had and the starts of its first and last (a streamed run keeps only these). */
function barSpan(input: ReportInput): { count: number; first: number; last: number } {
  if (input.streamed !== undefined)
    return { count: input.streamed.count, first: input.streamed.first, last: input.streamed.last };
  const count = input.bars.time.length;
  return { count, first: input.bars.time[0] as number, last: input.bars.time[count - 1] as number };
}

function notesBlock(input: ReportInput): string {
  const notes = input.notes ?? [];
  return notes.length === 0
    ? ''
    : `\n<div class="notes" id="notes">${notes.map((note) => `<p class="muted">${escapeHtml(note)}</p>`).join('\n')}</div>`;
}

function warningsBlock(summary: DecisionSummary, id?: string): string {
  if (summary.stopped.length === 0) return '';
  return `<div class="warning"${id === undefined ? '' : ` id="${id}"`}>${summary.stopped.map((s) => `<p><b>Warning:</b> ${escapeHtml(stoppedWarning(s))}</p>`).join('\n')}</div>`;
}

function decisionsSection(input: ReportInput, summary: DecisionSummary): string {
  if (input.decisions === undefined && input.decisionTally === undefined)
    return '<section id="decisions"><h2>Decisions</h2><p class="muted">The run did not record its decisions.</p></section>';
  if (summary.total === 0)
    return '<section id="decisions"><h2>Decisions</h2><p class="muted">No intent reached the risk guard.</p></section>';
  const rows = summary.firsts.map((f) => [
    f.outcome,
    f.code,
    String(f.count),
    REASON_CODES[f.code],
    formatTime(f.time),
    f.strategyId,
    f.intent,
    f.message,
  ]);
  const counts =
    rows.length === 0
      ? '<p class="muted">The guard accepted every intent unchanged.</p>'
      : table(
          ['Outcome', 'Reason', 'Count', 'What it means', 'First (UTC)', 'Strategy', 'First intent', 'Message'],
          rows,
          [false, false, true, false, false, false, false, false],
          'decision-counts',
        );
  return `<section id="decisions"><h2>Decisions</h2>
<p>${summary.total} intents reached the risk guard: ${summary.accepted} accepted, ${summary.adjustedTotal} reduced, ${summary.rejectedTotal} rejected. The first of each reason is marked on the chart; decisions.csv has every one, with the position and equity the guard saw.</p>
${warningsBlock(summary)}
${counts}</section>`;
}

function mllText(rules: EvaluationSource): string {
  const mll = rules.maximumLossLimit;
  const lockAt = mll.lockAbove ?? (mll.variant === 'trailingUntilLocked' ? 0 : undefined);
  const lock =
    lockAt === undefined
      ? ''
      : lockAt === 0
        ? ', locked at the starting balance'
        : `, locked at the starting balance + ${formatMoney(lockAt)}`;
  return `${formatMoney(mll.amount)} ${mll.variant} (${MLL_VARIANT_DESCRIPTIONS[mll.variant]}${lock})`;
}

function rulesTable(rules: EvaluationSource): string {
  const rows: string[][] = [
    ['Starting balance', formatMoney(rules.startingBalance)],
    ['Profit target', `${formatMoney(rules.profitTarget)} (realized, at the end of a trading day)`],
    ['Maximum loss limit', mllText(rules)],
  ];
  if (rules.dailyLossLimit !== undefined) {
    rows.push([
      'Daily loss limit',
      `${formatMoney(rules.dailyLossLimit.amount)}, ${rules.dailyLossLimit.breach === 'pausesDay' ? 'a breach ends the trading day' : 'a breach fails the evaluation'}`,
    ]);
  }
  if (rules.consistency !== undefined)
    rows.push([
      'Consistency',
      `best day below ${Math.round(rules.consistency.bestDayShare * 100)}% of the total profit`,
    ]);
  if (rules.minimumTradingDays !== undefined) rows.push(['Minimum trading days', String(rules.minimumTradingDays)]);
  if (rules.maximumContracts !== undefined) rows.push(['Maximum contracts', String(rules.maximumContracts)]);
  if (rules.tradingHours !== undefined) {
    const h = rules.tradingHours;
    rows.push([
      'Trading hours',
      `${h.open} to ${h.close}${h.flatBy === undefined ? '' : `, flat by ${h.flatBy}`} (${h.timeZone ?? "the trading day's zone"})`,
    ]);
  }
  if (rules.source !== undefined) rows.push(['Source', rules.source]);
  if (rules.readOn !== undefined) rows.push(['Read on', rules.readOn]);
  return table(['Rule', 'Value'], rows, [false, false], 'evaluation-rules');
}

function outcomeBadge(status: 'passed' | 'failed' | 'open'): string {
  const [cls, text] =
    status === 'passed' ? ['pass', 'PASSED'] : status === 'failed' ? ['fail', 'FAILED'] : ['open', 'NOT PASSED'];
  return `<span class="badge ${cls}" id="evaluation-verdict">${text}</span>`;
}

function monteCarloBlock(evaluation: RunEvaluation): string {
  const mc = evaluation.monteCarlo;
  if (mc === null) return '<p class="muted">No Monte Carlo: the run has no trading day to draw from.</p>';
  const pct = (v: number) => `${(v * 100).toFixed(v > 0 && v < 0.01 ? 2 : 1)}%`;
  const rows: string[][] = [
    [
      'Pass',
      String(mc.passed),
      `${pct(mc.passProbability)} (95% CI ${pct(mc.passInterval[0])} to ${pct(mc.passInterval[1])})`,
    ],
  ];
  for (const rule of EVALUATION_FAILURES) {
    if (rule === 'dailyLossLimit' && evaluation.rules.dailyLossLimit?.breach !== 'failsEvaluation') continue;
    if (rule === 'maximumContracts' && evaluation.rules.maximumContracts === undefined) continue;
    if (rule === 'tradingHours' && evaluation.rules.tradingHours === undefined) continue;
    rows.push([`Fail: ${EVALUATION_FAILURE_LABELS[rule]}`, String(mc.failed[rule]), pct(mc.failProbability[rule])]);
  }
  rows.push([`Still open after ${mc.horizonDays} days`, String(mc.open), pct(mc.openProbability)]);
  const d = mc.daysToPass;
  const days =
    d === null
      ? '<p class="muted">No path passed: no distribution of days to pass.</p>'
      : `<p>Days to pass: median <b>${d.median}</b> (95% CI ${d.medianInterval[0]} to ${d.medianInterval[1]}), mean ${d.mean}, 10% of passing paths by day ${d.p10}, 90% by day ${d.p90}.</p>
<h3>Trading days to pass</h3>${daysToPassHistogram(d.counts, d.median)}`;
  const floor = evaluation.rules.startingBalance - evaluation.rules.maximumLossLimit.amount;
  return `<h3>Monte Carlo</h3>
<p class="muted">${escapeHtml(monteCarloLine(mc))}. Each path draws trading days of this run (blocks of ${mc.blockDays}, seeded) and replays each day's own intraday equity path against the rules, so the trailing floor follows it.</p>
${table(['Outcome', 'Paths', 'Probability'], rows, [false, true, true], 'monte-carlo')}
${days}
<h3>Equity paths</h3>
<p class="muted">Median (line), 25% to 75% and 5% to 95% of the paths (bands) after each trading day, ${mc.fan.samples.length} single paths; a finished path keeps its last equity.</p>
${fanChart(mc.fan, { floor, target: evaluation.rules.startingBalance + evaluation.rules.profitTarget })}`;
}

function evaluationSection(input: ReportInput): string {
  const evaluation = input.evaluation;
  if (evaluation === undefined) {
    return `<section id="evaluation"><h2>Evaluation</h2><p class="muted">No evaluation: name one with <code>evaluation:</code> in the definition or <code>--evaluation</code> (<code>tickline evaluate --list</code> shows the presets), or give the account a profitTarget and a maximumLossLimit.</p></section>`;
  }
  const { rules, outcome } = evaluation;
  const closest = table(
    ['Limit', 'Least room left', 'When (UTC)'],
    outcome.closest.map((a) => [
      a.rule === 'profitTarget' ? 'Profit target (still missing at best)' : RULE_LABELS[a.rule],
      formatMoney(a.minRoom),
      formatTime(a.time),
    ]),
    [false, true, false],
  );
  return `<section id="evaluation"><h2>Evaluation: ${escapeHtml(rules.name)}</h2>
${rules.note === undefined ? '' : `<p class="note">${escapeHtml(rules.note)}</p>`}
<p>${outcomeBadge(outcome.status)} This run ${escapeHtml(outcome.summary)}.</p>
${evaluation.passLock === undefined ? '' : `<p id="evaluation-pass-lock">${escapeHtml(passLockLine(evaluation.passLock))}</p>`}
${rulesTable(rules)}
<h3>Closest approach</h3>${closest}
${monteCarloBlock(evaluation)}</section>`;
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
  if (stats.daily.length === 0)
    return '<section id="daily"><h2>Daily</h2><p class="muted">No trading day.</p></section>';
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
<p class="muted">Trading days end at the trading day's boundary (17:00 America/Chicago unless configured). PnL is before fees, as the gateway reports it; balance is realised, after fees.</p>
${table(
  ['Trading day', 'Trades', 'Won / lost / even', 'Win rate', 'PnL', 'Fees', 'Net', 'Balance', 'Contracts'],
  rows,
  [false, true, true, true, true, true, true, true, true],
)}</section>`;
}

/** Most trades listed in the page; beyond it the first and last halves are shown (the CSV has them all). */
const MAX_TRADE_ROWS = 1000;

function ticksText(ticks: number): string {
  return Number.isInteger(ticks) ? String(ticks) : ticks.toFixed(2);
}

function breakdownTable(title: string, rows: readonly TradeBreakdown[], id: string): string {
  return `<h3>${escapeHtml(title)}</h3>${table(
    [
      title
        .split(' ')
        .pop()!
        .replace(/^./, (c) => c.toUpperCase()),
      'Trades',
      'Won',
      'Win rate',
      'Net PnL',
      'Average net',
    ],
    rows.map((r) => [
      r.key,
      String(r.trades),
      String(r.won),
      formatFraction(r.winRate),
      formatMoney(r.netPnl),
      formatMoney(r.averageNet),
    ]),
    [false, true, true, true, true, true],
    id,
  )}`;
}

function tradeAnalysisSection(input: ReportInput, analysis: TradeAnalysis): string {
  const count = input.trades.length;
  if (count === 0)
    return '<section id="trade-analysis"><h2>Trade analysis</h2><p class="muted">No trade.</p></section>';
  // Summed in trade order, one trade's facts at a time (no array of every trade's).
  let maeSum = 0;
  let mfeSum = 0;
  let durationSum = 0;
  let maeMoney = 0;
  let mfeMoney = 0;
  for (let i = 0; i < count; i++) {
    const f = analysis.fact(i);
    maeSum += f.maeTicks;
    mfeSum += f.mfeTicks;
    durationSum += f.durationMs;
    maeMoney += f.mae;
    mfeMoney += f.mfe;
  }
  const maeTicks = maeSum / count;
  const mfeTicks = mfeSum / count;
  const duration = durationSum / count;
  return `<section id="trade-analysis"><h2>Trade analysis</h2>
<p>Average MAE <b>${escapeHtml(maeTicks.toFixed(2))}</b> ticks (${escapeHtml(formatMoney(cents(maeMoney / count)))}), average MFE <b>${escapeHtml(mfeTicks.toFixed(2))}</b> ticks (${escapeHtml(formatMoney(cents(mfeMoney / count)))}), average duration <b>${escapeHtml(formatDuration(duration))}</b> over ${count} trades.</p>
<p class="muted">MAE and MFE: the worst and best open PnL per contract from the high and low of every bar the trade was open (its entry's and its exit's bars included), in ticks of ${escapeHtml(String(input.contract.tickSize))}. Hours and weekdays of the entry in ${escapeHtml(analysis.timeZone)}; a trade wins when its PnL after fees is above zero. Click a trade in the table below to zoom the chart to it.</p>
${breakdownTable('By entry label', analysis.byLabel, 'by-label')}
${breakdownTable('By entry hour', analysis.byHour, 'by-hour')}
${breakdownTable('By entry weekday', analysis.byWeekday, 'by-weekday')}</section>`;
}

function tradesSection(input: ReportInput, grid: PriceGrid, analysis: TradeAnalysis): string {
  const count = input.trades.length;
  if (count === 0) return '<section id="trades"><h2>Trades</h2><p class="muted">No trade.</p></section>';
  const half = MAX_TRADE_ROWS / 2;
  const indices =
    count <= MAX_TRADE_ROWS
      ? Array.from({ length: count }, (_, i) => i)
      : [...Array.from({ length: half }, (_, i) => i), ...Array.from({ length: half }, (_, i) => count - half + i)];
  const price = (ticks: number) =>
    Number.isInteger(ticks)
      ? grid.toPrice(ticks).toFixed(grid.decimals)
      : (ticks * grid.tickSize).toFixed(grid.decimals + 2);
  const rows = indices.map((i) => {
    const t = input.trades.at(i)!;
    const f = analysis.fact(i, t);
    return [
      String(i + 1),
      t.side === 'buy' ? 'Long' : 'Short',
      String(t.size),
      formatTime(t.entryTime),
      price(t.entryPrice),
      formatTime(t.exitTime),
      price(t.exitPrice),
      formatMoney(t.pnl),
      formatMoney(t.fees),
      formatMoney(t.pnl - t.fees),
      formatDuration(f.durationMs),
      ticksText(f.maeTicks),
      ticksText(f.mfeTicks),
      f.label ?? '',
    ];
  });
  const note =
    count <= MAX_TRADE_ROWS
      ? ''
      : `<p class="muted">The first and last ${half} of ${count} trades; the trades CSV has every one.</p>\n`;
  return `<section id="trades"><h2>Trades</h2>\n${note}${table(
    [
      '#',
      'Side',
      'Size',
      'Entry (UTC)',
      'Entry price',
      'Exit (UTC)',
      'Exit price',
      'PnL',
      'Fees',
      'Net',
      'Duration',
      'MAE (ticks)',
      'MFE (ticks)',
      'Label',
    ],
    rows,
    [true, false, true, false, true, false, true, true, true, true, false, true, true, false],
    'trade-list',
    (row) => {
      const t = input.trades.at(indices[row]!)!;
      return ` class="zoom" data-from="${t.entryTime / 1000}" data-to="${t.exitTime / 1000}" title="Zoom the chart to this trade"`;
    },
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

export const BASE_STYLE = `
body{font:14px/1.4 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;padding:16px 24px;color:#1f2937;background:#fff}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:24px 0 8px;border-bottom:1px solid #e5e7eb;padding-bottom:4px}h3{font-size:15px;margin:16px 0 6px}
.muted{color:#6b7280}.badge{display:inline-block;padding:2px 10px;border-radius:4px;font-weight:700;color:#fff}
.pass{background:#15803d}.fail{background:#b91c1c}.open{background:#92400e}code{font-family:ui-monospace,monospace}
table{border-collapse:collapse;font-variant-numeric:tabular-nums}th,td{padding:3px 10px;border-bottom:1px solid #e5e7eb;text-align:left;vertical-align:top}
th{background:#f9fafb}.num{text-align:right}
tr.zoom{cursor:zoom-in}tr.zoom:hover{background:#eff6ff}
`;

const STYLE = `${BASE_STYLE}
.stats{display:grid;grid-template-columns:repeat(auto-fill,minmax(260px,1fr));gap:2px 24px}
.stat{display:flex;justify-content:space-between;border-bottom:1px dotted #e5e7eb;padding:2px 0}.stat b{font-variant-numeric:tabular-nums}
.chart{margin:8px 0 16px;width:100%;position:relative}.legend{display:flex;flex-wrap:wrap;gap:4px 16px;margin:4px 0}.key i{display:inline-block;width:14px;height:3px;margin:0 6px 3px 0;vertical-align:middle}
.up{color:#15803d}.down{color:#b91c1c}.warn{color:#d97706}
.warning{border-left:4px solid #d97706;background:#fffbeb;padding:4px 12px;margin:8px 0}.note{border-left:4px solid #2563eb;background:#eff6ff;padding:4px 12px}
#parameters th{background:none;font-weight:600}#parameters tr.param th{font-weight:400;padding-left:28px;color:#4b5563}
svg.plot{max-width:100%;height:auto;font:11px system-ui,sans-serif;fill:#374151}
svg .grid{stroke:#e5e7eb}svg .band-outer{fill:#bfdbfe;opacity:.6}svg .band-inner{fill:#60a5fa;opacity:.55}
svg .sample{fill:none;stroke:#6b7280;stroke-width:.6;opacity:.45}svg .median{fill:none;stroke:#1d4ed8;stroke-width:2}
svg .floor{stroke:#b91c1c;stroke-dasharray:5 4}svg .target{stroke:#15803d;stroke-dasharray:5 4}svg .floor-label{fill:#b91c1c}svg .target-label{fill:#15803d}
svg .bar{fill:#60a5fa}svg .median-label{fill:#1d4ed8}
`;

/**
 * The page's own script: one chart with panes (price with overlays and markers, an own pane for other
 * indicators, equity, drawdown), built from the embedded data. `window.ticklineReport` holds the chart,
 * its series and markers, so a browser test can check what was drawn.
 */
const CHART_SCRIPT = `
(function () {
  var data = JSON.parse(document.getElementById('report-data').textContent);
  var chartData = data.chart;
  var LC = window.LightweightCharts;
  var report = { overlays: [], panes: 0 };
  window.ticklineReport = report;
  var target = document.getElementById('chart');
  var candles = chartData.candles;
  if (candles.t.length === 0) { target.textContent = 'No data.'; document.body.setAttribute('data-ready', 'true'); return; }
  var decimals = chartData.decimals;
  var money = { type: 'price', precision: 2, minMove: 0.01 };
  var chart = LC.createChart(target, {
    autoSize: true,
    layout: { background: { color: '#ffffff' }, textColor: '#1f2937', fontSize: 11, panes: { separatorColor: '#d1d5db', enableResize: true } },
    grid: { vertLines: { color: '#f3f4f6' }, horzLines: { color: '#f3f4f6' } },
    // The whole run fits the width at first, however many candles: zoom in from there.
    timeScale: { timeVisible: true, secondsVisible: false, borderColor: '#d1d5db', minBarSpacing: 0.001 },
    // Each pane's scale fits what is in view (zoom to one era of a multi-year history and its candles fill the pane).
    rightPriceScale: { borderColor: '#d1d5db', autoScale: true },
    localization: { dateFormat: 'yyyy-MM-dd' },
  });
  var price = chart.addSeries(LC.CandlestickSeries, {
    upColor: '#16a34a', downColor: '#dc2626', wickUpColor: '#16a34a', wickDownColor: '#dc2626', borderVisible: false,
    priceFormat: { type: 'price', precision: decimals, minMove: Math.pow(10, -decimals) }, title: '',
  });
  price.setData(candles.t.map(function (t, i) { return { time: t, open: candles.o[i], high: candles.h[i], low: candles.l[i], close: candles.c[i] }; }));
  function line(values, options, pane) {
    var series = chart.addSeries(LC.LineSeries, Object.assign({ lineWidth: 1, priceLineVisible: false, lastValueVisible: false, crosshairMarkerVisible: false }, options), pane);
    series.setData(candles.t.map(function (t, i) { return values[i] == null ? { time: t } : { time: t, value: values[i] }; }));
    return series;
  }
  var colours = ${JSON.stringify(OVERLAY_COLOURS)};
  var ownPane = chartData.overlays.some(function (o) { return o.pane === 'own'; }) ? 1 : -1;
  chartData.overlays.forEach(function (overlay, k) {
    var options = { color: colours[k % colours.length], title: overlay.name };
    if (overlay.pane === 'price') {
      options.priceFormat = { type: 'price', precision: decimals, minMove: Math.pow(10, -decimals) };
      // The price scale fits the candles in view only: an indicator warming up across a gap of years (a
      // band mixing two eras' prices) must not stretch it until the candles are flat lines.
      options.autoscaleInfoProvider = function () { return null; };
    }
    report.overlays.push(line(overlay.values, options, overlay.pane === 'own' ? ownPane : 0));
  });
  var equityPane = ownPane === 1 ? 2 : 1;
  report.equity = line(chartData.equity, { color: '#7c3aed', lineWidth: 2, title: 'Equity', priceFormat: money, lastValueVisible: true }, equityPane);
  report.drawdown = chart.addSeries(LC.BaselineSeries, {
    baseValue: { type: 'price', price: 0 }, title: 'Drawdown', priceFormat: money, priceLineVisible: false,
    topLineColor: 'rgba(0,0,0,0)', topFillColor1: 'rgba(0,0,0,0)', topFillColor2: 'rgba(0,0,0,0)',
    bottomLineColor: '#b91c1c', bottomFillColor1: 'rgba(185,28,28,0.15)', bottomFillColor2: 'rgba(185,28,28,0.4)',
  }, equityPane + 1);
  report.drawdown.setData(candles.t.map(function (t, i) { var v = chartData.drawdown[i]; return v == null ? { time: t } : { time: t, value: v }; }));
  var markers = chartData.markers.map(function (m) {
    if (m.kind === 'decision') return { time: m.t, position: 'aboveBar', shape: 'square', color: '#d97706', text: m.text, id: 'decision' };
    if (m.kind === 'roll') return { time: m.t, position: 'belowBar', shape: 'circle', color: '#6b7280', text: m.text, id: 'roll' };
    if (m.kind === 'gap') return { time: m.t, position: 'aboveBar', shape: 'circle', color: '#9ca3af', text: m.text, id: 'gap' };
    var buy = m.side === 'buy';
    return {
      time: m.t, position: buy ? 'atPriceTop' : 'atPriceBottom', price: m.price, shape: buy ? 'arrowUp' : 'arrowDown',
      color: buy ? '#15803d' : '#b91c1c', text: m.text, id: m.kind,
    };
  });
  report.markers = LC.createSeriesMarkers(price, markers);
  var panes = chart.panes();
  var shares = ownPane === 1 ? [0.5, 0.16, 0.19, 0.15] : [0.6, 0.23, 0.17];
  panes.forEach(function (pane, k) { if (shares[k]) pane.setStretchFactor(shares[k]); });
  chart.timeScale().fitContent();
  // A trade's zoom: its candles with as many again on each side (at least 20), the price scale fitting them.
  function candleAt(t) {
    var low = 0, high = candles.t.length - 1, found = 0;
    while (low <= high) { var mid = (low + high) >> 1; if (candles.t[mid] <= t) { found = mid; low = mid + 1; } else high = mid - 1; }
    return found;
  }
  report.zoomTo = function (from, to) {
    var a = candleAt(from), b = candleAt(to), pad = Math.max(20, b - a);
    chart.timeScale().setVisibleLogicalRange({ from: a - pad, to: b + pad });
    return { from: a, to: b };
  };
  var list = document.getElementById('trade-list');
  if (list) list.addEventListener('click', function (event) {
    var row = event.target.closest('tr.zoom');
    if (!row) return;
    report.zoomed = report.zoomTo(Number(row.getAttribute('data-from')), Number(row.getAttribute('data-to')));
    target.scrollIntoView({ block: 'start' });
  });
  report.chart = chart;
  report.price = price;
  report.panes = panes.length;
  document.body.setAttribute('data-ready', 'true');
})();
`;

function verdictLine(input: ReportInput): string {
  const verdict = headlineVerdict(input);
  const cls = verdict.status === 'passed' ? 'pass' : verdict.status === 'failed' ? 'fail' : 'open';
  return `<span class="badge ${cls}" id="verdict">${verdict.badge}</span> <span id="verdict-text">${escapeHtml(verdict.text)}</span>`;
}

/** The report as one HTML string. Computes the statistics when they are not given. */
export function renderReport(
  input: ReportInput,
  stats: Statistics = computeStatistics(input),
  options: RenderOptions = {},
): string {
  validateReportInput(input);
  const grid = new PriceGrid(input.contract.tickSize, input.contract.tickValue);
  const decisions = summarizeRunDecisions(input, stats);
  const chart = chartData(input, grid, {
    maxCandles: options.maxPoints ?? DEFAULT_MAX_POINTS,
    maxMarkers: options.maxMarkers ?? DEFAULT_MAX_POINTS,
    decisions: decisionMarks(decisions),
  });
  const analysis = options.analysis ?? analyseTrades(input);
  const title = escapeHtml(input.title);
  const span = barSpan(input);
  const period =
    span.count === 0 ? 'no bars' : `${formatTime(span.first)} to ${formatTime(span.last)} UTC, ${span.count} bars`;
  const contract = input.contract;
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
<style>${STYLE}</style>
</head>
<body>
<main>
<header>
<h1>${title}</h1>
<p>${verdictLine(input)}</p>
<p class="muted">${escapeHtml(contract.name)} (<code>${escapeHtml(contract.id)}</code>), tick ${escapeHtml(String(contract.tickSize))} = ${escapeHtml(formatMoney(contract.tickValue))}; ${escapeHtml(period)}.<br>
Order list hash <code id="order-list-hash">${escapeHtml(input.orderListHash)}</code>; ${escapeHtml(String(input.violations.length))} violation(s); net PnL ${escapeHtml(formatMoney(stats.netPnl))}, max drawdown ${escapeHtml(formatMoney(stats.maxDrawdown))}, longest drawdown ${escapeHtml(formatDuration(stats.maxDrawdownDurationMs))}.</p>
${warningsBlock(decisions, 'stopped')}${notesBlock(input)}
</header>
${chartSection(chart)}
${runSection(input)}
${statisticsSection(stats)}
${strategiesSection(input)}${evaluationSection(input)}
${decisionsSection(input, decisions)}
${rulesSection(input)}
${dailySection(stats)}
${tradeAnalysisSection(input, analysis)}
${tradesSection(input, grid, analysis)}
${configSection(input)}
<footer><p class="muted">tickline backtest report. Times in UTC. Sharpe and Sortino from daily returns, annualised with sqrt(252), risk-free rate 0. Charts by TradingView Lightweight Charts&trade; (Apache License 2.0).${input.generatedAt ? ` Generated ${escapeHtml(input.generatedAt)}.` : ''}</p></footer>
</main>
<script type="application/json" id="report-data">${scriptJson({ chart })}</script>
<script>${chartLibrary()}</script>
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
