import { describe, expect, it } from 'vitest';
import { CALENDAR, PRICE_PATHS } from '../../../src/market/contract-months.ts';
import { SimConfig, parseStartTime, simOptions } from '../../../src/cli/sim.ts';
import { OrderSide, OrderStatus, OrderType } from '../../../src/protocol/codes.ts';
import { createClock } from '../../../src/sim/clock.ts';
import { SimContracts } from '../../../src/sim/contracts.ts';
import { SessionStats } from '../../../src/sim/hubs/session-stats.ts';
import { openSimulator } from '../../../src/sim/index.ts';
import { FixedBars, RegriddedBars, type ContractMarket } from '../../../src/sim/market/market.ts';
import { PriceGrid } from '../../../src/engine/ticks.ts';
import type { UserRow } from '../../../src/sim/store.ts';

/** Tuesday 24 November 2026, 09:00 CT: the market is open. */
const OPEN_TUESDAY = Date.UTC(2026, 10, 24, 15);

describe('shared price paths', () => {
  it('gives a micro root and its mini the same last price at the same instant', () => {
    const sim = openSimulator({ clock: 'manual', startTime: OPEN_TUESDAY });
    try {
      for (const [micro, mini] of Object.entries(PRICE_PATHS)) {
        const microContract = CALENDAR.contract(micro, CALENDAR.frontMonth(micro, OPEN_TUESDAY));
        const miniContract = CALENDAR.contract(mini, CALENDAR.frontMonth(mini, OPEN_TUESDAY));
        for (const t of [OPEN_TUESDAY, OPEN_TUESDAY + 12_345, OPEN_TUESDAY - 3 * 3_600_000]) {
          const a = sim.engine.lastPrice(microContract.id, t);
          const b = sim.engine.lastPrice(miniContract.id, t);
          expect(a).toBeDefined();
          const microPrice = microContract.grid.toPrice(a as number);
          const miniPrice = miniContract.grid.toPrice(b as number);
          expect(Math.abs(microPrice - miniPrice)).toBeLessThanOrEqual(microContract.tickSize);
        }
      }
    } finally {
      sim.close();
    }
  });
});

describe('a shared path on another tick grid', () => {
  it('rounds the underlying prices to the root tick', () => {
    const bars = new FixedBars(60_000, {
      time: Float64Array.of(0),
      open: Float64Array.of(4001),
      high: Float64Array.of(4003),
      low: Float64Array.of(3999),
      close: Float64Array.of(4002),
      volume: Float64Array.of(10),
    });
    // 0.25 ticks read on a 0.5 grid: 1000.25 -> 1000.5 (round half up), 1000.75 -> 1001.
    const regridded = new RegriddedBars(bars, new PriceGrid(0.25, 12.5), new PriceGrid(0.5, 25));
    expect([regridded.open(0), regridded.high(0), regridded.low(0), regridded.close(0)]).toEqual([
      2001, 2002, 2000, 2001,
    ]);
    expect(regridded.volume(0)).toBe(10);
  });
});

describe('the market keeps the exchange hours', () => {
  /** Friday 13 November 2026, 15:59 CST: a minute before the weekend close (22:00 UTC). */
  const FRIDAY = Date.UTC(2026, 10, 13, 21, 59);
  const SATURDAY = Date.UTC(2026, 10, 14, 12);
  /** Sunday 15 November 2026, 17:00 CST: the reopen. */
  const REOPEN = Date.UTC(2026, 10, 15, 23);

  it('trades nothing over the weekend, refuses a place (5) and a modify (3) then, and fills a resting stop at the reopen', () => {
    const sim = openSimulator({ clock: 'manual', startTime: FRIDAY });
    try {
      const { engine } = sim;
      const user = engine.db.prepare('SELECT * FROM users WHERE user_name = ?').get(sim.demo.userName) as UserRow;
      const es = CALENDAR.contract('ES', CALENDAR.frontMonth('ES', FRIDAY));
      const market = engine.market(es.id) as ContractMarket;
      expect(engine.quote(es.id)).toBeDefined();
      // The rest of Friday's path, and the price the market reopens at.
      const friday = market.pointsBetween(FRIDAY, REOPEN - 1).map((p) => p.price);
      expect(market.pointsBetween(FRIDAY + 60_000, REOPEN - 1)).toEqual([]);
      const reopen = market.lastPrice(REOPEN) as number;
      const up = reopen > Math.max(...friday);
      const stop = up ? Math.max(...friday) + 1 : Math.min(...friday) - 1;
      expect(up ? reopen > stop : reopen < stop).toBe(true);
      const placed = engine.place(user, {
        accountId: sim.demo.accountId,
        contractId: es.id,
        type: OrderType.Stop,
        side: up ? OrderSide.Bid : OrderSide.Ask,
        size: 1,
        stopPrice: es.grid.toPrice(stop),
      });
      expect(placed).toMatchObject({ success: true });
      const orderId = (placed as { orderId: number }).orderId;

      engine.clock.advance(SATURDAY - engine.clock.now());
      engine.step(engine.clock.now());
      expect(engine.quote(es.id)).toBeUndefined();
      expect(market.isOpen(SATURDAY)).toBe(false);
      expect(
        engine.place(user, {
          accountId: sim.demo.accountId,
          contractId: es.id,
          type: OrderType.Market,
          side: OrderSide.Bid,
          size: 1,
        }),
      ).toMatchObject({ success: false, errorCode: 5 });
      expect(
        engine.modify(user, { accountId: sim.demo.accountId, orderId, stopPrice: es.grid.toPrice(stop) }),
      ).toMatchObject({ success: false, errorCode: 3 });
      const weekend = engine.retrieveBars({
        contractId: es.id,
        live: false,
        startTime: new Date(FRIDAY + 60_000).toISOString(),
        endTime: new Date(REOPEN - 1).toISOString(),
        unit: 2,
        unitNumber: 1,
        limit: 10_000,
        includePartialBar: true,
      }) as { bars: unknown[] };
      expect(weekend.bars).toEqual([]);
      const hours = engine.retrieveBars({
        contractId: es.id,
        live: false,
        startTime: new Date(FRIDAY - 3_600_000).toISOString(),
        endTime: new Date(SATURDAY).toISOString(),
        unit: 3,
        unitNumber: 1,
        limit: 10,
        includePartialBar: true,
      }) as { bars: { t: string }[] };
      expect(hours.bars.map((b) => b.t)).toEqual(['2026-11-13T21:00:00.000Z']);
      const open = () =>
        (
          engine.orderSearch(user, { accountId: sim.demo.accountId, startTimestamp: new Date(0).toISOString() }) as {
            orders: { id: number; status: number; filledPrice: number | null; updateTimestamp: string }[];
          }
        ).orders.find((o) => o.id === orderId);
      expect(open()).toMatchObject({ status: OrderStatus.Open });

      engine.clock.advance(REOPEN + 30_000 - engine.clock.now());
      engine.step(engine.clock.now());
      const filled = open();
      expect(filled).toMatchObject({ status: OrderStatus.Filled, updateTimestamp: new Date(REOPEN).toISOString() });
      // Through the gap: filled at the opening price (the touch around it), not at the stop.
      expect(Math.abs(es.grid.toTicks(filled?.filledPrice as number) - reopen)).toBeLessThanOrEqual(2);
      // The session's previous close is Friday's last price, not the walk beneath the weekend.
      const stats = new SessionStats(market).at(REOPEN, REOPEN + 30_000);
      expect(stats?.previousClose).toBe(friday.at(-1));
      expect(stats?.open).toBe(reopen);
    } finally {
      sim.close();
    }
  });
});

describe('expiry at final settlement', () => {
  it('expires an equity index month at 08:30 CT on its last day, settling its positions then', () => {
    // ESZ6's last trading day: Friday 18 December 2026; 08:30 CST is 14:30 UTC.
    const settlement = Date.UTC(2026, 11, 18, 14, 30);
    const sim = openSimulator({ clock: 'manual', startTime: settlement - 60 * 60_000 });
    try {
      const { engine } = sim;
      const user = engine.db.prepare('SELECT * FROM users WHERE user_name = ?').get(sim.demo.userName) as UserRow;
      const es = CALENDAR.byId('CON.F.US.EP.Z26')!;
      const contracts = new SimContracts(CALENDAR, engine.clock);
      expect(contracts.expiresAt(es)).toBe(settlement);
      expect(contracts.status(es, settlement - 1)).not.toBe('expired');
      expect(contracts.status(es, settlement)).toBe('expired');
      const buy = { accountId: sim.demo.accountId, contractId: es.id, type: OrderType.Market, side: OrderSide.Bid };
      expect(engine.place(user, { ...buy, size: 1 })).toMatchObject({ success: true });
      const positions = () =>
        (engine.positionSearchOpen(user, sim.demo.accountId) as { positions: { contractId: string }[] }).positions;
      expect(positions().map((p) => p.contractId)).toEqual([es.id]);
      engine.clock.advance(settlement + 60_000 - engine.clock.now());
      engine.step(engine.clock.now());
      expect(positions()).toEqual([]);
      expect(engine.place(user, { ...buy, size: 1 })).toMatchObject({ success: false, errorCode: 9 });
      const listed = (engine.contractAvailable() as { contracts: { id: string }[] }).contracts.map((c) => c.id);
      expect(listed).not.toContain(es.id);
      expect(listed).toContain('CON.F.US.EP.H27');
    } finally {
      sim.close();
    }
  });

  it('expires the other families at the close of their last trading day', () => {
    // GCZ6: last trade on the third-last business day of December 2026, Tuesday 29 December; 16:00 CST.
    const gc = CALENDAR.byId('CON.F.US.GCE.Z26')!;
    const contracts = new SimContracts(CALENDAR, createClock('manual', 0));
    expect(new Date(gc.expiry).toISOString().slice(0, 10)).toBe('2026-12-29');
    expect(contracts.expiresAt(gc)).toBe(Date.UTC(2026, 11, 29, 22));
  });
});

describe('the start time', () => {
  it('a simulator started on a Saturday (simulator config startTime) has the market closed and refuses a place with 5', () => {
    const config = SimConfig.parse({ startTime: '2026-11-14T12:00:00Z', dbPath: ':memory:' });
    const sim = openSimulator({ ...simOptions(config), clock: 'manual' });
    try {
      const { engine } = sim;
      expect(engine.clock.now()).toBe(Date.UTC(2026, 10, 14, 12));
      const user = engine.db.prepare('SELECT * FROM users WHERE user_name = ?').get(sim.demo.userName) as UserRow;
      const mes = CALENDAR.contract('MES', CALENDAR.frontMonth('MES', engine.clock.now()));
      expect(engine.quote(mes.id)).toBeUndefined();
      expect(
        engine.place(user, {
          accountId: sim.demo.accountId,
          contractId: mes.id,
          type: OrderType.Market,
          side: OrderSide.Bid,
          size: 1,
        }),
      ).toMatchObject({ success: false, errorCode: 5 });
    } finally {
      sim.close();
    }
  });

  it('--start takes an ISO instant with a zone', () => {
    expect(parseStartTime('2026-11-15T16:59:00-06:00', '--start')).toBe(Date.UTC(2026, 10, 15, 22, 59));
    expect(() => parseStartTime('2026-11-15 16:59', '--start')).toThrow(/--start must be an ISO 8601 instant/);
  });

  it('started at Sunday 16:58 CT on an accelerated clock, the market opens at 17:00 CT', async () => {
    const reopen = Date.UTC(2026, 10, 15, 23);
    const sim = openSimulator({
      clock: { speed: 600 },
      startTime: parseStartTime('2026-11-15T16:58:00-06:00', '--start'),
    });
    try {
      const { engine } = sim;
      const es = CALENDAR.contract('ES', CALENDAR.frontMonth('ES', reopen));
      expect(engine.clock.now()).toBeLessThan(reopen);
      expect(engine.quote(es.id)).toBeUndefined();
      while (engine.clock.now() < reopen + 1000) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(engine.quote(es.id)).toBeDefined();
      const market = engine.market(es.id) as ContractMarket;
      expect(market.isOpen(reopen - 1)).toBe(false);
      expect(market.isOpen(reopen)).toBe(true);
    } finally {
      sim.close();
    }
  });
});
