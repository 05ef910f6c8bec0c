import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createLogger } from 'tickline';
import { LiveSession, liveConfigSchema } from 'tickline/live';
import { startSimulator } from 'tickline/sim';
import rsiReversion from './strategy.ts';

// The local simulator at 60 simulated seconds a second, from an hour the market is open; its request
// budgets, counted on the wall clock, are raised as much (the `paper` command does the same).
const speed = 60;
const sim = await startSimulator({
  clock: { speed },
  startTime: Date.UTC(2025, 10, 3, 15),
  rateLimits: {
    default: { requests: 200 * speed, windowMs: 60_000 },
    bars: { requests: 50 * speed, windowMs: 30_000 },
  },
});
// The same keys as a paper YAML file (config/paper.yaml); a symbol id follows the front month.
const config = liveConfigSchema.parse({
  strategy: { name: rsiReversion.name, id: 'paper-example', params: { period: 3 } },
  contracts: ['F.US.EP'],
  timeframe: { unit: 'minute' },
  account: { id: sim.demo.accountId },
  journal: path.join(mkdtempSync(path.join(tmpdir(), 'tickline-paper-')), 'journal.sqlite'),
  session: { maxBars: 5, flattenOnExit: true },
});
const session = await LiveSession.start({
  config,
  mode: 'paper',
  tradingUrl: sim.tradingUrl,
  credentials: { userName: sim.demo.userName, apiKey: sim.demo.apiKey },
  strategy: rsiReversion,
  logger: createLogger({ name: 'paper', level: 'error' }),
  now: () => sim.clock.now(),
  speed,
});
try {
  session.engine.fills$.subscribe((fill) => console.log('filled', fill.orderId, fill.side, fill.size));
  session.run(); // polls on the schedule until session.maxBars bars have closed
  await session.finished;
} finally {
  await session.stop({ flatten: true }); // session.killSwitch('reason') would flatten and lock out
  await sim.close();
}
console.log('balance', session.engine.snapshot().balance);
