/**
 * `tickline optimize --config backtest/<name>.yaml --grid fast=5,10,20 --grid slow=30,50`: every
 * combination of the grid, run in parallel on worker threads, printed as a table sorted by a metric and
 * written to out/<name>/optimize.{csv,json}. `--walk-forward 0.7` ranks on the first 70% of the bars and
 * shows how the same parameters did on the remaining 30%. `--queue redis://...` runs the grid on
 * `tickline worker` processes on any machine instead (docs/distributed.md).
 */
import path from 'node:path';
import { availableParallelism } from 'node:os';
import { SingleBar } from 'cli-progress';
import {
  gridCombinations,
  METRICS,
  runSweep,
  type Job,
  type JobResult,
  type Metric,
  type WarmUpReport,
} from '../optimize/grid-sweep.ts';
import { randomSearchParams, runSearch, SEARCHES, spaceSize, type SearchMethod } from '../optimize/search.ts';
import { SweepPool } from '../optimize/sweep-pool.ts';
import { runWalkForwardCommand } from './optimize-walk-forward.ts';
import type { FoldPlan, WindowMode } from '../optimize/walk-forward.ts';
import type { OptimizeConfig } from '../adapters/backtest/backtest-config.ts';
import { sweepHistory, sweepSamples } from '../optimize/sweep-history.ts';
import { checkQueueUrl, DEFAULT_RETRIES } from '../optimize/queue-url.ts';
import { BACKTEST_FLAGS, backtestArgs, loadBacktestConfig, loadNodeBotConfig } from './backtest.ts';
import { isNodeConfig } from './trading-config.ts';
import { parseScalar } from './config-loader.ts';
import type { StrategyModule } from '../engine/strategy.ts';
import { parseCommandArgs } from './args.ts';
import { ExitCode, UsageError } from './exit.ts';
import { sweepExitCode, writeSweepOutputs } from './optimize-report.ts';

export const summary =
  'Sweep a grid of strategy parameters on worker threads, ranked by a metric, with optional walk-forward';

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
  --workers <n>          Parallel lanes: n worker threads, this thread handing out the runs
                         (default: the number of cores; 1 runs every job in this thread)
  --top <n>              Rows to print (default 20; the files hold every row)
  --heatmap <x,y>        The two --grid parameters of sweep.html's heatmap (default: the first two)
  --queue <redis-url>    Run the sweep or search on the workers of a queue (\`tickline worker\`):
                         redis://[:password@]host:port[/db], rediss://... for TLS
  --detach               With --queue: enqueue, print the sweep id and return
                         (\`tickline sweep status|results|cancel <id>\` later)
  --retries <n>          With --queue: runs of a job that throws before its error is
                         reported (default ${DEFAULT_RETRIES})
  --param <key=value>    Fix a strategy parameter for every run (repeatable)
  --strategy, --from, --to, --data, --out   As for \`tickline backtest\`
  --bot <id>             With a node config (config/node.yaml): the bot whose parameters to sweep,
                         alone on one of its accounts, under that account's rules, on the node's
                         backtest history, at size 1
  --account <name>       With --bot: which of its accounts (default: its first)
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
    grid[spec.slice(0, eq)] = spec
      .slice(eq + 1)
      .split(',')
      .map((v) => parseScalar(v.trim()));
  }
  if (Object.keys(grid).length === 0) Object.assign(grid, configured.grid ?? {});
  if (Object.keys(grid).length === 0)
    throw new UsageError(
      `at least one --grid key=v1,v2,... (or optimize.grid in the definition) is required\n\n${USAGE}`,
    );
  const metric = (flags.metric ?? configured.metric ?? 'sharpe') as Metric;
  if (!METRICS.includes(metric)) throw new UsageError(`--metric must be one of ${METRICS.join(', ')}`);
  const fraction = flags['walk-forward'] === undefined ? undefined : Number(flags['walk-forward']);
  if (fraction !== undefined && !(fraction > 0 && fraction < 1))
    throw new UsageError('--walk-forward must be a fraction between 0 and 1');
  const workers = flags.workers === undefined ? (configured.workers ?? availableParallelism()) : Number(flags.workers);
  if (!Number.isInteger(workers) || workers < 1) throw new UsageError('--workers must be a positive whole number');
  const method = (flags.search ?? configured.search ?? 'grid') as SearchMethod;
  if (!SEARCHES.includes(method)) throw new UsageError(`--search must be one of ${SEARCHES.join(', ')}`);
  const trials = flags.trials === undefined ? (configured.trials ?? 64) : Number(flags.trials);
  if (!Number.isInteger(trials) || trials < 1) throw new UsageError('--trials must be a positive whole number');
  const seed = flags.seed === undefined ? (configured.seed ?? 1) : Number(flags.seed);
  if (!Number.isSafeInteger(seed)) throw new UsageError('--seed must be a whole number');
  const folds = flags.folds === undefined ? configured.walkForward?.folds : Number(flags.folds);
  if (folds !== undefined && (!Number.isInteger(folds) || folds < 1))
    throw new UsageError('--folds must be a positive whole number');
  if (folds !== undefined && fraction !== undefined)
    throw new UsageError('--folds and --walk-forward are two kinds of walk-forward: give one');
  const trainWindows =
    flags['train-windows'] === undefined ? (configured.walkForward?.trainWindows ?? 3) : Number(flags['train-windows']);
  if (!Number.isInteger(trainWindows) || trainWindows < 1)
    throw new UsageError('--train-windows must be a positive whole number');
  const mode: WindowMode = flags.anchored === true ? 'anchored' : (configured.walkForward?.mode ?? 'rolling');
  const walkForward: FoldPlan | undefined = folds === undefined ? undefined : { folds, trainWindows, mode };
  return { grid, metric, fraction, workers, method, trials, seed, walkForward };
}

/**
 * Every value of the grid checked against the strategy's own schema, with the definition's other
 * parameters: a value that does not parse for its parameter (`stopLossTicks=8,12,x`) is a usage error
 * naming it, before any run, instead of a sweep whose row for it says only "not run". A rule between two
 * parameters (fast shorter than slow) is left to the runs: another combination may meet it, and the row of
 * one that does not says why.
 */
export function checkGridValues(
  grid: Readonly<Record<string, readonly unknown[]>>,
  strategy: StrategyModule,
  base: Readonly<Record<string, unknown>>,
  fromFlags: boolean,
): void {
  const where = fromFlags ? '--grid' : 'optimize.grid';
  const problems: string[] = [];
  for (const [key, values] of Object.entries(grid)) {
    for (const value of values) {
      const parsed = strategy.params.safeParse({ ...base, [key]: value });
      if (parsed.success) continue;
      const issues = parsed.error.issues;
      if (issues.some((issue) => issue.code === 'unrecognized_keys' && issue.keys.includes(key))) {
        problems.push(`${where} ${key}: strategy '${strategy.name}' has no parameter ${key}`);
        break;
      }
      // A refinement (`code: custom`) is a rule between parameters, which another combination may meet.
      const own = issues.filter((issue) => issue.path[0] === key && issue.code !== 'custom');
      if (own.length === 0) continue;
      const why = own.map((issue) => issue.message).join('; ');
      problems.push(
        `${where} ${key}: ${JSON.stringify(value)} is not a valid ${key} for strategy '${strategy.name}' (${why})`,
      );
    }
  }
  if (problems.length > 0) throw new UsageError(problems.join('\n'));
}

/** The heatmap's two parameters: `--heatmap x,y`, or the first two of the grid. */
function heatmapAxes(
  option: string | undefined,
  keys: readonly string[],
): readonly [string, string] | readonly [string] {
  if (option === undefined) return keys.length >= 2 ? [keys[0]!, keys[1]!] : [keys[0]!];
  const axes = option.split(',').map((k) => k.trim());
  if (axes.length !== 2 || axes.some((k) => !keys.includes(k)))
    throw new UsageError(`--heatmap must name two --grid parameters as x,y (the grid has ${keys.join(', ')})`);
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
      queue: { type: 'string' },
      detach: { type: 'boolean' },
      retries: { type: 'string' },
      bot: { type: 'string' },
      account: { type: 'string' },
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

  const queue = values.queue === undefined ? undefined : checkQueueUrl(values.queue);
  if (queue === undefined && (values.detach || values.retries !== undefined))
    throw new UsageError('--detach and --retries go with --queue');
  const retries = values.retries === undefined ? DEFAULT_RETRIES : Number(values.retries);
  if (!Number.isInteger(retries) || retries < 0) throw new UsageError('--retries must be a whole number, 0 or more');

  let pool: SweepPool | undefined;
  try {
    const node = isNodeConfig(backtest.config);
    if (!node && (values.bot !== undefined || values.account !== undefined))
      throw new UsageError('--bot and --account go with a node config (one that lists bots:)');
    const { config, name, strategy } = node
      ? await loadNodeBotConfig(backtest, values.bot, values.account)
      : await loadBacktestConfig(backtest);
    const { grid, metric, fraction, workers, method, trials, seed, walkForward } = optimizeSettings(
      values,
      config.optimize ?? {},
    );
    checkGridValues(grid, strategy, config.strategy.params, (values.grid ?? []).length > 0);
    const axes = heatmapAxes(values.heatmap, Object.keys(grid));
    // A search chooses its next points from the last results, and folds chain searches: both run here.
    if (queue !== undefined && walkForward !== undefined)
      throw new UsageError(
        '--queue runs one sweep or search (with or without --walk-forward); --folds chain searches and run in this process',
      );
    if (queue !== undefined && method === 'tpe' && values.detach === true)
      throw new UsageError(
        '--detach cannot leave a tpe search: each of its batches is chosen from the results before it (--search random or grid can be detached)',
      );
    // Started before the bars are read, so its threads load their code meanwhile.
    pool = workers > 1 && queue === undefined ? new SweepPool(workers, config.strategy.name).start() : undefined;
    const history = await sweepHistory(config);
    if (walkForward !== undefined) {
      const plan = walkForward;
      process.stdout.write(
        await runWalkForwardCommand({
          config,
          name,
          history,
          grid,
          plan,
          method,
          trials,
          seed,
          metric,
          workers,
          ...(pool ? { pool } : {}),
        }),
      );
      return ExitCode.Ok;
    }
    const samples = sweepSamples(history, fraction ?? null);
    if (fraction !== undefined && (samples.in!.bars.time.length === 0 || samples.out!.bars.time.length === 0))
      throw new UsageError('--walk-forward leaves one side without bars');
    const points = method === 'grid' ? spaceSize(grid) : Math.min(trials, spaceSize(grid));
    const search = method === 'grid' ? { method } : { method, trials: points, seed, of: spaceSize(grid) };
    const outputs = {
      name,
      outDir: config.out ?? path.join('out', name),
      metric,
      grid,
      search,
      walkForward: fraction,
      top,
      axes,
      data: history.description,
      combinations: points,
    };
    if (queue !== undefined) {
      // Loaded only here: the queue's client (BullMQ, ioredis) took a quarter of a second of every start.
      const { sweepOnQueue, sweepSpecOf, tpeSearchOnQueue } = await import('./sweep-queue.ts');
      const view = {
        metric,
        top,
        grid,
        heatmap: [...axes],
        data: history.description,
        enqueuedAt: Date.now(),
        ...(method === 'grid' ? {} : { search }),
      };
      if (method === 'tpe')
        return await tpeSearchOnQueue({
          url: queue,
          config,
          name,
          history,
          grid,
          trials,
          seed,
          walkForward: fraction ?? null,
          view,
          retries,
          outputs,
        });
      const combos = method === 'grid' ? gridCombinations(grid) : randomSearchParams(grid, trials, seed);
      const queued: Job[] =
        fraction === undefined
          ? combos.map((params, index) => ({ index, params, sample: 'all' as const }))
          : combos.flatMap((params, index) => [
              { index, params, sample: 'in' as const },
              { index, params, sample: 'out' as const },
            ]);
      const { spec, bundle } = await sweepSpecOf(config, name, history, fraction ?? null, queued);
      return await sweepOnQueue({ url: queue, spec, bundle, view, retries, detach: values.detach === true, outputs });
    }
    const total = fraction === undefined ? points : 2 * points;
    const progress = process.stderr.isTTY
      ? new SingleBar({ format: 'optimize [{bar}] {value}/{total} runs', hideCursor: true, stream: process.stderr })
      : null;
    progress?.start(total, 0);
    const started = Date.now();
    let results: JobResult[];
    let done = 0;
    const onResult = () => progress?.update(++done);
    const onWarmUp = (warmUp: WarmUpReport) => {
      if (warmUp.failure !== undefined)
        process.stderr.write(
          `optimize: a pool thread's warm-up stopped after ${warmUp.runs} runs on the first ${warmUp.bars} bars: ${warmUp.failure}\n`,
        );
    };
    const context = { config, name, samples };
    try {
      const primary = await runSearch(
        context,
        grid,
        { method, trials, seed, metric, sample: fraction === undefined ? 'all' : 'in' },
        { workers, ...(pool ? { pool } : {}), onResult, onWarmUp },
      );
      const outJobs: Job[] =
        fraction === undefined
          ? []
          : primary.map((r) => ({ index: r.index, params: r.params, sample: 'out' as const }));
      results = [
        ...primary,
        ...(outJobs.length === 0
          ? []
          : await runSweep(context, outJobs, { workers, ...(pool ? { pool } : {}), onResult, onWarmUp })),
      ];
    } finally {
      progress?.stop();
    }
    const seconds = (Date.now() - started) / 1000;
    const lanes = Math.min(workers, results.length);
    process.stdout.write(
      await writeSweepOutputs({
        ...outputs,
        results,
        ranOn: `${results.length} runs on ${lanes} lane${lanes === 1 ? '' : 's'}, ${seconds.toFixed(1)} s`,
      }),
    );
    // A run whose strategy failed is a row of its own (the others ran): the sweep still ends as a failure.
    return sweepExitCode(results);
  } finally {
    await pool?.close();
  }
}
