/**
 * The account's rule limits for the engine's guard, from the administration interface's
 * `TradingAccount/find` (spec 2.15) and the config's `limits`.
 *
 * Precedence, limit by limit: a value in the config's `limits` wins (an explicit override), the gateway's
 * value fills what the config leaves out, and a limit neither gives is not checked. Where both give one
 * and they differ, the difference is reported as an anomaly: the gateway enforces its own value whatever
 * the guard believes.
 *
 * The record carries amounts and the current state (`startOfDayBalance`, `drawDownLimit` = the maximum
 * loss floor now) but not the maximum loss limit's variant: that comes from the config when it sets
 * `maximumLossLimit`, else the gateway's template where the session can learn it (the local simulator's,
 * `SessionOptions.maximumLossVariant`), else the engine's default (`trailingEndOfDay`). The floor the gateway reports is
 * reached through `RuleBook.restore`: the high-water mark it implies is `drawDownLimit + maximumLoss`.
 */
import type * as S from '../../protocol/schemas.ts';
import type { AccountConfig, LimitName, MllVariant, RuleBook } from '../../engine/account-rules.ts';
import type { RestoreState } from '../../engine/runner.ts';

/** The rule limits one `TradingAccount/find` record states (0 in the record means "none"). */
export interface GatewayLimits {
  readonly dailyLossLimit?: number;
  readonly maximumLossLimit?: number;
  /** The maximum loss floor now (`drawDownLimit`), when the account has a maximum loss limit. */
  readonly maximumLossFloor?: number;
  readonly personalDailyLossLimit?: number;
  readonly personalDailyProfitTarget?: number;
  readonly startOfDayBalance: number;
}

/** The config's side: the session's `account` option (the config's `limits`). */
export type ConfiguredLimits = Partial<AccountConfig>;

export interface LimitDisagreement {
  /** A limit, or `dailyLossFloor` / `maximumLossFloor` for the equity levels derived from them. */
  readonly limit: LimitName | 'dailyLossFloor' | 'maximumLossFloor';
  /** The guard's value; null when the guard does not check a limit the gateway has. */
  readonly config: number | null;
  readonly gateway: number;
}

export interface ResolvedLimits {
  /** Rule limits for `createEngine`'s `account` (the session adds `startingBalance`). */
  readonly account: Omit<ConfiguredLimits, 'startingBalance'>;
  /** Where each limit in force came from. */
  readonly sources: Partial<Record<LimitName, 'config' | 'gateway'>>;
}

const RULE_LIMITS = ['dailyLossLimit', 'personalDailyLossLimit', 'personalDailyProfitTarget'] as const;
const DEFAULT_MLL_VARIANT: MllVariant = 'trailingEndOfDay';

/** Money amounts are equal when they agree to the cent (the record's decimals may carry float noise). */
function sameMoney(a: number, b: number): boolean {
  return Math.abs(a - b) < 0.005;
}

function present(value: number): number | undefined {
  // The spec does not give the sign of a loss amount; the simulator and real records use positives.
  return value === 0 || !Number.isFinite(value) ? undefined : Math.abs(value);
}

export function gatewayLimits(t: S.TradingAccount): GatewayLimits {
  const maximumLossLimit = present(t.maximumLoss);
  return {
    ...optional('dailyLossLimit', present(t.dailyLoss)),
    ...optional('maximumLossLimit', maximumLossLimit),
    ...optional('maximumLossFloor', maximumLossLimit === undefined ? undefined : t.drawDownLimit),
    ...optional('personalDailyLossLimit', present(t.personalDailyLossLimit)),
    ...optional('personalDailyProfitTarget', present(t.personalDailyProfitTarget)),
    startOfDayBalance: t.startOfDayBalance,
  };
}

function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}

/** The limits in force: the config's where it gives them, the gateway's elsewhere (see the file comment). */
export function resolveLimits(
  configured: ConfiguredLimits,
  gateway: GatewayLimits | undefined,
  variant: MllVariant = DEFAULT_MLL_VARIANT,
): ResolvedLimits {
  const { startingBalance: _startingBalance, ...account } = configured;
  const resolved: Omit<ConfiguredLimits, 'startingBalance'> = { ...account };
  const sources: Partial<Record<LimitName, 'config' | 'gateway'>> = {};
  for (const name of RULE_LIMITS) {
    if (configured[name] !== undefined) {
      sources[name] = 'config';
    } else if (gateway?.[name] !== undefined) {
      resolved[name] = gateway[name];
      sources[name] = 'gateway';
    }
  }
  if (configured.maximumLossLimit !== undefined) {
    sources.maximumLossLimit = 'config';
  } else if (gateway?.maximumLossLimit !== undefined) {
    resolved.maximumLossLimit = { amount: gateway.maximumLossLimit, variant };
    sources.maximumLossLimit = 'gateway';
  }
  return { account: resolved, sources };
}

/**
 * What `engine.restore` needs so the engine's floors start where the gateway's are: today's starting
 * balance, and the high-water mark behind `drawDownLimit` for the trailing variants.
 */
export function restoreFromGateway(gateway: GatewayLimits, variant: MllVariant | undefined): RestoreState {
  const high =
    gateway.maximumLossFloor !== undefined && gateway.maximumLossLimit !== undefined
      ? gateway.maximumLossFloor + gateway.maximumLossLimit
      : undefined;
  return {
    startOfDayBalance: gateway.startOfDayBalance,
    ...(high === undefined || variant === undefined || variant === 'static'
      ? {}
      : variant === 'trailingIntraday'
        ? { highEquity: high }
        : { highBalance: high }),
  };
}

/**
 * The guard's limits against the gateway's: each amount both give (a config override, or a limit the
 * gateway changed during the run), then the floors where the amounts agree (a different amount's floor
 * differs by construction): a static floor measured from another starting balance, a high-water mark
 * the engine already had higher, or floors that trailed apart during the run.
 */
export function limitDisagreements(rules: RuleBook, gateway: GatewayLimits): LimitDisagreement[] {
  const out: LimitDisagreement[] = [];
  const config = rules.config;
  for (const name of RULE_LIMITS) {
    const own = config[name];
    const theirs = gateway[name];
    if (theirs !== undefined && (own === undefined || !sameMoney(own, theirs)))
      out.push({ limit: name, config: own ?? null, gateway: theirs });
  }
  const theirMll = gateway.maximumLossLimit;
  if (
    theirMll !== undefined &&
    (config.maximumLossLimit === undefined || !sameMoney(config.maximumLossLimit.amount, theirMll))
  ) {
    out.push({ limit: 'maximumLossLimit', config: config.maximumLossLimit?.amount ?? null, gateway: theirMll });
  }
  if (
    gateway.dailyLossLimit !== undefined &&
    config.dailyLossLimit !== undefined &&
    sameMoney(config.dailyLossLimit, gateway.dailyLossLimit)
  ) {
    const theirs = gateway.startOfDayBalance - gateway.dailyLossLimit;
    const own = rules.dailyLossFloor();
    if (!sameMoney(own, theirs)) out.push({ limit: 'dailyLossFloor', config: own, gateway: theirs });
  }
  const mll = config.maximumLossLimit;
  if (
    gateway.maximumLossFloor !== undefined &&
    gateway.maximumLossLimit !== undefined &&
    mll !== undefined &&
    sameMoney(mll.amount, gateway.maximumLossLimit)
  ) {
    const own = rules.maximumLossFloor();
    if (!sameMoney(own, gateway.maximumLossFloor))
      out.push({ limit: 'maximumLossFloor', config: own, gateway: gateway.maximumLossFloor });
  }
  return out;
}

export function disagreementText(d: LimitDisagreement): string {
  return `${d.limit}: guard ${d.config ?? 'none'}, gateway ${d.gateway}`;
}
