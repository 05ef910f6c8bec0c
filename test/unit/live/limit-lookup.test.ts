import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { RuleBook } from '../../../src/engine/account-rules.ts';
import {
  limitDisagreements,
  gatewayLimits,
  resolveLimits,
  restoreFromGateway,
  type GatewayLimits,
} from '../../../src/adapters/live/limits.ts';
import type * as S from '../../../src/protocol/schemas.ts';

function record(fields: Partial<S.TradingAccount>): S.TradingAccount {
  return {
    accountName: 'A',
    userId: 1,
    startingBalance: 50_000,
    balance: 50_000,
    status: 0,
    marketDataLevel: 1,
    accountId: 1,
    winRate: 0,
    profitAndLoss: 0,
    startDate: '2025-01-01T00:00:00Z',
    closedDate: '2099-12-31T00:00:00Z',
    dailyLoss: 0,
    maximumLoss: 0,
    drawDownLimit: 0,
    maxPositions: 1,
    type: 0,
    startOfDayBalance: 50_000,
    combineName: '50K',
    platformId: 1,
    platformAccountId: '1',
    maxMargin: 50_000,
    realizedDayPnl: 0,
    updatedAt: '2025-01-01T00:00:00Z',
    personalDailyLossLimit: 0,
    personalDailyLossLimitAction: 0,
    personalDailyProfitTarget: 0,
    personalDailyProfitTargetAction: 0,
    totalProfit: 0,
    totalLoss: 0,
    totalTrades: 0,
    dailyTrades: 0,
    isFollower: false,
    isLeader: false,
    openPnl: 0,
    ...fields,
  } as S.TradingAccount;
}

describe('gatewayLimits', () => {
  it('reads 0 as "no limit" and keeps the floor only with a maximum loss limit', () => {
    expect(gatewayLimits(record({ startOfDayBalance: 49_800 }))).toEqual({ startOfDayBalance: 49_800 });
    expect(
      gatewayLimits(
        record({
          dailyLoss: 1_000,
          maximumLoss: 2_000,
          drawDownLimit: 48_300,
          personalDailyLossLimit: -400,
          personalDailyProfitTarget: 700,
        }),
      ),
    ).toEqual({
      dailyLossLimit: 1_000,
      maximumLossLimit: 2_000,
      maximumLossFloor: 48_300,
      personalDailyLossLimit: 400,
      personalDailyProfitTarget: 700,
      startOfDayBalance: 50_000,
    });
  });
});

describe('resolveLimits', () => {
  const gateway: GatewayLimits = {
    dailyLossLimit: 1_000,
    maximumLossLimit: 2_000,
    maximumLossFloor: 48_000,
    personalDailyLossLimit: 400,
    startOfDayBalance: 50_000,
  };

  it('takes the gateway limits where the config has none', () => {
    const r = resolveLimits({}, gateway);
    expect(r.account).toEqual({
      dailyLossLimit: 1_000,
      maximumLossLimit: { amount: 2_000, variant: 'trailingEndOfDay' },
      personalDailyLossLimit: 400,
    });
    expect(r.sources).toEqual({
      dailyLossLimit: 'gateway',
      maximumLossLimit: 'gateway',
      personalDailyLossLimit: 'gateway',
    });
  });

  it('keeps the config where it speaks; the guard built from it lists each disagreement', () => {
    const r = resolveLimits(
      {
        startingBalance: 50_000,
        dailyLossLimit: 900,
        maximumLossLimit: { amount: 2_000, variant: 'static' },
        personalDailyProfitTarget: 500,
      },
      gateway,
    );
    expect(r.account).toEqual({
      dailyLossLimit: 900,
      maximumLossLimit: { amount: 2_000, variant: 'static' },
      personalDailyLossLimit: 400,
      personalDailyProfitTarget: 500,
    });
    expect(r.sources).toMatchObject({
      dailyLossLimit: 'config',
      maximumLossLimit: 'config',
      personalDailyLossLimit: 'gateway',
      personalDailyProfitTarget: 'config',
    });
    const rules = new RuleBook({ ...r.account, startingBalance: 50_000 });
    expect(limitDisagreements(rules, gateway)).toEqual([{ limit: 'dailyLossLimit', config: 900, gateway: 1_000 }]);
    // A limit the gateway has and the guard does not check (set at the gateway during a run) is one too.
    expect(
      limitDisagreements(new RuleBook({ startingBalance: 50_000 }), gateway).map((d) => [d.limit, d.config]),
    ).toEqual([
      ['dailyLossLimit', null],
      ['personalDailyLossLimit', null],
      ['maximumLossLimit', null],
    ]);
  });

  it('without a gateway, the config is all there is', () => {
    expect(resolveLimits({ dailyLossLimit: 900 }, undefined)).toEqual({
      account: { dailyLossLimit: 900 },
      sources: { dailyLossLimit: 'config' },
    });
  });
});

describe('restoreFromGateway', () => {
  it("puts every trailing variant's floor at the gateway floor, whatever the high-water mark", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 40_000, max: 60_000 }),
        fc.integer({ min: 0, max: 5_000 }),
        fc.constantFrom('trailingEndOfDay' as const, 'trailingIntraday' as const),
        (start, up, variant) => {
          const floor = start - 2_000 + up;
          const gateway: GatewayLimits = {
            dailyLossLimit: 1_000,
            maximumLossLimit: 2_000,
            maximumLossFloor: floor,
            startOfDayBalance: start + up,
          };
          const rules = new RuleBook({
            startingBalance: start,
            dailyLossLimit: 1_000,
            maximumLossLimit: { amount: 2_000, variant },
          });
          rules.startDay('2025-01-06', start);
          rules.restore(restoreFromGateway(gateway, variant));
          expect(rules.maximumLossFloor()).toBe(floor);
          expect(rules.dailyLossFloor()).toBe(start + up - 1_000);
          expect(limitDisagreements(rules, gateway)).toEqual([]);
        },
      ),
    );
  });

  it('cannot move a static floor: the difference is reported', () => {
    const gateway: GatewayLimits = { maximumLossLimit: 2_000, maximumLossFloor: 48_000, startOfDayBalance: 49_000 };
    const rules = new RuleBook({ startingBalance: 49_000, maximumLossLimit: { amount: 2_000, variant: 'static' } });
    rules.restore(restoreFromGateway(gateway, 'static'));
    expect(limitDisagreements(rules, gateway)).toEqual([
      { limit: 'maximumLossFloor', config: 47_000, gateway: 48_000 },
    ]);
  });
});
