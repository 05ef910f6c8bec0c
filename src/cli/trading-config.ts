/** The configs of `paper`, `live`, `flatten` and the node's `run`: strict, with their paths relative to the file. */
import path from 'node:path';
import { liveConfigSchema, resolveLivePaths, type LiveConfig } from '../adapters/live/live-config.ts';
import { evaluationAccount, withEvaluationRisk } from '../engine/evaluation-rules.ts';
import { accountConfigSchema } from '../engine/account-rules.ts';
import { accountSessionConfig, nodeConfigSchema, resolveNodePaths, type NodeConfig } from '../node/node-config.ts';
import {
  ConfigError,
  configIssue,
  readConfigDocument,
  validateDocument,
  type ConfigDocument,
  type ConfigIssue,
} from './config-loader.ts';
import { loadEvaluationRules } from './evaluations.ts';

/** The account limits an evaluation sets; the config's `limits` may not set them too. */
const EVALUATION_LIMITS = ['startingBalance', 'dailyLossLimit', 'maximumLossLimit'] as const;

export function loadTradingConfig(file: string): LiveConfig {
  const doc = readConfigDocument(file);
  const baseDir = path.dirname(path.resolve(file));
  const config = resolveLivePaths(validateDocument(doc, liveConfigSchema), baseDir);
  const issues: ConfigIssue[] = [];
  const out = withEvaluation(config, baseDir, doc, [], issues);
  if (issues.length > 0) throw new ConfigError(issues);
  return out;
}

/** A node config, and each account's session config with its evaluation applied (as `loadTradingConfig`'s). */
export interface LoadedNodeConfig {
  readonly config: NodeConfig;
  readonly sessions: ReadonlyMap<string, LiveConfig>;
}

/** Whether a trading config file is a node's (it lists `bots`), read without validating it. */
export function isNodeConfig(file: string): boolean {
  // The top-level key only: no alias is expanded here (the loader that follows refuses a bomb at its line).
  return readConfigDocument(file).doc.has('bots');
}

export function loadNodeConfig(file: string): LoadedNodeConfig {
  const doc = readConfigDocument(file);
  const baseDir = path.dirname(path.resolve(file));
  const config = resolveNodePaths(validateDocument(doc, nodeConfigSchema), baseDir);
  const issues: ConfigIssue[] = [];
  const sessions = new Map(
    config.accounts.map((account, i) => [
      account.name,
      withEvaluation(accountSessionConfig(config, account), baseDir, doc, ['accounts', i], issues),
    ]),
  );
  if (issues.length > 0) throw new ConfigError(issues);
  return { config, sessions };
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
): LiveConfig {
  if (config.evaluation === undefined) return config;
  const rules = loadEvaluationRules(config.evaluation, baseDir);
  const clashes = EVALUATION_LIMITS.filter((key) => config.limits[key] !== undefined);
  for (const key of clashes)
    issues.push(configIssue(doc, [...at, 'limits', key], `set by the evaluation "${rules.name}": leave it out`));
  const limits = accountConfigSchema.partial().parse({ ...config.limits, ...evaluationAccount(rules) });
  return { ...config, limits, risk: withEvaluationRisk(config.risk, rules) };
}
