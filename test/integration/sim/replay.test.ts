/** A simulator replaying ../shared/data/es-minute-lean.csv for ES: its bars come back as written, and trading follows them. */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TradingClient } from '../../../src/adapters/gateway/trading.ts';
import { OrderSide, OrderStatus, OrderType } from '../../../src/protocol/codes.ts';
import type { SimHandle } from '../../../src/sim/index.ts';
import { ISO, accountIds, frontMonth, startTestSimulator, tradingClient } from './sim-harness.ts';

const FILE = path.resolve(import.meta.dirname, '../../../../shared/data/es-minute-lean.csv');
const NOW = Date.parse('2013-10-08T15:00:00Z');
/** The file stands for every ES month; December 2013 is the front one then. */
const ES = frontMonth('ES', NOW);

describe('simulator replaying a bar file', () => {
  let sim: SimHandle;
  let client: TradingClient;
  let main: number;
  const rows = new Map<number, number[]>();

  beforeAll(async () => {
    for (const line of readFileSync(FILE, 'utf8').split('\n').slice(1)) {
      const [t, ...values] = line.split(',');
      if (t) rows.set(Date.parse(t), values.slice(0, 5).map(Number));
    }
    sim = await startTestSimulator({ market: { source: 'csv', path: FILE }, startTime: NOW });
    client = tradingClient(sim);
    main = (await accountIds(client))['T-MAIN']!;
  });
  afterAll(async () => {
    await client.close();
    await sim.close();
  });

  it('serves the file minute bars unchanged, newest first', async () => {
    const from = Date.parse('2013-10-08T14:00:00Z');
    const bars = await client.retrieveBars({
      contractId: ES,
      live: false,
      startTime: ISO(from),
      endTime: ISO(from + 9 * 60_000),
      unit: 2,
      unitNumber: 1,
      limit: 100,
      includePartialBar: false,
    });
    expect(bars).toHaveLength(10);
    for (const bar of bars) {
      const [o, h, l, c, v] = rows.get(Date.parse(bar.t))!;
      expect(bar).toMatchObject({ o, h, l, c, v });
    }
    expect(Date.parse(bars[0]!.t)).toBeGreaterThan(Date.parse(bars[9]!.t));
  });

  it('fills a market order at the ask around the replayed price (one tick of spread by default)', async () => {
    const [open] = rows.get(NOW)!;
    const quote = sim.quote(ES)!;
    expect(quote.last).toBe(open);
    expect(quote.ask - quote.bid).toBe(0.25);
    expect([quote.bid, quote.ask]).toContain(open);
    const id = await client.placeOrder({
      accountId: main,
      contractId: ES,
      type: OrderType.Market,
      side: OrderSide.Bid,
      size: 1,
    });
    const [order] = (await client.searchOrders({ accountId: main, startTimestamp: ISO(NOW - 1000) })).filter(
      (o) => o.id === id,
    );
    expect(order).toMatchObject({ status: OrderStatus.Filled, filledPrice: quote.ask });
    await client.closePosition({ accountId: main, contractId: ES });
  });

  it('refuses orders while the replayed file has no bar (OutsideTradingHours, 5), for the micro root too, and keeps other contracts synthetic', async () => {
    const gap = Date.parse('2013-10-20T12:00:00Z');
    sim.clock.advance(gap - sim.clock.now());
    await expect(
      client.placeOrder({ accountId: main, contractId: ES, type: OrderType.Market, side: OrderSide.Bid, size: 1 }),
    ).rejects.toMatchObject({ errorCode: 5 });
    // MES trades ES's price path: the replayed file, so its gap too.
    const mes = frontMonth('MES', gap);
    await expect(
      client.placeOrder({ accountId: main, contractId: mes, type: OrderType.Market, side: OrderSide.Bid, size: 1 }),
    ).rejects.toMatchObject({ errorCode: 5 });
    // A synthetic market keeps the exchange's hours: NQ is closed on this Sunday too, and trades on Monday.
    const nq = frontMonth('NQ', gap);
    await expect(
      client.placeOrder({ accountId: main, contractId: nq, type: OrderType.Market, side: OrderSide.Bid, size: 1 }),
    ).rejects.toMatchObject({ errorCode: 5 });
    sim.clock.advance(Date.parse('2013-10-21T14:00:00Z') - sim.clock.now());
    await client.placeOrder({ accountId: main, contractId: nq, type: OrderType.Market, side: OrderSide.Bid, size: 1 });
    expect(await client.searchOpenPositions(main)).toEqual([expect.objectContaining({ contractId: nq, size: 1 })]);
  });
});
