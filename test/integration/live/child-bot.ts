/**
 * A bot process for the kill -9 test: journals and sends one market order, then idles until killed.
 * Its clock is the simulator's (passed in, the simulator's manual clock does not move during the test).
 */
import { TradingClient } from '../../../src/adapters/gateway/trading.ts';
import { LiveExecutor } from '../../../src/adapters/live/executor.ts';
import { Journal } from '../../../src/adapters/live/journal.ts';
import { silentLogger } from '../../../src/engine/log.ts';
import { PriceGrid } from '../../../src/engine/ticks.ts';

const env = process.env;
const now = (): number => Number(env.SIM_NOW);
const contractId = env.CONTRACT_ID!;
const client = new TradingClient({
  baseUrl: env.TRADING_URL!,
  userName: env.SIM_USER!,
  apiKey: env.SIM_KEY!,
  now,
  timeoutMs: 60_000,
  logger: silentLogger,
});
const journal = Journal.open(env.JOURNAL!, { now });
const executor = new LiveExecutor({
  client,
  journal,
  accountId: Number(env.ACCOUNT_ID),
  contracts: new Map([
    [
      contractId,
      { id: contractId, name: 'ES', symbolId: 'F.US.EP', description: 'ES', grid: new PriceGrid(0.25, 12.5) },
    ],
  ]),
  logger: silentLogger,
  now,
});
await client.login();
executor.place({ id: env.TAG!, contractId, side: 'buy', size: 1, order: { type: 'market' }, decidedAt: now() });
process.stdout.write('sent\n');
setInterval(() => undefined, 1_000);
