/**
 * The simulator's trading day is the engine's exchange day (17:00 America/Chicago, daylight saving
 * included): 23:00 UTC in winter, 22:00 UTC in summer. In January the day has not turned at 22:30 UTC
 * (the daily break, no fills then); in July a fill at 22:30 UTC (17:30 CDT) belongs to the next date's day, in the daily statistics and in the day's realized P&L.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AdminClient } from '../../../src/adapters/gateway/admin-client.ts';
import type { TradingClient } from '../../../src/adapters/gateway/trading.ts';
import { OrderSide, OrderType } from '../../../src/protocol/codes.ts';
import type { SimHandle } from '../../../src/sim/index.ts';
import { frontMonth, openSession, type Session } from './sim-harness.ts';

const ROUND_TRIP_FEES = 2.8; // 1 ES, 1.40 a side

describe('simulator trading day across daylight saving time', () => {
  let sim: SimHandle;
  let client: TradingClient;
  let admin: AdminClient;
  let accountId: number;
  let session: Session;

  beforeAll(async () => {
    session = await openSession({ startTime: Date.UTC(2026, 0, 14, 21, 0) });
    ({ sim, client, admin } = session);
    accountId = session.ids['T-STATS']!;
  });
  afterAll(() => session.close());

  const moveTo = (t: number) => sim.clock.advance(t - sim.clock.now());
  async function roundTrip() {
    // ES's front month on the day: March 2026 in January, September in July.
    const contractId = frontMonth('ES', sim.clock.now());
    await client.placeOrder({ accountId, contractId, type: OrderType.Market, side: OrderSide.Bid, size: 1 });
    await client.placeOrder({ accountId, contractId, type: OrderType.Market, side: OrderSide.Ask, size: 1 });
    const trades = await client.searchTrades({ accountId, startTimestamp: new Date(sim.clock.now()).toISOString() });
    return trades.reduce((sum, t) => sum + (t.profitAndLoss ?? 0), 0) - ROUND_TRIP_FEES;
  }
  const realizedDayPnl = async () => (await admin.findTradingAccount('T-STATS')).realizedDayPnl;
  const round = (x: number) => Math.round(x * 100) / 100;

  it('in January (CST) the day does not reset at 22:00 UTC but at 23:00 UTC', async () => {
    // 22:00-23:00 UTC is the daily break in winter (16:00-17:00 CST): the market trades up to 22:00 UTC.
    moveTo(Date.UTC(2026, 0, 14, 21, 30));
    const early = await roundTrip();
    moveTo(Date.UTC(2026, 0, 14, 21, 59));
    const late = await roundTrip();
    moveTo(Date.UTC(2026, 0, 14, 22, 30));
    // 22:00 UTC is no boundary in winter: both fills are still in the day of 14 January at 22:30 UTC.
    expect(await realizedDayPnl()).toBeCloseTo(round(early + late), 2);
    moveTo(Date.UTC(2026, 0, 14, 23, 0, 1));
    expect(await realizedDayPnl()).toBe(0);
    const days = await admin.dailyStatistics({ tradingAccountId: accountId });
    expect(days.map((d) => [d.tradeDay, d.totalTrades])).toEqual([['2026-01-14T00:00:00.000Z', 2]]);
  });

  it('in July (CDT) a 22:30 UTC fill is on the next date, and the day resets at 22:00 UTC', async () => {
    // 21:00-22:00 UTC is the daily break in summer (16:00-17:00 CDT).
    moveTo(Date.UTC(2026, 6, 15, 20, 30));
    const early = await roundTrip();
    expect(await realizedDayPnl()).toBeCloseTo(early, 2);
    moveTo(Date.UTC(2026, 6, 15, 22, 0, 1));
    expect(await realizedDayPnl()).toBe(0);
    moveTo(Date.UTC(2026, 6, 15, 22, 30));
    const late = await roundTrip();
    expect(await realizedDayPnl()).toBeCloseTo(late, 2);
    const july = await admin.dailyStatistics({ tradingAccountId: accountId, startTradeDay: '2026-07-01T00:00:00Z' });
    expect(july.map((d) => [d.tradeDay, d.totalTrades])).toEqual([
      ['2026-07-15T00:00:00.000Z', 1],
      ['2026-07-16T00:00:00.000Z', 1],
    ]);
    const exported = await admin.exportTrades({
      from: new Date(Date.UTC(2026, 6, 15)),
      to: new Date(Date.UTC(2026, 6, 16)),
    });
    expect(exported.filter((t) => t.tradingAccountId === accountId).map((t) => t.tradeDay)).toEqual([
      '2026-07-15T00:00:00.000Z',
      '2026-07-15T00:00:00.000Z',
      '2026-07-16T00:00:00.000Z',
      '2026-07-16T00:00:00.000Z',
    ]);
  });
});
