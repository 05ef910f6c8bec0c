/** The config of `paper`, `live` and `flatten`: strict, with its paths relative to the file. */
import path from 'node:path';
import { liveConfigSchema, resolveLivePaths, type LiveConfig } from '../adapters/live/live-config.ts';
import { evaluationAccount, withEvaluationRisk } from '../engine/evaluation-rules.ts';
import { evaluationPassLock, type PassLockOptions } from '../engine/pass-lock.ts';
import { accountConfigSchema } from '../engine/account-rules.ts';
import { ConfigError, configIssue, readConfigDocument, validateDocument } from './config-loader.ts';
import { loadEvaluationRules } from './evaluations.ts';
import { missingSecrets } from '../ops/notify/senders.ts';

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
  const env = options.env;
  if (env !== undefined) {
    const missing = config.notify.flatMap((target, i) =>
      missingSecrets(target, env).map(([key, variable]) =>
        configIssue(doc, ['notify', i, key], `${variable} is not set in the environment`),
      ),
    );
    if (missing.length > 0) throw new ConfigError(missing);
  }
  if (config.evaluation === undefined) return config;
  // The evaluation a backtest was judged by drives the guard in paper and live: one source of the floors.
  const rules = loadEvaluationRules(config.evaluation.rules, baseDir);
  const clashes = EVALUATION_LIMITS.filter((key) => config.limits[key] !== undefined);
  if (clashes.length > 0)
    throw new ConfigError(
      clashes.map((key) => configIssue(doc, ['limits', key], `set by the evaluation "${rules.name}": leave it out`)),
    );
  const limits = accountConfigSchema.partial().parse({ ...config.limits, ...evaluationAccount(rules) });
  const passLock = evaluationPassLock(rules, config.evaluation.passLock);
  return {
    ...config,
    limits,
    risk: withEvaluationRisk(config.risk, rules),
    ...(passLock === undefined ? {} : { passLock }),
  };
}
