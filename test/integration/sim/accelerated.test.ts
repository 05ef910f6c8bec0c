/** An accelerated clock moves the market and matches orders (polled with a deadline, no timed sleeps). */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { TradingClient } from '../../../src/adapters/gateway/trading.ts';
import { OrderSide, OrderStatus, OrderType } from '../../../src/protocol/codes.ts';
import type { SimHandle } from '../../../src/sim/index.ts';
import { ES, ISO, START, accountIds, startTestSimulator, tradingClient } from './sim-harness.ts';

let sim: SimHandle;
let client: TradingClient;
beforeAll(async () => {
  // One simulated hour per real second, stepping every 20 ms.
  sim = await startTestSimulator({ clock: { speed: 3600 }, tickMs: 20 });
  client = tradingClient(sim);
});
afterAll(async () => {
  await client.close();
  await sim.close();
});

async function pollUntil(done: () => Promise<boolean>, deadlineMs = 15_000): Promise<void> {
  const end = Date.now() + deadlineMs;
  while (!(await done())) {
    if (Date.now() > end) throw new Error('deadline passed');
    await new Promise((resolve) => setImmediate(resolve));
  }
}

it('fills a resting order as the accelerated market clock moves on its own', async () => {
  const main = (await accountIds(client))['T-MAIN']!;
  const now = sim.clock.now();
  expect(now).toBeGreaterThanOrEqual(START);
  const [bar] = await client.retrieveBars({
    contractId: ES,
    live: false,
    startTime: ISO(now - 5000),
    endTime: ISO(now),
    unit: 1,
    unitNumber: 1,
    limit: 1,
    includePartialBar: true,
  });
  // A limit on each side, a point away: the market fills one whichever way it goes (a single buy limit
  // can wait longer than the deadline when the test starts where the synthetic market trends up).
  const buy = await client.placeOrder({
    accountId: main,
    contractId: ES,
    type: OrderType.Limit,
    side: OrderSide.Bid,
    size: 1,
    limitPrice: bar!.c - 1,
  });
  const sell = await client.placeOrder({
    accountId: main,
    contractId: ES,
    type: OrderType.Limit,
    side: OrderSide.Ask,
    size: 1,
    limitPrice: bar!.c + 1,
  });
  await pollUntil(async () => (await client.searchOpenOrders(main)).length < 2);
  const orders = (await client.searchOrders({ accountId: main, startTimestamp: ISO(START) })).filter(
    (o) => o.id === buy || o.id === sell,
  );
  const filled = orders.filter((o) => o.status === OrderStatus.Filled);
  expect(filled.length).toBeGreaterThanOrEqual(1);
  for (const order of filled) {
    if (order.id === buy) expect(order.filledPrice!).toBeLessThanOrEqual(bar!.c - 1);
    else expect(order.filledPrice!).toBeGreaterThanOrEqual(bar!.c + 1);
  }
  expect(sim.clock.now()).toBeGreaterThan(now);
});
