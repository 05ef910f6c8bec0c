/**
 * sweep.html: a parameter sweep as one self-contained page: the table of every run sorted by the metric,
 * and a heatmap of the metric over two chosen parameters (with more parameters in the grid, each cell
 * shows the best run of its pair). Plain HTML and CSS, no script: the same rows give the same bytes.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { BASE_STYLE, escapeHtml, table } from './html.ts';
import { formatNumber } from './format.ts';

export interface SweepRow {
  /** 1-based position in the ranking (runs without a value last). */
  readonly rank: number;
  readonly params: Readonly<Record<string, unknown>>;
  /** The run's metrics, null when it did not run. */
  readonly metrics: Readonly<Record<string, number | null>> | null;
  readonly passed: boolean | null;
  /** Why it did not run (parameters the strategy refused). */
  readonly error: string | null;
}

export interface SweepReport {
  readonly title: string;
  /** The metric the rows are ranked by and the heatmap shows. */
  readonly metric: string;
  readonly rows: readonly SweepRow[];
  /** The two parameters of the heatmap: columns, then rows. */
  readonly axes: readonly [string, string] | readonly [string];
  /** Where the bars came from. */
  readonly data: string;
  /** Metrics where less is better (the heatmap's colours turn round). */
  readonly lowerIsBetter?: readonly string[];
}

function sortKey(value: unknown): string | number {
  return typeof value === 'number' ? value : String(value);
}

function distinct(rows: readonly SweepRow[], key: string): unknown[] {
  const values = [...new Map(rows.map((r) => [JSON.stringify(r.params[key]), r.params[key]])).values()];
  return values.sort((a, b) => {
    const x = sortKey(a);
    const y = sortKey(b);
    return typeof x === 'number' && typeof y === 'number' ? x - y : String(x).localeCompare(String(y));
  });
}

function show(value: number | null | undefined): string {
  if (value === null || value === undefined) return '-';
  return Number.isInteger(value) ? String(value) : value.toFixed(Math.abs(value) >= 100 ? 2 : 4);
}

/**
 * A metric's value as the terminal shows it: the win rate (a fraction) and the return (a percentage) in
 * percent, as the backtest's summary prints them; the others as numbers. The sweep page and the optimize
 * table both use it, so 0.45 is never a fraction on one and 45% on the other.
 */
export function showMetric(metric: string, value: number | null | undefined): string {
  if (value === null || value === undefined) return '-';
  if (metric === 'winRate') return `${formatNumber(value * 100)}%`;
  if (metric === 'returnPct') return `${formatNumber(value)}%`;
  return show(value);
}

/** Red (worst) through pale yellow to green (best). */
function colour(fraction: number): string {
  const hue = Math.round(fraction * 120);
  return `hsl(${hue} 70% ${Math.round(88 - Math.abs(fraction - 0.5) * 30)}%)`;
}

function heatmap(report: SweepReport): string {
  const [xKey, yKey] = report.axes;
  if (yKey === undefined) return '<p class="muted">A heatmap needs two swept parameters.</p>';
  const better = (report.lowerIsBetter ?? []).includes(report.metric) ? -1 : 1;
  const best = new Map<string, number>();
  for (const row of report.rows) {
    const value = row.metrics?.[report.metric];
    if (value === null || value === undefined) continue;
    const key = JSON.stringify([row.params[xKey], row.params[yKey]]);
    const current = best.get(key);
    if (current === undefined || better * value > better * current) best.set(key, value);
  }
  const values = [...best.values()];
  const low = Math.min(...values);
  const high = Math.max(...values);
  const xs = distinct(report.rows, xKey);
  const ys = distinct(report.rows, yKey);
  const head = `<tr><th>${escapeHtml(yKey)} \\ ${escapeHtml(xKey)}</th>${xs.map((x) => `<th class="num">${escapeHtml(String(x))}</th>`).join('')}</tr>`;
  const body = ys
    .map((y) => {
      const cells = xs
        .map((x) => {
          const value = best.get(JSON.stringify([x, y]));
          if (value === undefined) return '<td class="cell empty">-</td>';
          const fraction = high === low ? 1 : better > 0 ? (value - low) / (high - low) : (high - value) / (high - low);
          return `<td class="cell num" data-value="${value}" style="background:${colour(fraction)}" title="${escapeHtml(`${xKey}=${String(x)}, ${yKey}=${String(y)}: ${report.metric} ${showMetric(report.metric, value)}`)}">${showMetric(report.metric, value)}</td>`;
        })
        .join('');
      return `<tr><th class="num">${escapeHtml(String(y))}</th>${cells}</tr>`;
    })
    .join('\n');
  const extra = Object.keys(report.rows[0]?.params ?? {}).filter((k) => k !== xKey && k !== yKey);
  const note = extra.length === 0 ? '' : ` Each cell is the best run over ${extra.map(escapeHtml).join(', ')}.`;
  return `<p class="muted">${escapeHtml(report.metric)} over ${escapeHtml(xKey)} (columns) and ${escapeHtml(yKey)} (rows): green is better, red worse; a dash did not run or has no value.${note}</p>
<table id="heatmap"><thead>${head}</thead><tbody>\n${body}\n</tbody></table>`;
}

function runsTable(report: SweepReport): string {
  const keys = Object.keys(report.rows[0]?.params ?? {});
  const metrics = [...new Set(report.rows.flatMap((r) => Object.keys(r.metrics ?? {})))];
  const ordered = [report.metric, ...metrics.filter((m) => m !== report.metric)];
  const rows = report.rows.map((row) => [
    String(row.rank),
    ...keys.map((k) => String(row.params[k])),
    ...ordered.map((m) => showMetric(m, row.metrics?.[m])),
    row.passed === null ? '-' : row.passed ? 'yes' : 'no',
    row.error ?? '',
  ]);
  return table(
    ['#', ...keys, ...ordered, 'passed', 'not run because'],
    rows,
    [true, ...keys.map(() => true), ...ordered.map(() => true), false, false],
    'sweep-table',
  );
}

export function renderSweepReport(report: SweepReport): string {
  const title = escapeHtml(report.title);
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
<style>${BASE_STYLE}
#heatmap td.cell{min-width:64px;text-align:right}#heatmap td.empty{background:#f3f4f6;color:#9ca3af;text-align:center}
</style>
</head>
<body data-ready="true">
<main>
<h1>${title}</h1>
<p class="muted">${report.rows.length} runs on ${escapeHtml(report.data)}, ranked by ${escapeHtml(report.metric)}.</p>
<section id="sweep-heatmap"><h2>Heatmap</h2>
${heatmap(report)}</section>
<section id="sweep-runs"><h2>Runs</h2>
${runsTable(report)}</section>
</main>
</body>
</html>
`;
}

export async function writeSweepReport(filePath: string, report: SweepReport): Promise<string> {
  await mkdir(path.dirname(filePath), { recursive: true });
  await writeFile(filePath, renderSweepReport(report), 'utf8');
  return filePath;
}
