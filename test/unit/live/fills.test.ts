/**
 * The journal's fill transitions: a trade is journaled with its order's fill transition in one
 * transaction, filled_size follows the trades, a trade seen twice changes nothing, and a fill beyond the
 * order's size is an anomaly (journaled and kept). The executor is driven through the gateway's records
 * (Order/search, Trade/search) as the poller hands them over; no request is sent in these tests.
 */
import { describe, expect, it } from 'vitest';
import { LiveExecutor, type ExecutionClient } from '../../../src/adapters/live/executor.ts';
import { Journal } from '../../../src/adapters/live/journal.ts';
import { newOrder } from '../../../src/adapters/live/order-state.ts';
import { OrderSide, OrderStatus, OrderType, TradeSide } from '../../../src/protocol/codes.ts';
import type * as S from '../../../src/protocol/schemas.ts';
import { silentLogger } from '../../../src/engine/log.ts';
import { PriceGrid } from '../../../src/engine/ticks.ts';
import type { ContractSpec, VenueEvent } from '../../../src/engine/types.ts';

const ES: ContractSpec = {
  id: 'CON.F.US.EP.Z26',
  name: 'ESZ6',
  symbolId: 'F.US.EP',
  description: 'ES',
  grid: new PriceGrid(0.25, 12.5),
};
const T = Date.UTC(2026, 10, 23, 15);
const iso = (ms: number): string => new Date(ms).toISOString();

/** The executor only reads what the poller hands it here; a request would be a bug in the test. */
const noRequests = new Proxy(
  {},
  { get: (_t, name) => () => Promise.reject(new Error(`unexpected request ${String(name)}`)) },
) as ExecutionClient;

function setup() {
  const journal = Journal.open(':memory:', { now: () => T });
  const executor = new LiveExecutor({
    client: noRequests,
    journal,
    accountId: 7,
    contracts: new Map([[ES.id, ES]]),
    logger: silentLogger,
    now: () => T,
  });
  const events: VenueEvent[] = [];
  executor.events.subscribe((e) => events.push(e));
  journal.beginPlace({ ...newOrder('bot-1', 1), contractId: ES.id, side: 'buy', spec: { type: 'market' } }, {});
  const record = (over: Partial<S.Order>): S.Order => ({
    id: 501,
    accountId: 7,
    contractId: ES.id,
    creationTimestamp: iso(T),
    updateTimestamp: iso(T),
    status: OrderStatus.Open,
    type: OrderType.Market,
    side: OrderSide.Bid,
    size: 1,
    limitPrice: null,
    stopPrice: null,
    fillVolume: 0,
    filledPrice: null,
    customTag: 'bot-1',
    ...over,
  });
  const trade = (id: number, size = 1): S.Trade => ({
    id,
    accountId: 7,
    contractId: ES.id,
    creationTimestamp: iso(T + id),
    price: 6400.25,
    profitAndLoss: null,
    fees: 1.4,
    side: TradeSide.Buy,
    size,
    voided: false,
    orderId: 501,
  });
  return { journal, executor, events, record, trade };
}

describe('fills in the journal', () => {
  it('filled_size follows the trades, fill-state events are journaled, a trade seen twice changes nothing', () => {
    const { journal, executor, events, record, trade } = setup();
    executor.applyOrderSearch([record({ status: OrderStatus.Open })], T - 60_000);
    executor.applyTrades([trade(1)]);
    executor.applyTrades([trade(1)]);
    const order = journal.order('bot-1')!;
    expect(order.state).toBe('filled');
    expect(order.filledSize).toBe(1);
    expect(order.fillIds).toEqual(['1']);
    expect(journal.entries({ tag: 'bot-1', kind: 'fill-state' })).toHaveLength(1);
    expect(events.filter((e) => e.kind === 'fill')).toHaveLength(1);
  });

  it('the gateway reporting Filled before the trade: a provisional fill for the engine at once, the trade confirms it later', () => {
    const { journal, executor, events, record, trade } = setup();
    executor.applyOrderSearch(
      [record({ status: OrderStatus.Filled, fillVolume: 1, filledPrice: 6400.25 })],
      T - 60_000,
    );
    const update = events.findLast((e) => e.kind === 'order');
    expect(update).toMatchObject({ state: 'filled', filledSize: 0, reportedFilledSize: 1 });
    expect(journal.order('bot-1')?.filledSize).toBe(0);
    executor.applyTrades([trade(2)]);
    expect(journal.order('bot-1')?.filledSize).toBe(1);
    expect(events.filter((e) => e.kind === 'fill')).toHaveLength(1);
  });

  it('a fill beyond the order size is an anomaly, journaled with the order', () => {
    const { journal, executor, record, trade } = setup();
    executor.applyOrderSearch([record({ status: OrderStatus.Open })], T - 60_000);
    executor.applyTrades([trade(3), trade(4)]);
    expect(journal.order('bot-1')?.filledSize).toBe(2);
    const anomalies = journal.entries({ kind: 'anomaly', tag: 'bot-1' });
    expect(anomalies.map((a) => (a.payload as { message: string }).message)).toContain('order bot-1 filled 2 of 1');
    expect(executor.anomalies.some((a) => a.tag === 'bot-1' && /filled 2 of 1/.test(a.message))).toBe(true);
  });

  it('trades of an order given up as lost, seen before the order itself: attached to it when it turns up, not counted twice', () => {
    const { journal, executor, events, record, trade } = setup();
    // The place was never found for the whole window: lost.
    executor.applyOrderSearch([], T - 200_000);
    expect(journal.order('bot-1')?.state).toBe('unknown');
    const lostExecutor = new LiveExecutor({
      client: noRequests,
      journal,
      accountId: 7,
      contracts: new Map([[ES.id, ES]]),
      logger: silentLogger,
      now: () => T + 120_000,
      unknownOutcomeMs: 60_000,
    });
    lostExecutor.events.subscribe((e) => events.push(e));
    lostExecutor.applyOrderSearch([], T - 200_000);
    expect(journal.order('bot-1')?.state).toBe('lost');
    // Its trade arrives first (Order/search failed as it landed): journaled without a tag.
    lostExecutor.applyTrades([trade(5)]);
    expect(journal.fills().map((f) => f.tag)).toEqual([null]);
    // Then Order/search shows it filled: adopted, the fill attached, no provisional fill on top.
    lostExecutor.applyOrderSearch(
      [record({ status: OrderStatus.Filled, fillVolume: 1, filledPrice: 6400.25 })],
      T - 60_000,
    );
    const order = journal.order('bot-1')!;
    expect(order.state).toBe('filled');
    expect(order.filledSize).toBe(1);
    expect(journal.fills().map((f) => f.tag)).toEqual(['bot-1']);
    const updates = events.filter((e) => e.kind === 'order' && e.orderId === 'bot-1');
    expect(updates.some((u) => u.kind === 'order' && u.reportedFilledSize !== undefined)).toBe(false);
    expect(updates.at(-1)).toMatchObject({ state: 'filled', filledSize: 1, adopted: true });
    expect(events.filter((e) => e.kind === 'fill')).toHaveLength(1);
    expect(lostExecutor.anomalies.some((a) => a.tag === 'bot-1' && /reappeared/.test(a.message))).toBe(true);
  });
});
