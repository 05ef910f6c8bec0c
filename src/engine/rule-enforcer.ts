import type { AccountSnapshot, Accounting } from './accounting.ts';
import type { BarClock } from './bar-clock.ts';
import type { SessionClock, SessionPhase, TradingCalendar } from './trading-day.ts';
import type { IntentRouter } from './intent-router.ts';
import type { Logger } from './log.ts';
import type { Multicast } from './multicast.ts';
import type { ResolvedRiskConfig } from './risk.ts';
import type { Breach, RuleBook } from './account-rules.ts';
import type { TradingStateMachine } from './trading-state.ts';

export interface RuleEnforcerParts {
  readonly rules: RuleBook;
  readonly accounting: Accounting;
  readonly calendar: TradingCalendar;
  readonly sessions: SessionClock | undefined;
  readonly limits: ResolvedRiskConfig;
  readonly trading: TradingStateMachine;
  readonly router: IntentRouter;
  readonly barClock: BarClock;
  readonly breaches$: Multicast<Breach>;
  readonly account$: Multicast<AccountSnapshot>;
  readonly logger: Logger;
}

/**
 * What the engine does when the account's rules act: a breach halts or reduces trading and flattens, a
 * new trading day restarts the day's limits, the session's flat-by time flattens.
 */
export class RuleEnforcer {
  /** Start of the next trading day (epoch ms): a bar or fill at or after it rolls the day. */
  nextDayStart = -Infinity;
  private session: SessionPhase = 'open';
  private readonly parts: RuleEnforcerParts;

  constructor(parts: RuleEnforcerParts) {
    this.parts = parts;
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
    if (trading.current.until <= time) trading.change('ACTIVE', `new trading day ${day}`, Infinity, time);
    if (account$.observed) account$.next(accounting.snapshot());
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
