/**
 * `tickline optimize --config backtest/<name>.yaml --grid fast=5,10,20 --grid slow=30,50`: every
 * combination of the grid, run in parallel on worker threads, printed as a table sorted by a metric and
 * written to out/<name>/optimize.{csv,json}. `--walk-forward 0.7` ranks on the first 70% of the bars and
 * shows how the same parameters did on the remaining 30%.
 */
import path from 'node:path';
import { availableParallelism } from 'node:os';
import { SingleBar } from 'cli-progress';
import { gridCombinations, METRICS, runSweep, type Job, type JobResult, type Metric } from '../adapters/backtest/optimize.ts';
import { sweepHistory, sweepSamples } from '../adapters/backtest/distributed/worker.ts';
import { checkQueueUrl, DEFAULT_RETRIES } from '../adapters/backtest/distributed/queue.ts';
import { BACKTEST_FLAGS, backtestArgs, isInputError, loadBacktestConfig } from './backtest.ts';
import { parseScalar } from './config.ts';
import { parseCommandArgs } from './args.ts';
import { ExitCode, UsageError } from './exit.ts';
import { writeSweepOutputs } from './optimize-report.ts';
import { sweepOnQueue, sweepSpecOf } from './sweep-queue.ts';

export const summary = 'Sweep a grid of strategy parameters on worker threads, ranked by a metric, with optional walk-forward';

const USAGE = `Usage: tickline optimize --config <file.yaml> --grid <key=v1,v2,...> [--grid ...] [options]

Runs the backtest definition once per combination of the grid (strategy parameters), in parallel on
worker threads, and prints the results sorted by a metric.

Options:
  --config <file>        Backtest definition (required)
  --grid <key=v1,v2>     Values of one strategy parameter (repeatable; required at least once)
  --metric <name>        Sort key: ${METRICS.join(', ')} (default sharpe)
  --walk-forward <f>     Rank on the first fraction f of the bars (0 < f < 1), then run the same
                         parameters on the rest (out-of-sample)
  --workers <n>          Parallel lanes: this thread and n - 1 worker threads (default: the
                         number of cores; 1 runs every job in this thread)
  --top <n>              Rows to print (default 20; the files hold every row)
  --heatmap <x,y>        The two --grid parameters of sweep.html's heatmap (default: the first two)
  --queue <redis-url>    Run the sweep on the workers of a queue (\`tickline worker\`):
                         redis://[:password@]host:port[/db], rediss://... for TLS
  --detach               With --queue: enqueue, print the sweep id and return
                         (\`tickline sweep status|results|cancel <id>\` later)
  --retries <n>          With --queue: runs of a job that throws before its error is
                         reported (default ${DEFAULT_RETRIES})
  --param <key=value>    Fix a strategy parameter for every run (repeatable)
  --strategy, --from, --to, --data, --out   As for \`tickline backtest\`
  -h, --help             This help

Writes out/<name>/optimize.csv, optimize.json and sweep.html (the runs and a heatmap of the metric). Exit codes: 0 done, 2 bad config or arguments, 1 failure.`;

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
      metric: { type: 'string', default: 'sharpe' },
      'walk-forward': { type: 'string' },
      workers: { type: 'string' },
      top: { type: 'string', default: '20' },
      heatmap: { type: 'string' },
      queue: { type: 'string' },
      detach: { type: 'boolean' },
      retries: { type: 'string' },
    },
    USAGE,
  );
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return ExitCode.Ok;
  }
  const backtest = backtestArgs(values, USAGE);
  if (!values.grid || values.grid.length === 0) throw new UsageError(`at least one --grid key=v1,v2,... is required\n\n${USAGE}`);
  const metric = values.metric as Metric;
  if (!METRICS.includes(metric)) throw new UsageError(`--metric must be one of ${METRICS.join(', ')}`);
  const grid: Record<string, unknown[]> = {};
  for (const spec of values.grid) {
    const eq = spec.indexOf('=');
    if (eq <= 0 || eq === spec.length - 1) throw new UsageError(`--grid ${spec}: expected key=v1,v2,...`);
    grid[spec.slice(0, eq)] = spec.slice(eq + 1).split(',').map((v) => parseScalar(v.trim()));
  }
  const axes = heatmapAxes(values.heatmap, Object.keys(grid));
  const fraction = values['walk-forward'] === undefined ? undefined : Number(values['walk-forward']);
  if (fraction !== undefined && !(fraction > 0 && fraction < 1)) throw new UsageError('--walk-forward must be a fraction between 0 and 1');
  const workers = values.workers === undefined ? availableParallelism() : Number(values.workers);
  if (!Number.isInteger(workers) || workers < 1) throw new UsageError('--workers must be a positive whole number');
  const top = Number(values.top);
  if (!Number.isInteger(top) || top < 1) throw new UsageError('--top must be a positive whole number');

  const queue = values.queue === undefined ? undefined : checkQueueUrl(values.queue);
  if (queue === undefined && (values.detach || values.retries !== undefined)) throw new UsageError('--detach and --retries go with --queue');
  const retries = values.retries === undefined ? DEFAULT_RETRIES : Number(values.retries);
  if (!Number.isInteger(retries) || retries < 0) throw new UsageError('--retries must be a whole number, 0 or more');

  try {
    const { config, name } = await loadBacktestConfig(backtest);
    const history = await sweepHistory(config);
    const combos = gridCombinations(grid);
    const samples = sweepSamples(history, fraction ?? null);
    if (fraction !== undefined && (samples.in!.bars.time.length === 0 || samples.out!.bars.time.length === 0)) throw new UsageError('--walk-forward leaves one side without bars');
    const jobs: Job[] =
      fraction === undefined
        ? combos.map((params, index) => ({ index, params, sample: 'all' as const }))
        : combos.flatMap((params, index) => [
            { index, params, sample: 'in' as const },
            { index, params, sample: 'out' as const },
          ]);
    const outputs = { name, outDir: config.out ?? path.join('out', name), metric, grid, walkForward: fraction, top, axes, data: history.description, combinations: combos.length };
    if (queue !== undefined) {
      const spec = await sweepSpecOf(config, name, history, fraction ?? null, jobs);
      const view = { metric, top, grid, heatmap: [...axes], data: history.description, enqueuedAt: Date.now() };
      return await sweepOnQueue({ url: queue, spec, view, retries, detach: values.detach === true, outputs });
    }
    const progress = process.stderr.isTTY ? new SingleBar({ format: 'optimize [{bar}] {value}/{total} runs', hideCursor: true, stream: process.stderr }) : null;
    progress?.start(jobs.length, 0);
    const started = Date.now();
    let results: JobResult[];
    try {
      results = await runSweep({ config, name, samples }, jobs, { workers, onResult: (_r, done) => progress?.update(done) });
    } finally {
      progress?.stop();
    }
    const seconds = (Date.now() - started) / 1000;
    const lanes = Math.min(workers, jobs.length);
    const printed = await writeSweepOutputs({
      ...outputs,
      results,
      ranOn: `${jobs.length} runs on ${lanes} lane${lanes === 1 ? '' : 's'}, ${seconds.toFixed(1)} s`,
    });
    process.stdout.write(printed);
    return ExitCode.Ok;
  } catch (error) {
    if (isInputError(error)) throw new UsageError((error as Error).message);
    throw error;
  }
}
