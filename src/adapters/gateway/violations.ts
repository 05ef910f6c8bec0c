/**
 * A type 6 violation is a rule break that covers both the Daily Loss Limit and the Maximum Loss Limit
 * (spec 2.10); which one broke is read from the rule configuration of its `ruleId` (spec 2.11).
 */
import { ViolationType } from '../../protocol/codes.ts';
import type { RuleConfiguration, Violation } from '../../protocol/schemas.ts';
import { GatewayError } from './gateway-errors.ts';

export type RuleBreakKind = 'dailyLossLimit' | 'maximumLossLimit' | 'unknown';
export type ViolationKind = 'personalDailyLossLimit' | 'personalDailyProfitTarget' | RuleBreakKind;

/**
 * Which limit a type 6 violation broke. A rule configuring exactly one of the two limits decides it;
 * a rule configuring both is decided by the violation's numbers (the day's P&L at or below minus the
 * daily limit, or the balance at or below the minimum balance) when exactly one of them holds.
 */
export function classifyRuleViolation(violation: Violation, rule: RuleConfiguration): RuleBreakKind {
  if (violation.type !== ViolationType.RuleBreak) return 'unknown';
  if (violation.ruleId === null || violation.ruleId !== rule.ruleId) return 'unknown';
  const { dailyLossLimit, maximumLossLimit } = rule.configuration;
  if (dailyLossLimit && !maximumLossLimit) return 'dailyLossLimit';
  if (maximumLossLimit && !dailyLossLimit) return 'maximumLossLimit';
  if (!dailyLossLimit || !maximumLossLimit) return 'unknown';
  const dailyBroken = violation.violationTotalDayPnl <= -Math.abs(violation.dailyLossLimit);
  const maximumBroken = violation.violationBalance <= violation.minimumBalance;
  if (dailyBroken && !maximumBroken) return 'dailyLossLimit';
  if (maximumBroken && !dailyBroken) return 'maximumLossLimit';
  return 'unknown';
}

/** The administration calls the classifier needs (AdminClient has them). */
export interface RuleSource {
  listTemplates(): Promise<ReadonlyArray<{ id: number }>>;
  ruleConfiguration(accountTemplateId: number, ruleId: number): Promise<RuleConfiguration>;
}

/**
 * What a violation was. A violation does not name its account template, which the rule endpoint needs:
 * pass `accountTemplateId` when known; otherwise each template is asked for the rule in turn and the
 * first that has it (HTTP 404 means "not this template") is used.
 */
export async function violationKind(
  violation: Violation,
  admin: RuleSource,
  options: { accountTemplateId?: number } = {},
): Promise<ViolationKind> {
  if (violation.type === ViolationType.PersonalDailyLossLimit) return 'personalDailyLossLimit';
  if (violation.type === ViolationType.PersonalDailyProfitTarget) return 'personalDailyProfitTarget';
  if (violation.type !== ViolationType.RuleBreak || violation.ruleId === null) return 'unknown';
  const ruleId = violation.ruleId;
  if (options.accountTemplateId !== undefined) {
    return classifyRuleViolation(violation, await admin.ruleConfiguration(options.accountTemplateId, ruleId));
  }
  for (const template of await admin.listTemplates()) {
    try {
      const rule = await admin.ruleConfiguration(template.id, ruleId);
      if (rule.ruleId === ruleId) return classifyRuleViolation(violation, rule);
    } catch (error) {
      if (error instanceof GatewayError && error.code === 'HTTP_STATUS' && error.httpStatus === 404) continue;
      throw error;
    }
  }
  return 'unknown';
}
