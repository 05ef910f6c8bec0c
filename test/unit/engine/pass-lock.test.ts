/**
 * The pass-lock's judgement, as the engine makes it at every fill and bar: the evaluation's own test of
 * passing (`passConditionsMet`, which the replay uses too) on the lower of the realized balance and the
 * equity, with today counted as a day.
 */
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../../src/engine/log.ts';
import { Multicast } from '../../../src/engine/multicast.ts';
import { evaluationPassLock, PassLock, type PassLockEvent } from '../../../src/engine/pass-lock.ts';

function lock(rules: Parameters<typeof evaluationPassLock>[0], mode: 'flatten' | 'hold' = 'flatten') {
  const events: PassLockEvent[] = [];
  const events$ = new Multicast<PassLockEvent>();
  events$.asObservable().subscribe((e) => events.push(e));
  return { lock: new PassLock(evaluationPassLock(rules, mode)!, 50_000, events$, silentLogger), events };
}

describe('the pass-lock', () => {
  it('is off for `off`, and carries the conditions of the rules otherwise', () => {
    expect(evaluationPassLock({ profitTarget: 3_000 }, 'off')).toBeUndefined();
    expect(evaluationPassLock({ name: 'X', profitTarget: 3_000, minimumTradingDays: 5 }, 'hold')).toEqual({
      mode: 'hold',
      name: 'X',
      profitTarget: 3_000,
      minimumTradingDays: 5,
    });
  });

  it('counts today as a trading day once it has a fill, and engages once, when all conditions are met', () => {
    const { lock: l, events } = lock({ name: 'X', profitTarget: 1_000, minimumTradingDays: 2 });
    l.startDay('2025-01-06', 50_000);
    l.noteFill();
    expect(l.check(1, 51_500, 51_500)).toBeUndefined(); // the target, but one day
    l.startDay('2025-01-07', 51_500);
    expect(l.check(2, 51_500, 51_500)).toBeUndefined(); // no fill yet today
    l.noteFill();
    expect(l.check(3, 51_500, 51_500)).toMatchObject({
      tradingDay: '2025-01-07',
      tradingDays: 2,
      profit: 1_500,
      bestDay: 1_500,
    });
    expect(l.check(4, 52_000, 52_000)).toBeUndefined();
    expect(events).toHaveLength(1);
    expect(l.engaged?.message).toBe(
      'the evaluation "X" met its pass conditions (profit 1500.00 of 1000.00, 2 trading days): no new risk (evaluation.passLock: flatten, positions closed)',
    );
  });

  it('judges the lower of the balance and the equity: an open loser holds it back, an open gain does not push it', () => {
    const { lock: l } = lock({ profitTarget: 1_000 });
    l.startDay('2025-01-06', 50_000);
    l.noteFill();
    expect(l.check(1, 51_200, 50_900)).toBeUndefined();
    expect(l.due(51_200)).toBe(true); // each bar looks again while the realized profit is there
    expect(l.check(2, 50_800, 51_600)).toBeUndefined();
    expect(l.check(3, 51_200, 51_100)).toMatchObject({ profit: 1_100 });
    expect(l.due(60_000)).toBe(false);
  });

  it('consistency: the best day must stay below its share of the profit, today included', () => {
    const { lock: l } = lock({ profitTarget: 1_000, consistency: { bestDayShare: 0.5 } });
    l.startDay('2025-01-06', 50_000);
    l.noteFill();
    expect(l.check(1, 50_900, 50_900)).toBeUndefined();
    l.startDay('2025-01-07', 50_900);
    l.noteFill();
    // 1,300 in all, but 900 of it on the first day.
    expect(l.check(2, 51_300, 51_300)).toBeUndefined();
    l.startDay('2025-01-08', 51_300);
    l.noteFill();
    // 1,900 in all: the best day (900) is below half.
    expect(l.check(3, 51_900, 51_900)).toMatchObject({ tradingDays: 3, bestDay: 900 });
  });
});
