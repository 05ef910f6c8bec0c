/**
 * The order desk: Order/place, Order/modify, Order/cancel, Position/closeContract and partialCloseContract
 * with the gateway's checks and error codes, and the order and trade searches. Each changing request runs
 * in one transaction; an accepted order reaches the matcher at once.
 */
import {
  AccountSearchErrorCode,
  CancelErrorCode,
  CancelRejectionMessage,
  CloseContractErrorCode,
  ModifyErrorCode,
  OrderSide,
  OrderStatus,
  OrderType,
  PartialCloseErrorCode,
  PlaceErrorCode,
  ViolationDuration,
} from '../protocol/codes.ts';
import { bracketRefusal } from '../protocol/brackets.ts';
import type { ResponseOf } from '../protocol/endpoints.ts';
import { parseDateTime } from '../protocol/schemas.ts';
import type * as S from '../protocol/schemas.ts';
import { startTrail } from '../engine/trailing.ts';
import type { FuturesContract } from '../market/contract-months.ts';
import type { SimContext } from './context.ts';
import { clip } from './contracts.ts';
import type { PendingAnswers } from './pending.ts';
import { openOrderRecord, orderRecord, tradeRecord } from './records.ts';
import type { OrderRow, TradeRow, UserRow } from './store.ts';
import { fail, iso, ok } from './wire.ts';

type Envelope = S.TradingEnvelope;

/** Longest customTag accepted: a tag is an identifier, not a payload. */
export const MAX_CUSTOM_TAG = 128;
/** A price beyond this multiple of a root's usual level is refused as out of range. */
const PRICE_RANGE_FACTOR = 100;
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses in a tag
const CONTROL = /[\u0000-\u001f\u007f]/;

const TYPE_NAMES = '1 Limit, 2 Market, 3 StopLimit, 4 Stop, 5 TrailingStop, 6 JoinBid, 7 JoinAsk';
type PriceField = 'limitPrice' | 'stopPrice' | 'trailPrice';

function sideName(side: number): 'buy' | 'sell' {
  return side === OrderSide.Bid ? 'buy' : 'sell';
}

/** Why a price cannot be on an order of this contract (out of range or off the grid), or its ticks. */
export function priceTicks(contract: FuturesContract, field: PriceField, value: number): number | string {
  const highest = contract.startPrice * PRICE_RANGE_FACTOR;
  if (!(value > 0) || value > highest)
    return `${field} ${clip(String(value))} is outside the price range of ${contract.name} (above 0, at most ${highest})`;
  const ticks = contract.grid.toTicks(value);
  if (!Number.isInteger(ticks)) return `${field} ${value} is not a multiple of the tick size ${contract.tickSize}`;
  return ticks;
}

/** Why a customTag is refused, or undefined. */
export function customTagProblem(tag: string): string | undefined {
  if (tag.length > MAX_CUSTOM_TAG)
    return `customTag is ${tag.length} characters long; at most ${MAX_CUSTOM_TAG} are accepted`;
  if (CONTROL.test(tag)) return 'customTag must not contain control characters';
  return undefined;
}

export class OrderDesk {
  constructor(
    private readonly ctx: SimContext,
    private readonly pending: PendingAnswers,
  ) {}

  // ---------------------------------------------------------------- place

  place(user: UserRow, req: S.PlaceOrderRequest): ResponseOf<'orderPlace'> | Envelope {
    return this.ctx.db.transaction(() => this.placeInTransaction(user, req))();
  }

  private placeInTransaction(user: UserRow, req: S.PlaceOrderRequest): ResponseOf<'orderPlace'> | Envelope {
    const { ctx } = this;
    const now = ctx.clock.now();
    const rejected = (code: number, message: string) => fail(code, message);
    const account = ctx.accounts.ownedAccount(user, req.accountId);
    if (!account) return rejected(PlaceErrorCode.AccountNotFound, `No account ${req.accountId}`);
    if (this.pending.takeHook(account, 'pending_places'))
      return rejected(
        PlaceErrorCode.OrderPending,
        `Order on account ${account.name} is pending (test hook: nothing was placed)`,
      );
    if (!account.active) return rejected(PlaceErrorCode.AccountRejected, `Account ${account.name} is not active`);
    const contract = ctx.contracts.known(req.contractId, now);
    const market = contract && ctx.markets.get(contract.spec.root);
    if (!contract || !market)
      return rejected(PlaceErrorCode.ContractNotFound, `No contract with id ${clip(req.contractId)}`);
    if (ctx.contracts.status(contract, now) === 'expired')
      return rejected(PlaceErrorCode.ContractNotActive, `Contract ${contract.id} has expired`);
    const violation = ctx.accounts.activeViolation(account.id, now);
    if (violation) {
      const until =
        violation.duration === ViolationDuration.Permanent ? 'permanently' : `until ${iso(violation.expires_at)}`;
      return rejected(PlaceErrorCode.AccountViolation, `Account ${account.name} is locked by a violation ${until}`);
    }
    if (!Number.isInteger(req.type) || req.type < OrderType.Limit || req.type > OrderType.JoinAsk)
      return rejected(PlaceErrorCode.OrderRejected, `Order type ${req.type} is not supported (${TYPE_NAMES})`);
    if (req.side !== OrderSide.Bid && req.side !== OrderSide.Ask)
      return rejected(PlaceErrorCode.OrderRejected, `side must be 0 (Bid) or 1 (Ask), got ${req.side}`);
    if (req.size < 1) return rejected(PlaceErrorCode.OrderRejected, `size must be at least 1, got ${req.size}`);
    const needs: Record<PriceField, boolean> = {
      limitPrice: req.type === OrderType.Limit || req.type === OrderType.StopLimit,
      stopPrice: req.type === OrderType.Stop || req.type === OrderType.StopLimit,
      trailPrice: req.type === OrderType.TrailingStop,
    };
    const ticks: Partial<Record<PriceField, number>> = {};
    for (const field of ['limitPrice', 'stopPrice', 'trailPrice'] as const) {
      const value = req[field];
      if (!needs[field]) {
        if (value !== null && value !== undefined)
          return rejected(PlaceErrorCode.OrderRejected, `${field} does not apply to order type ${req.type}`);
        continue;
      }
      if (value === null || value === undefined)
        return rejected(PlaceErrorCode.OrderRejected, `${field} is required for order type ${req.type}`);
      const t = priceTicks(contract, field, value);
      if (typeof t === 'string') return rejected(PlaceErrorCode.OrderRejected, t);
      ticks[field] = t;
    }
    const bracketProblem = bracketRefusal(sideName(req.side), req.stopLossBracket, req.takeProfitBracket);
    if (bracketProblem !== undefined) return rejected(PlaceErrorCode.OrderRejected, bracketProblem);
    if (req.customTag !== null && req.customTag !== undefined) {
      const problem = customTagProblem(req.customTag);
      if (problem) return rejected(PlaceErrorCode.OrderRejected, problem);
      const taken = ctx.db
        .prepare('SELECT id FROM orders WHERE account_id = ? AND custom_tag = ?')
        .get(account.id, req.customTag);
      if (taken)
        return rejected(
          PlaceErrorCode.OrderRejected,
          `customTag ${JSON.stringify(req.customTag)} is already used on account ${account.name}`,
        );
    }
    const last = market.lastPrice(now);
    const quote = market.quote(now);
    if (!market.isOpen(now) || last === undefined || quote === undefined)
      return rejected(PlaceErrorCode.OutsideTradingHours, `${contract.name} is not trading at ${iso(now)}`);
    const insufficient = ctx.accounts.marginShortfall(account, contract, req.side, req.size, now);
    if (insufficient) return rejected(PlaceErrorCode.InsufficientFunds, insufficient);

    // JoinBid and JoinAsk are limit orders at the best bid or ask of this moment.
    const limit =
      req.type === OrderType.JoinBid ? quote.bid : req.type === OrderType.JoinAsk ? quote.ask : ticks.limitPrice;
    const trail =
      req.type === OrderType.TrailingStop
        ? startTrail(sideName(req.side), last, ticks.trailPrice as number)
        : undefined;
    const pending = this.pending.place();
    const info = ctx.db
      .prepare(
        `INSERT INTO orders (account_id, contract_id, type, side, size, limit_ticks, stop_ticks, trail_distance, trail_extreme, status,
           custom_tag, stop_loss_bracket, take_profit_bracket, settle_at, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        account.id,
        contract.id,
        req.type,
        req.side,
        req.size,
        limit ?? null,
        ticks.stopPrice ?? null,
        trail?.distance ?? null,
        trail?.extreme ?? null,
        pending ? OrderStatus.Pending : OrderStatus.Open,
        req.customTag ?? null,
        req.stopLossBracket ? JSON.stringify(req.stopLossBracket) : null,
        req.takeProfitBracket ? JSON.stringify(req.takeProfitBracket) : null,
        pending ? now + this.pending.settleMs : null,
        now,
        now,
      );
    const orderId = Number(info.lastInsertRowid);
    ctx.changed();
    if (pending) {
      ctx.logger.debug({ orderId, accountId: account.id }, 'order pending');
      return {
        ...fail(PlaceErrorCode.OrderPending, `Order ${orderId} is pending; it settles in ${this.pending.settleMs} ms`),
        orderId,
      };
    }
    ctx.matcher.arrive(ctx.order(orderId), now);
    ctx.logger.debug({ orderId, accountId: account.id, contractId: contract.id, type: req.type }, 'order placed');
    return { ...ok(), orderId };
  }

  // ---------------------------------------------------------------- modify and cancel

  modify(user: UserRow, req: S.ModifyRequest): Envelope {
    const { ctx } = this;
    return ctx.db.transaction((): Envelope => {
      const now = ctx.clock.now();
      const account = ctx.accounts.ownedAccount(user, req.accountId);
      if (!account) return fail(ModifyErrorCode.AccountNotFound, `No account ${req.accountId}`);
      const order = ctx.db
        .prepare('SELECT * FROM orders WHERE id = ? AND account_id = ?')
        .get(req.orderId, account.id) as OrderRow | undefined;
      if (!order) return fail(ModifyErrorCode.OrderNotFound, `No order ${req.orderId} on account ${account.id}`);
      const contract = ctx.contract(order.contract_id);
      const market = contract && ctx.markets.get(contract.spec.root);
      if (!contract || !market)
        return fail(ModifyErrorCode.ContractNotFound, `Contract ${order.contract_id} is no longer listed`);
      if (order.status !== OrderStatus.Open)
        return fail(ModifyErrorCode.Rejected, `Order ${order.id} is not open (status ${order.status})`);
      // Modify's codes (spec: as cancel, plus 7) have no OutsideTradingHours (its 5 is UnknownError): Rejected.
      if (!market.isOpen(now))
        return fail(ModifyErrorCode.Rejected, `${contract.name} is not trading at ${iso(now)} (outside trading hours)`);
      const changes: Partial<OrderRow> = {};
      if (req.size !== null && req.size !== undefined) {
        if (req.size < 1) return fail(ModifyErrorCode.Rejected, `size must be at least 1, got ${req.size}`);
        if (req.size <= order.fill_volume)
          return fail(
            ModifyErrorCode.Rejected,
            `size ${req.size} is not more than the ${order.fill_volume} contracts already filled`,
          );
        changes.size = req.size;
      }
      const isLimit =
        order.type === OrderType.Limit ||
        order.type === OrderType.StopLimit ||
        order.type === OrderType.JoinBid ||
        order.type === OrderType.JoinAsk;
      for (const [field, value, applies, column] of [
        ['limitPrice', req.limitPrice, isLimit, 'limit_ticks'],
        ['stopPrice', req.stopPrice, order.type === OrderType.Stop || order.type === OrderType.StopLimit, 'stop_ticks'],
      ] as const) {
        if (value === null || value === undefined) continue;
        if (!applies)
          return fail(
            ModifyErrorCode.Rejected,
            field === 'limitPrice'
              ? 'limitPrice applies to Limit and StopLimit orders only'
              : 'stopPrice applies to Stop and StopLimit orders only',
          );
        const t = priceTicks(contract, field, value);
        if (typeof t === 'string') return fail(ModifyErrorCode.Rejected, t);
        changes[column] = t;
      }
      if (req.trailPrice !== null && req.trailPrice !== undefined) {
        // Spec 4.1: an absolute price; the gap to the last traded price, in whole ticks, becomes the trail.
        if (order.type !== OrderType.TrailingStop)
          return fail(ModifyErrorCode.Rejected, 'trailPrice applies to TrailingStop orders only');
        const last = market.lastPrice(now);
        if (last === undefined) return fail(ModifyErrorCode.Rejected, `${contract.name} has no last traded price`);
        const t = priceTicks(contract, 'trailPrice', req.trailPrice);
        if (typeof t === 'string') return fail(ModifyErrorCode.Rejected, t);
        const trail = startTrail(sideName(order.side), last, t);
        changes.trail_distance = trail.distance;
        changes.trail_extreme = trail.extreme;
      }
      const entries = Object.entries(changes);
      if (entries.length === 0) return ok();
      ctx.db
        .prepare(`UPDATE orders SET ${entries.map(([k]) => `${k} = ?`).join(', ')}, updated_at = ? WHERE id = ?`)
        .run(...entries.map(([, v]) => v), now, order.id);
      ctx.changed();
      // A new price is a new order as far as the market knows: it may trade now, and it rests at the back of the queue.
      const repriced =
        changes.limit_ticks !== undefined || changes.stop_ticks !== undefined || changes.trail_distance !== undefined;
      if (repriced) ctx.matcher.arrive(ctx.order(order.id), now);
      return ok();
    })();
  }

  cancel(user: UserRow, req: S.CancelRequest): Envelope {
    const { ctx } = this;
    return ctx.db.transaction((): Envelope => {
      const now = ctx.clock.now();
      const account = ctx.accounts.ownedAccount(user, req.accountId);
      if (!account) return fail(CancelErrorCode.AccountNotFound, `No account ${req.accountId}`);
      if (this.pending.takeHook(account, 'pending_cancels'))
        return fail(
          CancelErrorCode.Pending,
          `Cancel of order ${req.orderId} is pending (test hook: nothing was cancelled)`,
        );
      if (account.is_follower) return fail(CancelErrorCode.AccountRejected, CancelRejectionMessage.Follower);
      if (!account.simulated) return fail(CancelErrorCode.AccountRejected, CancelRejectionMessage.Live);
      const order = ctx.db
        .prepare('SELECT * FROM orders WHERE id = ? AND account_id = ?')
        .get(req.orderId, account.id) as OrderRow | undefined;
      if (!order) return fail(CancelErrorCode.OrderNotFound, `No order ${req.orderId} on account ${account.id}`);
      if (order.status !== OrderStatus.Open && order.status !== OrderStatus.Pending)
        return fail(CancelErrorCode.Rejected, `Order ${order.id} is not open (status ${order.status})`);
      if (order.cancel_at !== null)
        return fail(CancelErrorCode.Pending, `A cancel of order ${order.id} is already pending`);
      ctx.changed();
      if (order.status === OrderStatus.Open && this.pending.cancel()) {
        ctx.db.prepare('UPDATE orders SET cancel_at = ? WHERE id = ?').run(now + this.pending.settleMs, order.id);
        return fail(
          CancelErrorCode.Pending,
          `Cancel of order ${order.id} is pending; it takes effect in ${this.pending.settleMs} ms if the order is still working`,
        );
      }
      // A partly filled order keeps its fills: the cancel ends the rest.
      ctx.db
        .prepare('UPDATE orders SET status = ?, updated_at = ? WHERE id = ?')
        .run(OrderStatus.Cancelled, now, order.id);
      return ok();
    })();
  }

  // ---------------------------------------------------------------- positions

  closePosition(user: UserRow, accountId: number, contractId: string, size?: number): Envelope {
    const { ctx } = this;
    const codes = size === undefined ? CloseContractErrorCode : PartialCloseErrorCode;
    return ctx.db.transaction((): Envelope => {
      const now = ctx.clock.now();
      const account = ctx.accounts.ownedAccount(user, accountId);
      if (!account) return fail(codes.AccountNotFound, `No account ${accountId}`);
      const contract = ctx.contracts.known(contractId, now);
      const market = contract && ctx.markets.get(contract.spec.root);
      if (!contract || !market) return fail(codes.ContractNotFound, `No contract with id ${clip(contractId)}`);
      if (!account.active) return fail(codes.AccountRejected, `Account ${account.name} is not active`);
      const position = ctx.accounts.openPositions(account.id).find((p) => p.contract_id === contract.id);
      if (!position) return fail(codes.PositionNotFound, `No open position in ${contract.id}`);
      if (ctx.contracts.status(contract, now) === 'expired')
        return fail(codes.ContractNotActive, `Contract ${contract.id} has expired`);
      if (size !== undefined && (size < 1 || size > Math.abs(position.size))) {
        return fail(
          PartialCloseErrorCode.InvalidCloseSize,
          `size must be between 1 and ${Math.abs(position.size)}, got ${size}`,
        );
      }
      if (!market.isOpen(now) || market.lastPrice(now) === undefined)
        return fail(codes.OrderRejected, `${contract.name} is not trading at ${iso(now)}`);
      ctx.matcher.marketOrder(
        account.id,
        contract.id,
        position.size > 0 ? OrderSide.Ask : OrderSide.Bid,
        size ?? Math.abs(position.size),
        now,
      );
      return ok();
    })();
  }

  // ---------------------------------------------------------------- searches

  orderSearch(user: UserRow, req: S.OrderSearchRequest): ResponseOf<'orderSearch'> | Envelope {
    const { ctx } = this;
    if (!ctx.accounts.ownedAccount(user, req.accountId))
      return fail(AccountSearchErrorCode.AccountNotFound, `No account ${req.accountId}`);
    const end = req.endTimestamp ? parseDateTime(req.endTimestamp) : Number.MAX_SAFE_INTEGER;
    const rows = ctx.db
      .prepare('SELECT * FROM orders WHERE account_id = ? AND created_at >= ? AND created_at <= ? ORDER BY id')
      .all(req.accountId, parseDateTime(req.startTimestamp), end) as OrderRow[];
    return { ...ok(), orders: rows.map((o) => orderRecord(ctx.contract(o.contract_id), o)) };
  }

  orderSearchOpen(user: UserRow, accountId: number): ResponseOf<'orderSearchOpen'> | Envelope {
    const { ctx } = this;
    if (!ctx.accounts.ownedAccount(user, accountId))
      return fail(AccountSearchErrorCode.AccountNotFound, `No account ${accountId}`);
    const rows = ctx.db
      .prepare('SELECT * FROM orders WHERE account_id = ? AND status IN (?, ?) ORDER BY id')
      .all(accountId, OrderStatus.Open, OrderStatus.Pending) as OrderRow[];
    return { ...ok(), orders: rows.map((o) => openOrderRecord(ctx.contract(o.contract_id), o)) };
  }

  tradeSearch(user: UserRow, req: S.TradeSearchRequest): ResponseOf<'tradeSearch'> | Envelope {
    const { ctx } = this;
    if (!ctx.accounts.ownedAccount(user, req.accountId))
      return fail(AccountSearchErrorCode.AccountNotFound, `No account ${req.accountId}`);
    const end = req.endTimestamp ? parseDateTime(req.endTimestamp) : Number.MAX_SAFE_INTEGER;
    const rows = ctx.db
      .prepare('SELECT * FROM trades WHERE account_id = ? AND created_at >= ? AND created_at <= ? ORDER BY id')
      .all(req.accountId, parseDateTime(req.startTimestamp), end) as TradeRow[];
    return { ...ok(), trades: rows.map((t) => tradeRecord(ctx.contract(t.contract_id), t)) };
  }
}
