/**
 * The prop-firm account's rule floors (spec 2.11) and the trader's personal limits (spec 2.15), as equity
 * levels, and the breaches a given equity causes, typed as the gateway's violations (spec 2.10):
 * 3 personal daily loss, 5 personal daily profit target, 6 rule break (daily loss limit or maximum loss
 * limit). The runner evaluates them at every bar's worst price; the guard reads the same floors.
 */
import { z } from 'zod';

export const MLL_VARIANTS = ['static', 'trailingEndOfDay', 'trailingIntraday', 'trailingUntilLocked'] as const;
export type MllVariant = (typeof MLL_VARIANTS)[number];

export const MLL_VARIANT_DESCRIPTIONS: Record<MllVariant, string> = {
  static: 'floor = starting balance - limit, never moves',
  trailingEndOfDay: 'floor = highest end-of-day balance (realized) - limit',
  trailingIntraday: 'floor = highest equity seen, unrealized PnL included (best price of each bar) - limit',
  trailingUntilLocked:
    'trails the end-of-day high balance until the floor reaches the starting balance (+ lockAbove), then stays there',
};

const money = z.number().finite().positive();

export const accountConfigSchema = z.strictObject({
  startingBalance: z.number().finite().positive(),
  /** Money the account may lose in one trading day (spec 2.11 dailyLossLimit.limit). */
  dailyLossLimit: money.optional(),
  maximumLossLimit: z
    .strictObject({
      amount: money,
      variant: z.enum(MLL_VARIANTS).default('trailingEndOfDay'),
      /**
       * A trailing floor stops rising at startingBalance + lockAbove (money, 0 = at the starting balance):
       * the lock of many evaluations, end-of-day or intraday. Left out, trailingEndOfDay and trailingIntraday
       * never stop and trailingUntilLocked stops at the starting balance. Meaningless for a static floor.
       */
      lockAbove: z.number().finite().nonnegative().optional(),
    })
    .refine((mll) => !(mll.variant === 'static' && mll.lockAbove !== undefined), {
      message: 'lockAbove applies to the trailing variants; a static floor never moves',
      path: ['lockAbove'],
    })
    .optional(),
  personalDailyLossLimit: money.optional(),
  personalDailyProfitTarget: money.optional(),
  /** What reaching a personal limit does: 'reduce' allows only reducing orders for the rest of the day; 'halt' also flattens. */
  personalLimitAction: z.enum(['reduce', 'halt']).default('reduce'),
});

export type AccountConfig = z.input<typeof accountConfigSchema>;
export type ResolvedAccountConfig = z.output<typeof accountConfigSchema>;

/** The limits an account's administrator can change while a bot runs (a limit left out is not checked). */
export type AccountLimits = Pick<
  AccountConfig,
  'dailyLossLimit' | 'maximumLossLimit' | 'personalDailyLossLimit' | 'personalDailyProfitTarget'
>;

export type BreachType = 3 | 5 | 6;
export type BreachRule = 'dailyLossLimit' | 'maximumLossLimit';
/** Spec 2.10 `duration`: 1 permanent, 2 temporary, 0 on personal-limit violations. */
export type BreachDuration = 0 | 1 | 2;

export interface Breach {
  readonly type: BreachType;
  /** Which rule of a type-6 rule break. */
  readonly rule?: BreachRule;
  readonly duration: BreachDuration;
  /** Start of the bar (epoch ms) in which it happened. */
  readonly time: number;
  readonly tradingDay: string;
  /** Equity at the moment of the breach (balance + unrealized). */
  readonly equity: number;
  readonly balance: number;
  readonly dayPnl: number;
  /** Equity level (or day PnL level for personal limits) that was crossed. */
  readonly level: number;
}

/** Smallest distance to each limit seen, in money (negative once crossed). */
export interface Approach {
  headroom: number;
  time: number;
}

export type LimitName = 'dailyLossLimit' | 'maximumLossLimit' | 'personalDailyLossLimit' | 'personalDailyProfitTarget';

export class RuleBook {
  private resolved: ResolvedAccountConfig;
  private startOfDayBalance: number;
  private highEndOfDay: number;
  private highIntraday: number;
  private dayKey = '';
  private dllHit = false;
  private mllHit = false;
  private personalLossHit = false;
  private personalTargetHit = false;
  readonly closest: Record<LimitName, Approach> = {
    dailyLossLimit: { headroom: Infinity, time: NaN },
    maximumLossLimit: { headroom: Infinity, time: NaN },
    personalDailyLossLimit: { headroom: Infinity, time: NaN },
    personalDailyProfitTarget: { headroom: Infinity, time: NaN },
  };

  /** False when no limit is configured: the runner then skips the per-bar evaluation. */
  active = false;

  constructor(config: AccountConfig) {
    this.resolved = accountConfigSchema.parse(config);
    this.active = hasLimits(this.resolved);
    this.startOfDayBalance = this.config.startingBalance;
    this.highEndOfDay = this.config.startingBalance;
    this.highIntraday = this.config.startingBalance;
  }

  /** Back to the state of a new account (same limits): a Monte Carlo replays many accounts with one book. */
  reset(): void {
    const start = this.resolved.startingBalance;
    this.startOfDayBalance = start;
    this.highEndOfDay = start;
    this.highIntraday = start;
    this.dayKey = '';
    this.dllHit = false;
    this.mllHit = false;
    this.personalLossHit = false;
    this.personalTargetHit = false;
    for (const approach of Object.values(this.closest)) {
      approach.headroom = Infinity;
      approach.time = NaN;
    }
  }

  get config(): ResolvedAccountConfig {
    return this.resolved;
  }

  /**
   * Replace the four limits while running (an administrator changed them at the gateway). Floors are
   * recomputed from the same high-water marks and today's starting balance; a breach already reported
   * stays reported. Throws a ZodError naming the field when a limit is not a positive amount.
   */
  setLimits(limits: AccountLimits): void {
    const { startingBalance, personalLimitAction } = this.resolved;
    this.resolved = accountConfigSchema.parse({ startingBalance, personalLimitAction, ...definedOnly(limits) });
    this.active = hasLimits(this.resolved);
  }

  /** A new trading day starts with this balance (the previous day's closing balance). */
  startDay(dayKey: string, balance: number): void {
    if (this.dayKey !== '' && balance > this.highEndOfDay) this.highEndOfDay = balance;
    this.dayKey = dayKey;
    this.startOfDayBalance = balance;
    this.dllHit = false;
    this.personalLossHit = false;
    this.personalTargetHit = false;
  }

  /** Resume from a known account state (a live restart): today's starting balance and the high-water marks. */
  restore(state: { startOfDayBalance?: number; highBalance?: number; highEquity?: number }): void {
    if (state.startOfDayBalance !== undefined) this.startOfDayBalance = state.startOfDayBalance;
    if (state.highBalance !== undefined) this.highEndOfDay = Math.max(this.highEndOfDay, state.highBalance);
    if (state.highEquity !== undefined) this.highIntraday = Math.max(this.highIntraday, state.highEquity);
  }

  get tradingDay(): string {
    return this.dayKey;
  }

  get dayStartBalance(): number {
    return this.startOfDayBalance;
  }

  /** Equity at or below which the daily loss limit is broken (-Infinity when none is configured). */
  dailyLossFloor(): number {
    const limit = this.config.dailyLossLimit;
    return limit === undefined ? -Infinity : this.startOfDayBalance - limit;
  }

  /** Equity at or below which the maximum loss limit is broken (-Infinity when none is configured). */
  maximumLossFloor(): number {
    const mll = this.config.maximumLossLimit;
    if (mll === undefined) return -Infinity;
    switch (mll.variant) {
      case 'static':
        return this.config.startingBalance - mll.amount;
      case 'trailingEndOfDay':
        return this.locked(this.highEndOfDay - mll.amount, mll.lockAbove);
      case 'trailingIntraday':
        return this.locked(this.highIntraday - mll.amount, mll.lockAbove);
      case 'trailingUntilLocked':
        return this.locked(this.highEndOfDay - mll.amount, mll.lockAbove ?? 0);
    }
  }

  /** A trailing floor capped at its lock level, when it has one. */
  private locked(floor: number, lockAbove: number | undefined): number {
    return lockAbove === undefined ? floor : Math.min(floor, this.config.startingBalance + lockAbove);
  }

  /** The highest floor of the account's rules (the one that binds first). */
  tightestFloor(): number {
    return Math.max(this.dailyLossFloor(), this.maximumLossFloor());
  }

  /**
   * Evaluate a bar: `worstEquity` at the bar's adverse extreme, `bestEquity` at its favourable one.
   * The intraday high-water mark moves first (conservative: the high may have come after the low).
   * Calls `onBreach` once per breach (once per day for daily limits, once ever for the maximum loss).
   */
  evaluate(
    time: number,
    balance: number,
    worstEquity: number,
    bestEquity: number,
    onBreach: (breach: Breach) => void,
  ): void {
    if (bestEquity > this.highIntraday) this.highIntraday = bestEquity;
    const start = this.startOfDayBalance;
    const worstDay = worstEquity - start;
    const config = this.config;
    if (config.dailyLossLimit !== undefined) {
      const floor = start - config.dailyLossLimit;
      const headroom = worstEquity - floor;
      if (headroom < this.closest.dailyLossLimit.headroom) this.note('dailyLossLimit', headroom, time);
      if (!this.dllHit && headroom <= 0) {
        this.dllHit = true;
        onBreach(this.breach(6, 'dailyLossLimit', 2, time, worstEquity, balance, floor));
      }
    }
    if (config.maximumLossLimit !== undefined) {
      const floor = this.maximumLossFloor();
      const headroom = worstEquity - floor;
      if (headroom < this.closest.maximumLossLimit.headroom) this.note('maximumLossLimit', headroom, time);
      if (!this.mllHit && headroom <= 0) {
        this.mllHit = true;
        onBreach(this.breach(6, 'maximumLossLimit', 1, time, worstEquity, balance, floor));
      }
    }
    if (config.personalDailyLossLimit !== undefined) {
      const headroom = worstDay + config.personalDailyLossLimit;
      if (headroom < this.closest.personalDailyLossLimit.headroom) this.note('personalDailyLossLimit', headroom, time);
      if (!this.personalLossHit && headroom <= 0) {
        this.personalLossHit = true;
        onBreach(this.breach(3, undefined, 0, time, worstEquity, balance, -config.personalDailyLossLimit));
      }
    }
    if (config.personalDailyProfitTarget !== undefined) {
      const headroom = config.personalDailyProfitTarget - (bestEquity - start);
      if (headroom < this.closest.personalDailyProfitTarget.headroom)
        this.note('personalDailyProfitTarget', headroom, time);
      if (!this.personalTargetHit && headroom <= 0) {
        this.personalTargetHit = true;
        onBreach(this.breach(5, undefined, 0, time, bestEquity, balance, config.personalDailyProfitTarget));
      }
    }
  }

  /**
   * Whether equity as low as `worstEquity`, after a high as high as `bestEquity`, could break the daily or
   * maximum loss limit (not yet broken) today. No side effect: a replay asks it to skip the points of a day
   * that cannot break anything and evaluate that day once, as its lowest and highest equity.
   */
  couldBreach(worstEquity: number, bestEquity: number): boolean {
    const config = this.config;
    if (
      config.dailyLossLimit !== undefined &&
      !this.dllHit &&
      worstEquity <= this.startOfDayBalance - config.dailyLossLimit
    )
      return true;
    if (config.maximumLossLimit === undefined || this.mllHit) return false;
    const high = this.highIntraday;
    if (bestEquity > high) this.highIntraday = bestEquity;
    const floor = this.maximumLossFloor();
    this.highIntraday = high;
    return worstEquity <= floor;
  }

  /** True once the maximum loss limit was broken (permanent). */
  get maximumLossBroken(): boolean {
    return this.mllHit;
  }

  private note(name: LimitName, headroom: number, time: number): void {
    const approach = this.closest[name];
    approach.headroom = headroom;
    approach.time = time;
  }

  private breach(
    type: BreachType,
    rule: BreachRule | undefined,
    duration: BreachDuration,
    time: number,
    equity: number,
    balance: number,
    level: number,
  ): Breach {
    return {
      type,
      ...(rule === undefined ? {} : { rule }),
      duration,
      time,
      tradingDay: this.dayKey,
      equity,
      balance,
      dayPnl: equity - this.startOfDayBalance,
      level,
    };
  }
}

function hasLimits(c: ResolvedAccountConfig): boolean {
  return (
    c.dailyLossLimit !== undefined ||
    c.maximumLossLimit !== undefined ||
    c.personalDailyLossLimit !== undefined ||
    c.personalDailyProfitTarget !== undefined
  );
}

/** `{ dailyLossLimit: undefined }` means "none", as leaving the key out does (the schema is strict about keys). */
function definedOnly(limits: AccountLimits): AccountLimits {
  return Object.fromEntries(Object.entries(limits).filter(([, value]) => value !== undefined)) as AccountLimits;
}
