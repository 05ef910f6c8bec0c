import type { Accounting } from './accounting.ts';
import type { MarketPhase, MarketSession } from './market-hours.ts';
import type { SessionClock, SessionPhase } from './trading-day.ts';
import type { OrderBook } from './order-book.ts';
import type { OrderRate } from './order-rate.ts';
import type { PassLock } from './pass-lock.ts';
import { riskRoom, type GuardOrder, type GuardState, type TradingState } from './risk.ts';
import type { RuleBook } from './account-rules.ts';
import type { TradingStateMachine } from './trading-state.ts';
import type { ContractSpec, Side } from './types.ts';

/**
 * What the risk guard sees of the engine when it checks an intent: one mutable object, refreshed before
 * each check instead of built per intent.
 */
export class GuardStep implements GuardState {
  now = 0;
  tradingState: TradingState = 'ACTIVE';
  lockedUntil = 0;
  passLock: string | undefined = undefined;
  session: SessionPhase = 'open';
  equity = 0;
  dayPnl = 0;
  dailyLossFloor = -Infinity;
  maximumLossFloor = -Infinity;
  personalDailyLossLimit: number | undefined = undefined;
  personalDailyProfitTarget: number | undefined = undefined;

  constructor(
    private readonly contracts: ReadonlyMap<string, ContractSpec>,
    private readonly accounting: Accounting,
    private readonly book: OrderBook,
    private readonly rules: RuleBook,
    private readonly trading: TradingStateMachine,
    private readonly rate: OrderRate,
    private readonly sessions: SessionClock | undefined,
    private readonly quotedPrice: ((contractId: string) => number | undefined) | undefined,
    /** Each contract's market hours (only contracts whose hours are known), and the calendar flat-by in ms. */
    private readonly markets: ReadonlyMap<string, MarketSession>,
    private readonly flatBeforeCloseMs: number,
    private readonly passLocker: PassLock | undefined,
  ) {}

  marketPhase(contractId: string): MarketPhase {
    const market = this.markets.get(contractId);
    return market === undefined ? 'open' : market.phase(this.now, this.flatBeforeCloseMs);
  }

  /** The guard's view at `time`, for one check. */
  refresh(time: number): GuardState {
    const equity = this.accounting.equity();
    // The personal limits are read here like the floors, so a change of the account's limits needs no
    // second step to reach the guard.
    const config = this.rules.config;
    this.now = time;
    this.tradingState = this.trading.current.state;
    this.lockedUntil = this.trading.lockedUntil;
    this.passLock = this.passLocker?.engaged?.message;
    this.session = this.sessions === undefined ? 'open' : this.sessions.phase(time);
    this.equity = equity;
    this.dayPnl = equity - this.rules.dayStartBalance;
    this.dailyLossFloor = this.rules.dailyLossFloor();
    this.maximumLossFloor = this.rules.maximumLossFloor();
    this.personalDailyLossLimit = config.personalDailyLossLimit;
    this.personalDailyProfitTarget = config.personalDailyProfitTarget;
    return this;
  }

  /**
   * The room `refresh` would give the guard now (riskRoom), read without touching the guard's state: a
   * strategy may ask while the guard is in the middle of a check.
   */
  roomNow(safetyBuffer: number): number {
    const equity = this.accounting.equity();
    return riskRoom(
      {
        equity,
        dayPnl: equity - this.rules.dayStartBalance,
        dailyLossFloor: this.rules.dailyLossFloor(),
        maximumLossFloor: this.rules.maximumLossFloor(),
        personalDailyLossLimit: this.rules.config.personalDailyLossLimit,
      },
      { safetyBuffer },
    );
  }

  contract(id: string): ContractSpec | undefined {
    return this.contracts.get(id);
  }

  position(id: string): number {
    return this.accounting.position(id) + this.book.provisionalPosition(id);
  }

  lastPrice(id: string): number {
    const quoted = this.quotedPrice?.(id);
    return quoted === undefined ? this.accounting.lastPrice(id) : quoted;
  }

  order(id: string): GuardOrder | undefined {
    const order = this.book.get(id);
    return order === undefined ? undefined : { ...order, size: order.size - order.filledSize };
  }

  openOrderCount(): number {
    return this.book.size;
  }

  workingEntrySize(contractId: string, side: Side): number {
    return this.book.workingEntrySize(contractId, side);
  }

  hasStopOrder(contractId: string, side: Side): boolean {
    return this.book.hasStopOrder(contractId, side);
  }

  ordersSince(since: number): number {
    return this.rate.sentSince(since);
  }
}
