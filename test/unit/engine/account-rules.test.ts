import { describe, expect, it } from 'vitest';
import { RuleBook, type Breach } from '../../../src/engine/account-rules.ts';

function evaluate(book: RuleBook, equity: number, best = equity, balance = equity): Breach[] {
  const out: Breach[] = [];
  book.evaluate(0, balance, equity, best, (b) => out.push(b));
  return out;
}

describe('rule floors', () => {
  it('daily loss limit: from the start-of-day balance, temporary, once a day', () => {
    const book = new RuleBook({ startingBalance: 50_000, dailyLossLimit: 1_000 });
    book.startDay('2026-11-16', 50_000);
    expect(book.dailyLossFloor()).toBe(49_000);
    expect(evaluate(book, 49_001)).toEqual([]);
    expect(evaluate(book, 49_000)).toMatchObject([
      { type: 6, rule: 'dailyLossLimit', duration: 2, level: 49_000, dayPnl: -1_000 },
    ]);
    expect(evaluate(book, 48_000)).toEqual([]);
    book.startDay('2026-11-17', 48_500);
    expect(book.dailyLossFloor()).toBe(47_500);
    expect(evaluate(book, 47_400)).toHaveLength(1);
    expect(book.closest.dailyLossLimit.headroom).toBe(-1_000); // the closest approach of the whole run (48000 on d1)
  });

  it('maximum loss limit, static: starting balance - limit, permanent', () => {
    const book = new RuleBook({ startingBalance: 50_000, maximumLossLimit: { amount: 2_000, variant: 'static' } });
    book.startDay('d1', 50_000);
    evaluate(book, 53_000);
    book.startDay('d2', 53_000);
    expect(book.maximumLossFloor()).toBe(48_000);
    expect(evaluate(book, 48_000)).toMatchObject([{ type: 6, rule: 'maximumLossLimit', duration: 1 }]);
    book.startDay('d3', 48_000);
    expect(evaluate(book, 47_000)).toEqual([]);
    expect(book.maximumLossBroken).toBe(true);
  });

  it('trailing the end-of-day high balance', () => {
    const book = new RuleBook({
      startingBalance: 50_000,
      maximumLossLimit: { amount: 2_000, variant: 'trailingEndOfDay' },
    });
    book.startDay('d1', 50_000);
    evaluate(book, 49_000, 55_000); // intraday peaks do not move it
    expect(book.maximumLossFloor()).toBe(48_000);
    book.startDay('d2', 51_500);
    expect(book.maximumLossFloor()).toBe(49_500);
    book.startDay('d3', 50_500); // a lower close does not lower it
    expect(book.maximumLossFloor()).toBe(49_500);
  });

  it('trailing the intraday high, unrealized included (best price of the bar counts first)', () => {
    const book = new RuleBook({
      startingBalance: 50_000,
      maximumLossLimit: { amount: 2_000, variant: 'trailingIntraday' },
    });
    book.startDay('d1', 50_000);
    expect(evaluate(book, 50_000, 51_000)).toEqual([]);
    expect(book.maximumLossFloor()).toBe(49_000);
    // one bar that ran up 2500 and down to 49000: conservative, the high counts before the low
    const fresh = new RuleBook({
      startingBalance: 50_000,
      maximumLossLimit: { amount: 2_000, variant: 'trailingIntraday' },
    });
    fresh.startDay('d1', 50_000);
    expect(evaluate(fresh, 49_000, 52_500)).toMatchObject([{ rule: 'maximumLossLimit' }]);
  });

  it('trailing until it locks at the starting balance', () => {
    const book = new RuleBook({
      startingBalance: 50_000,
      maximumLossLimit: { amount: 2_000, variant: 'trailingUntilLocked' },
    });
    book.startDay('d1', 50_000);
    book.startDay('d2', 51_000);
    expect(book.maximumLossFloor()).toBe(49_000);
    book.startDay('d3', 53_000);
    expect(book.maximumLossFloor()).toBe(50_000);
    book.startDay('d4', 56_000);
    expect(book.maximumLossFloor()).toBe(50_000);
  });

  it('personal daily loss limit (type 3) and profit target (type 5), duration 0', () => {
    const book = new RuleBook({ startingBalance: 50_000, personalDailyLossLimit: 300, personalDailyProfitTarget: 600 });
    book.startDay('d1', 50_000);
    expect(evaluate(book, 49_750, 50_100)).toEqual([]);
    expect(evaluate(book, 49_700, 50_100)).toMatchObject([{ type: 3, duration: 0, level: -300 }]);
    expect(evaluate(book, 49_900, 50_600)).toMatchObject([{ type: 5, duration: 0, level: 600 }]);
    expect(book.closest.personalDailyLossLimit.headroom).toBe(0);
  });

  it('rejects unknown keys in the account config', () => {
    expect(() => new RuleBook({ startingBalance: 1, dailyLoss: 5 } as never)).toThrow(/dailyLoss/);
  });
  it('lockAbove stops a trailing floor, end of day or intraday, at the starting balance plus it', () => {
    const intraday = new RuleBook({
      startingBalance: 50_000,
      maximumLossLimit: { amount: 2_000, variant: 'trailingIntraday', lockAbove: 100 },
    });
    intraday.startDay('d1', 50_000);
    evaluate(intraday, 51_000, 51_000);
    expect(intraday.maximumLossFloor()).toBe(49_000);
    evaluate(intraday, 53_000, 53_000);
    expect(intraday.maximumLossFloor()).toBe(50_100);
    const endOfDay = new RuleBook({
      startingBalance: 50_000,
      maximumLossLimit: { amount: 2_000, variant: 'trailingEndOfDay', lockAbove: 0 },
    });
    endOfDay.startDay('d1', 50_000);
    endOfDay.startDay('d2', 53_000);
    expect(endOfDay.maximumLossFloor()).toBe(50_000);
    const untilLocked = new RuleBook({
      startingBalance: 50_000,
      maximumLossLimit: { amount: 2_000, variant: 'trailingUntilLocked', lockAbove: 250 },
    });
    untilLocked.startDay('d1', 50_000);
    untilLocked.startDay('d2', 53_000);
    expect(untilLocked.maximumLossFloor()).toBe(50_250);
    expect(
      () =>
        new RuleBook({ startingBalance: 50_000, maximumLossLimit: { amount: 2_000, variant: 'static', lockAbove: 0 } }),
    ).toThrow(/lockAbove/);
  });

  it('couldBreach answers without moving anything; reset starts a new account', () => {
    const book = new RuleBook({
      startingBalance: 50_000,
      dailyLossLimit: 1_000,
      maximumLossLimit: { amount: 2_000, variant: 'trailingIntraday' },
    });
    book.startDay('d1', 50_000);
    expect(book.couldBreach(49_100, 50_500)).toBe(false);
    // A high of 51,200 would lift the floor to 49,200.
    expect(book.couldBreach(49_100, 51_200)).toBe(true);
    expect(book.maximumLossFloor()).toBe(48_000);
    expect(book.couldBreach(48_999, 50_000)).toBe(true);
    expect(evaluate(book, 47_000)).toHaveLength(2);
    expect(book.couldBreach(40_000, 50_000)).toBe(false);
    book.reset();
    expect(book.maximumLossBroken).toBe(false);
    expect(book.closest.maximumLossLimit.headroom).toBe(Infinity);
    book.startDay('d1', 50_000);
    expect(evaluate(book, 47_000)).toHaveLength(2);
  });
});
