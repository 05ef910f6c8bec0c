import { OrderSide, OrderType, TradingClient } from 'tickline/gateway';
import { startSimulator } from 'tickline/sim';

// The local gateway simulator on a free loopback port, in memory, with a demo user and account. It keeps
// the exchange's hours (no trading on a weekend or in the daily break: docs/sim.md); this example's market
// never closes, so it trades at whatever hour it is run.
const sim = await startSimulator({ marketHours: 'always' });
const client = new TradingClient({ baseUrl: sim.tradingUrl, userName: sim.demo.userName, apiKey: sim.demo.apiKey });
try {
  const accounts = await client.searchAccounts(true); // logs in on first use
  const [es] = await client.searchContracts({ searchText: 'ES', live: false });
  const orderId = await client.placeOrder({
    accountId: sim.demo.accountId,
    contractId: es!.id,
    type: OrderType.Market,
    side: OrderSide.Bid,
    size: 1,
    customTag: 'api-example-1',
  });
  const positions = await client.searchOpenPositions(sim.demo.accountId);
  console.log(
    accounts.map((a) => a.name),
    es!.id,
    orderId,
    positions,
  );
  await client.closePosition({ accountId: sim.demo.accountId, contractId: es!.id });
} finally {
  await client.close();
  await sim.close();
}
