/** The configs of `paper`, `live`, `flatten` and the node's `run`: strict, with their paths relative to the file. */
import path from 'node:path';
import { liveConfigSchema, resolveLivePaths, type LiveConfig } from '../adapters/live/live-config.ts';
import { evaluationAccount, withEvaluationRisk, type EvaluationPreset } from '../engine/evaluation-rules.ts';
import { evaluationPassLock, type PassLockOptions } from '../engine/pass-lock.ts';
import { StrategyError, type StrategyModule } from '../engine/strategy.ts';
import { loadStrategy } from '../strategies/index.ts';
import { nodeBacktestIssues } from '../node/portfolio-backtest.ts';
import { accountConfigSchema } from '../engine/account-rules.ts';
import { accountSessionConfig, nodeConfigSchema, resolveNodePaths, type NodeConfig } from '../node/node-config.ts';
import {
  ConfigError,
  configIssue,
  readConfigDocument,
  validateDocument,
  type ConfigDocument,
  type ConfigIssue,
  validateAt,
} from './config-loader.ts';
import { loadEvaluationRules } from './evaluations.ts';
import { missingSecrets } from '../adapters/live/notify-config.ts';

/** The account limits an evaluation sets; the config's `limits` may not set them too. */
const EVALUATION_LIMITS = ['startingBalance', 'dailyLossLimit', 'maximumLossLimit'] as const;

/** The config with what its evaluation adds: the pass conditions of the pass-lock (absent: no lock). */
export type TradingConfig = LiveConfig & { readonly passLock?: PassLockOptions };

/**
 * @param options.env the environment a trading command runs in: the notification targets' secrets
 *   (`urlEnv`, `tokenEnv`) must be set in it, each missing one an issue at its line. `flatten` passes none:
 *   a missing token must never stand between an operator and a flat account.
 */
export function loadTradingConfig(file: string, options: { readonly env?: NodeJS.ProcessEnv } = {}): TradingConfig {
  const doc = readConfigDocument(file);
  const baseDir = path.dirname(path.resolve(file));
  const config = resolveLivePaths(validateDocument(doc, liveConfigSchema), baseDir);
  const issues: ConfigIssue[] = [];
  issues.push(...notifySecretIssues(doc, config.notify, options.env));
  const out = withEvaluation(config, baseDir, doc, [], issues);
  if (issues.length > 0) throw new ConfigError(issues);
  return out;
}

/** A node config, and each account's session config with its evaluation applied (as `loadTradingConfig`'s). */
export interface LoadedNodeConfig {
  readonly config: NodeConfig;
  readonly sessions: ReadonlyMap<string, TradingConfig>;
}

/** Whether a trading config file is a node's (it lists `bots`), read without validating it. */
export function isNodeConfig(file: string): boolean {
  // The top-level key only: no alias is expanded here (the loader that follows refuses a bomb at its line).
  return readConfigDocument(file).doc.has('bots');
}

/** `options.env` as `loadTradingConfig`'s: the notification targets' secrets must be set in it. */
export function loadNodeConfig(file: string, options: { readonly env?: NodeJS.ProcessEnv } = {}): LoadedNodeConfig {
  const doc = readConfigDocument(file);
  const baseDir = path.dirname(path.resolve(file));
  const config = resolveNodePaths(validateDocument(doc, nodeConfigSchema), baseDir);
  const issues: ConfigIssue[] = [];
  issues.push(...notifySecretIssues(doc, config.notify, options.env));
  const sessions = new Map(
    config.accounts.map((account, i) => [
      account.name,
      withEvaluation(accountSessionConfig(config, account), baseDir, doc, ['accounts', i], issues),
    ]),
  );
  if (issues.length > 0) throw new ConfigError(issues);
  return { config, sessions };
}

/** A node config to backtest: loaded as `loadNodeConfig`, with each account's evaluation rules to judge it by. */
export interface LoadedNodeBacktest extends LoadedNodeConfig {
  readonly evaluations: ReadonlyMap<string, EvaluationPreset>;
}

/**
 * A node config for `tickline backtest`: everything `loadNodeConfig` checks, then what a node backtest needs
 * (a `backtest` section, the bots on one contract: `nodeBacktestIssues`), each issue at its line.
 */
export function loadNodeBacktestConfig(file: string): LoadedNodeBacktest {
  const loaded = loadNodeConfig(file);
  const doc = readConfigDocument(file);
  const issues = nodeBacktestIssues(loaded.config).map((issue) => configIssue(doc, issue.path, issue.message));
  if (issues.length > 0) throw new ConfigError(issues);
  const baseDir = path.dirname(path.resolve(file));
  const evaluations = new Map<string, EvaluationPreset>();
  for (const account of loaded.config.accounts)
    if (account.evaluation !== undefined)
      evaluations.set(account.name, loadEvaluationRules(account.evaluation.rules, baseDir));
  return { ...loaded, evaluations };
}

/** Each bot's strategy module; every one that cannot be loaded is reported at once, at its `strategy` line. */
export async function loadBotStrategies(
  file: string,
  bots: readonly { id: string; strategy: string }[],
): Promise<Map<string, StrategyModule>> {
  const doc = readConfigDocument(file);
  const baseDir = path.dirname(path.resolve(file));
  const modules = new Map<string, StrategyModule>();
  const issues: ConfigIssue[] = [];
  for (const [i, bot] of bots.entries()) {
    try {
      modules.set(bot.id, await loadStrategy(bot.strategy, baseDir));
    } catch (error) {
      if (!(error instanceof StrategyError)) throw error;
      issues.push(configIssue(doc, ['bots', i, 'strategy'], error.message));
    }
  }
  if (issues.length > 0) throw new ConfigError(issues);
  return modules;
}

/** Every bot's parameters checked by its strategy's own schema, every issue at once at its line. */
export function checkBotParams(
  file: string,
  bots: readonly { id: string; params: unknown }[],
  strategies: ReadonlyMap<string, StrategyModule>,
): void {
  const doc = readConfigDocument(file);
  const issues: ConfigIssue[] = [];
  bots.forEach((bot, i) => {
    try {
      validateAt(doc, ['bots', i, 'params'], strategies.get(bot.id)!.params, bot.params);
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      issues.push(...error.issues);
    }
  });
  if (issues.length > 0) throw new ConfigError(issues);
}

/** Each notification target's secret the environment lacks, at its line (none without an environment). */
function notifySecretIssues(
  doc: ConfigDocument,
  targets: LiveConfig['notify'],
  env: NodeJS.ProcessEnv | undefined,
): ConfigIssue[] {
  if (env === undefined) return [];
  return targets.flatMap((target, i) =>
    missingSecrets(target, env).map(([key, variable]) =>
      configIssue(doc, ['notify', i, key], `${variable} is not set in the environment`),
    ),
  );
}

/**
 * The evaluation a backtest was judged by drives the guard in paper and live: one source of the floors.
 * A limit the evaluation sets and the config sets too is an issue at `at`'s `limits`.
 */
function withEvaluation(
  config: LiveConfig,
  baseDir: string,
  doc: ConfigDocument,
  at: readonly (string | number)[],
  issues: ConfigIssue[],
): TradingConfig {
  if (config.evaluation === undefined) return config;
  const rules = loadEvaluationRules(config.evaluation.rules, baseDir);
  const clashes = EVALUATION_LIMITS.filter((key) => config.limits[key] !== undefined);
  for (const key of clashes)
    issues.push(configIssue(doc, [...at, 'limits', key], `set by the evaluation "${rules.name}": leave it out`));
  const limits = accountConfigSchema.partial().parse({ ...config.limits, ...evaluationAccount(rules) });
  const passLock = evaluationPassLock(rules, config.evaluation.passLock);
  return {
    ...config,
    limits,
    risk: withEvaluationRisk(config.risk, rules),
    ...(passLock === undefined ? {} : { passLock }),
  };
}
