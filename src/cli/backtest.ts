/**
 * `tickline backtest --config backtest/<name>.yaml`: run a backtest definition, print the summary, the
 * order list hash and the report's path, and write every result to `out/<name>/`.
 * Exit codes: 0 the account passed, 3 it broke a rule (or missed its target), 2 bad config, arguments or
 * data (nothing was run), 1 anything else failed.
 */
import path from 'node:path';
import { SingleBar } from 'cli-progress';
import { AccountConfig, BacktestConfig, resolveBacktestPaths } from '../adapters/backtest/backtest-config.ts';
import { evaluationAccount, withEvaluationRisk, type EvaluationPreset } from '../engine/evaluation-rules.ts';
import { loadEvaluationRules } from './evaluations.ts';
import { executeBacktest } from '../adapters/backtest/execute.ts';
import { writeBacktestOutputs } from '../adapters/backtest/result-files.ts';
import { createLogger, type Logger } from '../engine/log.ts';
import { isoDate } from '../engine/trading-day.ts';
import { botAccounts } from '../node/node-config.ts';
import {
  botBacktestConfig,
  renderNodeSummary,
  runNodeBacktest,
  writeNodeBacktest,
} from '../node/portfolio-backtest.ts';
import { checkBotParams, isNodeConfig, loadBotStrategies, loadNodeBacktestConfig } from './trading-config.ts';
import { StrategyError, type StrategyModule } from '../engine/strategy.ts';
import { isStrategyFile, loadStrategy } from '../strategies/index.ts';
import { renderSummary } from '../report/format.ts';
import { decisionLines, summarizeRunDecisions } from '../report/decisions.ts';
import { evaluationLines } from '../report/evaluation-report.ts';
import {
  ConfigError,
  configIssue,
  parseScalar,
  readConfigDocument,
  setConfigValue,
  validateAt,
  validateDocument,
  type ConfigDocument,
} from './config-loader.ts';
import { parseCommandArgs, type FlagValues } from './args.ts';
import { EXIT_CODE_OF_KIND, ExitCode, UsageError, strategyFailureReport } from './exit.ts';

export const summary = 'Run a backtest definition (backtest/<name>.yaml) and write its results and report';

const USAGE = `Usage: tickline backtest --config <file.yaml> [options]

Runs a strategy over history with the fill model, the risk guard and the account's rules, prints a
summary and the hash of the order list, and writes trades, equity, statistics and an HTML report.

Options:
  --config <file>      Backtest definition (required), e.g. backtest/default.yaml
  --strategy <name>    Override strategy.name (a built-in name or a path to a module)
  --param <key=value>  Override one strategy parameter (repeatable), validated by the strategy's schema
  --from <date>        Override the start (ISO date or time, UTC when no offset)
  --to <date>          Override the end (exclusive)
  --data <file.csv>    Use this CSV file (t,o,h,l,c,v[,contract]) as the history
  --out <dir>          Output folder (default out/<name>)
  --evaluation <name>  Judge the run by a prop-firm evaluation: a preset of config/evaluations
                       (e.g. topstep-50k) or a YAML file; its floors, contract cap and hours
                       become the account's and the guard's (see tickline evaluate)
  --pass-lock <mode>   What the evaluation's account does once it passes: flatten (default), hold
                       or off (evaluation.passLock)
  -h, --help           This help

A node config (one that lists bots:, see config/node.yaml) runs every account on its backtest
section's history, each under its own rules with all its bots in one engine, writes each account's
results to <out>/<account>/ and prints a table per account and strategy (docs/backtest.md, A node's
portfolio); only --out applies to it.

Paths in the config file are relative to that file; paths given here, and the default out/<name>, are
relative to the working directory.

Exit codes: 0 passed, 3 the account broke a rule or missed its profit target,
            2 bad config, arguments or data, 1 failure.`;

export interface BacktestArgs {
  readonly config: string;
  readonly strategy?: string;
  readonly params: readonly string[];
  readonly from?: string;
  readonly to?: string;
  readonly data?: string;
  readonly out?: string;
  /** An evaluation preset or file, instead of the definition's `evaluation`. */
  readonly evaluation?: string;
  /** The evaluation's pass-lock, instead of the definition's `evaluation.passLock`. */
  readonly passLock?: string;
}

/** The flags that choose and override a backtest definition; `optimize` takes them too. */
export const BACKTEST_FLAGS = {
  config: { type: 'string' },
  strategy: { type: 'string' },
  param: { type: 'string', multiple: true },
  from: { type: 'string' },
  to: { type: 'string' },
  data: { type: 'string' },
  out: { type: 'string' },
  evaluation: { type: 'string' },
  'pass-lock': { type: 'string' },
} as const;

export function parseBacktestArgs(args: string[], usage = USAGE): BacktestArgs | 'help' {
  const values = parseCommandArgs(args, BACKTEST_FLAGS, usage);
  if (values.help) return 'help';
  return backtestArgs(values, usage);
}

/** The backtest definition and its overrides from parsed flags; `--config` is required. */
export function backtestArgs(values: FlagValues<typeof BACKTEST_FLAGS>, usage: string): BacktestArgs {
  if (values.config === undefined) throw new UsageError(`--config is required\n\n${usage}`);
  return {
    config: values.config,
    params: values.param ?? [],
    ...(values.strategy !== undefined ? { strategy: values.strategy } : {}),
    ...(values.from !== undefined ? { from: values.from } : {}),
    ...(values.to !== undefined ? { to: values.to } : {}),
    ...(values.data !== undefined ? { data: values.data } : {}),
    ...(values.out !== undefined ? { out: values.out } : {}),
    ...(values.evaluation !== undefined ? { evaluation: values.evaluation } : {}),
    ...(values['pass-lock'] !== undefined ? { passLock: values['pass-lock'] } : {}),
  };
}

/**
 * Read the definition, apply the command-line overrides to it, validate the whole (all issues at once),
 * load the strategy and check its parameters with the strategy's own schema, each issue at its line (or at
 * its flag, for a value given on the command line).
 */
export async function loadBacktestConfig(
  args: BacktestArgs,
): Promise<{ config: BacktestConfig; name: string; strategy: StrategyModule; evaluation?: EvaluationPreset }> {
  const doc: ConfigDocument = readConfigDocument(args.config);
  // Paths on the command line are the working directory's; those in the file are the file's (below).
  if (args.strategy !== undefined)
    setConfigValue(
      doc,
      ['strategy', 'name'],
      isStrategyFile(args.strategy) ? path.resolve(args.strategy) : args.strategy,
      `--strategy ${args.strategy}`,
    );
  for (const pair of args.params) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new UsageError(`--param ${pair}: expected key=value`);
    setConfigValue(doc, ['strategy', 'params', pair.slice(0, eq)], parseScalar(pair.slice(eq + 1)), `--param ${pair}`);
  }
  if (args.from !== undefined) setConfigValue(doc, ['from'], args.from, `--from ${args.from}`);
  if (args.to !== undefined) setConfigValue(doc, ['to'], args.to, `--to ${args.to}`);
  if (args.data !== undefined)
    setConfigValue(doc, ['data'], { source: 'csv', file: path.resolve(args.data) }, `--data ${args.data}`);
  if (args.out !== undefined) setConfigValue(doc, ['out'], path.resolve(args.out), `--out ${args.out}`);
  let evaluationBase = path.dirname(path.resolve(args.config));
  if (args.evaluation !== undefined) {
    // Asked for on the command line, the evaluation's rules replace the definition's own floors, and a
    // file named there is the working directory's.
    // A definition's `evaluation: { rules, passLock }` keeps its pass-lock: only the rules are replaced.
    const where = doc.doc.hasIn(['evaluation', 'rules']) ? ['evaluation', 'rules'] : ['evaluation'];
    setConfigValue(doc, where, args.evaluation, `--evaluation ${args.evaluation}`);
    evaluationBase = process.cwd();
    for (const key of EVALUATION_ACCOUNT_KEYS) if (doc.doc.hasIn(['account', key])) doc.doc.deleteIn(['account', key]);
  }
  if (args.passLock !== undefined) {
    const named = doc.doc.getIn(['evaluation']);
    if (named === undefined)
      throw new UsageError(
        `--pass-lock ${args.passLock}: no evaluation to lock (pass --evaluation or set evaluation:)`,
      );
    // `evaluation: topstep-50k` is the short form of `{ rules: topstep-50k }`: the long one holds the lock.
    if (typeof named === 'string') doc.doc.setIn(['evaluation'], doc.doc.createNode({ rules: named }));
    setConfigValue(doc, ['evaluation', 'passLock'], args.passLock, `--pass-lock ${args.passLock}`);
  }
  let config = resolveBacktestPaths(validateDocument(doc, BacktestConfig), path.dirname(path.resolve(args.config)));
  let evaluation: EvaluationPreset | undefined;
  if (config.evaluation !== undefined) {
    evaluation = loadEvaluationRules(config.evaluation.rules, evaluationBase);
    config = withEvaluation(doc, config, evaluation);
  }
  let strategy: StrategyModule;
  try {
    strategy = await loadStrategy(config.strategy.name);
  } catch (error) {
    if (error instanceof StrategyError)
      throw new ConfigError([configIssue(doc, ['strategy', 'name'], error.message)], { cause: error });
    throw error;
  }
  validateAt(doc, ['strategy', 'params'], strategy.params, config.strategy.params);
  const name = config.name ?? path.basename(args.config).replace(/\.ya?ml$/i, '');
  return { config, name, strategy, ...(evaluation === undefined ? {} : { evaluation }) };
}

/**
 * One bot of a node config as a single backtest definition, for `tickline optimize --config node.yaml --bot
 * <id> [--account <name>]`: the bot alone on the account (its first by default) under that account's rules,
 * on the node's backtest history; `--param` overrides its parameters as a definition's.
 */
export async function loadNodeBotConfig(
  args: BacktestArgs,
  botId: string | undefined,
  account: string | undefined,
): Promise<{ config: BacktestConfig; name: string; strategy: StrategyModule }> {
  const refused = (['strategy', 'from', 'to', 'data', 'evaluation'] as const)
    .filter((key) => args[key] !== undefined)
    .map((key) => `--${key}`);
  if (refused.length > 0)
    throw new UsageError(`${refused.join(', ')}: not for a node config (set them in its backtest section and bots)`);
  const loaded = loadNodeBacktestConfig(args.config);
  const ids = loaded.config.bots.map((b) => b.id).join(', ');
  if (botId === undefined)
    throw new UsageError(`a node config: name the bot whose parameters to sweep with --bot (${ids})`);
  const index = loaded.config.bots.findIndex((b) => b.id === botId);
  if (index < 0) throw new UsageError(`--bot ${botId}: no such bot in ${args.config} (${ids})`);
  const bot = loaded.config.bots[index]!;
  const accounts = botAccounts(bot).map((a) => a.name);
  const on = account ?? accounts[0]!;
  if (!accounts.includes(on))
    throw new UsageError(`--account ${on}: bot ${bot.id} does not trade it (${accounts.join(', ')})`);
  const doc = readConfigDocument(args.config);
  for (const pair of args.params) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new UsageError(`--param ${pair}: expected key=value`);
    setConfigValue(
      doc,
      ['bots', index, 'params', pair.slice(0, eq)],
      parseScalar(pair.slice(eq + 1)),
      `--param ${pair}`,
    );
  }
  const params = (doc.doc.getIn(['bots', index, 'params'], false) as { toJSON(): unknown } | undefined)?.toJSON() ?? {};
  const strategy = (await loadBotStrategies(args.config, [bot])).get(bot.id)!;
  validateAt(doc, ['bots', index, 'params'], strategy.params, params);
  const name = `${path.basename(args.config).replace(/\.ya?ml$/i, '')}-${bot.id}`;
  const config = botBacktestConfig(
    { config: loaded.config, name: path.basename(args.config).replace(/\.ya?ml$/i, ''), sessions: loaded.sessions },
    { ...bot, params: params as Record<string, unknown> },
    on,
  );
  return { config: args.out === undefined ? config : { ...config, out: path.resolve(args.out) }, name, strategy };
}

/** The account fields an evaluation sets; the definition may not set them too. */
const EVALUATION_ACCOUNT_KEYS = ['startingBalance', 'dailyLossLimit', 'maximumLossLimit', 'profitTarget'] as const;

/** The definition with the evaluation's floors as the account's rules and its cap and hours in the guard. */
function withEvaluation(doc: ConfigDocument, config: BacktestConfig, rules: EvaluationPreset): BacktestConfig {
  const clashes = EVALUATION_ACCOUNT_KEYS.filter((key) => doc.doc.hasIn(['account', key]));
  if (clashes.length > 0) {
    throw new ConfigError(
      clashes.map((key) => configIssue(doc, ['account', key], `set by the evaluation "${rules.name}": leave it out`)),
    );
  }
  const { personalDailyLossLimit, personalDailyProfitTarget, personalLimitAction } = config.account;
  const account = AccountConfig.parse({
    ...evaluationAccount(rules),
    personalLimitAction,
    ...(personalDailyLossLimit === undefined ? {} : { personalDailyLossLimit }),
    ...(personalDailyProfitTarget === undefined ? {} : { personalDailyProfitTarget }),
  });
  return { ...config, account, risk: withEvaluationRisk(config.risk, rules) };
}

/**
 * A node config (it lists `bots`): every account on the one history under its own rules, each account's
 * results in `<out>/<account>/`, the node's table printed and in `<out>/node-summary.json`. Exit codes as
 * a single backtest's, over every account: 1 when a strategy failed on one, else 3 when one broke a rule.
 */
async function backtestNode(args: BacktestArgs, logger: Logger): Promise<number> {
  const refused = [
    ...(args.params.length > 0 ? ['--param'] : []),
    ...(['strategy', 'from', 'to', 'data', 'evaluation'] as const)
      .filter((key) => args[key] !== undefined)
      .map((key) => `--${key}`),
  ];
  if (refused.length > 0)
    throw new UsageError(
      `${refused.join(', ')}: not for a node config (set them in its backtest section and bots); only --out is`,
    );
  const { config, sessions, evaluations } = loadNodeBacktestConfig(args.config);
  const strategies = await loadBotStrategies(args.config, config.bots);
  checkBotParams(args.config, config.bots, strategies);
  const name = path.basename(args.config).replace(/\.ya?ml$/i, '');
  const outDir = args.out !== undefined ? path.resolve(args.out) : (config.backtest!.out ?? path.join('out', name));
  const result = await runNodeBacktest({ config, name, sessions, evaluations, strategies, logger });
  const written = await writeNodeBacktest(outDir, result);
  const lines = [renderNodeSummary(written.summary).trimEnd()];
  for (const { account, outcome } of result.accounts) {
    for (const warning of outcome.warnings) lines.push(`Warning: ${account}: ${warning}`);
    lines.push(
      `${account}: orders sha256 ${outcome.result.orderListHash}; report ${written.accounts.get(account)!.report}`,
    );
  }
  lines.push(`summary: ${written.file}`);
  process.stdout.write(`${lines.join('\n')}\n`);
  const failed = result.accounts.filter((a) => a.outcome.result.failure !== undefined);
  for (const { account, outcome } of failed)
    process.stderr.write(
      `${strategyFailureReport(`backtest: ${account}`, outcome.result.failure!, ` (stopped after ${outcome.result.bars} of ${outcome.history.bars.time.length} bars; the outputs above cover what ran)`)}\n`,
    );
  if (failed.length > 0) return EXIT_CODE_OF_KIND.runtime;
  return result.accounts.every((a) => a.outcome.result.passed) ? ExitCode.Ok : EXIT_CODE_OF_KIND.ruleBreak;
}

export async function run(args: string[]): Promise<number> {
  const parsed = parseBacktestArgs(args);
  if (parsed === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return ExitCode.Ok;
  }
  const logger = createLogger({ name: 'backtest', level: process.env.TICKLINE_LOG_LEVEL ?? 'error' });
  if (isNodeConfig(parsed.config)) return backtestNode(parsed, logger);
  const started = Date.now();
  let bar: SingleBar | null = null;
  // A progress bar only where someone watches, and only once the run has taken a second.
  const onProgress = process.stderr.isTTY
    ? (done: number, total: number) => {
        if (bar === null) {
          if (Date.now() - started < 1000) return;
          bar = new SingleBar({
            format: 'backtest [{bar}] {percentage}% {value}/{total} bars',
            hideCursor: true,
            stream: process.stderr,
          });
          bar.start(total, done);
        }
        bar.update(done);
      }
    : undefined;
  try {
    const { config, name, strategy, evaluation } = await loadBacktestConfig(parsed);
    const outDir = config.out ?? path.join('out', name);
    const outcome = await executeBacktest(config, name, {
      logger,
      strategy,
      outputDir: outDir,
      ...(evaluation ? { evaluation } : {}),
      ...(onProgress ? { onProgress } : {}),
    });
    (bar as SingleBar | null)?.stop();
    const written = await writeBacktestOutputs(outDir, outcome);
    const { result } = outcome;
    const lines = [
      renderSummary(outcome.statistics, { ...outcome.report, violations: outcome.report.violations }).trimEnd(),
      `  Data            ${outcome.history.description}, ${result.bars} bars`,
    ];
    if (result.rolls.length > 0)
      lines.push(
        `  Rolls           ${result.rolls.map((r) => `${r.from} -> ${r.to} ${isoDate(r.time)} (${r.action})`).join(', ')}`,
      );
    if (result.gaps.length > 0) {
      const flattened = result.gaps.filter((g) => g.flattened !== 0).length;
      lines.push(
        `  Gaps            ${result.gaps.length} longer than ${config.gaps.longerThanHours}h without bars; ${flattened} open position(s) flattened at the last bar before one (gaps.json)`,
      );
    }
    for (const warning of outcome.warnings) lines.push(`Warning: ${warning}`);
    for (const note of outcome.report.notes ?? []) lines.push(`Note: ${note}`);
    for (const v of result.violations)
      lines.push(
        `  Violation       ${v.triggeredAt} type ${v.type} (${v.rule}, duration ${v.duration}) equity ${v.violationBalance.toFixed(2)} vs ${v.level.toFixed(2)}`,
      );
    for (const a of result.closestApproach)
      lines.push(
        `  Closest ${a.rule.padEnd(26)} ${a.minRoom.toFixed(2)} left${a.time === null ? '' : ` at ${new Date(a.time).toISOString()}`}`,
      );
    lines.push(...decisionLines(summarizeRunDecisions(outcome.report, outcome.statistics)));
    if (outcome.report.evaluation !== undefined) lines.push(...evaluationLines(outcome.report.evaluation));
    lines.push(
      `orders sha256: ${result.orderListHash}`,
      `report: ${written.report}`,
      `results: ${written.dir}/ (${written.files.join(', ')})`,
    );
    process.stdout.write(`${lines.join('\n')}\n`);
    if (result.failure !== undefined) {
      const total = outcome.report.streamed?.count ?? outcome.history.bars.time.length;
      process.stderr.write(
        `${strategyFailureReport('backtest', result.failure, ` (stopped after ${result.bars} of ${total} bars; the outputs above cover what ran)`)}\n`,
      );
      return EXIT_CODE_OF_KIND.runtime;
    }
    return result.passed ? ExitCode.Ok : EXIT_CODE_OF_KIND.ruleBreak;
  } catch (error) {
    (bar as SingleBar | null)?.stop();
    throw error;
  }
}
