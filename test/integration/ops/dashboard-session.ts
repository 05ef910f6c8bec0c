/**
 * A paper session on the simulator for the dashboard's tests: the simulator's demo account on a manual
 * clock from a chosen Monday (never today), its limits from the administration record plus a personal
 * daily loss limit from the config, and a small strategy that leaves something on every panel: a long
 * position (a market buy on its first bar), a resting reducing limit sell (its second), and one refusal by
 * the position cap (a second buy on its third).
 */
import { z } from 'zod';
import { liveConfigSchema } from '../../../src/adapters/live/live-config.ts';
import { LiveSession } from '../../../src/adapters/live/trading-session.ts';
import { limitOrder, marketOrder } from '../../../src/engine/intents.ts';
import { silentLogger } from '../../../src/engine/log.ts';
import { onBar } from '../../../src/engine/on-bar.ts';
import { defineStrategy } from '../../../src/engine/strategy.ts';
import { ES, startBench, type Bench } from '../live/live-harness.ts';

export const PERSONAL_DAILY_LOSS = 400;

export const restingStrategy = defineStrategy({
  name: 'dashboard-fixture',
  description: 'buys 1 at market, rests a limit sell 40 ticks above, then tries one buy too many',
  params: z.strictObject({}),
  run: (ctx) => {
    let bars = 0;
    return onBar(ctx, (bar) => {
      bars++;
      if (bars === 1) return marketOrder('buy', 1);
      if (bars === 2 && ctx.openOrders().length === 0) return limitOrder('sell', 1, bar.close + 40, { unit: 'ticks' });
      if (bars === 3) return marketOrder('buy', 1);
      return undefined;
    });
  },
});

export interface DashboardBench {
  readonly b: Bench;
  readonly session: LiveSession;
  /** Moves the simulator's clock bar by bar (two polls per bar), letting the session react each time. */
  runBars(bars: number): Promise<void>;
  close(): Promise<void>;
}

export async function startDashboardSession(options: { realtime?: boolean } = {}): Promise<DashboardBench> {
  const b = await startBench();
  const config = liveConfigSchema.parse({
    strategy: { name: 'dashboard-fixture', id: 'dash', params: {} },
    contracts: [ES],
    timeframe: { unit: 'minute', unitNumber: 1 },
    account: { id: b.sim.demo.accountId },
    journal: b.journalFile,
    poll: {
      openOrdersMs: 5_000,
      ordersMs: 10_000,
      tradesMs: 5_000,
      positionsMs: 5_000,
      accountMs: 15_000,
      closeDelayMs: 500,
      staleAfterMs: 20_000,
    },
    risk: { maxPositionSize: 1 },
  });
  const session = await LiveSession.start({
    config,
    mode: 'paper',
    tradingUrl: b.sim.tradingUrl,
    ...(options.realtime ? { realtimeUrl: b.sim.realtimeUrl } : {}),
    credentials: { userName: b.sim.demo.userName, apiKey: b.sim.demo.apiKey },
    admin: { url: b.sim.adminUrl, headers: b.sim.adminHeaders },
    maximumLossVariant: (id) => b.sim.maximumLossVariant(id),
    account: { personalDailyLossLimit: PERSONAL_DAILY_LOSS },
    strategy: restingStrategy,
    logger: silentLogger,
    now: b.now,
  });
  // The hubs only (session.run() would also start the poller's own loop, which the manual clock drives here).
  session.realtime?.start();
  session.market?.start();
  return {
    b,
    session,
    runBars: async (bars) => {
      for (let i = 0; i < bars * 2; i++) {
        b.sim.clock.advance(30_000);
        await session.poller.tick();
        await session.executor.idle();
      }
    },
    close: async () => {
      await session.stop({ flatten: false });
      await b.close();
    },
  };
}
