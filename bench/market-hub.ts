/**
 * Quotes a second the simulator's market hub delivers to one subscriber: the project's `MarketHubClient`
 * (official `@microsoft/signalr`, schema validation) subscribed to one contract's quotes, and the
 * simulator's manual clock advanced a second of market time per step (every step changes the quote: the
 * price path or at least the day's volume). The quote throttle is lifted for the figure, and at most
 * `window` quotes are in flight (the driver waits for the subscriber to catch up, so the hub never sees a
 * slow consumer). Both ends run in this process, on one thread: the figure is the whole path, publish,
 * framing, socket, parse, validation, for one contract.
 */
import { MarketHubClient } from '../src/adapters/gateway/realtime.ts';
import { TradingClient } from '../src/adapters/gateway/trading.ts';
import { startSimulator } from '../src/sim/index.ts';

const STEP_MS = 1_000;

export interface MarketHubFigures {
  /** Steps of the market clock (each a possible quote). */
  readonly quotes: number;
  readonly received: number;
  readonly seconds: number;
  readonly perSecond: number;
  readonly window: number;
}

export async function measureMarketHub(options: { quotes: number; window: number }): Promise<MarketHubFigures> {
  const sim = await startSimulator({
    clock: 'manual',
    startTime: Date.parse('2025-03-04T15:00:00Z'),
    historyDays: 2,
    realtime: { quotesPerSecond: 1e9 },
  });
  const client = new TradingClient({
    baseUrl: sim.tradingUrl,
    userName: sim.demo.userName,
    apiKey: sim.demo.apiKey,
    now: () => sim.clock.now(),
  });
  const hub = new MarketHubClient({ url: sim.realtimeUrl, token: () => client.login() });
  const contractId = 'CON.F.US.EP.M25';
  let received = 0;
  let lastMarketTime = 0;
  let lastArrival = 0;
  try {
    hub.quotes(contractId).subscribe((quote) => {
      received++;
      lastMarketTime = Date.parse(quote.timestamp);
      lastArrival = performance.now();
    });
    await hub.start();
    await waitFor(() => received === 1, 'the opening quote');
    received = 0;
    const start = performance.now();
    for (let k = 0; k < options.quotes; k++) {
      sim.clock.advance(STEP_MS);
      // A step that changed nothing sends nothing: the lag is measured in market time, and a quiet hub is waited for
      // only briefly.
      const since = performance.now();
      while (sim.clock.now() - lastMarketTime > options.window * STEP_MS && performance.now() - since < 50)
        await new Promise((resolve) => setImmediate(resolve));
    }
    // Drained: nothing more arrives for a while.
    await waitFor(() => performance.now() - lastArrival > 200, 'the last quote');
    const seconds = (lastArrival - start) / 1000;
    return { quotes: options.quotes, received, seconds, perSecond: received / seconds, window: options.window };
  } finally {
    await hub.stop();
    await client.close();
    await sim.close();
  }
}

async function waitFor(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`market hub bench: ${what} did not arrive`);
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}
