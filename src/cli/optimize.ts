/**
 * `tickline optimize --config backtest/<name>.yaml --grid fast=5,10,20 --grid slow=30,50`: every
 * combination of the grid, run in parallel on worker threads, printed as a table sorted by a metric and
 * written to out/<name>/optimize.{csv,json}. `--walk-forward 0.7` ranks on the first 70% of the bars and
 * shows how the same parameters did on the remaining 30%.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { availableParallelism } from 'node:os';
import { SingleBar } from 'cli-progress';
import { configuredContract, loadHistory, type History } from '../adapters/backtest/backtest.ts';
import { alignToBuckets } from '../adapters/backtest/continuous.ts';
import { aggregate } from '../adapters/backtest/sources/columns.ts';
import { METRICS, rank, runSweep, splitHistory, type Job, type JobResult, type Metric } from '../adapters/backtest/optimize.ts';
import { runSearch, SEARCHES, spaceSize, type SearchMethod } from '../adapters/backtest/search.ts';
import { SweepPool } from '../adapters/backtest/sweep-pool.ts';
import { runWalkForwardCommand } from './optimize-walk-forward.ts';
import { WalkForwardError, type FoldPlan, type WindowMode } from '../adapters/backtest/walk-forward.ts';
import type { OptimizeConfig } from '../adapters/backtest/config.ts';
import { timeframeLabel } from '../engine/timeframe.ts';
import { BACKTEST_FLAGS, backtestArgs, isInputError, loadBacktestConfig } from './backtest.ts';
import { parseScalar } from './config.ts';
import { parseCommandArgs } from './args.ts';
import { ExitCode, UsageError } from './exit.ts';
import { writeSweepReport } from '../report/sweep.ts';

export const summary = 'Sweep a grid of strategy parameters on worker threads, ranked by a metric, with optional walk-forward';

const USAGE = `Usage: tickline optimize --config <file.yaml> --grid <key=v1,v2,...> [--grid ...] [options]

Runs the backtest definition once per combination of the grid (strategy parameters), in parallel on
worker threads, and prints the results sorted by a metric.

Options:
  --config <file>        Backtest definition (required)
  --grid <key=v1,v2>     Values of one strategy parameter (repeatable; required at least once)
  --metric <name>        Sort key: ${METRICS.join(', ')} (default sharpe)
  --search <method>      grid (every combination, the default), random (--trials points drawn
                         at random) or tpe (a Tree-structured Parzen Estimator: --trials points,
                         each batch where the best so far are dense)
  --trials <n>           Points run by random and tpe (default 64)
  --seed <n>             Seed of random and tpe (default 1): the same seed, the same points
  --walk-forward <f>     Rank on the first fraction f of the bars (0 < f < 1), then run the same
                         parameters on the rest (out-of-sample)
  --folds <n>            A rolling walk-forward instead: n test windows at the end of the history,
                         the parameters chosen by the search on the training window before each,
                         the test windows' results stitched into one out-of-sample run
  --train-windows <r>    Training window of each fold as r test windows (default 3)
  --anchored             Train every fold from the start of the history (default: rolling)
  --workers <n>          Parallel lanes: this thread and n - 1 worker threads (default: the
                         number of cores; 1 runs every job in this thread)
  --top <n>              Rows to print (default 20; the files hold every row)
  --heatmap <x,y>        The two --grid parameters of sweep.html's heatmap (default: the first two)
  --param <key=value>    Fix a strategy parameter for every run (repeatable)
  --strategy, --from, --to, --data, --out   As for \`tickline backtest\`
  -h, --help             This help

Writes out/<name>/optimize.csv, optimize.json and sweep.html (the runs and a heatmap of the metric). Exit codes: 0 done, 2 bad config or arguments, 1 failure.`;

interface OptimizeFlags {
  readonly grid?: string[] | undefined;
  readonly metric?: string | undefined;
  readonly 'walk-forward'?: string | undefined;
  readonly workers?: string | undefined;
  readonly search?: string | undefined;
  readonly trials?: string | undefined;
  readonly seed?: string | undefined;
  readonly folds?: string | undefined;
  readonly 'train-windows'?: string | undefined;
  readonly anchored?: boolean | undefined;
}

/** What to run: each flag given, else the definition's `optimize` setting, else the default. */
function optimizeSettings(flags: OptimizeFlags, configured: OptimizeConfig) {
  const grid: Record<string, unknown[]> = {};
  for (const spec of flags.grid ?? []) {
    const eq = spec.indexOf('=');
    if (eq <= 0 || eq === spec.length - 1) throw new UsageError(`--grid ${spec}: expected key=v1,v2,...`);
    grid[spec.slice(0, eq)] = spec.slice(eq + 1).split(',').map((v) => parseScalar(v.trim()));
  }
  if (Object.keys(grid).length === 0) Object.assign(grid, configured.grid ?? {});
  if (Object.keys(grid).length === 0) throw new UsageError(`at least one --grid key=v1,v2,... (or optimize.grid in the definition) is required\n\n${USAGE}`);
  const metric = (flags.metric ?? configured.metric ?? 'sharpe') as Metric;
  if (!METRICS.includes(metric)) throw new UsageError(`--metric must be one of ${METRICS.join(', ')}`);
  const fraction = flags['walk-forward'] === undefined ? undefined : Number(flags['walk-forward']);
  if (fraction !== undefined && !(fraction > 0 && fraction < 1)) throw new UsageError('--walk-forward must be a fraction between 0 and 1');
  const workers = flags.workers === undefined ? (configured.workers ?? availableParallelism()) : Number(flags.workers);
  if (!Number.isInteger(workers) || workers < 1) throw new UsageError('--workers must be a positive whole number');
  const method = (flags.search ?? configured.search ?? 'grid') as SearchMethod;
  if (!SEARCHES.includes(method)) throw new UsageError(`--search must be one of ${SEARCHES.join(', ')}`);
  const trials = flags.trials === undefined ? (configured.trials ?? 64) : Number(flags.trials);
  if (!Number.isInteger(trials) || trials < 1) throw new UsageError('--trials must be a positive whole number');
  const seed = flags.seed === undefined ? (configured.seed ?? 1) : Number(flags.seed);
  if (!Number.isSafeInteger(seed)) throw new UsageError('--seed must be a whole number');
  const folds = flags.folds === undefined ? configured.walkForward?.folds : Number(flags.folds);
  if (folds !== undefined && (!Number.isInteger(folds) || folds < 1)) throw new UsageError('--folds must be a positive whole number');
  if (folds !== undefined && fraction !== undefined) throw new UsageError('--folds and --walk-forward are two kinds of walk-forward: give one');
  const trainWindows = flags['train-windows'] === undefined ? (configured.walkForward?.trainWindows ?? 3) : Number(flags['train-windows']);
  if (!Number.isInteger(trainWindows) || trainWindows < 1) throw new UsageError('--train-windows must be a positive whole number');
  const mode: WindowMode = flags.anchored === true ? 'anchored' : (configured.walkForward?.mode ?? 'rolling');
  const walkForward: FoldPlan | undefined = folds === undefined ? undefined : { folds, trainWindows, mode };
  return { grid, metric, fraction, workers, method, trials, seed, walkForward };
}

/** The heatmap's two parameters: `--heatmap x,y`, or the first two of the grid. */
function heatmapAxes(option: string | undefined, keys: readonly string[]): readonly [string, string] | readonly [string] {
  if (option === undefined) return keys.length >= 2 ? [keys[0]!, keys[1]!] : [keys[0]!];
  const axes = option.split(',').map((k) => k.trim());
  if (axes.length !== 2 || axes.some((k) => !keys.includes(k))) throw new UsageError(`--heatmap must name two --grid parameters as x,y (the grid has ${keys.join(', ')})`);
  return [axes[0]!, axes[1]!];
}

export async function run(args: string[]): Promise<number> {
  const values = parseCommandArgs(
    args,
    {
      ...BACKTEST_FLAGS,
      grid: { type: 'string', multiple: true },
      metric: { type: 'string' },
      'walk-forward': { type: 'string' },
      workers: { type: 'string' },
      top: { type: 'string', default: '20' },
      heatmap: { type: 'string' },
      search: { type: 'string' },
      trials: { type: 'string' },
      seed: { type: 'string' },
      folds: { type: 'string' },
      'train-windows': { type: 'string' },
      anchored: { type: 'boolean' },
    },
    USAGE,
  );
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return ExitCode.Ok;
  }
  const backtest = backtestArgs(values, USAGE);
  const top = Number(values.top);
  if (!Number.isInteger(top) || top < 1) throw new UsageError('--top must be a positive whole number');

  let pool: SweepPool | undefined;
  try {
    const { config, name } = await loadBacktestConfig(backtest);
    const { grid, metric, fraction, workers, method, trials, seed, walkForward } = optimizeSettings(values, config.optimize ?? {});
    const axes = heatmapAxes(values.heatmap, Object.keys(grid));
    // Started before the bars are read, so its threads load their code meanwhile.
    pool = workers > 1 ? new SweepPool(workers - 1).start() : undefined;
    const contract = configuredContract(config);
    let history: History = await loadHistory(config, contract);
    if (timeframeLabel(history.timeframe) !== timeframeLabel(config.timeframe)) {
      // As executeBacktest does: no aggregated bar may hold two contract months.
      const aligned = history.segments !== undefined && history.segments.length > 1 ? alignToBuckets(history.bars, history.segments, config.timeframe) : undefined;
      const source = aligned === undefined ? history : { ...history, bars: aligned.bars, segments: aligned.segments };
      history = { ...source, bars: aggregate(source.bars, config.timeframe), timeframe: config.timeframe };
    }
    if (walkForward !== undefined) {
      const plan = walkForward;
      process.stdout.write(await runWalkForwardCommand({ config, name, history, grid, plan, method, trials, seed, metric, workers, ...(pool ? { pool } : {}) }));
      return ExitCode.Ok;
    }
    let samples: Record<'all' | 'in' | 'out', History | undefined>;
    if (fraction === undefined) {
      samples = { all: history, in: undefined, out: undefined };
    } else {
      const [inSample, outSample] = splitHistory(history.bars, fraction);
      if (inSample.time.length === 0 || outSample.time.length === 0) throw new UsageError('--walk-forward leaves one side without bars');
      samples = {
        all: undefined,
        in: { ...history, bars: inSample, description: `${history.description} (in-sample)` },
        out: { ...history, bars: outSample, description: `${history.description} (out-of-sample)` },
      };
    }
    const points = method === 'grid' ? spaceSize(grid) : Math.min(trials, spaceSize(grid));
    const total = fraction === undefined ? points : 2 * points;
    const progress = process.stderr.isTTY ? new SingleBar({ format: 'optimize [{bar}] {value}/{total} runs', hideCursor: true, stream: process.stderr }) : null;
    progress?.start(total, 0);
    const started = Date.now();
    let results: JobResult[];
    let done = 0;
    const onResult = () => progress?.update(++done);
    const context = { config, name, samples };
    try {
      const primary = await runSearch(context, grid, { method, trials, seed, metric, sample: fraction === undefined ? 'all' : 'in' }, { workers, ...(pool ? { pool } : {}), onResult });
      const outJobs: Job[] = fraction === undefined ? [] : primary.map((r) => ({ index: r.index, params: r.params, sample: 'out' as const }));
      results = [...primary, ...(outJobs.length === 0 ? [] : await runSweep(context, outJobs, { workers, ...(pool ? { pool } : {}), onResult }))];
    } finally {
      progress?.stop();
    }
    const jobs = results;
    const seconds = (Date.now() - started) / 1000;
    const primary = results.filter((r) => r.sample !== 'out');
    const outOf = new Map(results.filter((r) => r.sample === 'out').map((r) => [r.index, r]));
    const ranked = rank(primary, metric);
    const rows = ranked.map((r, position) => ({ rank: position + 1, params: r.params, result: r, out: outOf.get(r.index) }));

    const keys = Object.keys(grid);
    const show = (v: number | null | undefined, d = 2) => (v === null || v === undefined ? '-' : v.toFixed(d));
    // netPnl is always shown; as the metric it is not shown twice.
    const extra = metric === 'netPnl' ? [] : ['netPnl'];
    const header = ['#', ...keys, metric, ...extra, 'trades', 'maxDD', 'passed', ...(fraction === undefined ? [] : [`out ${metric}`, ...extra.map((e) => `out ${e}`), 'out passed'])];
    const table: string[][] = [header];
    for (const row of rows.slice(0, top)) {
      const s = row.result.summary;
      const o = row.out?.summary;
      table.push([
        String(row.rank),
        ...keys.map((k) => String(row.params[k])),
        show(s?.[metric]),
        ...extra.map(() => show(s?.netPnl)),
        s ? String(s.trades) : '-',
        show(s?.maxDrawdown),
        s ? (s.passed ? 'yes' : 'no') : '-',
        ...(fraction === undefined ? [] : [show(o?.[metric]), ...extra.map(() => show(o?.netPnl)), o ? (o.passed ? 'yes' : 'no') : '-']),
      ]);
    }
    const refused = rows.filter((r) => r.result.error !== undefined);
    const widths = header.map((_, c) => Math.max(...table.map((r) => (r[c] ?? '').length)));
    const text = table.map((r) => r.map((cell, c) => cell.padStart(widths[c]!)).join('  ')).join('\n');
    const outDir = config.out ?? path.join('out', name);
    await mkdir(outDir, { recursive: true });
    const csvHeader = ['rank', ...keys, ...METRICS, 'passed', 'violations', 'orderListHash', ...(fraction === undefined ? [] : METRICS.map((m) => `out_${m}`).concat(['out_passed'])), 'error'];
    const csvCell = (v: unknown) => (v === null || v === undefined ? '' : typeof v === 'string' && /[",\n]/.test(v) ? `"${v.replaceAll('"', '""')}"` : String(v));
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
      `${JSON.stringify({ metric, grid, search: method === 'grid' ? { method } : { method, trials: points, seed }, walkForward: fraction ?? null, data: history.description, rows: rows.map((r) => ({ rank: r.rank, params: r.params, inSample: r.result.summary ?? null, outOfSample: r.out?.summary ?? null, error: r.result.error ?? r.out?.error ?? null })) }, null, 2)}\n`,
      'utf8',
    );
    const sweepFile = await writeSweepReport(path.join(outDir, 'sweep.html'), {
      title: `${name}: sweep of ${keys.join(', ')}${fraction === undefined ? '' : ` (in-sample ${Math.round(fraction * 100)}%)`}`,
      metric,
      rows: rows.map((r) => ({
        rank: r.rank,
        params: r.params,
        metrics: r.result.summary === undefined ? null : Object.fromEntries(METRICS.map((m) => [m, r.result.summary![m]])),
        passed: r.result.summary?.passed ?? null,
        error: r.result.error ?? null,
      })),
      axes,
      data: history.description,
      lowerIsBetter: ['maxDrawdown'],
    });
    const lanes = Math.min(workers, jobs.length);
    process.stdout.write(
      `${name}: ${points} parameter sets${method === 'grid' ? '' : ` (${method} search of ${spaceSize(grid)}, seed ${seed})`}${fraction === undefined ? '' : `, walk-forward ${Math.round(fraction * 100)}% in-sample`}, sorted by ${metric}` +
        ` (${jobs.length} runs on ${lanes} lane${lanes === 1 ? '' : 's'}, ${seconds.toFixed(1)} s)\n${text}\n` +
        refused.map((r) => `#${r.rank} not run: ${r.result.error}\n`).join('') +
        `results: ${path.join(outDir, 'optimize.csv')}, ${path.join(outDir, 'optimize.json')}, ${sweepFile}\n`,
    );
    return ExitCode.Ok;
  } catch (error) {
    if (isInputError(error) || error instanceof WalkForwardError) throw new UsageError((error as Error).message);
    throw error;
  } finally {
    await pool?.close();
  }
}
