/**
 * A sweep's results shown and written the same way wherever they were run (in this process or on a queue):
 * the table sorted by the metric, and out/<name>/optimize.csv, optimize.json and sweep.html.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { METRICS, rank, type JobResult, type Metric } from '../optimize/grid-sweep.ts';
import { showMetric, writeSweepReport } from '../report/sweep-page.ts';
import { EXIT_CODE_OF_KIND, ExitCode } from './exit.ts';

export interface SweepOutputs {
  readonly name: string;
  readonly outDir: string;
  readonly metric: Metric;
  /** The parameters the runs vary, in column order, and the values each took (optimize.json's `grid`). */
  readonly grid: Readonly<Record<string, readonly unknown[]>>;
  /** How the parameter sets were chosen: every combination, or a seeded search of `trials` points of `of`. */
  readonly search: { readonly method: string; readonly trials?: number; readonly seed?: number; readonly of?: number };
  readonly walkForward: number | undefined;
  readonly top: number;
  readonly axes: readonly [string, string] | readonly [string];
  /** Where the bars came from. */
  readonly data: string;
  /** Every job's result, in job order. */
  readonly results: readonly JobResult[];
  /** Parameter sets (a walk-forward runs each twice). */
  readonly combinations: number;
  /** Where and how long they ran, for the heading: `16 runs on 2 lanes, 1.3 s`. */
  readonly ranOn: string;
}

/** Write the files and return the text to print: heading, table, runs that did not happen, file names. */
/** A sweep with a run whose strategy failed ends as a failure (exit 1), its other rows written as usual. */
export function sweepExitCode(results: readonly JobResult[]): number {
  return results.some((r) => r.failedAfter !== undefined) ? EXIT_CODE_OF_KIND.runtime : ExitCode.Ok;
}

export async function writeSweepOutputs(input: SweepOutputs): Promise<string> {
  const { metric, walkForward: fraction, results, top, name, outDir } = input;
  const primary = results.filter((r) => r.sample !== 'out');
  const outOf = new Map(results.filter((r) => r.sample === 'out').map((r) => [r.index, r]));
  const ranked = rank(primary, metric);
  const rows = ranked.map((r, position) => ({
    rank: position + 1,
    params: r.params,
    result: r,
    out: outOf.get(r.index),
  }));

  const keys = Object.keys(input.grid);
  const show = (v: number | null | undefined, d = 2) => (v === null || v === undefined ? '-' : v.toFixed(d));
  // The ranking metric as the sweep page and the backtest's summary show it (the win rate in percent).
  const showRanked = (v: number | null | undefined) =>
    metric === 'winRate' || metric === 'returnPct' ? showMetric(metric, v) : show(v);
  // netPnl is always shown; as the metric it is not shown twice.
  const extra = metric === 'netPnl' ? [] : ['netPnl'];
  const header = [
    '#',
    ...keys,
    metric,
    ...extra,
    'trades',
    'maxDD',
    'passed',
    ...(fraction === undefined ? [] : [`out ${metric}`, ...extra.map((e) => `out ${e}`), 'out passed']),
  ];
  const table: string[][] = [header];
  for (const row of rows.slice(0, top)) {
    const s = row.result.summary;
    const o = row.out?.summary;
    table.push([
      String(row.rank),
      ...keys.map((k) => String(row.params[k])),
      showRanked(s?.[metric]),
      ...extra.map(() => show(s?.netPnl)),
      s ? String(s.trades) : '-',
      show(s?.maxDrawdown),
      s ? (s.passed ? 'yes' : 'no') : '-',
      ...(fraction === undefined
        ? []
        : [showRanked(o?.[metric]), ...extra.map(() => show(o?.netPnl)), o ? (o.passed ? 'yes' : 'no') : '-']),
    ]);
  }
  const refused = rows.filter((r) => r.result.error !== undefined);
  const widths = header.map((_, c) => Math.max(...table.map((r) => (r[c] ?? '').length)));
  const text = table.map((r) => r.map((cell, c) => cell.padStart(widths[c]!)).join('  ')).join('\n');
  await mkdir(outDir, { recursive: true });
  const csvHeader = [
    'rank',
    ...keys,
    ...METRICS,
    'passed',
    'violations',
    'orderListHash',
    ...(fraction === undefined ? [] : METRICS.map((m) => `out_${m}`).concat(['out_passed'])),
    'error',
  ];
  const csvCell = (v: unknown) =>
    v === null || v === undefined
      ? ''
      : typeof v === 'string' && /[",\n]/.test(v)
        ? `"${v.replaceAll('"', '""')}"`
        : String(v);
  const csv = [csvHeader.join(',')];
  for (const row of rows) {
    const s = row.result.summary;
    const o = row.out?.summary;
    csv.push(
      [
        row.rank,
        ...keys.map((k) => row.params[k]),
        ...METRICS.map((m) => s?.[m]),
        s?.passed,
        s?.violations,
        s?.orderListHash,
        ...(fraction === undefined ? [] : [...METRICS.map((m) => o?.[m]), o?.passed]),
        row.result.error ?? row.out?.error,
      ]
        .map(csvCell)
        .join(','),
    );
  }
  await writeFile(path.join(outDir, 'optimize.csv'), `${csv.join('\n')}\n`, 'utf8');
  await writeFile(
    path.join(outDir, 'optimize.json'),
    `${JSON.stringify({ metric, grid: input.grid, search: input.search.method === 'grid' ? { method: 'grid' } : { method: input.search.method, trials: input.search.trials, seed: input.search.seed }, walkForward: fraction ?? null, data: input.data, rows: rows.map((r) => ({ rank: r.rank, params: r.params, inSample: r.result.summary ?? null, outOfSample: r.out?.summary ?? null, error: r.result.error ?? r.out?.error ?? null })) }, null, 2)}\n`,
    'utf8',
  );
  const sweepFile = await writeSweepReport(path.join(outDir, 'sweep.html'), {
    title: `${name}: sweep of ${keys.join(', ')}${fraction === undefined ? '' : ` (in-sample ${Math.round(fraction * 100)}%)`}`,
    metric,
    rows: rows.map((r) => ({
      rank: r.rank,
      params: r.params,
      metrics:
        r.result.summary === undefined ? null : Object.fromEntries(METRICS.map((m) => [m, r.result.summary![m]])),
      passed: r.result.summary?.passed ?? null,
      error: r.result.error ?? null,
    })),
    axes: input.axes,
    data: input.data,
    lowerIsBetter: ['maxDrawdown'],
  });
  return (
    `${name}: ${input.combinations} parameter sets${input.search.method === 'grid' ? '' : ` (${input.search.method} search of ${input.search.of}, seed ${input.search.seed})`}${fraction === undefined ? '' : `, walk-forward ${Math.round(fraction * 100)}% in-sample`}, sorted by ${metric}` +
    ` (${input.ranOn})\n${text}\n` +
    refused
      .map((r) =>
        r.result.failedAfter === undefined
          ? `#${r.rank} not run: ${r.result.error}\n`
          : `#${r.rank} failed after ${r.result.failedAfter} bars: ${r.result.error}\n`,
      )
      .join('') +
    `results: ${path.join(outDir, 'optimize.csv')}, ${path.join(outDir, 'optimize.json')}, ${sweepFile}\n`
  );
}
