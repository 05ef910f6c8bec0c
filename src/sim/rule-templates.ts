/**
 * The simulator's rule floors are the engine's (`RuleBook` in src/engine/account-rules.ts), so the simulator, the
 * backtest and the risk guard agree on every maximum loss limit variant. This module maps a template's rule
 * configuration (spec 2.11, whose source fields the spec leaves without meanings) onto the engine's
 * account configuration:
 *
 * | maximumSource | minimumSource | engine variant |
 * |---|---|---|
 * | 0 starting balance | null | static |
 * | 1 highest end-of-day balance | null | trailingEndOfDay |
 * | 1 highest end-of-day balance | 0 starting balance | trailingUntilLocked |
 * | 2 highest intraday equity | null | trailingIntraday |
 */
import { RuleBook, type MllVariant } from '../engine/account-rules.ts';
import type { RuleRow } from './store.ts';
import { TicklineError } from '../engine/errors.ts';

/** What the maximum loss limit trails: the floor is this balance minus the limit. */
export const MaximumSource = { StartingBalance: 0, HighestEndOfDayBalance: 1, HighestIntradayEquity: 2 } as const;
export type MaximumSource = (typeof MaximumSource)[keyof typeof MaximumSource];
/** Where a trailing floor stops rising: only at the starting balance (null: it never stops). */
export const MinimumSource = { StartingBalance: 0 } as const;
export type MinimumSource = (typeof MinimumSource)[keyof typeof MinimumSource];

export class SimRuleError extends TicklineError {
  override readonly name = 'SimRuleError';
  readonly kind = 'config';
  readonly code = 'SIM_RULE_INVALID';
}

/** The engine's maximum loss limit variant of a rule configuration; a combination it has no variant for is an error. */
export function mllVariant(maximumSource: number, minimumSource: number | null): MllVariant {
  if (minimumSource !== null && minimumSource !== MinimumSource.StartingBalance) {
    throw new SimRuleError(`maximumLossLimit.minimumSource must be null or 0 (starting balance), got ${minimumSource}`);
  }
  switch (maximumSource) {
    case MaximumSource.HighestEndOfDayBalance:
      return minimumSource === null ? 'trailingEndOfDay' : 'trailingUntilLocked';
    case MaximumSource.StartingBalance:
    case MaximumSource.HighestIntradayEquity:
      if (minimumSource !== null) {
        throw new SimRuleError(
          `maximumLossLimit.minimumSource 0 (lock at the starting balance) needs maximumSource 1 (end-of-day balance), got maximumSource ${maximumSource}`,
        );
      }
      return maximumSource === MaximumSource.StartingBalance ? 'static' : 'trailingIntraday';
    default:
      throw new SimRuleError(`maximumLossLimit.maximumSource must be 0, 1 or 2, got ${maximumSource}`);
  }
}

/** The engine's rule book for an account of a template with these rules (personal limits stay the simulator's). */
export function accountRuleBook(startingBalance: number, rules: readonly RuleRow[]): RuleBook {
  const daily = rules.find((r) => r.kind === 'dailyLossLimit');
  const maximum = rules.find((r) => r.kind === 'maximumLossLimit');
  return new RuleBook({
    startingBalance,
    ...(daily ? { dailyLossLimit: daily.amount } : {}),
    ...(maximum
      ? {
          maximumLossLimit: {
            amount: maximum.amount,
            variant: mllVariant(maximum.maximum_source, maximum.minimum_source),
          },
        }
      : {}),
  });
}
