/**
 * What a fill does: one trade of some contracts of an order at a price updates the order (its fill volume
 * and average price; Filled once complete), writes the trade (two when it closes and reverses a position),
 * moves the position, keeps the bracket legs in step with the filled size, copies the fill to follower
 * accounts, and checks the account's rules.
 */
import { OrderSide, OrderStatus, OrderType } from '../protocol/codes.ts';
import type * as S from '../protocol/schemas.ts';
import type { SimContext } from './context.ts';
import type { OrderRow, PositionRow } from './store.ts';
import { gatewayCents } from '../engine/money.ts';

export class Ledger {
  constructor(private readonly ctx: SimContext) {}

  /** One trade of `size` contracts of `order` at `price` (ticks), at time `t`. */
  fill(order: OrderRow, size: number, price: number, t: number): void {
    const { ctx } = this;
    ctx.changed();
    this.recordOnOrder(order, size, price, t);
    const position = this.trade(order, size, price, t);
    if (order.bracket_of !== null) this.followSibling(order, size, t);
    if (position !== 0 && (order.stop_loss_bracket || order.take_profit_bracket))
      this.followEntry(order, size, price, t);
    this.copyToFollowers(order, size, price, t);
    ctx.rules.evaluate(order.account_id, t);
  }

  private recordOnOrder(order: OrderRow, size: number, price: number, t: number): void {
    order.fill_volume += size;
    order.filled_value += size * price;
    order.filled_ticks = order.filled_value / order.fill_volume;
    if (order.fill_volume >= order.size) order.status = OrderStatus.Filled;
    order.updated_at = t;
    this.ctx.db
      .prepare(
        'UPDATE orders SET status = ?, fill_volume = ?, filled_value = ?, filled_ticks = ?, updated_at = ? WHERE id = ?',
      )
      .run(order.status, order.fill_volume, order.filled_value, order.filled_ticks, t, order.id);
  }

  /** The trades of a fill and the position they leave; returns the position's new signed size. */
  private trade(order: OrderRow, lots: number, price: number, t: number): number {
    const { db } = this.ctx;
    const contract = this.ctx.contract(order.contract_id)!;
    const signed = order.side === OrderSide.Bid ? lots : -lots;
    const position = db
      .prepare('SELECT * FROM positions WHERE account_id = ? AND contract_id = ?')
      .get(order.account_id, order.contract_id) as PositionRow | undefined;
    const held = position?.size ?? 0;
    const insertTrade = db.prepare(
      'INSERT INTO trades (account_id, contract_id, order_id, side, size, price_ticks, pnl, fees, entry_ticks, entered_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
    );
    const fees = (n: number) => gatewayCents(n * contract.feePerSide);
    let size = held;
    let average = position?.average_ticks ?? 0;
    let openedAt = position && position.size !== 0 ? position.opened_at : t;
    const closing =
      held !== 0 && Math.sign(held) !== Math.sign(signed) ? Math.min(Math.abs(held), Math.abs(signed)) : 0;
    if (closing > 0) {
      const pnl = gatewayCents((price - average) * Math.sign(held) * closing * contract.tickValue);
      insertTrade.run(
        order.account_id,
        order.contract_id,
        order.id,
        order.side,
        closing,
        price,
        pnl,
        fees(closing),
        average,
        openedAt,
        t,
      );
      size = held + Math.sign(signed) * closing;
    }
    const opening = Math.abs(signed) - closing;
    if (opening > 0) {
      // A half-turn: it opens (or adds to) a position, so it has no profit and loss (null).
      insertTrade.run(
        order.account_id,
        order.contract_id,
        order.id,
        order.side,
        opening,
        price,
        null,
        fees(opening),
        null,
        null,
        t,
      );
      if (size === 0) {
        average = price;
        openedAt = t;
      } else {
        average = (average * Math.abs(size) + price * opening) / (Math.abs(size) + opening);
      }
      size += Math.sign(signed) * opening;
    }
    if (position) {
      db.prepare('UPDATE positions SET size = ?, average_ticks = ?, opened_at = ?, updated_at = ? WHERE id = ?').run(
        size,
        size === 0 ? 0 : average,
        openedAt,
        t,
        position.id,
      );
    } else {
      db.prepare(
        'INSERT INTO positions (account_id, contract_id, size, average_ticks, opened_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)',
      ).run(order.account_id, order.contract_id, size, average, openedAt, t);
    }
    return size;
  }

  /**
   * A bracket leg traded: its sibling protects that many contracts fewer, and is cancelled once it would
   * protect none (one-cancels-other).
   */
  private followSibling(leg: OrderRow, size: number, t: number): void {
    const { db } = this.ctx;
    const sibling = db
      .prepare('SELECT * FROM orders WHERE bracket_of = ? AND id != ? AND status = ?')
      .get(leg.bracket_of, leg.id, OrderStatus.Open) as OrderRow | undefined;
    if (!sibling) return;
    const left =
      leg.status === OrderStatus.Filled ? sibling.fill_volume : Math.max(sibling.fill_volume, sibling.size - size);
    if (left <= sibling.fill_volume)
      db.prepare('UPDATE orders SET status = ?, updated_at = ? WHERE id = ?').run(OrderStatus.Cancelled, t, sibling.id);
    else db.prepare('UPDATE orders SET size = ?, updated_at = ? WHERE id = ?').run(left, t, sibling.id);
  }

  /**
   * An entry with brackets traded: its legs follow the filled size. The first fill places them, each
   * `ticks` (signed, from the extras) from that fill's price; later fills add their contracts to the legs
   * still working, or place a new pair when none is (the position was closed by a leg in between).
   */
  private followEntry(entry: OrderRow, size: number, price: number, t: number): void {
    const { db } = this.ctx;
    const working = db
      .prepare('SELECT id, size FROM orders WHERE bracket_of = ? AND status = ?')
      .all(entry.id, OrderStatus.Open) as { id: number; size: number }[];
    if (working.length > 0) {
      for (const leg of working)
        db.prepare('UPDATE orders SET size = ?, updated_at = ? WHERE id = ?').run(leg.size + size, t, leg.id);
      return;
    }
    const exitSide = entry.side === OrderSide.Bid ? OrderSide.Ask : OrderSide.Bid;
    const insert = db.prepare(
      `INSERT INTO orders (account_id, contract_id, type, side, size, limit_ticks, stop_ticks, trail_distance, trail_extreme, status, bracket_of, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    const legs: number[] = [];
    if (entry.stop_loss_bracket) {
      const b = JSON.parse(entry.stop_loss_bracket) as S.Bracket;
      const trailing = b.type === OrderType.TrailingStop;
      const info = insert.run(
        entry.account_id,
        entry.contract_id,
        b.type,
        exitSide,
        size,
        null,
        trailing ? null : price + b.ticks,
        trailing ? Math.abs(b.ticks) : null,
        trailing ? price : null,
        OrderStatus.Open,
        entry.id,
        t,
        t,
      );
      legs.push(Number(info.lastInsertRowid));
    }
    if (entry.take_profit_bracket) {
      const b = JSON.parse(entry.take_profit_bracket) as S.Bracket;
      const info = insert.run(
        entry.account_id,
        entry.contract_id,
        OrderType.Limit,
        exitSide,
        size,
        price + b.ticks,
        null,
        null,
        null,
        OrderStatus.Open,
        entry.id,
        t,
        t,
      );
      legs.push(Number(info.lastInsertRowid));
    }
    // The legs reach the market like any order: a target joins the queue, a stop already through triggers.
    for (const id of legs) this.ctx.matcher.arrive(this.ctx.order(id), t);
  }

  /**
   * Copy trading: a fill on a leader account is repeated, same price and size, on the active follower
   * accounts of the same user that are not locked by a violation.
   */
  private copyToFollowers(order: OrderRow, size: number, price: number, t: number): void {
    const { db } = this.ctx;
    const leader = db.prepare('SELECT user_id, is_leader FROM accounts WHERE id = ?').get(order.account_id) as {
      user_id: number;
      is_leader: number;
    };
    if (!leader.is_leader) return;
    const followers = db
      .prepare('SELECT id FROM accounts WHERE user_id = ? AND is_follower = 1 AND active = 1 AND id != ? ORDER BY id')
      .all(leader.user_id, order.account_id) as { id: number }[];
    for (const { id } of followers) {
      if (this.ctx.accounts.activeViolation(id, t)) continue;
      this.fill(this.newMarketOrder(id, order.contract_id, order.side, size, t), size, price, t);
    }
  }

  /** A market order written down, not yet filled (closing, liquidation, a follower's copy). */
  newMarketOrder(accountId: number, contractId: string, side: number, size: number, t: number): OrderRow {
    const info = this.ctx.db
      .prepare(
        'INSERT INTO orders (account_id, contract_id, type, side, size, status, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
      )
      .run(accountId, contractId, OrderType.Market, side, size, OrderStatus.Open, t, t);
    return this.ctx.order(Number(info.lastInsertRowid));
  }
}
