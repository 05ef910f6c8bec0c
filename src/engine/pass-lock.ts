/**
 * The evaluation's pass-lock: once an evaluation account meets its pass conditions (the profit target, the
 * minimum of trading days, consistency), it stops opening risk, so a later loss cannot break the maximum
 * loss limit before the firm counts the pass. The guard refuses every opening order with PASS_LOCKED;
 * `flatten` also closes what is open, `hold` keeps it.
 *
 * The conditions are judged as if the trading day ended now, on the realized balance or the equity,
 * whichever is lower: today counts as a trading day once it has a fill, and today's PnL counts as a day for
 * consistency. The realized balance, because the firm judges balances and a lock at an open position's
 * paper gain would give it back in the flatten's slippage, right at the target; the equity when lower,
 * because closing a losing position must not undo the pass the lock protects. Locking at the first moment
 * the close would pass is what keeps that close passing (with `flatten`; with `hold` an open position can
 * still lose, and the lock stays).
 *
 * One implementation for the backtest, `evaluate`, paper and live: the engine's, fed by the fills and the
 * day rolls it sees. A live restart replays the journal's fills, so the count of days and the lock come back.
 */
import { passConditionsMet, type PassConditions, type PassLockMode } from './evaluation-rules.ts';
import type { Logger } from './log.ts';
import type { Multicast } from './multicast.ts';

export interface PassLockOptions extends PassConditions {
  readonly mode: Exclude<PassLockMode, 'off'>;
  /** The evaluation's name, for the messages. */
  readonly name?: string;
}

/** The lock engaging: what the journal, the decisions, the report and a notification say. */
export interface PassLockEvent {
  /** Epoch ms it engaged (the fill or bar that met the conditions). */
  readonly time: number;
  readonly tradingDay: string;
  readonly mode: 'flatten' | 'hold';
  readonly evaluation: string | null;
  readonly profit: number;
  readonly profitTarget: number;
  readonly tradingDays: number;
  readonly bestDay: number | null;
  /** One readable line: why new risk is refused from now on. */
  readonly message: string;
}

export class PassLock {
  /** The event of the lock once engaged; undefined while the account has not passed. */
  engaged: PassLockEvent | undefined;
  /** A fill came since the last check: the bar loop checks after the venue's fills of a bar. */
  dirty = false;
  /** Engaged outside a bar in `flatten` mode: the flatten waits for the next bar or clock step. */
  flattenDue = false;
  /** Closed days with a fill, and the best closed day's realized PnL. */
  private tradingDays = 0;
  private bestDay = Number.NEGATIVE_INFINITY;
  private day = '';
  private dayStart: number;
  private tradedToday = false;

  constructor(
    readonly options: PassLockOptions,
    private readonly startingBalance: number,
    private readonly events$: Multicast<PassLockEvent>,
    private readonly logger: Logger,
  ) {
    this.dayStart = startingBalance;
  }

  /** A new trading day opens with `balance`: the day before closes (a day, a trading day if it traded). */
  startDay(day: string, balance: number): void {
    if (this.day !== '') {
      if (this.tradedToday) this.tradingDays++;
      if (balance - this.dayStart > this.bestDay) this.bestDay = balance - this.dayStart;
    }
    this.day = day;
    this.dayStart = balance;
    this.tradedToday = false;
  }

  noteFill(): void {
    this.tradedToday = true;
    this.dirty = true;
  }

  /**
   * Worth a check: not engaged, and a fill came or the realized profit reaches the target (an open loser
   * may have held the lock back; each bar looks again until it closes or recovers).
   */
  due(balance: number): boolean {
    return this.engaged === undefined && (this.dirty || balance - this.startingBalance >= this.options.profitTarget);
  }

  /** Checks the conditions at `balance` (realized) and `equity`; returns the event when the lock engages now. */
  check(time: number, balance: number, equity: number): PassLockEvent | undefined {
    this.dirty = false;
    if (this.engaged !== undefined) return undefined;
    const value = Math.min(balance, equity);
    const today = value - this.dayStart;
    const progress = {
      profit: value - this.startingBalance,
      tradingDays: this.tradingDays + (this.tradedToday ? 1 : 0),
      bestDay: Math.max(this.bestDay, today),
    };
    if (!passConditionsMet(this.options, progress)) return undefined;
    const { mode, name, profitTarget } = this.options;
    const what = name === undefined ? 'the evaluation' : `the evaluation "${name}"`;
    const event: PassLockEvent = {
      time,
      tradingDay: this.day,
      mode,
      evaluation: name ?? null,
      profit: round(progress.profit),
      profitTarget,
      tradingDays: progress.tradingDays,
      bestDay: Number.isFinite(progress.bestDay) ? round(progress.bestDay) : null,
      message: `${what} met its pass conditions (profit ${round(progress.profit).toFixed(2)} of ${profitTarget.toFixed(2)}, ${progress.tradingDays} trading days): no new risk (evaluation.passLock: ${mode}${mode === 'flatten' ? ', positions closed' : ', open positions kept'})`,
    };
    this.engaged = event;
    this.logger.warn({ passLock: event }, 'evaluation passed: pass-lock engaged');
    this.events$.next(event);
    return event;
  }
}

function round(value: number): number {
  return Math.round(value * 100) / 100;
}

/** The engine's pass-lock of an evaluation under a mode: undefined for `off`. */
export function evaluationPassLock(
  rules: PassConditions & { readonly name?: string },
  mode: PassLockMode,
): PassLockOptions | undefined {
  if (mode === 'off') return undefined;
  return {
    mode,
    profitTarget: rules.profitTarget,
    ...(rules.name === undefined ? {} : { name: rules.name }),
    ...(rules.minimumTradingDays === undefined ? {} : { minimumTradingDays: rules.minimumTradingDays }),
    ...(rules.consistency === undefined ? {} : { consistency: rules.consistency }),
  };
}
