/**
 * `tickline evaluate --config backtest/<name>.yaml --evaluation topstep-50k`: run the backtest under a
 * prop-firm evaluation's rules (its floors, contract cap and hours drive the risk guard, as on paper and
 * live), say whether the run itself passed and on which day or which rule failed first, and how likely the
 * strategy is to pass: a seeded Monte Carlo over the run's trading days. Writes every backtest output,
 * evaluation.json and the report with its evaluation section. `--list` shows the shipped presets.
 */
import path from 'node:path';
import { executeBacktest } from '../adapters/backtest/execute.ts';
import { writeBacktestOutputs } from '../adapters/backtest/result-files.ts';
import { createLogger } from '../engine/log.ts';
import { decisionLines, summarizeRunDecisions } from '../report/decisions.ts';
import { evaluationLines, type MonteCarloOptions } from '../report/evaluation-report.ts';
import { parseCommandArgs } from './args.ts';
import { BACKTEST_FLAGS, backtestArgs, loadBacktestConfig } from './backtest.ts';
import { loadEvaluationRules, presetNames } from './evaluations.ts';
import { EXIT_CODE_OF_KIND, ExitCode, UsageError } from './exit.ts';

export const summary =
  'Would a strategy pass a prop-firm evaluation, and how likely: the run judged by a preset, plus a Monte Carlo';

const USAGE = `Usage: tickline evaluate --config <file.yaml> --evaluation <preset|file.yaml> [options]
       tickline evaluate --list

Runs the backtest definition under an evaluation's rules (profit target, maximum and daily loss limits,
consistency, minimum trading days, maximum contracts, trading hours), says whether the run passed, on
which trading day, or which rule failed first and when, and estimates the pass probability with a seeded
Monte Carlo: paths of the run's trading days drawn in blocks, each day replaying its intraday equity path.

Options:
  --config <file>        Backtest definition (required)
  --evaluation <name>    A preset (see --list) or a YAML file of rules (required unless the definition
                         names one with evaluation:)
  --paths <n>            Monte Carlo paths (default 10000)
  --seed <n>             Seed of the draws (default 1): the same seed gives the same result
  --days <n>             Trading days a path may last before it counts as still open (default 60)
  --block-days <n>       Consecutive days drawn together (default 1)
  --pass-lock <mode>     Once the pass conditions are met: flatten (default) closes everything and takes
                         no new risk, hold takes no new risk, off trades on (evaluation.passLock)
  --list                 List the shipped presets with their sources and reading dates
  --param, --strategy, --from, --to, --data, --out   As for \`tickline backtest\`
  -h, --help             This help

Writes the backtest's outputs and evaluation.json to out/<name>/. Exit codes: 0 evaluated,
2 bad config or arguments, 1 failure.`;

function positiveInteger(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const number = Number(value);
  if (!Number.isInteger(number) || number < 1)
    throw new UsageError(`--${flag} must be a positive whole number, got "${value}"`);
  return number;
}

function presetList(): string {
  const lines = ['Evaluation presets (config/evaluations/):'];
  for (const name of presetNames()) {
    const preset = loadEvaluationRules(name);
    lines.push(`  ${name.padEnd(14)} ${preset.name}, read on ${preset.readOn}`);
  }
  lines.push(
    '',
    "Each file names its sources and carries a note: check the firm's current rules before relying on a result.",
  );
  return lines.join('\n');
}

export async function run(args: string[]): Promise<number> {
  const values = parseCommandArgs(
    args,
    {
      ...BACKTEST_FLAGS,
      paths: { type: 'string' },
      seed: { type: 'string' },
      days: { type: 'string' },
      'block-days': { type: 'string' },
      list: { type: 'boolean' },
    },
    USAGE,
  );
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return ExitCode.Ok;
  }
  if (values.list) {
    process.stdout.write(`${presetList()}\n`);
    return ExitCode.Ok;
  }
  const backtest = backtestArgs(values, USAGE);
  const seed = values.seed === undefined ? undefined : Number(values.seed);
  if (seed !== undefined && !(Number.isInteger(seed) && seed >= 0))
    throw new UsageError(`--seed must be a whole number, got "${values.seed}"`);
  const paths = positiveInteger(values.paths, 'paths');
  const horizonDays = positiveInteger(values.days, 'days');
  const blockDays = positiveInteger(values['block-days'], 'block-days');
  const monteCarlo: MonteCarloOptions = {
    ...(paths === undefined ? {} : { paths }),
    ...(seed === undefined ? {} : { seed }),
    ...(horizonDays === undefined ? {} : { horizonDays }),
    ...(blockDays === undefined ? {} : { blockDays }),
  };
  const logger = createLogger({ name: 'evaluate', level: process.env.TICKLINE_LOG_LEVEL ?? 'error' });
  const { config, name, strategy, evaluation } = await loadBacktestConfig(backtest);
  if (evaluation === undefined)
    throw new UsageError(
      `no evaluation: pass --evaluation <preset|file> (presets: ${presetNames().join(', ')}) or set evaluation: in ${backtest.config}`,
    );
  const outDir = config.out ?? path.join('out', name);
  const outcome = await executeBacktest(config, name, { logger, strategy, evaluation, monteCarlo, outputDir: outDir });
  const written = await writeBacktestOutputs(outDir, outcome);
  const { result } = outcome;
  const lines = [
    `${outcome.title}`,
    `  ${outcome.history.description}, ${result.bars} bars, ${outcome.statistics.tradingDays} trading days, ${result.tradeList.length} trades, net PnL ${outcome.statistics.netPnl.toFixed(2)}`,
    ...decisionLines(summarizeRunDecisions(outcome.report, outcome.statistics)),
    ...(outcome.report.evaluation === undefined ? [] : evaluationLines(outcome.report.evaluation)),
    `report: ${written.report}`,
    `results: ${written.dir}/ (${written.files.join(', ')})`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
  if (result.failure !== undefined) {
    process.stderr.write(
      `evaluate: ${result.failure.message.split('\n')[0]} (stopped after ${result.bars} of ${outcome.history.bars.time.length} bars; the evaluation covers what ran)\n`,
    );
    return EXIT_CODE_OF_KIND.runtime;
  }
  return ExitCode.Ok;
}
