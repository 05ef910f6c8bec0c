/**
 * A prop-firm evaluation's rules as data (the presets in config/evaluations/*.yaml): the profit target, the
 * maximum loss limit in the engine's own vocabulary (variant, lock), the daily loss limit, the consistency
 * rule, the minimum of trading days, the maximum of contracts and the trading hours.
 *
 * One source for the floors: the loss limits become the engine's account rules (`RuleBook`), the
 * contract cap and the hours become the risk guard's `maxPositionSize` and `sessions`, so a backtest, the
 * evaluation replay (src/report/evaluation-report.ts) and paper or live trading all enforce the same numbers.
 */
import { z } from 'zod';
import { riskConfigSchema, type RiskConfig } from './risk.ts';
import { accountConfigSchema, type AccountConfig } from './account-rules.ts';

const money = z.number().finite().positive();

export const evaluationRulesSchema = z.strictObject({
  /** What the rules are, for example `Topstep 50K Trading Combine`. */
  name: z.string().min(1),
  startingBalance: money,
  /** Money to gain over the starting balance (measured at the end of a trading day). */
  profitTarget: money,
  /** The engine's maximum loss limit: amount, variant, lock (src/engine/account-rules.ts). */
  maximumLossLimit: accountConfigSchema.shape.maximumLossLimit.unwrap(),
  dailyLossLimit: z
    .strictObject({
      amount: money,
      /** `pausesDay`: trading stops for the rest of the day (a soft breach); `failsEvaluation`: the evaluation is lost. */
      breach: z.enum(['pausesDay', 'failsEvaluation']).default('pausesDay'),
    })
    .optional(),
  /** Passing needs the best day's profit below this share of the total profit (0.5 = 50%). */
  consistency: z.strictObject({ bestDayShare: z.number().gt(0).lte(1) }).optional(),
  /** Passing needs at least this many days with a trade. */
  minimumTradingDays: z.number().int().positive().optional(),
  /** A position larger than this (absolute contracts) fails the evaluation; the guard's maxPositionSize. */
  maximumContracts: z.number().int().positive().optional(),
  /** A position held outside these hours (or past flatBy) fails the evaluation; the guard's sessions. */
  tradingHours: riskConfigSchema.shape.sessions.unwrap().optional(),
});

export type EvaluationRules = z.output<typeof evaluationRulesSchema>;
export type EvaluationRulesInput = z.input<typeof evaluationRulesSchema>;

/** A preset file (config/evaluations/*.yaml): the rules and where they come from. */
export const evaluationPresetSchema = evaluationRulesSchema.extend({
  /** Where the numbers come from (addresses or documents), so a reader can check them. */
  source: z.string().min(1),
  /** The date the numbers were read at the source, `YYYY-MM-DD`: firms change their rules. */
  readOn: z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'a date YYYY-MM-DD'),
  /** Shown with every result: check the firm's current rules. */
  note: z.string().min(1),
});

export type EvaluationPreset = z.output<typeof evaluationPresetSchema>;

/**
 * What an evaluation account does once its pass conditions are met (docs/backtest.md, Pass-lock):
 * `flatten` closes every position and refuses new risk, `hold` refuses new risk and keeps what is open,
 * `off` trades on. Passing is measured at the day's close while a later loss can still break the maximum
 * loss limit before the firm counts the pass, so the default protects the pass: `flatten`.
 */
export const PASS_LOCK_MODES = ['flatten', 'hold', 'off'] as const;
export type PassLockMode = (typeof PASS_LOCK_MODES)[number];
export const DEFAULT_PASS_LOCK: PassLockMode = 'flatten';

/**
 * The `evaluation:` key of a backtest definition and of a paper or live config: a preset name or file
 * (`evaluation: topstep-50k`), or the rules with the pass-lock (`evaluation: { rules: topstep-50k,
 * passLock: hold }`). A bare name is the short form of the second, so one strict schema reports errors.
 */
export const evaluationChoiceSchema = z.preprocess(
  (value) => (typeof value === 'string' ? { rules: value } : value),
  z.strictObject(
    {
      /** A preset of config/evaluations (`topstep-50k`) or a YAML file of rules, relative to the config file. */
      rules: z.string({ error: 'a preset name (topstep-50k) or a YAML file of rules' }).min(1),
      passLock: z.enum(PASS_LOCK_MODES).default(DEFAULT_PASS_LOCK),
    },
    { error: 'a preset name (topstep-50k), a YAML file of rules, or { rules, passLock: flatten | hold | off }' },
  ),
);
export type EvaluationChoice = z.output<typeof evaluationChoiceSchema>;

/** Where an account stands against the pass conditions: realized profit, days with a fill, best day. */
export interface PassProgress {
  /** Realized balance minus the starting balance. */
  readonly profit: number;
  readonly tradingDays: number;
  /** The best day's realized PnL (-Infinity before any day). */
  readonly bestDay: number;
}

/** The pass conditions of an evaluation: what the replay and the engine's pass-lock both judge by. */
export type PassConditions = Pick<EvaluationRules, 'profitTarget' | 'minimumTradingDays' | 'consistency'>;

/**
 * Whether the pass conditions are met: the profit target, the minimum of trading days, and the best day
 * below its share of the profit. The one test of passing: the evaluation's replay and the engine's
 * pass-lock both call it.
 */
export function passConditionsMet(rules: PassConditions, progress: PassProgress): boolean {
  const { profit } = progress;
  if (profit < rules.profitTarget) return false;
  if (rules.minimumTradingDays !== undefined && progress.tradingDays < rules.minimumTradingDays) return false;
  if (rules.consistency !== undefined && progress.bestDay >= rules.consistency.bestDayShare * profit) return false;
  return true;
}

/** The rules with their provenance, when they came from a preset. */
export type EvaluationSource = EvaluationRules & Partial<Pick<EvaluationPreset, 'source' | 'readOn' | 'note'>>;

/** The rules a result can fail by. */
export const EVALUATION_FAILURES = ['maximumLossLimit', 'dailyLossLimit', 'maximumContracts', 'tradingHours'] as const;
export type EvaluationFailure = (typeof EVALUATION_FAILURES)[number];

export const EVALUATION_FAILURE_LABELS: Readonly<Record<EvaluationFailure, string>> = {
  maximumLossLimit: 'maximum loss limit',
  dailyLossLimit: 'daily loss limit',
  maximumContracts: 'maximum contracts',
  tradingHours: 'trading hours',
};

/** The engine's account rules of an evaluation: its floors, checked by the `RuleBook`. */
export function evaluationAccount(rules: EvaluationRules): AccountConfig {
  return {
    startingBalance: rules.startingBalance,
    maximumLossLimit: rules.maximumLossLimit,
    ...(rules.dailyLossLimit === undefined ? {} : { dailyLossLimit: rules.dailyLossLimit.amount }),
  };
}

/** The risk guard's settings an evaluation imposes: the contract cap and the trading hours. */
export function evaluationRisk(rules: EvaluationRules): Pick<RiskConfig, 'maxPositionSize' | 'sessions'> {
  return {
    ...(rules.maximumContracts === undefined ? {} : { maxPositionSize: rules.maximumContracts }),
    ...(rules.tradingHours === undefined ? {} : { sessions: rules.tradingHours }),
  };
}

/**
 * A risk configuration with an evaluation's constraints laid over it: the tighter contract cap wins, the
 * evaluation's hours replace the config's (trading outside them fails the evaluation anyway).
 */
export function withEvaluationRisk<R extends RiskConfig>(risk: R, rules: EvaluationRules): R {
  const imposed = evaluationRisk(rules);
  const cap =
    imposed.maxPositionSize === undefined
      ? risk.maxPositionSize
      : Math.min(imposed.maxPositionSize, risk.maxPositionSize ?? Number.POSITIVE_INFINITY);
  return {
    ...risk,
    ...(cap === undefined ? {} : { maxPositionSize: cap }),
    ...(imposed.sessions === undefined ? {} : { sessions: imposed.sessions }),
  };
}
