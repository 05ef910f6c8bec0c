/**
 * Matching: orders against the market's quotes and its price path (src/market/quotes.ts holds the rules
 * the backtest shares).
 *
 * - An order that *arrives* (placed, modified, a pending place settling) and can trade takes liquidity
 *   from the quote: a market order always, a limit when the touch is within its price, a stop or trailing
 *   stop already through its level; the rest of a limit rests.
 * - Along the path, a stop is triggered by the last trade reaching it and then fills as a market order at
 *   the quote of that moment; a resting limit fills at its price when the market trades through it (the
 *   whole order), or takes a share when the market only touches it (partial fills, the queue model), at
 *   most once per bar; a gap through a resting limit fills it at the gap's price.
 * - `step` walks the market from the last step to now, merging the path's points with pending answers
 *   that settle and contract months that expire, in time order.
 */
import { OrderSide, OrderStatus, OrderType } from '../protocol/codes.ts';
import { advanceTrail, trailStopPrice, trailTriggered } from '../engine/trailing.ts';
import { queueAhead, takeLiquidity, touch, touchFill, type Quote } from '../market/quotes.ts';
import type { SimContext } from './context.ts';
import type { ContractMarket, PricePoint } from './market/market.ts';
import { trailState } from './records.ts';
import { getMeta, setMeta, type OrderRow } from './store.ts';

/** How far back a restarted simulator replays the market to match orders left working. */
const MAX_CATCH_UP_MS = 7 * 86_400_000;

/** Order types that rest at a limit price (JoinBid and JoinAsk are limits placed at the touch). */
const LIMIT_TYPES: ReadonlySet<number> = new Set([OrderType.Limit, OrderType.JoinBid, OrderType.JoinAsk]);

type Event =
  | { time: number; kind: 'point'; contractId: string; point: PricePoint }
  | { time: number; kind: 'settle'; orderId: number }
  | { time: number; kind: 'cancel'; orderId: number }
  | { time: number; kind: 'expire'; contractId: string };

/** Events at the same instant: pending answers settle before the market moves, months expire last. */
const ORDER_OF_KINDS: Record<Event['kind'], number> = { settle: 0, cancel: 1, point: 2, expire: 3 };

function signOf(order: OrderRow): 1 | -1 {
  return order.side === OrderSide.Bid ? 1 : -1;
}

export class Matcher {
  private lastStep: number;

  constructor(private readonly ctx: SimContext) {
    const stored = Number(getMeta(ctx.db, 'lastStep') ?? Number.NaN);
    const now = ctx.clock.now();
    this.lastStep = Number.isFinite(stored) ? Math.max(stored, now - MAX_CATCH_UP_MS) : now;
  }

  quote(contractId: string, t = this.ctx.clock.now()): Quote | undefined {
    return this.ctx.market(contractId)?.quote(t);
  }

  // ---------------------------------------------------------------- arriving orders

  /** An order reaching the market at `t` (placed, modified, settled): it trades what its type and price allow now. */
  arrive(order: OrderRow, t: number): void {
    const market = this.ctx.market(order.contract_id);
    const quote = market?.quote(t);
    const last = market?.lastPrice(t);
    if (!market || !quote || last === undefined || order.status !== OrderStatus.Open) return;
    const s = signOf(order);
    switch (order.type) {
      case OrderType.Market:
        this.take(order, quote, undefined, t);
        return;
      case OrderType.Stop:
        if (s * last >= s * (order.stop_ticks as number)) this.take(order, quote, undefined, t);
        return;
      case OrderType.TrailingStop:
        if (trailTriggered(trailState(order), last)) this.take(order, quote, undefined, t);
        return;
      case OrderType.StopLimit:
        if (!order.triggered) {
          if (s * last < s * (order.stop_ticks as number)) return;
          this.trigger(order, t);
        }
        this.arriveAsLimit(market, order, quote, t);
        return;
      default:
        if (LIMIT_TYPES.has(order.type)) this.arriveAsLimit(market, order, quote, t);
    }
  }

  /** A limit arriving: it takes what the touch offers within its price; the rest rests in the queue. */
  private arriveAsLimit(market: ContractMarket, order: OrderRow, quote: Quote, t: number): void {
    const limit = order.limit_ticks as number;
    const s = signOf(order);
    if (s * touch(quote, s) <= s * limit) this.take(order, quote, limit, t);
    if (order.status !== OrderStatus.Open) return;
    // Walking the book up to its price left it first in line at that price.
    const tookSome = s * touch(quote, s) <= s * limit;
    const ahead = market.fills.queue && !tookSome ? queueAhead(quote, s, limit) : null;
    this.ctx.db.prepare('UPDATE orders SET queue_ahead = ?, touch_bar = NULL WHERE id = ?').run(ahead, order.id);
    order.queue_ahead = ahead;
    order.touch_bar = null;
  }

  /** Closing and liquidation: a new market order for the account, filled from the quote (at the last price when the market is closed). */
  marketOrder(accountId: number, contractId: string, side: number, size: number, t: number): void {
    const order = this.ctx.ledger.newMarketOrder(accountId, contractId, side, size, t);
    const quote = this.quote(contractId, t);
    if (quote) {
      this.take(order, quote, undefined, t);
      return;
    }
    const last = this.ctx.lastPrice(contractId, t);
    if (last !== undefined) this.ctx.ledger.fill(order, size, last, t);
  }

  /** Fills what the quote offers (walking the book with partial fills), never beyond `limit`. */
  private take(order: OrderRow, quote: Quote, limit: number | undefined, t: number): void {
    const market = this.ctx.market(order.contract_id)!;
    const remaining = order.size - order.fill_volume;
    for (const part of takeLiquidity(quote, signOf(order), remaining, limit, market.fills.partialFills)) {
      this.ctx.ledger.fill(order, part.size, part.price, t);
      // A fill can break a rule, and the liquidation that follows cancels this order's rest.
      if (order.status !== OrderStatus.Open || this.ctx.order(order.id).status !== OrderStatus.Open) return;
    }
  }

  private trigger(order: OrderRow, t: number): void {
    this.ctx.db.prepare('UPDATE orders SET triggered = 1, updated_at = ? WHERE id = ?').run(t, order.id);
    order.triggered = 1;
    order.updated_at = t;
  }

  // ---------------------------------------------------------------- the path

  /** Advances matching, pending answers, expiries and the rules through the market path up to `to`. */
  step(to: number): void {
    const from = this.lastStep;
    if (to <= from) return;
    this.ctx.withMemo(() =>
      this.ctx.db.transaction(() => {
        const previous = new Map<string, number | undefined>();
        for (const event of this.events(from, to, previous)) this.apply(event, previous);
        this.lastStep = to;
        setMeta(this.ctx.db, 'lastStep', String(to));
      })(),
    );
  }

  private events(from: number, to: number, previous: Map<string, number | undefined>): Event[] {
    const { db } = this.ctx;
    const events: Event[] = [];
    const contracts = db
      .prepare(
        'SELECT contract_id FROM orders WHERE status IN (?, ?) UNION SELECT contract_id FROM positions WHERE size != 0',
      )
      .all(OrderStatus.Open, OrderStatus.Pending) as { contract_id: string }[];
    for (const { contract_id: contractId } of contracts) {
      const market = this.ctx.market(contractId);
      const contract = this.ctx.contract(contractId);
      if (!market || !contract) continue;
      previous.set(contractId, market.lastPrice(from));
      for (const point of market.pointsBetween(from, to))
        events.push({ time: point.time, kind: 'point', contractId, point });
      // A month stops trading at its final settlement (08:30 CT for equity index, else the day's close).
      const end = this.ctx.contracts.expiresAt(contract);
      if (end > from && end <= to) events.push({ time: end, kind: 'expire', contractId });
    }
    // Pending answers due by `to` (one due before `from`, left by a restart, settles at once).
    const settling = db
      .prepare('SELECT id, settle_at FROM orders WHERE status = ? AND settle_at <= ?')
      .all(OrderStatus.Pending, to) as { id: number; settle_at: number }[];
    for (const o of settling) events.push({ time: Math.max(o.settle_at, from), kind: 'settle', orderId: o.id });
    const cancelling = db
      .prepare('SELECT id, cancel_at FROM orders WHERE status = ? AND cancel_at <= ?')
      .all(OrderStatus.Open, to) as { id: number; cancel_at: number }[];
    for (const o of cancelling) events.push({ time: Math.max(o.cancel_at, from), kind: 'cancel', orderId: o.id });
    return events.sort((a, b) => a.time - b.time || ORDER_OF_KINDS[a.kind] - ORDER_OF_KINDS[b.kind]);
  }

  private apply(event: Event, previous: Map<string, number | undefined>): void {
    const { ctx } = this;
    switch (event.kind) {
      case 'point':
        this.matchContract(event.contractId, previous.get(event.contractId), event.point);
        previous.set(event.contractId, event.point.price);
        ctx.rules.checkHoldersOf(event.contractId, event.time);
        return;
      case 'settle': {
        ctx.changed();
        ctx.db
          .prepare('UPDATE orders SET status = ?, updated_at = ? WHERE id = ?')
          .run(OrderStatus.Open, event.time, event.orderId);
        this.arrive(ctx.order(event.orderId), event.time);
        return;
      }
      case 'cancel':
        ctx.changed();
        ctx.db
          .prepare('UPDATE orders SET status = ?, updated_at = ? WHERE id = ? AND status = ?')
          .run(OrderStatus.Cancelled, event.time, event.orderId, OrderStatus.Open);
        return;
      case 'expire':
        this.expire(event.contractId, event.time);
    }
  }

  /** A month's last trading day ended: its working orders expire and its positions settle at the last price. */
  private expire(contractId: string, t: number): void {
    const { ctx } = this;
    ctx.changed();
    ctx.db
      .prepare('UPDATE orders SET status = ?, updated_at = ? WHERE contract_id = ? AND status IN (?, ?)')
      .run(OrderStatus.Expired, t, contractId, OrderStatus.Open, OrderStatus.Pending);
    const last = ctx.lastPrice(contractId, t);
    if (last === undefined) return;
    const holders = ctx.db
      .prepare('SELECT account_id, size FROM positions WHERE contract_id = ? AND size != 0')
      .all(contractId) as { account_id: number; size: number }[];
    for (const p of holders) {
      const order = ctx.ledger.newMarketOrder(
        p.account_id,
        contractId,
        p.size > 0 ? OrderSide.Ask : OrderSide.Bid,
        Math.abs(p.size),
        t,
      );
      ctx.ledger.fill(order, Math.abs(p.size), last, t);
    }
  }

  private matchContract(contractId: string, before: number | undefined, point: PricePoint): void {
    const { ctx } = this;
    const orders = ctx.remember(
      `open:${contractId}`,
      () =>
        ctx.db
          .prepare('SELECT * FROM orders WHERE contract_id = ? AND status = ? ORDER BY id')
          .all(contractId, OrderStatus.Open) as OrderRow[],
    );
    const generation = ctx.generation;
    const market = ctx.market(contractId)!;
    for (const order of orders) {
      // A fill earlier in this loop may have cancelled a bracket sibling: re-read after any change.
      const current = generation === ctx.generation ? order : ctx.order(order.id);
      if (current.status !== OrderStatus.Open) continue;
      if (before === undefined || point.gap) this.move(market, current, point.price, point.price, point.time, true);
      else this.move(market, current, before, point.price, point.time, false);
    }
  }

  /**
   * One order against the market's move from `from` to `to` at `t` (a `gap` trades only at `to`): a
   * level crossed inside the move triggers or fills at the level; one already through at `from` at `from`.
   */
  private move(market: ContractMarket, order: OrderRow, from: number, to: number, t: number, gap: boolean): void {
    const s = signOf(order);
    // The prices this move trades, seen from the order's side: `low` favours a buy limit, `high` triggers a buy stop.
    const low = gap ? to : s === 1 ? Math.min(from, to) : Math.max(from, to);
    const high = gap ? to : s === 1 ? Math.max(from, to) : Math.min(from, to);
    const start = gap ? to : from;
    const direction = to === from ? market.direction(t) : Math.sign(to - from);
    const stopAt = (stop: number): number | undefined =>
      s * high >= s * stop ? (s * start >= s * stop ? start : stop) : undefined;
    const takeAt = (price: number, limit?: number): void => {
      const quote = gap ? market.quote(t) : market.quoteAt(t, price, direction);
      if (quote) this.take(order, quote, limit, t);
    };
    switch (order.type) {
      case OrderType.Market:
        takeAt(to);
        return;
      case OrderType.Stop: {
        const at = stopAt(order.stop_ticks as number);
        if (at !== undefined) takeAt(at);
        return;
      }
      case OrderType.StopLimit: {
        if (order.triggered) return this.rest(market, order, low, to, t, gap);
        const at = stopAt(order.stop_ticks as number);
        if (at === undefined) return;
        this.trigger(order, t);
        // Triggered: it arrives as a limit at the quote of that moment; the rest waits for the next point.
        const quote = gap ? market.quote(t) : market.quoteAt(t, at, direction);
        if (quote) this.arriveAsLimit(market, order, quote, t);
        return;
      }
      case OrderType.TrailingStop: {
        let state = trailState(order);
        if (from !== to) state = advanceTrail(state, from);
        if (trailTriggered(state, to) || trailTriggered(state, from)) {
          const stop = trailStopPrice(state);
          takeAt(s === 1 ? Math.max(stop, from) : Math.min(stop, from));
          return;
        }
        state = advanceTrail(state, to);
        if (state.extreme !== order.trail_extreme) {
          this.ctx.db.prepare('UPDATE orders SET trail_extreme = ? WHERE id = ?').run(state.extreme, order.id);
          order.trail_extreme = state.extreme;
        }
        return;
      }
      default:
        if (LIMIT_TYPES.has(order.type)) this.rest(market, order, low, to, t, gap);
    }
  }

  /**
   * A resting limit and the prices a move traded (`low` the best for it): through its price it fills
   * whole (at a gap's price, or at its limit); touching it exactly fills what the queue and the level's
   * size allow, once per bar.
   */
  private rest(market: ContractMarket, order: OrderRow, low: number, to: number, t: number, gap: boolean): void {
    const s = signOf(order);
    const limit = order.limit_ticks as number;
    if (s * low > s * limit) return;
    const remaining = order.size - order.fill_volume;
    if (s * low < s * limit) {
      this.ctx.ledger.fill(order, remaining, gap ? to : limit, t);
      return;
    }
    const i = market.barAt(t);
    if (i < 0) return;
    const bar = market.base.time(i);
    if (order.touch_bar === bar) return;
    const { size, ahead } = touchFill(
      market.fills,
      remaining,
      order.queue_ahead ?? 0,
      market.barFacts(i),
      market.previousFacts(i),
    );
    this.ctx.db
      .prepare('UPDATE orders SET touch_bar = ?, queue_ahead = ? WHERE id = ?')
      .run(bar, order.queue_ahead === null ? null : ahead, order.id);
    order.touch_bar = bar;
    if (order.queue_ahead !== null) order.queue_ahead = ahead;
    if (size > 0) this.ctx.ledger.fill(order, size, limit, t);
  }
}
