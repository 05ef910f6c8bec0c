/**
 * The simulator's trading engine: the parts wired together behind the requests the server routes here.
 * Every method takes already-validated wire requests and returns wire responses (types from the shared
 * schemas); the database is the only state, so a restart loses nothing.
 *
 * Parts, one job each: sessions (logins and tokens), contracts and market data, accounts (figures,
 * positions, buying power), the order desk (place, modify, cancel, close, searches), the matcher (orders
 * against quotes and the price path), the ledger (what a fill does), the rule checker (limits and
 * liquidation) and pending answers.
 */
import type { ResponseOf } from '../protocol/endpoints.ts';
import type * as S from '../protocol/schemas.ts';
import { TradingCalendar } from '../engine/trading-day.ts';
import type { Logger } from '../engine/log.ts';
import type { Quote } from '../market/quotes.ts';
import { AccountBook, type AccountFigures } from './accounts.ts';
import type { SimClock } from './clock.ts';
import { SimContext } from './context.ts';
import { MarketDesk, type SimContracts } from './contracts.ts';
import { Ledger } from './ledger.ts';
import type { ContractMarket } from './market/market.ts';
import { Matcher } from './matching.ts';
import { OrderDesk } from './orders.ts';
import { PendingAnswers, type PendingOptions } from './pending.ts';
import { RuleChecker, type AccountFloors } from './rule-check.ts';
import { Sessions } from './sessions.ts';
import type { AccountRow, Db, RuleRow, UserRow } from './store.ts';

export type { AccountFigures } from './accounts.ts';
export type { AccountFloors } from './rule-check.ts';

export interface SimEngineOptions {
  /** The exchange trading day: daily P&L, daily limits, lockouts and the statistics' days. */
  tradingDay?: TradingCalendar;
  pending?: PendingOptions;
  /** Seed of the pending draws when `pending.seed` is absent. */
  seed?: number;
}

export class SimEngine {
  readonly calendar: TradingCalendar;
  private readonly ctx: SimContext;
  private readonly sessions: Sessions;
  private readonly marketDesk: MarketDesk;
  private readonly desk: OrderDesk;

  constructor(
    readonly db: Db,
    readonly clock: SimClock,
    readonly contracts: SimContracts,
    /** One market per root. */
    readonly markets: ReadonlyMap<string, ContractMarket>,
    logger: Logger,
    options: SimEngineOptions = {},
  ) {
    this.calendar = options.tradingDay ?? new TradingCalendar();
    const ctx = new SimContext(db, clock, contracts, markets, logger, this.calendar);
    ctx.accounts = new AccountBook(ctx);
    ctx.ledger = new Ledger(ctx);
    ctx.matcher = new Matcher(ctx);
    ctx.rules = new RuleChecker(ctx);
    this.ctx = ctx;
    this.sessions = new Sessions(db, clock);
    this.marketDesk = new MarketDesk(contracts, markets, clock);
    this.desk = new OrderDesk(ctx, new PendingAnswers(db, options.pending, options.seed ?? 1));
  }

  market(contractId: string): ContractMarket | undefined {
    return this.ctx.market(contractId);
  }

  lastPrice(contractId: string, t = this.clock.now()): number | undefined {
    return this.ctx.lastPrice(contractId, t);
  }

  /** Best bid and ask (ticks) with their sizes, or undefined when the contract's market is closed. */
  quote(contractId: string, t = this.clock.now()): Quote | undefined {
    return this.ctx.matcher.quote(contractId, t);
  }

  /** Advances matching, pending answers, expiries and the rules through the market path up to `to`. */
  step(to: number): void {
    this.ctx.matcher.step(to);
  }

  // sessions
  login(userName: string, apiKey: string): ResponseOf<'login'> {
    return this.sessions.login(userName, apiKey);
  }
  issueToken(userId: number): string {
    return this.sessions.issueToken(userId);
  }
  authenticate(token: string): UserRow | undefined {
    return this.sessions.authenticate(token);
  }
  validate(user: UserRow): ResponseOf<'validate'> {
    return this.sessions.validate(user);
  }
  logout(token: string): S.TradingEnvelope {
    return this.sessions.logout(token);
  }

  // accounts
  ownedAccount(user: UserRow, accountId: number): AccountRow | undefined {
    return this.ctx.accounts.ownedAccount(user, accountId);
  }
  accountSearch(user: UserRow, onlyActive: boolean): ResponseOf<'accountSearch'> {
    return this.ctx.accounts.accountSearch(user, onlyActive);
  }
  positionSearchOpen(user: UserRow, accountId: number): ResponseOf<'positionSearchOpen'> | S.TradingEnvelope {
    return this.ctx.accounts.positionSearchOpen(user, accountId);
  }
  figures(account: AccountRow, t = this.clock.now()): AccountFigures {
    return this.ctx.accounts.figures(account, t);
  }
  activeViolation(accountId: number, t = this.clock.now()): { duration: number; expires_at: number } | undefined {
    return this.ctx.accounts.activeViolation(accountId, t);
  }
  floors(account: AccountRow, t = this.clock.now()): AccountFloors {
    return this.ctx.rules.floors(account, t);
  }
  rules(templateId: number): RuleRow[] {
    return this.ctx.rules.rules(templateId);
  }
  evaluateRules(accountId: number, t: number): void {
    this.ctx.rules.evaluate(accountId, t);
  }

  // contracts and bars
  contractSearch(searchText: string): ResponseOf<'contractSearch'> {
    return this.marketDesk.contractSearch(searchText);
  }
  contractAvailable(): ResponseOf<'contractAvailable'> {
    return this.marketDesk.contractAvailable();
  }
  contractById(contractId: string): ResponseOf<'contractById'> | S.TradingEnvelope {
    return this.marketDesk.contractById(contractId);
  }
  retrieveBars(req: S.RetrieveBarsRequest): ResponseOf<'retrieveBars'> | S.TradingEnvelope {
    return this.marketDesk.retrieveBars(req);
  }

  // orders, positions, trades
  place(user: UserRow, req: S.PlaceOrderRequest): ResponseOf<'orderPlace'> | S.TradingEnvelope {
    return this.desk.place(user, req);
  }
  modify(user: UserRow, req: S.ModifyRequest): S.TradingEnvelope {
    return this.desk.modify(user, req);
  }
  cancel(user: UserRow, req: S.CancelRequest): S.TradingEnvelope {
    return this.desk.cancel(user, req);
  }
  closePosition(user: UserRow, accountId: number, contractId: string, size?: number): S.TradingEnvelope {
    return this.desk.closePosition(user, accountId, contractId, size);
  }
  orderSearch(user: UserRow, req: S.OrderSearchRequest): ResponseOf<'orderSearch'> | S.TradingEnvelope {
    return this.desk.orderSearch(user, req);
  }
  orderSearchOpen(user: UserRow, accountId: number): ResponseOf<'orderSearchOpen'> | S.TradingEnvelope {
    return this.desk.orderSearchOpen(user, accountId);
  }
  tradeSearch(user: UserRow, req: S.TradeSearchRequest): ResponseOf<'tradeSearch'> | S.TradingEnvelope {
    return this.desk.tradeSearch(user, req);
  }
}
