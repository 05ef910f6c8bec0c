import { describe, expect, it } from 'vitest';
import { renderStatus } from '../../../src/adapters/live/status.ts';

describe('status line', () => {
  it('shows position, PnL today and the room left to each configured limit', () => {
    const line = renderStatus({
      mode: 'paper',
      account: 'DEMO-50K-1',
      state: 'ACTIVE',
      visible: true,
      positions: [{ contractId: 'CON.F.US.EP.Z25', size: -2, averagePrice: 6700.25 }],
      dayPnl: -250,
      balance: 49_800,
      equity: 49_750,
      dailyLossFloor: 49_000,
      maximumLossFloor: 48_000,
      personalDailyLossLimit: 500,
      personalDailyProfitTarget: 1_000,
      bars: 12,
    });
    expect(line).toBe(
      'PAPER DEMO-50K-1 | ACTIVE | visible | CON.F.US.EP.Z25 -2 @ 6700.25 | PnL today -$250.00 | DLL room $750.00 | MLL room $1750.00 | personal loss room $250.00 | to target $1250.00 | bars 12',
    );
  });

  it('says BLIND and flat, and leaves out limits that are not configured', () => {
    const line = renderStatus({
      mode: 'live',
      account: 'X',
      state: 'REDUCING',
      visible: false,
      positions: [],
      dayPnl: 0,
      balance: 1,
      equity: 1,
      dailyLossFloor: -Infinity,
      maximumLossFloor: -Infinity,
      personalDailyLossLimit: undefined,
      personalDailyProfitTarget: undefined,
      bars: 0,
    });
    expect(line).toBe('LIVE X | REDUCING | BLIND | flat | PnL today $0.00 | bars 0');
  });
});
