/**
 * Long-run hygiene: what a live session keeps in memory is windowed (the journal holds the rest), so a
 * session of weeks stays flat: the engine's fill history and closed trades, the executor's anomalies, the
 * readable lines' last update per order.
 */
import { describe, expect, it } from 'vitest';
import { OrderLines } from '../../../src/adapters/live/event-lines.ts';
import { ANOMALY_MEMORY, LiveExecutor, type ExecutionClient } from '../../../src/adapters/live/executor.ts';
import { Journal } from '../../../src/adapters/live/journal.ts';
import { Accounting, FILL_HISTORY } from '../../../src/engine/accounting.ts';
import { silentLogger } from '../../../src/engine/log.ts';
import { PriceGrid } from '../../../src/engine/ticks.ts';
import type { ContractSpec, Fill, OrderUpdate } from '../../../src/engine/types.ts';

const ES: ContractSpec = {
  id: 'CON.F.US.EP.Z26',
  name: 'ESZ6',
  symbolId: 'F.US.EP',
  description: 'ES',
  grid: new PriceGrid(0.25, 12.5),
};
const T = Date.UTC(2026, 10, 23, 15);

/** A fill of a walk: buys and sells of 1 to 3 contracts at prices that wander (deterministic). */
function fill(i: number): Fill {
  const side = (i * 7) % 5 < 2 ? 'sell' : 'buy';
  return {
    kind: 'fill',
    fillId: String(i + 1),
    orderId: `bot-${i + 1}`,
    contractId: ES.id,
    side,
    size: 1 + (i % 3),
    price: 25_600 + ((i * 37) % 41) - 20,
    fees: 1.4 * (1 + (i % 3)),
    time: T + i * 1_000,
  };
}

describe('memory stays bounded over a long run', () => {
  it('accounting: the fill history and closed trades are windows, and a late fill is still booked in its place', () => {
    const n = 6 * FILL_HISTORY;
    const fills = Array.from({ length: n }, (_, i) => fill(i));
    const live = new Accounting([ES], 50_000, { rememberFills: true, pnlInCents: true, tradeMemory: 100 });
    // Every fill but one in order, the missing one last (a realtime event overtook its trade).
    const late = n - 10;
    for (const f of fills) if (Number(f.fillId) !== late + 1) live.applyFill(f, '2026-11-23');
    expect(live.rememberedFills(ES.id)).toBeLessThanOrEqual(2 * FILL_HISTORY);
    expect(live.trades.length).toBeLessThanOrEqual(100);
    live.applyFill(fills[late]!, '2026-11-23');
    // The same fills in execution order, with nothing windowed: the same position and PnL.
    const reference = new Accounting([ES], 50_000, { rememberFills: false, pnlInCents: true });
    for (const f of fills) reference.applyFill(f, '2026-11-23');
    expect(live.position(ES.id)).toBe(reference.position(ES.id));
    expect(live.averagePrice(ES.id)).toBeCloseTo(reference.averagePrice(ES.id), 9);
    expect(live.realizedPnl).toBeCloseTo(reference.realizedPnl, 6);
    expect(live.balance).toBeCloseTo(reference.balance, 6);
  });

  it('executor: the latest anomalies are kept, every one is journaled', () => {
    const journal = Journal.open(':memory:', { now: () => T });
    const executor = new LiveExecutor({
      client: {} as ExecutionClient,
      journal,
      accountId: 7,
      contracts: new Map([[ES.id, ES]]),
      logger: silentLogger,
      now: () => T,
    });
    const total = ANOMALY_MEMORY * 4;
    for (let i = 0; i < total; i++) executor.anomaly(null, `difference ${i}`);
    expect(executor.anomalies).toHaveLength(ANOMALY_MEMORY);
    expect(executor.anomalies.at(-1)?.message).toBe(`difference ${total - 1}`);
    expect(journal.entries().filter((e) => e.kind === 'anomaly')).toHaveLength(total);
    journal.close();
  });

  it('readable lines: finished orders are forgotten beyond the window, working ones kept', () => {
    const ctx = { contracts: new Map([[ES.id, ES]]), now: () => T };
    const lines = new OrderLines(50);
    const update = (orderId: string, state: OrderUpdate['state'], limitPrice = 25_600): OrderUpdate => ({
      kind: 'order',
      orderId,
      state,
      time: T,
      contractId: ES.id,
      side: 'buy',
      size: 1,
      filledSize: 0,
      order: { type: 'limit', limitPrice },
    });
    lines.line(ctx, update('resting', 'working'));
    for (let i = 0; i < 1_000; i++) {
      lines.line(ctx, update(`o-${i}`, 'pending'));
      lines.line(ctx, update(`o-${i}`, 'working'));
      lines.line(ctx, update(`o-${i}`, 'filled'));
    }
    expect(lines.size).toBeLessThanOrEqual(50);
    // The resting order is still known: a change of its terms reads as a modification, not a new place.
    expect(lines.line(ctx, update('resting', 'working', 25_601))).toMatch(/modified {2}resting /);
  });
});
