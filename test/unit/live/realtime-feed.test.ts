/**
 * The user hub's events go through the same de-duplicating path as the polls: whatever the interleaving
 * of events (duplicated, dropped, early) and polls, every trade is one fill, journaled once and told to
 * the engine once. A trade that arrives before its order can be named is held, then applied.
 */
import fc from 'fast-check';
import { BehaviorSubject, Subject } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { LiveExecutor, type ExecutionClient } from '../../../src/adapters/live/executor.ts';
import { Journal } from '../../../src/adapters/live/journal.ts';
import { newOrder } from '../../../src/adapters/live/order-state.ts';
import { RealtimeFeed, type RealtimeFeedOptions } from '../../../src/adapters/live/realtime-feed.ts';
import type { RealtimeState, UserEvent } from '../../../src/adapters/gateway/realtime.ts';
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
const ACCOUNT = 7;
const iso = (ms: number): string => new Date(ms).toISOString();

const noRequests = new Proxy(
  {},
  { get: (_t, name) => () => Promise.reject(new Error(`unexpected request ${String(name)}`)) },
) as ExecutionClient;

/** The hub as the feed sees it: the test pushes events and connection states. */
class ScriptedHub {
  readonly state$ = new BehaviorSubject<RealtimeState>('disconnected');
  readonly events = new Subject<UserEvent>();
  userEvents() {
    return this.events.asObservable();
  }
  async start(): Promise<void> {
    this.state$.next('connected');
  }
  async stop(): Promise<void> {
    this.state$.next('disconnected');
  }
  restarts = 0;
  async restart(): Promise<void> {
    this.restarts++;
    this.state$.next('disconnected');
    this.state$.next('connected');
  }
}

interface Placed {
  readonly tag: string;
  readonly venueId: number;
  readonly size: number;
}

function setup(orders: readonly Placed[], watch: Partial<RealtimeFeedOptions> = {}) {
  const journal = Journal.open(':memory:', { now: () => T });
  const executor = new LiveExecutor({
    client: noRequests,
    journal,
    accountId: ACCOUNT,
    contracts: new Map([[ES.id, ES]]),
    logger: silentLogger,
    now: () => T,
  });
  const events: VenueEvent[] = [];
  executor.events.subscribe((e) => events.push(e));
  orders.forEach((o, i) =>
    journal.beginPlace(
      { ...newOrder(o.tag, i + 1), contractId: ES.id, side: 'buy', size: o.size, spec: { type: 'market' } },
      {},
    ),
  );
  const hub = new ScriptedHub();
  const realtime: boolean[] = [];
  const poller: RealtimeFeedOptions['poller'] = {
    setRealtime: (on) => void realtime.push(on),
    refreshAccountState: async () => undefined,
    applyPosition: () => undefined,
    applyAccount: () => undefined,
  };
  const feed = new RealtimeFeed({ hub, poller, executor, journal, accountId: ACCOUNT, logger: silentLogger, ...watch });
  const record = (o: Placed, filled: number): S.Order => ({
    id: o.venueId,
    accountId: ACCOUNT,
    contractId: ES.id,
    creationTimestamp: iso(T),
    updateTimestamp: iso(T + filled),
    status: filled === o.size ? OrderStatus.Filled : OrderStatus.Open,
    type: OrderType.Market,
    side: OrderSide.Bid,
    size: o.size,
    limitPrice: null,
    stopPrice: null,
    fillVolume: filled,
    filledPrice: filled > 0 ? 6400.25 : null,
    customTag: o.tag,
  });
  return { journal, executor, events, hub, feed, record, realtime };
}

const trade = (id: number, o: Placed): S.Trade => ({
  id,
  accountId: ACCOUNT,
  contractId: ES.id,
  creationTimestamp: iso(T + id),
  price: 6400.25,
  profitAndLoss: null,
  fees: 1.4,
  side: TradeSide.Buy,
  size: 1,
  voided: false,
  orderId: o.venueId,
});

describe('realtime events and polls', () => {
  it('watchdog: a trade the poll found that the connected hub never delivered within the bound reconnects the hub, once', async () => {
    const order: Placed = { tag: 'bot-1', venueId: 501, size: 2 };
    let now = T;
    const { hub, feed, journal } = setup([order], { now: () => now, silenceMs: 60_000 });
    feed.start();
    await new Promise((resolve) => setImmediate(resolve));
    // Connected at T. Trade 1 came through the hub; trade 2 did not.
    hub.events.next({ kind: 'trade', trade: trade(1, order) });
    now = T + 30_000;
    feed.notePolledTrades([trade(1, order), trade(2, order)]);
    expect(hub.restarts).toBe(0); // not yet past the bound
    now = T + 61_000;
    feed.notePolledTrades([trade(1, order)]);
    expect(hub.restarts).toBe(0); // delivered by the hub
    feed.notePolledTrades([trade(1, order), trade(2, order)]);
    expect(hub.restarts).toBe(1);
    expect(feed.restarts).toBe(1);
    await new Promise((resolve) => setImmediate(resolve));
    // The same trade in the next polls' overlap does not reconnect again; a trade from before the
    // (new) connection is the polls' to confirm, not a sign of silence.
    now = T + 200_000;
    feed.notePolledTrades([trade(1, order), trade(2, order), trade(3, order)]);
    expect(hub.restarts).toBe(1);
    expect(journal.entries().some((e) => e.kind === 'realtime' && JSON.stringify(e).includes('silent'))).toBe(true);
    await feed.stop();
  });

  it('a trade that arrives before its order can be named is held, then applied when the order event names it', async () => {
    const order: Placed = { tag: 'bot-1', venueId: 501, size: 1 };
    const { journal, events, hub, feed, record } = setup([order]);
    feed.start();
    hub.events.next({ kind: 'trade', trade: trade(1, order) });
    expect(journal.hasFill('1')).toBe(false);
    hub.events.next({ kind: 'order', order: record(order, 1) });
    expect(journal.order('bot-1')).toMatchObject({ state: 'filled', filledSize: 1, venueOrderId: 501 });
    expect(events.filter((e) => e.kind === 'fill')).toHaveLength(1);
    await feed.stop();
  });

  it('turns polling down only after the reconciliation that follows a connection, and up when the hub drops', async () => {
    const { hub, feed, realtime } = setup([]);
    feed.start();
    await new Promise((resolve) => setImmediate(resolve));
    expect(realtime).toEqual([false, true]);
    hub.state$.next('reconnecting');
    hub.state$.next('connected');
    await new Promise((resolve) => setImmediate(resolve));
    expect(realtime).toEqual([false, true, false, true]);
    await feed.stop();
  });

  it('every trade is one fill whatever the interleaving of events (duplicated, dropped, early) and polls', () => {
    const step = fc.record({
      source: fc.constantFrom('event', 'event', 'poll', 'order-event'),
      index: fc.nat(40),
      drop: fc.boolean(),
    });
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 1, max: 3 }), { minLength: 1, maxLength: 4 }),
        fc.array(step, { maxLength: 40 }),
        (sizes, steps) => {
          const placed = sizes.map((size, i): Placed => ({ tag: `bot-${i + 1}`, venueId: 600 + i, size }));
          const { journal, executor, events, hub, feed, record } = setup(placed);
          feed.start();
          const trades: S.Trade[] = [];
          for (const o of placed) for (let k = 0; k < o.size; k++) trades.push(trade(trades.length + 1, o));
          const filledBy = (o: Placed, upTo: number): number =>
            trades.slice(0, upTo).filter((t) => t.orderId === o.venueId).length;
          let released = 0;
          for (const s of steps) {
            // Trades happen in order; a step either reports the newest so far or an older one again.
            released = Math.min(trades.length, Math.max(released, s.index % (trades.length + 1)));
            if (released === 0 || s.drop) continue;
            const t = trades[s.index % released]!;
            const owner = placed.find((o) => o.venueId === t.orderId)!;
            if (s.source === 'event') hub.events.next({ kind: 'trade', trade: t });
            else if (s.source === 'order-event')
              hub.events.next({ kind: 'order', order: record(owner, filledBy(owner, released)) });
            else {
              executor.applyOrderSearch(
                placed.map((o) => record(o, filledBy(o, released))),
                T - 60_000,
              );
              executor.applyTrades(trades.slice(0, released));
            }
          }
          // The safety net's final round.
          executor.applyOrderSearch(
            placed.map((o) => record(o, o.size)),
            T - 60_000,
          );
          executor.applyTrades(trades);
          const fills = events.filter((e) => e.kind === 'fill');
          expect(fills.map((f) => f.fillId).sort()).toEqual(trades.map((t) => String(t.id)).sort());
          for (const o of placed) expect(journal.order(o.tag)).toMatchObject({ state: 'filled', filledSize: o.size });
          void feed.stop();
          journal.close();
        },
      ),
      { numRuns: 150 },
    );
  });
});
