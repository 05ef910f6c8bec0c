/** Trades-export windows and the type 6 violation classifier. */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  GatewayError,
  Limits,
  RuleConfiguration,
  Violation,
  assertTradeExportRange,
  classifyRuleViolation,
  mergeById,
  tradeExportWindows,
} from '../../../src/adapters/gateway/index.ts';
import * as F from '../../integration/gateway/fixtures.ts';

const MAX = Limits.tradesExportRangeMs;

describe('trade export windows', () => {
  it('cover the range exactly with windows of at most 30 days (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 40 }), fc.integer({ min: 0, max: 10 * MAX }), (from, length) => {
        const windows = tradeExportWindows(from, from + length);
        expect(windows[0]?.fromMs).toBe(from);
        expect(windows.at(-1)?.toMs).toBe(from + length);
        for (let i = 0; i < windows.length; i++) {
          const w = windows[i]!;
          expect(w.toMs - w.fromMs).toBeLessThanOrEqual(MAX);
          expect(() => assertTradeExportRange(w.fromMs, w.toMs)).not.toThrow();
          if (i > 0) expect(w.fromMs).toBe(windows[i - 1]!.toMs);
        }
        expect(windows.length).toBe(Math.max(1, Math.ceil(length / MAX)));
      }),
    );
  });

  it('refuses over 30 days and a reversed range', () => {
    expect(() => assertTradeExportRange(0, MAX)).not.toThrow();
    expect(() => assertTradeExportRange(0, MAX + 1)).toThrow(
      expect.objectContaining({ code: 'RANGE_REFUSED', outcome: 'not-sent' }),
    );
    expect(() => assertTradeExportRange(10, 0)).toThrow(GatewayError);
  });

  it('merges keeping each id once, first seen first', () => {
    expect(mergeById([[{ id: 1 }, { id: 2 }], [{ id: 2 }, { id: 3 }], []]).map((r) => r.id)).toEqual([1, 2, 3]);
  });
});

describe('classifyRuleViolation', () => {
  const violation = Violation.parse(F.violation);
  const rule = (kind: 'daily' | 'maximum' | 'both', ruleId = 7) =>
    RuleConfiguration.parse(F.ruleConfiguration(kind, ruleId));

  it('a rule with one limit decides', () => {
    expect(classifyRuleViolation(violation, rule('daily'))).toBe('dailyLossLimit');
    expect(classifyRuleViolation(violation, rule('maximum'))).toBe('maximumLossLimit');
  });

  it('a rule with both limits is decided by the numbers when exactly one broke', () => {
    // Day P&L -1200 against a 1000 daily limit; balance 48800 above the 48000 minimum.
    expect(classifyRuleViolation(violation, rule('both'))).toBe('dailyLossLimit');
    const maxBreak = { ...violation, violationTotalDayPnl: -300, violationBalance: 47900 };
    expect(classifyRuleViolation(maxBreak, rule('both'))).toBe('maximumLossLimit');
    const bothBroke = { ...violation, violationBalance: 47900 };
    expect(classifyRuleViolation(bothBroke, rule('both'))).toBe('unknown');
  });

  it('another rule, or a violation that is not type 6, is unknown', () => {
    expect(classifyRuleViolation(violation, rule('daily', 8))).toBe('unknown');
    expect(classifyRuleViolation({ ...violation, type: 3, ruleId: null }, rule('daily'))).toBe('unknown');
    const neither = RuleConfiguration.parse({
      ...F.ruleConfiguration('daily'),
      configuration: { ...F.ruleConfiguration('daily').configuration, dailyLossLimit: null },
    });
    expect(classifyRuleViolation(violation, neither)).toBe('unknown');
  });
});
