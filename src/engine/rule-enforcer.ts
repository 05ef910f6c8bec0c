import type { AccountSnapshot, Accounting } from './accounting.ts';
import type { BarClock } from './bar-clock.ts';
import type { MarketPhase, MarketSession } from './market-hours.ts';
import type { SessionClock, SessionPhase, TradingCalendar } from './trading-day.ts';
import type { IntentRouter } from './intent-router.ts';
import type { Logger } from './log.ts';
import type { Multicast } from './multicast.ts';
import type { OrderBook } from './order-book.ts';
import type { PassLock } from './pass-lock.ts';
import type { ResolvedRiskConfig } from './risk.ts';
import type { Breach, RuleBook } from './account-rules.ts';
import type { TradingStateMachine } from './trading-state.ts';

const PASS_LOCK_FLATTEN = 'evaluation passed (pass-lock)';

export interface RuleEnforcerParts {
  readonly rules: RuleBook;
  readonly accounting: Accounting;
  readonly calendar: TradingCalendar;
  readonly sessions: SessionClock | undefined;
  /** The market hours of the contracts that have them (the calendar flat-by's). */
  readonly markets: ReadonlyMap<string, MarketSession>;
  readonly book: OrderBook;
  readonly limits: ResolvedRiskConfig;
  readonly trading: TradingStateMachine;
  readonly router: IntentRouter;
  readonly barClock: BarClock;
  readonly breaches$: Multicast<Breach>;
  readonly account$: Multicast<AccountSnapshot>;
  readonly logger: Logger;
  /** The evaluation's pass-lock, when one is configured. */
  readonly passLock: PassLock | undefined;
}

/**
 * What the engine does when the account's rules act: a breach halts or reduces trading and flattens, a
 * new trading day restarts the day's limits, the session's flat-by time flattens.
 */
export class RuleEnforcer {
  /** Start of the next trading day (epoch ms): a bar or fill at or after it rolls the day. */
  nextDayStart = -Infinity;
  /**
   * The next instant at which a contract's market phase may change (the calendar flat-by, a close, an
   * open): a bar ending at or after it calls `checkMarkets`. Infinity without a calendar flat-by.
   */
  marketCheckAt = Infinity;
  private session: SessionPhase = 'open';
  readonly passLock: PassLock | undefined;
  private readonly parts: RuleEnforcerParts;
  private readonly flatMs: number;
  private readonly marketPhases = new Map<string, MarketPhase>();

  constructor(parts: RuleEnforcerParts) {
    this.parts = parts;
    this.passLock = parts.passLock;
    const minutes = parts.limits.flatBeforeClose?.minutes;
    this.flatMs = minutes === undefined ? 0 : minutes * 60_000;
    if (this.flatMs > 0 && parts.markets.size > 0) this.marketCheckAt = -Infinity;
  }

  /**
   * The calendar flat-by (`risk.flatBeforeClose`): each contract whose market enters the flat-by before a
   * close (or is found closed) is flattened once; the guard refuses new risk until it reopens.
   */
  checkMarkets(time: number): void {
    if (this.flatMs === 0) return;
    let next = Infinity;
    for (const [contractId, market] of this.parts.markets) {
      const phase = market.phase(time, this.flatMs);
      const before = this.marketPhases.get(contractId);
      this.marketPhases.set(contractId, phase);
      // Entering the flat-by, or closing since the last look; a market found closed at the first look is
      // left alone (nothing can be closed before it opens).
      const entering = before === 'open' || (before === undefined && phase === 'closing');
      if (phase !== 'open' && entering && this.exposed(contractId)) {
        this.parts.router.flattenContract(
          contractId,
          phase === 'closing' ? 'flat before the close' : 'market closed',
          time,
        );
      }
      next = Math.min(next, market.nextChange(time, this.flatMs));
    }
    this.marketCheckAt = next;
  }

  /** The rule book's breach callback (one function for the engine's life, passed on every evaluation). */
  readonly onBreach = (breach: Breach): void => {
    const { logger, calendar, limits, trading, router, rules, barClock } = this.parts;
    logger.warn({ breach }, 'account rule breached');
    this.parts.breaches$.next(breach);
    const time = breach.time;
    const untilNextDay = calendar.nextDayStart(time);
    // A flatten is stamped at the end of the bar being processed (or the last one), else at the breach.
    const flattenAt = barClock.now === barClock.now ? barClock.now : time;
    if (breach.type === 6 && breach.rule === 'maximumLossLimit') {
      if (limits.lockoutAfterViolation) trading.lockedUntil = Infinity;
      trading.change('HALTED', 'maximum loss limit broken', Infinity, time);
      router.flattenAll('maximum loss limit', flattenAt);
    } else if (breach.type === 6) {
      if (limits.lockoutAfterViolation) trading.lockedUntil = Math.max(trading.lockedUntil, untilNextDay);
      if (!(trading.current.state === 'HALTED' && trading.current.until === Infinity))
        trading.change('HALTED', 'daily loss limit broken', untilNextDay, time);
      router.flattenAll('daily loss limit', flattenAt);
    } else {
      const reason = breach.type === 3 ? 'personal daily loss limit reached' : 'personal daily profit target reached';
      if (rules.config.personalLimitAction === 'halt') {
        if (trading.current.state !== 'HALTED') trading.change('HALTED', reason, untilNextDay, time);
        router.flattenAll(reason, flattenAt);
      } else if (trading.current.state === 'ACTIVE') {
        trading.change('REDUCING', reason, untilNextDay, time);
      }
    }
  };

  rollDayAtBar(times: Float64Array, i: number): void {
    this.rollDay(times[i]!);
  }

  rollDay(time: number): void {
    const { calendar, rules, accounting, trading, account$ } = this.parts;
    const day = calendar.dayOf(time);
    this.nextDayStart = calendar.nextDayStart(time);
    if (day === rules.tradingDay) return;
    accounting.startDay(day);
    rules.startDay(day, accounting.balance);
    this.parts.passLock?.startDay(day, accounting.balance);
    if (trading.current.until <= time) trading.change('ACTIVE', `new trading day ${day}`, Infinity, time);
    if (account$.observed) account$.next(accounting.snapshot());
  }

  /**
   * The evaluation's pass conditions, checked after fills: engaging the lock in `flatten` mode closes every
   * position; in `hold` mode only the guard refuses new risk. Within a bar the flatten is sent at once
   * (stamped like a breach's). A fill outside a bar may be one of the journal's, replayed at a live
   * restart before the fills that follow it: a flatten then would close a position that later fills already
   * closed, so it waits for the next bar or the clock's next step (`flushPassLock`), when the position is
   * the account's own.
   */
  checkPassLock(time: number, equity: number): void {
    const { passLock, accounting, barClock, router } = this.parts;
    const event = passLock?.check(time, accounting.balance, equity);
    if (event === undefined || event.mode !== 'flatten') return;
    if (barClock.index >= 0) router.flattenAll(PASS_LOCK_FLATTEN, barClock.now);
    else passLock!.flattenDue = true;
  }

  /** The flatten a pass-lock engaged outside a bar still owes. */
  flushPassLock(time: number): void {
    const passLock = this.parts.passLock;
    if (passLock === undefined || !passLock.flattenDue) return;
    passLock.flattenDue = false;
    this.parts.router.flattenAll(PASS_LOCK_FLATTEN, time);
  }

  /** A position or a working order in the contract. */
  private exposed(contractId: string): boolean {
    const book = this.parts.book;
    return (
      this.parts.accounting.position(contractId) !== 0 ||
      book.workingEntrySize(contractId, 'buy') > 0 ||
      book.workingEntrySize(contractId, 'sell') > 0 ||
      book.hasStopOrder(contractId, 'buy') ||
      book.hasStopOrder(contractId, 'sell')
    );
  }

  /** Only with sessions configured: flattens once when the session reaches its flat-by time. */
  checkSession(time: number): void {
    const phase = this.parts.sessions!.phase(time);
    if (phase === 'flatBy' && this.session !== 'flatBy') {
      this.session = phase;
      this.parts.router.flattenAll('flat-by time', time);
      return;
    }
    this.session = phase;
  }
}
