/**
 * The simulator's trading engine: sessions, accounts, orders, matching against the market path, trades,
 * positions and the rule engine. Every method takes already-validated wire requests and returns wire
 * responses (types from the shared schemas); the database is the only state, so a restart loses nothing.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import {
  AGREEMENTS_NOT_SIGNED_MESSAGE,
  AccountSearchErrorCode,
  CancelErrorCode,
  CancelRejectionMessage,
  CloseContractErrorCode,
  ContractByIdErrorCode,
  LoginErrorCode,
  ModifyErrorCode,
  OrderSide,
  OrderStatus,
  OrderType,
  PartialCloseErrorCode,
  PlaceErrorCode,
  PositionType,
  RetrieveBarsErrorCode,
  ViolationDuration,
  ViolationType,
} from '../adapters/gateway/codes.ts';
import { Limits, type ResponseOf } from '../adapters/gateway/endpoints.ts';
import type * as S from '../adapters/gateway/schemas.ts';
import { TradingCalendar } from '../engine/calendar.ts';
import type { Logger } from '../engine/log.ts';
import type { RuleBook } from '../engine/rules.ts';
import { barUnitFromCode, timeframe } from '../engine/timeframe.ts';
import { advanceTrail, startTrail, trailStopPrice, trailTriggered, type TrailState } from '../engine/trailing.ts';
import { CONTRACTS, contractRecord, findContract, type SimContract } from './catalogue.ts';
import type { SimClock } from './clock.ts';
import type { ContractMarket, PricePoint } from './market/market.ts';
import { getMeta, setMeta, type AccountRow, type Db, type OrderRow, type PositionRow, type RuleRow, type TradeRow, type UserRow } from './store.ts';
import { accountRuleBook } from './rules.ts';
import { NEVER, iso, round2 } from './wire.ts';
import { bracketRefusal } from '../adapters/gateway/brackets.ts';

type Envelope = S.TradingEnvelope;

/** Intraday margin per contract (USD) by symbol root, for the InsufficientFunds check. */
const DAY_MARGIN: Record<string, number> = { 'F.US.EP': 500, 'F.US.ENQ': 1000, 'F.US.YM': 500, 'F.US.RTY': 500, 'F.US.GCE': 1000, 'F.US.SIE': 1000, 'F.US.CLE': 500, 'F.US.TYA': 250, 'F.US.EU6': 250 };
const MICRO_MARGIN = 50;

/** How far back a restarted simulator replays the market to match orders left working. */
const MAX_CATCH_UP_MS = 7 * 86_400_000;

function ok(): Envelope {
  return { success: true, errorCode: 0, errorMessage: null };
}
function fail(errorCode: number, errorMessage: string | null): Envelope {
  return { success: false, errorCode, errorMessage };
}
function sideName(side: number): 'buy' | 'sell' {
  return side === OrderSide.Bid ? 'buy' : 'sell';
}
function dayMargin(contract: SimContract): number {
  return DAY_MARGIN[contract.symbolId] ?? MICRO_MARGIN;
}

export interface AccountFigures {
  balance: number;
  realizedDayPnl: number;
  unrealized: number;
}

/** An account's figures with the equity levels of its template's rules (-Infinity where it has no such rule). */
export interface AccountFloors extends AccountFigures {
  dailyLossFloor: number;
  maximumLossFloor: number;
}

export class SimEngine {
  private lastStep: number;
  private liquidating = false;
  /**
   * Reads remembered during a market step, where the same open orders, positions and sums are read at
   * every price point; cleared by every change (a fill, a liquidation), and absent outside a step.
   */
  private memo: Map<string, unknown> | undefined;
  /** Counts changes during a step, so a loop over remembered orders knows to re-read them. */
  private generation = 0;
  /** The engine's rule book per account; its high-water marks are restored from the database at each check. */
  private readonly books = new Map<number, RuleBook>();

  constructor(
    readonly db: Db,
    readonly clock: SimClock,
    readonly markets: ReadonlyMap<string, ContractMarket>,
    private readonly logger: Logger,
    /** The exchange trading day: daily P&L, daily limits, lockouts and the statistics' days. */
    readonly calendar: TradingCalendar = new TradingCalendar(),
  ) {
    const stored = Number(getMeta(db, 'lastStep') ?? Number.NaN);
    const now = clock.now();
    this.lastStep = Number.isFinite(stored) ? Math.max(stored, now - MAX_CATCH_UP_MS) : now;
  }

  market(contractId: string): ContractMarket | undefined {
    return this.markets.get(contractId);
  }

  lastPrice(contractId: string, t = this.clock.now()): number | undefined {
    return this.market(contractId)?.lastPrice(t);
  }

  // ------------------------------------------------------------------ sessions

  login(userName: string, apiKey: string): ResponseOf<'login'> {
    const user = this.db.prepare('SELECT * FROM users WHERE user_name = ?').get(userName) as UserRow | undefined;
    const failed = (errorCode: number, errorMessage: string | null = null) => ({ success: false, errorCode, errorMessage, token: null });
    if (!user || user.api_key === null || !sameSecret(user.api_key, apiKey)) return failed(LoginErrorCode.InvalidCredentials);
    if (!user.api_key_login_enabled) return failed(LoginErrorCode.ApiKeyAuthenticationDisabled);
    if (!user.subscription_active) return failed(LoginErrorCode.ApiSubscriptionNotFound);
    if (!user.agreements_signed) return failed(LoginErrorCode.AgreementsNotSigned, AGREEMENTS_NOT_SIGNED_MESSAGE);
    return { ...ok(), token: this.issueToken(user.id) };
  }

  issueToken(userId: number): string {
    const token = randomBytes(32).toString('base64url');
    const now = this.clock.now();
    this.db.prepare('INSERT INTO tokens (token, user_id, issued_at, expires_at) VALUES (?, ?, ?, ?)').run(token, userId, now, now + Limits.tokenLifetimeMs);
    return token;
  }

  /** The user a bearer token belongs to, or undefined when it is unknown, revoked or older than 24 hours. */
  authenticate(token: string): UserRow | undefined {
    const row = this.db
      .prepare('SELECT users.* FROM tokens JOIN users ON users.id = tokens.user_id WHERE token = ? AND revoked = 0 AND expires_at > ?')
      .get(token, this.clock.now()) as UserRow | undefined;
    return row;
  }

  validate(user: UserRow): ResponseOf<'validate'> {
    return { ...ok(), newToken: this.issueToken(user.id) };
  }

  logout(token: string): Envelope {
    this.db.prepare('UPDATE tokens SET revoked = 1 WHERE token = ?').run(token);
    return ok();
  }

  // ------------------------------------------------------------------ accounts

  ownedAccount(user: UserRow, accountId: number): AccountRow | undefined {
    return this.db.prepare('SELECT * FROM accounts WHERE id = ? AND user_id = ?').get(accountId, user.id) as AccountRow | undefined;
  }

  private remember<T>(key: string, load: () => T): T {
    if (!this.memo) return load();
    if (this.memo.has(key)) return this.memo.get(key) as T;
    const value = load();
    this.memo.set(key, value);
    return value;
  }

  private changed(): void {
    this.generation++;
    this.memo?.clear();
  }

  figures(account: AccountRow, t = this.clock.now()): AccountFigures {
    type Sums = { pnl: number; fees: number };
    const all = this.remember(`sums:${account.id}`, () => this.db.prepare('SELECT COALESCE(SUM(pnl), 0) AS pnl, COALESCE(SUM(fees), 0) AS fees FROM trades WHERE account_id = ? AND voided = 0').get(account.id) as Sums);
    const dayStart = this.calendar.dayStart(t);
    const day = this.remember(`day:${account.id}:${dayStart}`, () =>
      this.db.prepare('SELECT COALESCE(SUM(pnl), 0) AS pnl, COALESCE(SUM(fees), 0) AS fees FROM trades WHERE account_id = ? AND voided = 0 AND created_at >= ?').get(account.id, dayStart) as Sums,
    );
    return {
      balance: round2(account.starting_balance + all.pnl - all.fees),
      realizedDayPnl: round2(day.pnl - day.fees),
      unrealized: round2(this.unrealized(account.id, t)),
    };
  }

  unrealized(accountId: number, t = this.clock.now()): number {
    let total = 0;
    for (const p of this.openPositions(accountId)) {
      const contract = findContract(p.contract_id);
      const last = this.lastPrice(p.contract_id, t);
      if (!contract || last === undefined) continue;
      total += (last - p.average_ticks) * p.size * contract.tickValue;
    }
    return total;
  }

  openPositions(accountId: number): PositionRow[] {
    return this.remember(`positions:${accountId}`, () => this.db.prepare('SELECT * FROM positions WHERE account_id = ? AND size != 0 ORDER BY id').all(accountId) as PositionRow[]);
  }

  /** The violation that stops the account trading now, if any (the permanent one first). */
  activeViolation(accountId: number, t = this.clock.now()): { duration: number; expires_at: number } | undefined {
    return this.db
      .prepare('SELECT duration, expires_at FROM violations WHERE account_id = ? AND voided = 0 AND expires_at > ? ORDER BY expires_at DESC LIMIT 1')
      .get(accountId, t) as { duration: number; expires_at: number } | undefined;
  }

  accountSearch(user: UserRow, onlyActive: boolean): ResponseOf<'accountSearch'> {
    const rows = this.db.prepare(`SELECT * FROM accounts WHERE user_id = ? ${onlyActive ? 'AND active = 1' : ''} ORDER BY id`).all(user.id) as AccountRow[];
    const now = this.clock.now();
    return {
      ...ok(),
      accounts: rows.map((a) => ({
        id: a.id,
        name: a.name,
        balance: this.figures(a, now).balance,
        canTrade: a.active === 1 && this.activeViolation(a.id, now) === undefined,
        isVisible: true,
        simulated: a.simulated === 1,
      })),
    };
  }

  // ------------------------------------------------------------------ contracts and bars

  contractSearch(searchText: string): ResponseOf<'contractSearch'> {
    const text = searchText.trim().toUpperCase();
    const matches = CONTRACTS.filter((c) => text === '' || [c.id, c.name, c.symbolId, c.description].some((f) => f.toUpperCase().includes(text)));
    return { ...ok(), contracts: matches.slice(0, Limits.contractsPerSearch).map(contractRecord) };
  }

  contractAvailable(): ResponseOf<'contractAvailable'> {
    return { ...ok(), contracts: CONTRACTS.filter((c) => c.activeContract).map(contractRecord) };
  }

  contractById(contractId: string): ResponseOf<'contractById'> | Envelope {
    const contract = CONTRACTS.find((c) => c.id === contractId);
    if (!contract) return fail(ContractByIdErrorCode.ContractNotFound, `No contract with id ${contractId}`);
    return { ...ok(), contract: contractRecord(contract) };
  }

  retrieveBars(req: S.RetrieveBarsRequest): ResponseOf<'retrieveBars'> | Envelope {
    const contract = typeof req.contractId === 'string' ? CONTRACTS.find((c) => c.id === req.contractId) : undefined;
    const market = contract && this.market(contract.id);
    if (!contract || !market) return fail(RetrieveBarsErrorCode.ContractNotFound, `No contract with id ${String(req.contractId)}`);
    const unit = barUnitFromCode(req.unit);
    if (!unit) return fail(RetrieveBarsErrorCode.UnitInvalid, `unit must be 1 (Second) to 6 (Month), got ${req.unit}`);
    if (req.unitNumber < 1) return fail(RetrieveBarsErrorCode.UnitNumberInvalid, `unitNumber must be at least 1, got ${req.unitNumber}`);
    if (req.limit < 1 || req.limit > Limits.barsPerRequest) {
      return fail(RetrieveBarsErrorCode.LimitInvalid, `limit must be between 1 and ${Limits.barsPerRequest}, got ${req.limit}`);
    }
    const bars = market.bars(timeframe(unit, req.unitNumber), Date.parse(req.startTime), Date.parse(req.endTime), this.clock.now(), req.limit, req.includePartialBar);
    const g = contract.grid;
    return { ...ok(), bars: bars.map((b) => ({ t: iso(b.t), o: g.toPrice(b.o), h: g.toPrice(b.h), l: g.toPrice(b.l), c: g.toPrice(b.c), v: b.v })) };
  }

  // ------------------------------------------------------------------ orders

  orderSearch(user: UserRow, req: S.OrderSearchRequest): ResponseOf<'orderSearch'> | Envelope {
    if (!this.ownedAccount(user, req.accountId)) return fail(AccountSearchErrorCode.AccountNotFound, `No account ${req.accountId}`);
    const end = req.endTimestamp ? Date.parse(req.endTimestamp) : Number.MAX_SAFE_INTEGER;
    const rows = this.db
      .prepare('SELECT * FROM orders WHERE account_id = ? AND created_at >= ? AND created_at <= ? ORDER BY id')
      .all(req.accountId, Date.parse(req.startTimestamp), end) as OrderRow[];
    return {
      ...ok(),
      orders: rows.map((o) => ({
        ...this.openOrderRecord(o),
        symbolId: findContract(o.contract_id)?.symbolId ?? '',
        fillVolume: o.fill_volume,
        customTag: o.custom_tag,
      })),
    };
  }

  orderSearchOpen(user: UserRow, accountId: number): ResponseOf<'orderSearchOpen'> | Envelope {
    if (!this.ownedAccount(user, accountId)) return fail(AccountSearchErrorCode.AccountNotFound, `No account ${accountId}`);
    const rows = this.db.prepare('SELECT * FROM orders WHERE account_id = ? AND status IN (?, ?) ORDER BY id').all(accountId, OrderStatus.Open, OrderStatus.Pending) as OrderRow[];
    return { ...ok(), orders: rows.map((o) => this.openOrderRecord(o)) };
  }

  private openOrderRecord(o: OrderRow): S.OpenOrder {
    const grid = findContract(o.contract_id)?.grid;
    const price = (ticks: number | null): number | null => (ticks === null || !grid ? null : grid.toPrice(ticks));
    const stop = o.type === OrderType.TrailingStop && o.trail_distance !== null && o.trail_extreme !== null ? trailStopPrice(this.trailState(o)) : o.stop_ticks;
    return {
      id: o.id,
      accountId: o.account_id,
      contractId: o.contract_id,
      creationTimestamp: iso(o.created_at),
      updateTimestamp: iso(o.updated_at),
      status: o.status,
      type: o.type,
      side: o.side,
      size: o.size,
      limitPrice: price(o.limit_ticks),
      stopPrice: price(stop),
      filledPrice: price(o.filled_ticks),
    };
  }

  private trailState(o: OrderRow): TrailState {
    return { side: sideName(o.side), distance: o.trail_distance as number, extreme: o.trail_extreme as number };
  }

  place(user: UserRow, req: S.PlaceOrderRequest): ResponseOf<'orderPlace'> | Envelope {
    return this.db.transaction(() => this.placeInTransaction(user, req))();
  }

  private placeInTransaction(user: UserRow, req: S.PlaceOrderRequest): ResponseOf<'orderPlace'> | Envelope {
    const now = this.clock.now();
    const rejected = (code: number, message: string) => fail(code, message);
    const account = this.ownedAccount(user, req.accountId);
    if (!account) return rejected(PlaceErrorCode.AccountNotFound, `No account ${req.accountId}`);
    if (this.takePendingAnswer(account, 'pending_places')) return rejected(PlaceErrorCode.OrderPending, `Order on account ${account.name} is pending (test hook: nothing was placed)`);
    if (!account.active) return rejected(PlaceErrorCode.AccountRejected, `Account ${account.name} is not active`);
    const contract = findContract(req.contractId);
    const market = contract && this.market(contract.id);
    if (!contract || !market || contract.id !== req.contractId) return rejected(PlaceErrorCode.ContractNotFound, `No contract with id ${req.contractId}`);
    if (!contract.activeContract) return rejected(PlaceErrorCode.ContractNotActive, `Contract ${contract.id} has expired`);
    const violation = this.activeViolation(account.id, now);
    if (violation) {
      const until = violation.duration === ViolationDuration.Permanent ? 'permanently' : `until ${iso(violation.expires_at)}`;
      return rejected(PlaceErrorCode.AccountViolation, `Account ${account.name} is locked by a violation ${until}`);
    }
    if (req.type < OrderType.Limit || req.type > OrderType.TrailingStop) return rejected(PlaceErrorCode.OrderRejected, `Order type ${req.type} is not supported (1 Limit, 2 Market, 3 StopLimit, 4 Stop, 5 TrailingStop)`);
    if (req.side !== OrderSide.Bid && req.side !== OrderSide.Ask) return rejected(PlaceErrorCode.OrderRejected, `side must be 0 (Bid) or 1 (Ask), got ${req.side}`);
    if (req.size < 1) return rejected(PlaceErrorCode.OrderRejected, `size must be at least 1, got ${req.size}`);
    const needs = {
      limitPrice: req.type === OrderType.Limit || req.type === OrderType.StopLimit,
      stopPrice: req.type === OrderType.Stop || req.type === OrderType.StopLimit,
      trailPrice: req.type === OrderType.TrailingStop,
    };
    const ticks: Partial<Record<keyof typeof needs, number>> = {};
    for (const field of ['limitPrice', 'stopPrice', 'trailPrice'] as const) {
      const value = req[field];
      if (!needs[field]) {
        if (value !== null && value !== undefined) return rejected(PlaceErrorCode.OrderRejected, `${field} does not apply to order type ${req.type}`);
        continue;
      }
      if (value === null || value === undefined) return rejected(PlaceErrorCode.OrderRejected, `${field} is required for order type ${req.type}`);
      const t = contract.grid.toTicks(value);
      if (!Number.isInteger(t)) return rejected(PlaceErrorCode.OrderRejected, `${field} ${value} is not a multiple of the tick size ${contract.tickSize}`);
      ticks[field] = t;
    }
    const bracketProblem = bracketRefusal(req.side === OrderSide.Bid ? 'buy' : 'sell', req.stopLossBracket, req.takeProfitBracket);
    if (bracketProblem !== undefined) return rejected(PlaceErrorCode.OrderRejected, bracketProblem);
    if (req.customTag !== null && req.customTag !== undefined) {
      const taken = this.db.prepare('SELECT id FROM orders WHERE account_id = ? AND custom_tag = ?').get(account.id, req.customTag);
      if (taken) return rejected(PlaceErrorCode.OrderRejected, `customTag ${JSON.stringify(req.customTag)} is already used on account ${account.name}`);
    }
    const last = market.lastPrice(now);
    if (!market.isOpen(now) || last === undefined) return rejected(PlaceErrorCode.OutsideTradingHours, `${contract.name} is not trading at ${iso(now)}`);
    const insufficient = this.marginShortfall(account, contract, req.side, req.size, now);
    if (insufficient) return rejected(PlaceErrorCode.InsufficientFunds, insufficient);

    const trail = req.type === OrderType.TrailingStop ? startTrail(sideName(req.side), last, ticks.trailPrice as number) : undefined;
    const info = this.db
      .prepare(
        `INSERT INTO orders (account_id, contract_id, type, side, size, limit_ticks, stop_ticks, trail_distance, trail_extreme, status,
           custom_tag, stop_loss_bracket, take_profit_bracket, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        account.id,
        contract.id,
        req.type,
        req.side,
        req.size,
        ticks.limitPrice ?? null,
        ticks.stopPrice ?? null,
        trail?.distance ?? null,
        trail?.extreme ?? null,
        OrderStatus.Open,
        req.customTag ?? null,
        req.stopLossBracket ? JSON.stringify(req.stopLossBracket) : null,
        req.takeProfitBracket ? JSON.stringify(req.takeProfitBracket) : null,
        now,
        now,
      );
    const orderId = Number(info.lastInsertRowid);
    this.matchAtPrice(this.order(orderId), last, now);
    this.logger.debug({ orderId, accountId: account.id, contractId: contract.id, type: req.type }, 'order placed');
    return { ...ok(), orderId };
  }

  /** Why an order that adds exposure cannot be afforded, or undefined. */
  private marginShortfall(account: AccountRow, contract: SimContract, side: number, size: number, t: number): string | undefined {
    const positions = this.openPositions(account.id);
    const current = positions.find((p) => p.contract_id === contract.id)?.size ?? 0;
    const signed = side === OrderSide.Bid ? size : -size;
    if (Math.abs(current + signed) <= Math.abs(current)) return undefined;
    let used = 0;
    for (const p of positions) {
      const c = findContract(p.contract_id);
      if (c && c.id !== contract.id) used += dayMargin(c) * Math.abs(p.size);
    }
    const needed = used + dayMargin(contract) * Math.abs(current + signed);
    const { balance } = this.figures(account, t);
    if (balance <= 0) return `Balance ${balance} leaves no buying power`;
    if (needed > account.margin) return `Margin needed ${needed} exceeds the account's maximum margin ${account.margin}`;
    return undefined;
  }

  private order(id: number): OrderRow {
    return this.db.prepare('SELECT * FROM orders WHERE id = ?').get(id) as OrderRow;
  }

  modify(user: UserRow, req: S.ModifyRequest): Envelope {
    return this.db.transaction((): Envelope => {
      const now = this.clock.now();
      const account = this.ownedAccount(user, req.accountId);
      if (!account) return fail(ModifyErrorCode.AccountNotFound, `No account ${req.accountId}`);
      const order = this.db.prepare('SELECT * FROM orders WHERE id = ? AND account_id = ?').get(req.orderId, account.id) as OrderRow | undefined;
      if (!order) return fail(ModifyErrorCode.OrderNotFound, `No order ${req.orderId} on account ${account.id}`);
      const contract = findContract(order.contract_id);
      const market = contract && this.market(contract.id);
      if (!contract || !market) return fail(ModifyErrorCode.ContractNotFound, `Contract ${order.contract_id} is no longer listed`);
      if (order.status !== OrderStatus.Open) return fail(ModifyErrorCode.Rejected, `Order ${order.id} is not open (status ${order.status})`);
      const changes: Partial<OrderRow> = {};
      if (req.size !== null && req.size !== undefined) {
        if (req.size < 1) return fail(ModifyErrorCode.Rejected, `size must be at least 1, got ${req.size}`);
        changes.size = req.size;
      }
      const aligned = (field: string, value: number): number | Envelope => {
        const t = contract.grid.toTicks(value);
        return Number.isInteger(t) ? t : fail(ModifyErrorCode.Rejected, `${field} ${value} is not a multiple of the tick size ${contract.tickSize}`);
      };
      if (req.limitPrice !== null && req.limitPrice !== undefined) {
        if (order.type !== OrderType.Limit && order.type !== OrderType.StopLimit) return fail(ModifyErrorCode.Rejected, `limitPrice applies to Limit and StopLimit orders only`);
        const t = aligned('limitPrice', req.limitPrice);
        if (typeof t !== 'number') return t;
        changes.limit_ticks = t;
      }
      if (req.stopPrice !== null && req.stopPrice !== undefined) {
        if (order.type !== OrderType.Stop && order.type !== OrderType.StopLimit) return fail(ModifyErrorCode.Rejected, `stopPrice applies to Stop and StopLimit orders only`);
        const t = aligned('stopPrice', req.stopPrice);
        if (typeof t !== 'number') return t;
        changes.stop_ticks = t;
      }
      if (req.trailPrice !== null && req.trailPrice !== undefined) {
        // Spec 4.1: an absolute price; the gap to the last traded price, in whole ticks, becomes the trail.
        if (order.type !== OrderType.TrailingStop) return fail(ModifyErrorCode.Rejected, `trailPrice applies to TrailingStop orders only`);
        const last = market.lastPrice(now);
        if (last === undefined) return fail(ModifyErrorCode.Rejected, `${contract.name} has no last traded price`);
        const t = aligned('trailPrice', req.trailPrice);
        if (typeof t !== 'number') return t;
        const trail = startTrail(sideName(order.side), last, t);
        changes.trail_distance = trail.distance;
        changes.trail_extreme = trail.extreme;
      }
      const entries = Object.entries(changes);
      if (entries.length > 0) {
        this.db.prepare(`UPDATE orders SET ${entries.map(([k]) => `${k} = ?`).join(', ')}, updated_at = ? WHERE id = ?`).run(...entries.map(([, v]) => v), now, order.id);
        const last = market.lastPrice(now);
        if (last !== undefined && market.isOpen(now)) this.matchAtPrice(this.order(order.id), last, now);
      }
      return ok();
    })();
  }

  cancel(user: UserRow, req: S.CancelRequest): Envelope {
    return this.db.transaction((): Envelope => {
      const account = this.ownedAccount(user, req.accountId);
      if (!account) return fail(CancelErrorCode.AccountNotFound, `No account ${req.accountId}`);
      if (this.takePendingAnswer(account, 'pending_cancels')) return fail(CancelErrorCode.Pending, `Cancel of order ${req.orderId} is pending (test hook: nothing was cancelled)`);
      if (account.is_follower) return fail(CancelErrorCode.AccountRejected, CancelRejectionMessage.Follower);
      if (!account.simulated) return fail(CancelErrorCode.AccountRejected, CancelRejectionMessage.Live);
      const order = this.db.prepare('SELECT * FROM orders WHERE id = ? AND account_id = ?').get(req.orderId, account.id) as OrderRow | undefined;
      if (!order) return fail(CancelErrorCode.OrderNotFound, `No order ${req.orderId} on account ${account.id}`);
      if (order.status !== OrderStatus.Open) return fail(CancelErrorCode.Rejected, `Order ${order.id} is not open (status ${order.status})`);
      this.setStatus(order.id, OrderStatus.Cancelled, this.clock.now());
      return ok();
    })();
  }

  /**
   * Test hook (the account options `pendingPlaces` / `pendingCancels`): while the account's counter is
   * above zero, a request answers pending without acting, and the counter goes down by one.
   */
  private takePendingAnswer(account: AccountRow, counter: 'pending_places' | 'pending_cancels'): boolean {
    if (account[counter] <= 0) return false;
    this.db.prepare(`UPDATE accounts SET ${counter} = ${counter} - 1 WHERE id = ?`).run(account.id);
    return true;
  }

  private setStatus(orderId: number, status: number, t: number): void {
    this.db.prepare('UPDATE orders SET status = ?, updated_at = ? WHERE id = ?').run(status, t, orderId);
  }

  // ------------------------------------------------------------------ positions

  positionSearchOpen(user: UserRow, accountId: number): ResponseOf<'positionSearchOpen'> | Envelope {
    if (!this.ownedAccount(user, accountId)) return fail(AccountSearchErrorCode.AccountNotFound, `No account ${accountId}`);
    return {
      ...ok(),
      positions: this.openPositions(accountId).map((p) => ({
        id: p.id,
        accountId: p.account_id,
        contractId: p.contract_id,
        creationTimestamp: iso(p.opened_at),
        type: p.size > 0 ? PositionType.Long : PositionType.Short,
        size: Math.abs(p.size),
        averagePrice: averagePrice(p),
      })),
    };
  }

  closePosition(user: UserRow, accountId: number, contractId: string, size?: number): Envelope {
    const codes = size === undefined ? CloseContractErrorCode : PartialCloseErrorCode;
    return this.db.transaction((): Envelope => {
      const now = this.clock.now();
      const account = this.ownedAccount(user, accountId);
      if (!account) return fail(codes.AccountNotFound, `No account ${accountId}`);
      const contract = CONTRACTS.find((c) => c.id === contractId);
      const market = contract && this.market(contract.id);
      if (!contract || !market) return fail(codes.ContractNotFound, `No contract with id ${contractId}`);
      if (!account.active) return fail(codes.AccountRejected, `Account ${account.name} is not active`);
      const position = this.openPositions(account.id).find((p) => p.contract_id === contract.id);
      if (!position) return fail(codes.PositionNotFound, `No open position in ${contract.id}`);
      if (!contract.activeContract) return fail(codes.ContractNotActive, `Contract ${contract.id} has expired`);
      if (size !== undefined && (size < 1 || size > Math.abs(position.size))) {
        return fail(PartialCloseErrorCode.InvalidCloseSize, `size must be between 1 and ${Math.abs(position.size)}, got ${size}`);
      }
      const last = market.lastPrice(now);
      if (!market.isOpen(now) || last === undefined) return fail(codes.OrderRejected, `${contract.name} is not trading at ${iso(now)}`);
      this.marketOrder(account.id, contract.id, position.size > 0 ? OrderSide.Ask : OrderSide.Bid, size ?? Math.abs(position.size), last, now);
      return ok();
    })();
  }

  /** Places and fills a market order at once (closing, liquidation). */
  private marketOrder(accountId: number, contractId: string, side: number, size: number, price: number, t: number): void {
    const info = this.db
      .prepare('INSERT INTO orders (account_id, contract_id, type, side, size, status, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)')
      .run(accountId, contractId, OrderType.Market, side, size, OrderStatus.Open, t, t);
    this.fill(this.order(Number(info.lastInsertRowid)), price, t);
  }

  // ------------------------------------------------------------------ trades

  tradeSearch(user: UserRow, req: S.TradeSearchRequest): ResponseOf<'tradeSearch'> | Envelope {
    if (!this.ownedAccount(user, req.accountId)) return fail(AccountSearchErrorCode.AccountNotFound, `No account ${req.accountId}`);
    const end = req.endTimestamp ? Date.parse(req.endTimestamp) : Number.MAX_SAFE_INTEGER;
    const rows = this.db
      .prepare('SELECT * FROM trades WHERE account_id = ? AND created_at >= ? AND created_at <= ? ORDER BY id')
      .all(req.accountId, Date.parse(req.startTimestamp), end) as TradeRow[];
    return { ...ok(), trades: rows.map((t) => tradeRecord(t)) };
  }

  // ------------------------------------------------------------------ matching

  /** Advances matching and the rules through the market path up to `to`. */
  step(to: number): void {
    const from = this.lastStep;
    if (to <= from) return;
    this.memo = new Map();
    try {
      this.stepInTransaction(from, to);
    } finally {
      this.memo = undefined;
    }
  }

  private stepInTransaction(from: number, to: number): void {
    this.db.transaction(() => {
      const contracts = this.db
        .prepare('SELECT contract_id FROM orders WHERE status = ? UNION SELECT contract_id FROM positions WHERE size != 0')
        .all(OrderStatus.Open) as { contract_id: string }[];
      const points: { contractId: string; point: PricePoint }[] = [];
      const previous = new Map<string, number | undefined>();
      for (const { contract_id: contractId } of contracts) {
        const market = this.market(contractId);
        if (!market) continue;
        previous.set(contractId, market.lastPrice(from));
        for (const point of market.pointsBetween(from, to)) points.push({ contractId, point });
      }
      points.sort((a, b) => a.point.time - b.point.time);
      for (const { contractId, point } of points) {
        this.matchContract(contractId, previous.get(contractId), point);
        previous.set(contractId, point.price);
        this.checkAccountsIn(contractId, point.time);
      }
      this.lastStep = to;
      setMeta(this.db, 'lastStep', String(to));
    })();
  }

  private matchContract(contractId: string, before: number | undefined, point: PricePoint): void {
    const orders = this.remember(`open:${contractId}`, () => this.db.prepare('SELECT * FROM orders WHERE contract_id = ? AND status = ? ORDER BY id').all(contractId, OrderStatus.Open) as OrderRow[]);
    const generation = this.generation;
    for (const order of orders) {
      // A fill earlier in this loop may have cancelled a bracket sibling: re-read after any change.
      const current = generation === this.generation ? order : this.order(order.id);
      if (current.status !== OrderStatus.Open) continue;
      if (before === undefined || point.gap) this.matchAtPrice(current, point.price, point.time);
      else this.matchAlong(current, before, point.price, point.time);
    }
  }

  /** Matching against a single price (placement, modify, a gap): the order fills at that price if it is marketable. */
  private matchAtPrice(order: OrderRow, price: number, t: number): void {
    this.matchAlong(order, price, price, t);
  }

  /**
   * Matching against a continuous move from `from` to `to`: a level crossed inside the move fills at the
   * level; a level already through at `from` fills at `from`.
   */
  private matchAlong(order: OrderRow, from: number, to: number, t: number): void {
    const buy = order.side === OrderSide.Bid;
    const lo = Math.min(from, to);
    const hi = Math.max(from, to);
    const limitFill = (limit: number, start: number, low: number, high: number): number | undefined => {
      if (buy) return low <= limit ? (start <= limit ? start : limit) : undefined;
      return high >= limit ? (start >= limit ? start : limit) : undefined;
    };
    const stopTrigger = (stop: number): number | undefined => {
      if (buy) return hi >= stop ? (from >= stop ? from : stop) : undefined;
      return lo <= stop ? (from <= stop ? from : stop) : undefined;
    };
    switch (order.type) {
      case OrderType.Market:
        this.fill(order, from, t);
        return;
      case OrderType.Limit: {
        const price = limitFill(order.limit_ticks as number, from, lo, hi);
        if (price !== undefined) this.fill(order, price, t);
        return;
      }
      case OrderType.Stop: {
        const price = stopTrigger(order.stop_ticks as number);
        if (price !== undefined) this.fill(order, price, t);
        return;
      }
      case OrderType.StopLimit: {
        let start = from;
        if (!order.triggered) {
          const at = stopTrigger(order.stop_ticks as number);
          if (at === undefined) return;
          this.db.prepare('UPDATE orders SET triggered = 1, updated_at = ? WHERE id = ?').run(t, order.id);
          order.triggered = 1;
          order.updated_at = t;
          start = at;
        }
        const price = limitFill(order.limit_ticks as number, start, Math.min(start, to), Math.max(start, to));
        if (price !== undefined) this.fill(order, price, t);
        return;
      }
      case OrderType.TrailingStop: {
        let state = this.trailState(order);
        if (from !== to) state = advanceTrail(state, from);
        if (trailTriggered(state, to) || trailTriggered(state, from)) {
          const stop = trailStopPrice(state);
          const price = buy ? Math.max(stop, from) : Math.min(stop, from);
          this.fill(order, price, t);
          return;
        }
        state = advanceTrail(state, to);
        if (state.extreme !== order.trail_extreme) {
          this.db.prepare('UPDATE orders SET trail_extreme = ? WHERE id = ?').run(state.extreme, order.id);
          order.trail_extreme = state.extreme;
        }
        return;
      }
      default:
        return;
    }
  }

  /** Fills an order completely at `price` (ticks): trades, position, brackets, rules. */
  private fill(order: OrderRow, price: number, t: number): void {
    this.changed();
    const contract = findContract(order.contract_id) as SimContract;
    this.db.prepare('UPDATE orders SET status = ?, fill_volume = size, filled_ticks = ?, updated_at = ? WHERE id = ?').run(OrderStatus.Filled, price, t, order.id);
    const signed = order.side === OrderSide.Bid ? order.size : -order.size;
    const position = this.db.prepare('SELECT * FROM positions WHERE account_id = ? AND contract_id = ?').get(order.account_id, order.contract_id) as PositionRow | undefined;
    const held = position?.size ?? 0;
    const insertTrade = this.db.prepare(
      'INSERT INTO trades (account_id, contract_id, order_id, side, size, price_ticks, pnl, fees, entry_ticks, entered_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
    );
    const fees = (lots: number) => round2(lots * contract.feePerSide);
    let size = held;
    let average = position?.average_ticks ?? 0;
    let openedAt = position && position.size !== 0 ? position.opened_at : t;
    const closing = held !== 0 && Math.sign(held) !== Math.sign(signed) ? Math.min(Math.abs(held), Math.abs(signed)) : 0;
    if (closing > 0) {
      const pnl = round2((price - average) * Math.sign(held) * closing * contract.tickValue);
      insertTrade.run(order.account_id, order.contract_id, order.id, order.side, closing, price, pnl, fees(closing), average, openedAt, t);
      size = held + Math.sign(signed) * closing;
    }
    const opening = Math.abs(signed) - closing;
    if (opening > 0) {
      // A half-turn: it opens (or adds to) a position, so it has no profit and loss (null).
      insertTrade.run(order.account_id, order.contract_id, order.id, order.side, opening, price, null, fees(opening), null, null, t);
      if (size === 0) {
        average = price;
        openedAt = t;
      } else {
        average = (average * Math.abs(size) + price * opening) / (Math.abs(size) + opening);
      }
      size += Math.sign(signed) * opening;
    }
    if (position) {
      this.db.prepare('UPDATE positions SET size = ?, average_ticks = ?, opened_at = ?, updated_at = ? WHERE id = ?').run(size, size === 0 ? 0 : average, openedAt, t, position.id);
    } else {
      this.db.prepare('INSERT INTO positions (account_id, contract_id, size, average_ticks, opened_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)').run(order.account_id, order.contract_id, size, average, openedAt, t);
    }

    // Brackets: the entry's fill places the protective orders; one of them filling cancels the other.
    if (order.bracket_of !== null) {
      this.db.prepare('UPDATE orders SET status = ?, updated_at = ? WHERE bracket_of = ? AND id != ? AND status = ?').run(OrderStatus.Cancelled, t, order.bracket_of, order.id, OrderStatus.Open);
    }
    // A position closed by other means (Position/closeContract, an opposite order) leaves the legs
    // working, as the real service does (extras): the client cancels them itself.
    if (size !== 0 && (order.stop_loss_bracket || order.take_profit_bracket)) this.placeBrackets(order, price, t);
    this.copyToFollowers(order, price, t);
    this.evaluateRules(order.account_id, t);
  }

  /**
   * Copy trading: a fill on a leader account is repeated, at the same price and size, on the active
   * follower accounts of the same user that are not locked by a violation.
   */
  private copyToFollowers(order: OrderRow, price: number, t: number): void {
    const leader = this.db.prepare('SELECT user_id, is_leader FROM accounts WHERE id = ?').get(order.account_id) as { user_id: number; is_leader: number };
    if (!leader.is_leader) return;
    const followers = this.db.prepare('SELECT id FROM accounts WHERE user_id = ? AND is_follower = 1 AND active = 1 AND id != ? ORDER BY id').all(leader.user_id, order.account_id) as { id: number }[];
    for (const { id } of followers) {
      if (this.activeViolation(id, t)) continue;
      this.marketOrder(id, order.contract_id, order.side, order.size, price, t);
    }
  }

  private placeBrackets(entry: OrderRow, price: number, t: number): void {
    const exitSide = entry.side === OrderSide.Bid ? OrderSide.Ask : OrderSide.Bid;
    // Signed ticks (checked at the place): each leg sits at the fill price plus its offset.
    const insert = this.db.prepare(
      `INSERT INTO orders (account_id, contract_id, type, side, size, limit_ticks, stop_ticks, trail_distance, trail_extreme, status, bracket_of, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    if (entry.stop_loss_bracket) {
      const b = JSON.parse(entry.stop_loss_bracket) as S.Bracket;
      const level = price + b.ticks;
      const trailing = b.type === OrderType.TrailingStop;
      insert.run(entry.account_id, entry.contract_id, b.type, exitSide, entry.size, null, trailing ? null : level, trailing ? Math.abs(b.ticks) : null, trailing ? price : null, OrderStatus.Open, entry.id, t, t);
    }
    if (entry.take_profit_bracket) {
      const b = JSON.parse(entry.take_profit_bracket) as S.Bracket;
      insert.run(entry.account_id, entry.contract_id, OrderType.Limit, exitSide, entry.size, price + b.ticks, null, null, null, OrderStatus.Open, entry.id, t, t);
    }
  }

  // ------------------------------------------------------------------ rules

  private checkAccountsIn(contractId: string, t: number): void {
    const accounts = this.remember(`holders:${contractId}`, () => this.db.prepare('SELECT DISTINCT account_id FROM positions WHERE contract_id = ? AND size != 0').all(contractId) as { account_id: number }[]);
    for (const { account_id } of accounts) this.evaluateRules(account_id, t);
  }

  rules(templateId: number): RuleRow[] {
    return this.remember(`rules:${templateId}`, () => this.db.prepare('SELECT * FROM rules WHERE template_id = ? ORDER BY id').all(templateId) as RuleRow[]);
  }

  /**
   * Checks the template's rules and the personal limits; a break records a violation of spec 2.10, cancels
   * the account's working orders and closes its positions at the market.
   */
  evaluateRules(accountId: number, t: number): void {
    if (this.liquidating) return;
    const account = this.remember(`account:${accountId}`, () => this.db.prepare('SELECT * FROM accounts WHERE id = ?').get(accountId) as AccountRow);
    const f = this.floors(account, t);
    const dayPnl = f.realizedDayPnl + f.unrealized;
    const equity = f.balance + f.unrealized;
    const day = this.calendar.dayStart(t);
    const rules = this.rules(account.template_id);
    const dailyRule = rules.find((r) => r.kind === 'dailyLossLimit');
    const maximumRule = rules.find((r) => r.kind === 'maximumLossLimit');
    const minimumBalance = maximumRule ? round2(f.maximumLossFloor) : 0;
    const exists = (type: number, ruleId: number | null, sameDay: boolean): boolean =>
      this.db
        .prepare(`SELECT 1 FROM violations WHERE account_id = ? AND type = ? AND rule_id IS ? AND voided = 0 ${sameDay ? 'AND trade_day = ?' : ''}`)
        .get(...[accountId, type, ruleId, ...(sameDay ? [day] : [])]) !== undefined;
    const broken: { type: number; duration: number; ruleId: number | null }[] = [];
    if (dailyRule && equity <= f.dailyLossFloor && !exists(ViolationType.RuleBreak, dailyRule.id, true)) {
      broken.push({ type: ViolationType.RuleBreak, duration: dailyRule.violation_duration, ruleId: dailyRule.id });
    }
    if (maximumRule && equity <= f.maximumLossFloor && !exists(ViolationType.RuleBreak, maximumRule.id, maximumRule.violation_duration !== ViolationDuration.Permanent)) {
      broken.push({ type: ViolationType.RuleBreak, duration: maximumRule.violation_duration, ruleId: maximumRule.id });
    }
    const personalLoss = account.personal_daily_loss_limit;
    if (personalLoss !== null && personalLoss > 0 && dayPnl <= -personalLoss && !exists(ViolationType.PersonalDailyLossLimit, null, true)) {
      broken.push({ type: ViolationType.PersonalDailyLossLimit, duration: ViolationDuration.Personal, ruleId: null });
    }
    const target = account.personal_daily_profit_target;
    if (target !== null && target > 0 && dayPnl >= target && !exists(ViolationType.PersonalDailyProfitTarget, null, true)) {
      broken.push({ type: ViolationType.PersonalDailyProfitTarget, duration: ViolationDuration.Personal, ruleId: null });
    }
    if (broken.length === 0) return;
    const insert = this.db.prepare(
      `INSERT INTO violations (account_id, type, duration, rule_id, trade_day, created_at, expires_at, balance, realized_pnl, unrealized_pnl,
         minimum_balance, daily_loss_limit, personal_daily_loss_limit, personal_daily_profit_target) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    for (const b of broken) {
      const expires = b.duration === ViolationDuration.Permanent ? NEVER : this.calendar.nextDayStart(t);
      insert.run(accountId, b.type, b.duration, b.ruleId, day, t, expires, f.balance, f.realizedDayPnl, f.unrealized, minimumBalance, dailyRule?.amount ?? 0, personalLoss, target);
      this.logger.info({ accountId, type: b.type, duration: b.duration, ruleId: b.ruleId }, 'violation');
    }
    this.liquidate(accountId, t);
  }

  /**
   * The account's figures and the floors of its template's rules at `t`, from the engine's rule book
   * (src/engine/rules.ts, variants mapped in rules.ts) fed with the account's high-water marks, which are
   * brought up to `t` first.
   */
  floors(account: AccountRow, t = this.clock.now()): AccountFloors {
    const f = this.figures(account, t);
    let book = this.books.get(account.id);
    if (!book) {
      book = accountRuleBook(account.starting_balance, this.rules(account.template_id));
      this.books.set(account.id, book);
    }
    const variant = book.config.maximumLossLimit?.variant;
    if (variant === 'trailingIntraday') this.raiseHighEquity(account, f.balance + f.unrealized);
    if (variant === 'trailingEndOfDay' || variant === 'trailingUntilLocked') this.rollHighBalance(account, this.calendar.dayStart(t));
    book.restore({
      startOfDayBalance: round2(f.balance - f.realizedDayPnl),
      highBalance: account.high_balance ?? account.starting_balance,
      highEquity: account.high_equity ?? account.starting_balance,
    });
    return { ...f, dailyLossFloor: book.dailyLossFloor(), maximumLossFloor: book.maximumLossFloor() };
  }

  private raiseHighEquity(account: AccountRow, equity: number): void {
    if (equity <= (account.high_equity ?? account.starting_balance)) return;
    this.db.prepare('UPDATE accounts SET high_equity = ? WHERE id = ?').run(equity, account.id);
    account.high_equity = equity;
  }

  /**
   * Brings the highest end-of-day balance up to the trading day starting at `dayStart`: the balance at the
   * end of each day that had trades since the last roll (days without trades end where the previous did).
   */
  private rollHighBalance(account: AccountRow, dayStart: number): void {
    const through = account.high_balance_through;
    if (dayStart <= through) return;
    const before = this.db.prepare('SELECT COALESCE(SUM(COALESCE(pnl, 0) - fees), 0) AS net FROM trades WHERE account_id = ? AND voided = 0 AND created_at < ?').get(account.id, through) as { net: number };
    const trades = this.db
      .prepare('SELECT COALESCE(pnl, 0) - fees AS net, created_at FROM trades WHERE account_id = ? AND voided = 0 AND created_at >= ? AND created_at < ? ORDER BY created_at, id')
      .all(account.id, through, dayStart) as { net: number; created_at: number }[];
    let high = account.high_balance ?? account.starting_balance;
    let balance = account.starting_balance + before.net;
    trades.forEach((trade, i) => {
      balance += trade.net;
      const next = trades[i + 1];
      if (next === undefined || this.calendar.dayStart(next.created_at) !== this.calendar.dayStart(trade.created_at)) high = Math.max(high, round2(balance));
    });
    this.db.prepare('UPDATE accounts SET high_balance = ?, high_balance_through = ? WHERE id = ?').run(high, dayStart, account.id);
    account.high_balance = high;
    account.high_balance_through = dayStart;
  }

  private liquidate(accountId: number, t: number): void {
    this.changed();
    this.liquidating = true;
    try {
      this.db.prepare('UPDATE orders SET status = ?, updated_at = ? WHERE account_id = ? AND status = ?').run(OrderStatus.Cancelled, t, accountId, OrderStatus.Open);
      for (const p of this.openPositions(accountId)) {
        const last = this.lastPrice(p.contract_id, t);
        if (last === undefined) continue;
        this.marketOrder(accountId, p.contract_id, p.size > 0 ? OrderSide.Ask : OrderSide.Bid, Math.abs(p.size), last, t);
      }
      this.db.prepare('UPDATE accounts SET updated_at = ? WHERE id = ?').run(t, accountId);
    } finally {
      this.liquidating = false;
      this.changed();
    }
  }
}

export function averagePrice(p: PositionRow): number {
  const contract = findContract(p.contract_id);
  if (!contract) return p.average_ticks;
  return Number((p.average_ticks * contract.tickSize).toFixed(contract.grid.decimals + 4));
}

export function tradeRecord(t: TradeRow): S.Trade {
  const grid = findContract(t.contract_id)?.grid;
  return {
    id: t.id,
    accountId: t.account_id,
    contractId: t.contract_id,
    creationTimestamp: iso(t.created_at),
    price: grid ? grid.toPrice(t.price_ticks) : t.price_ticks,
    profitAndLoss: t.pnl,
    fees: t.fees,
    side: t.side,
    size: t.size,
    voided: t.voided === 1,
    orderId: t.order_id,
  };
}

function sameSecret(expected: string, given: string): boolean {
  const a = Buffer.from(expected);
  const b = Buffer.from(given);
  return a.length === b.length && timingSafeEqual(a, b);
}
