/**
 * The running poller against the simulator, several contracts with partial bars, on a manual clock:
 * every request it makes is stamped with the gateway's time, and no window of either budget ever holds
 * more requests than the documented limit (retrieveBars 30 per 30 s, the rest 200 per 60 s).
 */
import { describe, expect, it } from 'vitest';
import { Limits } from '../../../src/protocol/endpoints.ts';
import { silentLogger } from '../../../src/engine/log.ts';
import { PriceGrid } from '../../../src/engine/ticks.ts';
import type { ContractSpec } from '../../../src/engine/types.ts';
import { LiveExecutor } from '../../../src/adapters/live/executor.ts';
import { Journal } from '../../../src/adapters/live/journal.ts';
import { Poller, type PollClient } from '../../../src/adapters/live/poller.ts';
import { startBench } from './live-harness.ts';

function maxInWindow(times: number[], windowMs: number): number {
  let best = 0;
  let lo = 0;
  for (let hi = 0; hi < times.length; hi++) {
    while (times[hi]! - times[lo]! >= windowMs) lo++;
    best = Math.max(best, hi - lo + 1);
  }
  return best;
}

describe('poller rate budget at run time', () => {
  it('never exceeds either budget with four contracts, partial bars and fast account polls', async () => {
    const b = await startBench();
    const ids = ['CON.F.US.EP.Z25', 'CON.F.US.ENQ.Z25', 'CON.F.US.MES.Z25', 'CON.F.US.MNQ.Z25'];
    const contracts = new Map<string, ContractSpec>();
    for (const id of ids) {
      const c = await b.truth.contractById(id);
      contracts.set(id, {
        id,
        name: c.name,
        symbolId: c.symbolId,
        description: c.description,
        grid: new PriceGrid(c.tickSize, c.tickValue),
      });
    }
    const stamps: Record<'bars' | 'default', number[]> = { bars: [], default: [] };
    // Every call the poller makes, stamped with the gateway's clock.
    const client = new Proxy(b.client, {
      get(target, prop, receiver) {
        const value = Reflect.get(target, prop, receiver) as unknown;
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          stamps[prop === 'retrieveBars' ? 'bars' : 'default'].push(b.now());
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    }) as PollClient & typeof b.client;
    const journal = Journal.open(b.journalFile, { now: b.now });
    const executor = new LiveExecutor({
      client,
      journal,
      accountId: b.sim.demo.accountId,
      contracts,
      logger: silentLogger,
      now: b.now,
    });
    const poller = new Poller({
      client,
      executor,
      journal,
      venueEvents: executor.events,
      accountId: b.sim.demo.accountId,
      contracts,
      intervals: { openOrdersMs: 2_000, ordersMs: 10_000, tradesMs: 2_000, positionsMs: 2_000, accountMs: 20_000 },
      subscriptions: ids.map((contractId) => ({
        contractId,
        timeframe: { unit: 'minute' as const, unitNumber: 1 },
        partialEveryMs: 15_000,
      })),
      logger: silentLogger,
      now: b.now,
    });
    try {
      // Ticks faster than any schedule, so only the plan and the run-time budget limit the requests.
      for (let i = 0; i < 260; i++) {
        b.sim.clock.advance(500);
        await poller.tick();
      }
      expect(stamps.bars.length).toBeGreaterThan(40);
      expect(stamps.default.length).toBeGreaterThan(200);
      expect(maxInWindow(stamps.bars, Limits.rate.bars.windowMs)).toBeLessThanOrEqual(Limits.rate.bars.requests);
      expect(maxInWindow(stamps.default, Limits.rate.default.windowMs)).toBeLessThanOrEqual(
        Limits.rate.default.requests,
      );
    } finally {
      poller.stop();
      journal.close();
      await b.close();
    }
  }, 30_000);
});
