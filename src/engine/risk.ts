/**
 * The risk guard: a pure function of (intent, state, limits) that accepts an intent (possibly reduced in
 * size) or rejects it with a reason code. Every intent passes it before any venue sees it; the runner
 * emits every decision on its risk-event stream. Allocation-light: an accepted intent that is not
 * changed returns a shared frozen result.
 */
import { z } from 'zod';
import type { MarketPhase } from './market-hours.ts';
import type { SessionPhase } from './trading-day.ts';
import type { ContractSpec, Intent, ModifyIntent, OrderSpec, PlaceIntent, Side } from './types.ts';

export const REASON_CODES = {
  INVALID_INTENT:
    'The intent is malformed (a field of the wrong type, an unknown side, kind or order type, a price that is not a finite number); the message names the field.',
  INVALID_SIZE: 'Size is not a positive whole number of contracts.',
  INVALID_BRACKET: 'Bracket distances must be positive whole numbers of ticks.',
  UNKNOWN_CONTRACT: 'The contract is not one the engine trades.',
  UNKNOWN_ORDER: 'A modify or cancel names no working order.',
  DUPLICATE_ID: 'A place reuses the client id of a working order (ids become customTags and must be unique).',
  TICK_MISALIGNED: 'A limit, stop or trail price is not a whole number of ticks on the contract grid.',
  PRICE_TOO_FAR:
    'A limit or stop price is implausibly far from the last price (more than maxPriceDistancePct): probably a typo or the wrong unit.',
  NO_LAST_PRICE: 'A trailing stop cannot be checked (or a trail modified) before a last price is known.',
  TRAIL_WRONG_SIDE:
    'trailPrice is on the wrong side of the last price (a sell trail must be below it, a buy trail above).',
  TRAIL_TOO_FAR:
    'trailPrice is farther from the last price than the configured maximum (an absolute price was probably meant, not a distance).',
  TRAIL_LOOSENS: 'The trailing-stop modify would move the stop away from the price (refused by configuration).',
  STATE_HALTED: 'Trading is HALTED: only cancels and flattens pass.',
  STATE_REDUCING: 'Trading is REDUCING: only orders that reduce exposure pass.',
  LOCKED_OUT: 'The account is locked out after a violation or the kill switch.',
  PASS_LOCKED:
    'The evaluation met its pass conditions (profit target, trading days, consistency) and evaluation.passLock locks it: no new risk, reducing orders pass.',
  PERSONAL_DAILY_LOSS: "The day's realized + unrealized PnL reached the personal daily loss limit: no new risk.",
  PERSONAL_DAILY_PROFIT_TARGET:
    "The day's realized + unrealized PnL reached the personal daily profit target: no new risk.",
  DAILY_LOSS_LIMIT: "Equity is at the account's daily loss floor (plus the safety buffer): no new risk.",
  MAXIMUM_LOSS_LIMIT: "Equity is at the account's maximum loss floor (plus the safety buffer): no new risk.",
  RISK_EXCEEDS_ROOM: 'Stop distance x tick value x size exceeds the room left under the tightest limit.',
  NO_PROTECTIVE_STOP: 'An entry without a protective stop (refused by configuration).',
  MAX_POSITION_SIZE: 'The position (with working orders) would exceed the maximum position size.',
  MAX_OPEN_ORDERS: 'Too many working orders.',
  ORDER_RATE: 'Too many orders in the rate window.',
  OUTSIDE_SESSION: 'No new risk outside the configured trading session.',
  FLAT_BY: 'Past the flat-by time: no new risk until the next session opens.',
  MARKET_CLOSED:
    "The contract's market is closed (daily break, weekend, holiday, after an early close): no new risk until it opens.",
  BEFORE_CLOSE:
    'Within risk.flatBeforeClose of the market closing (daily break, weekend, early close): positions were closed, no new risk until it reopens.',
  WARM_UP:
    'The strategy is still in its declared warm-up (its first bars): its indicators are not ready, so nothing is sent.',
  SUPERSEDED:
    'Several bars were processed at once (after an outage): a later target of the same strategy and contract replaced this one.',
  STRATEGY_PAUSED:
    'The strategy instance is paused (engine.setStrategyPaused): only what reduces its position, cancels and flattens pass.',
} as const;

export type ReasonCode = keyof typeof REASON_CODES;

/** The reason codes with their descriptions, in a stable order (the README's table is generated from it). */
export function reasonCodeTable(): Array<{ code: ReasonCode; description: string }> {
  return (Object.keys(REASON_CODES) as ReasonCode[]).map((code) => ({ code, description: REASON_CODES[code] }));
}

export type TradingState = 'ACTIVE' | 'REDUCING' | 'HALTED';

export const riskConfigSchema = z.strictObject({
  /** Largest absolute position per contract, working orders included. */
  maxPositionSize: z.number().int().positive().optional(),
  maxOpenOrders: z.number().int().positive().optional(),
  /** At most `orders` places and modifies within `windowMs`. */
  maxOrderRate: z
    .strictObject({ orders: z.number().int().positive(), windowMs: z.number().int().positive() })
    .optional(),
  /** Farthest a trailPrice may be from the last price, in ticks. */
  maxTrailTicks: z.number().int().positive().default(400),
  /** Farthest a limit or stop price may be from the last price, in percent of it (1600 meant for 6400 is 75%). */
  maxPriceDistancePct: z.number().positive().max(1000).default(10),
  requireProtectiveStop: z.boolean().default(false),
  refuseLooseningTrail: z.boolean().default(false),
  /** An entry whose risk exceeds the room left is rejected, or reduced to what fits. */
  oversize: z.enum(['reject', 'reduce']).default('reject'),
  /** Money kept between equity and each floor before it counts as reached. */
  safetyBuffer: z.number().finite().nonnegative().default(0),
  tradingDay: z
    .strictObject({ timeZone: z.string().default('America/Chicago'), startsAt: z.string().default('17:00') })
    .default({ timeZone: 'America/Chicago', startsAt: '17:00' }),
  sessions: z
    .strictObject({
      timeZone: z.string().optional(),
      open: z.string(),
      close: z.string(),
      flatBy: z.string().optional(),
      days: z.array(z.number().int().min(0).max(6)).optional(),
    })
    .optional(),
  /**
   * The calendar flat-by: `minutes` before each close of the contract's market (the daily break, the
   * weekend, an early close), positions are closed and no new risk is taken until it reopens. Needs the
   * market's hours (`EngineOptions.marketHours`).
   */
  flatBeforeClose: z.strictObject({ minutes: z.number().positive().max(1440) }).optional(),
  /** Stop trading after a rule violation: until the next trading day (daily limits) or for good (maximum loss). */
  lockoutAfterViolation: z.boolean().default(true),
});

export type RiskConfig = z.input<typeof riskConfigSchema>;
export type ResolvedRiskConfig = z.output<typeof riskConfigSchema>;

/** What the guard needs to know about the account, the book and the market. The runner implements it. */
export interface GuardState {
  /** Decision time, epoch ms. */
  readonly now: number;
  readonly tradingState: TradingState;
  /** Epoch ms until which new risk is locked out (0: none; Infinity: for good). */
  readonly lockedUntil: number;
  /** Why the evaluation's pass-lock refuses new risk; undefined while it is not engaged. */
  readonly passLock?: string | undefined;
  readonly session: SessionPhase;
  /** The contract's market at `now`: open, within the calendar flat-by, or closed ('open' without hours). */
  marketPhase(contractId: string): MarketPhase;
  readonly equity: number;
  /** Today's realized + unrealized - fees. */
  readonly dayPnl: number;
  /** Equity floors of the account's rules; -Infinity when not configured. */
  readonly dailyLossFloor: number;
  readonly maximumLossFloor: number;
  readonly personalDailyLossLimit: number | undefined;
  readonly personalDailyProfitTarget: number | undefined;
  contract(contractId: string): ContractSpec | undefined;
  position(contractId: string): number;
  /** Last traded price in ticks, NaN when unknown. */
  lastPrice(contractId: string): number;
  order(orderId: string): GuardOrder | undefined;
  openOrderCount(): number;
  /** Remaining size of working non-protective (market and limit) orders on one side. */
  workingEntrySize(contractId: string, side: Side): number;
  /** True when a working stop or trailing stop on `side` exists for the contract. */
  hasStopOrder(contractId: string, side: Side): boolean;
  /** Places and modifies sent within the last `windowMs`. */
  ordersSince(time: number): number;
}

export interface GuardOrder {
  readonly contractId: string;
  readonly side: Side;
  /** Remaining size. */
  readonly size: number;
  readonly order: OrderSpec;
  /** Current stop level of a trailing stop (ticks), NaN when unknown. */
  readonly trailStop: number;
}

export type GuardResult =
  | { readonly accepted: true; readonly size?: number; readonly adjusted?: ReasonCode; readonly message?: string }
  | { readonly accepted: false; readonly code: ReasonCode; readonly message: string };

/** The guard's plain acceptance: one frozen object, so a run's decision columns keep it as a flag. */
export const ACCEPTED: GuardResult = Object.freeze({ accepted: true });

function reject(code: ReasonCode, message: string): GuardResult {
  return { accepted: false, code, message };
}

function priceText(contract: ContractSpec, ticks: number): string {
  const decimal = Number.isInteger(ticks) ? contract.grid.toPrice(ticks) : ticks * contract.grid.tickSize;
  return `${decimal} (${ticks} ticks)`;
}

function misaligned(contract: ContractSpec, what: string, ticks: number | undefined): GuardResult | undefined {
  if (ticks === undefined || Number.isInteger(ticks)) return undefined;
  return reject(
    'TICK_MISALIGNED',
    `${what} ${priceText(contract, ticks)} is not on the ${contract.grid.tickSize} grid of ${contract.name}`,
  );
}

/** A price more than `maxPriceDistancePct` from the last price (known and positive) is refused. */
function tooFar(
  contract: ContractSpec,
  what: string,
  ticks: number | undefined,
  last: number,
  limits: ResolvedRiskConfig,
): GuardResult | undefined {
  if (ticks === undefined || !(last > 0)) return undefined;
  const distance = Math.abs(ticks - last);
  if (distance * 100 <= limits.maxPriceDistancePct * last) return undefined;
  return reject(
    'PRICE_TOO_FAR',
    `${what} ${priceText(contract, ticks)} is ${((distance * 100) / last).toFixed(1)}% from the last price ${priceText(contract, last)} (maximum ${limits.maxPriceDistancePct}%: risk.maxPriceDistancePct)`,
  );
}

function validSize(size: number): boolean {
  return Number.isInteger(size) && size > 0;
}

/**
 * Decide one intent. Target intents are expanded into places by the runner before they get here; a
 * target or flatten that reaches the guard is accepted (it only states a wish; its orders are checked).
 */
export function checkIntent(intent: Intent, state: GuardState, limits: ResolvedRiskConfig): GuardResult {
  switch (intent.kind) {
    case 'cancel':
      return state.order(intent.orderId) === undefined
        ? reject('UNKNOWN_ORDER', `cancel: no working order '${intent.orderId}'`)
        : ACCEPTED;
    case 'flatten':
    case 'target':
      return ACCEPTED;
    case 'place':
      return checkPlace(intent, state, limits);
    case 'modify':
      return checkModify(intent, state, limits);
  }
}

function checkPlace(intent: PlaceIntent, state: GuardState, limits: ResolvedRiskConfig): GuardResult {
  const contract = state.contract(intent.contractId);
  if (contract === undefined) return reject('UNKNOWN_CONTRACT', `unknown contract '${intent.contractId}'`);
  if (!validSize(intent.size)) return reject('INVALID_SIZE', `size ${intent.size} is not a positive whole number`);
  if (intent.id !== undefined && state.order(intent.id) !== undefined)
    return reject('DUPLICATE_ID', `id '${intent.id}' is already a working order`);
  const order = intent.order;
  const bad =
    misaligned(contract, 'limitPrice', 'limitPrice' in order ? order.limitPrice : undefined) ??
    misaligned(contract, 'stopPrice', 'stopPrice' in order ? order.stopPrice : undefined) ??
    misaligned(contract, 'trailPrice', order.type === 'trailingStop' ? order.trailPrice : undefined);
  if (bad !== undefined) return bad;
  const last = state.lastPrice(intent.contractId);
  const far =
    tooFar(contract, 'limitPrice', 'limitPrice' in order ? order.limitPrice : undefined, last, limits) ??
    tooFar(contract, 'stopPrice', 'stopPrice' in order ? order.stopPrice : undefined, last, limits);
  if (far !== undefined) return far;
  const bracket = intent.bracket;
  if (bracket !== undefined) {
    const { stopLossTicks, takeProfitTicks } = bracket;
    if (stopLossTicks !== undefined && !validSize(stopLossTicks)) {
      return reject(
        'INVALID_BRACKET',
        `bracket stopLossTicks ${stopLossTicks} is not a positive whole number of ticks`,
      );
    }
    if (takeProfitTicks !== undefined && !validSize(takeProfitTicks)) {
      return reject(
        'INVALID_BRACKET',
        `bracket takeProfitTicks ${takeProfitTicks} is not a positive whole number of ticks`,
      );
    }
  }
  if (state.tradingState === 'HALTED') return reject('STATE_HALTED', `place refused: trading is HALTED`);

  const side = intent.side;
  const position = state.position(intent.contractId);
  // The part of the order that closes the position reduces risk; the rest opens it.
  const closable = (side === 'buy' ? position < 0 : position > 0) ? Math.min(Math.abs(position), intent.size) : 0;
  const opening = intent.size - closable;

  if (order.type === 'trailingStop') {
    const trail = checkTrail(contract, side, order.trailPrice, state.lastPrice(intent.contractId), limits);
    if (trail !== undefined) return trail;
  }
  if (
    limits.maxOrderRate !== undefined &&
    state.ordersSince(state.now - limits.maxOrderRate.windowMs) >= limits.maxOrderRate.orders
  ) {
    return reject(
      'ORDER_RATE',
      `more than ${limits.maxOrderRate.orders} orders within ${limits.maxOrderRate.windowMs} ms`,
    );
  }
  if (opening === 0) return ACCEPTED;

  // From here on the order adds risk: each refusal reduces it to its closing part when it has one.
  return checkOpening(intent, contract, state, limits, position, closable, opening);
}

/** Reject an order that adds risk, or keep only its closing part when it has one. */
function refuseOpening(closable: number, code: ReasonCode, message: string): GuardResult {
  return closable > 0
    ? { accepted: true, size: closable, adjusted: code, message: `${message}; reduced to the closing ${closable}` }
    : reject(code, message);
}

function checkOpening(
  intent: PlaceIntent,
  contract: ContractSpec,
  state: GuardState,
  limits: ResolvedRiskConfig,
  position: number,
  closable: number,
  opening: number,
): GuardResult {
  const side = intent.side;
  const bracket = intent.bracket;

  if (state.lockedUntil > state.now)
    return refuseOpening(closable, 'LOCKED_OUT', `locked out until ${lockText(state.lockedUntil)}`);
  if (state.passLock !== undefined) return refuseOpening(closable, 'PASS_LOCKED', state.passLock);
  if (state.tradingState === 'REDUCING')
    return refuseOpening(closable, 'STATE_REDUCING', 'trading is REDUCING: only reducing orders pass');
  if (state.session === 'flatBy') return refuseOpening(closable, 'FLAT_BY', 'past the flat-by time');
  if (state.session === 'closed') return refuseOpening(closable, 'OUTSIDE_SESSION', 'outside the trading session');
  const market = state.marketPhase(intent.contractId);
  if (market === 'closed') return refuseOpening(closable, 'MARKET_CLOSED', `the market of ${contract.name} is closed`);
  if (market === 'closing')
    return refuseOpening(
      closable,
      'BEFORE_CLOSE',
      `within ${limits.flatBeforeClose?.minutes} minutes of the close of ${contract.name} (risk.flatBeforeClose)`,
    );
  const day = state.dayPnl;
  if (state.personalDailyLossLimit !== undefined && day <= -state.personalDailyLossLimit) {
    return refuseOpening(
      closable,
      'PERSONAL_DAILY_LOSS',
      `day PnL ${round(day)} reached the personal daily loss limit ${state.personalDailyLossLimit}`,
    );
  }
  if (state.personalDailyProfitTarget !== undefined && day >= state.personalDailyProfitTarget) {
    return refuseOpening(
      closable,
      'PERSONAL_DAILY_PROFIT_TARGET',
      `day PnL ${round(day)} reached the personal daily profit target ${state.personalDailyProfitTarget}`,
    );
  }
  const buffer = limits.safetyBuffer;
  const equity = state.equity;
  if (equity <= state.dailyLossFloor + buffer) {
    return refuseOpening(
      closable,
      'DAILY_LOSS_LIMIT',
      `equity ${round(equity)} is at the daily loss floor ${round(state.dailyLossFloor)} + buffer ${buffer}`,
    );
  }
  if (equity <= state.maximumLossFloor + buffer) {
    return refuseOpening(
      closable,
      'MAXIMUM_LOSS_LIMIT',
      `equity ${round(equity)} is at the maximum loss floor ${round(state.maximumLossFloor)} + buffer ${buffer}`,
    );
  }
  if (limits.maxPositionSize !== undefined) {
    const working = state.workingEntrySize(intent.contractId, side);
    const exposure = Math.abs(position + (side === 'buy' ? working + intent.size : -working - intent.size));
    if (exposure > limits.maxPositionSize) {
      return refuseOpening(
        closable,
        'MAX_POSITION_SIZE',
        `position ${position} with working ${working} and this ${side} ${intent.size} exceeds ${limits.maxPositionSize}`,
      );
    }
  }
  if (limits.maxOpenOrders !== undefined && state.openOrderCount() >= limits.maxOpenOrders) {
    return refuseOpening(
      closable,
      'MAX_OPEN_ORDERS',
      `${state.openOrderCount()} working orders, maximum ${limits.maxOpenOrders}`,
    );
  }
  const stopTicks = bracket?.stopLossTicks;
  const protectedByOrder = state.hasStopOrder(intent.contractId, side === 'buy' ? 'sell' : 'buy');
  if (limits.requireProtectiveStop && stopTicks === undefined && !protectedByOrder) {
    return refuseOpening(
      closable,
      'NO_PROTECTIVE_STOP',
      'entry without a protective stop (bracket stopLossTicks or a working stop)',
    );
  }
  if (stopTicks !== undefined) {
    const room = riskRoom(state, limits);
    const perContract = stopTicks * contract.grid.tickValue;
    const risk = perContract * opening;
    if (risk > room) {
      const fits = Math.floor(room / perContract);
      const message = `risk ${round(risk)} (${stopTicks} ticks x ${contract.grid.tickValue} x ${opening}) exceeds the room ${round(room)}`;
      if (limits.oversize === 'reduce' && fits >= 1) {
        return {
          accepted: true,
          size: closable + fits,
          adjusted: 'RISK_EXCEEDS_ROOM',
          message: `${message}; reduced to ${closable + fits}`,
        };
      }
      return refuseOpening(closable, 'RISK_EXCEEDS_ROOM', message);
    }
  }
  return ACCEPTED;
}

/**
 * The money a new entry may put at risk (stop distance x tick value x contracts opened): what is left under
 * the tightest of the daily loss floor, the maximum loss floor (each with the safety buffer) and the
 * personal daily loss limit; Infinity without any. The guard refuses an entry whose risk exceeds it
 * (RISK_EXCEEDS_ROOM); `ctx.sizing` reads the same figure.
 */
export function riskRoom(
  state: Pick<GuardState, 'equity' | 'dayPnl' | 'dailyLossFloor' | 'maximumLossFloor' | 'personalDailyLossLimit'>,
  limits: Pick<ResolvedRiskConfig, 'safetyBuffer'>,
): number {
  const buffer = limits.safetyBuffer;
  const equity = state.equity;
  return Math.min(
    equity - (state.dailyLossFloor + buffer),
    equity - (state.maximumLossFloor + buffer),
    state.personalDailyLossLimit === undefined ? Infinity : state.personalDailyLossLimit + state.dayPnl,
  );
}

function checkTrail(
  contract: ContractSpec,
  side: Side,
  trailPrice: number,
  last: number,
  limits: ResolvedRiskConfig,
): GuardResult | undefined {
  if (!(last === last))
    return reject(
      'NO_LAST_PRICE',
      `trailPrice ${priceText(contract, trailPrice)} cannot be checked: no last price for ${contract.name}`,
    );
  if (side === 'sell' ? trailPrice >= last : trailPrice <= last) {
    return reject(
      'TRAIL_WRONG_SIDE',
      `${side} trailPrice ${priceText(contract, trailPrice)} must be ${side === 'sell' ? 'below' : 'above'} the last price ${priceText(contract, last)}`,
    );
  }
  const distance = Math.abs(last - trailPrice);
  if (distance > limits.maxTrailTicks) {
    return reject(
      'TRAIL_TOO_FAR',
      `trailPrice ${priceText(contract, trailPrice)} is ${distance} ticks from the last price ${priceText(contract, last)} (maximum ${limits.maxTrailTicks}); trailPrice is an absolute price, not a distance`,
    );
  }
  return undefined;
}

function checkModify(intent: ModifyIntent, state: GuardState, limits: ResolvedRiskConfig): GuardResult {
  const order = state.order(intent.orderId);
  if (order === undefined) return reject('UNKNOWN_ORDER', `modify: no working order '${intent.orderId}'`);
  const contract = state.contract(order.contractId);
  if (contract === undefined) return reject('UNKNOWN_CONTRACT', `unknown contract '${order.contractId}'`);
  if (intent.size !== undefined && !validSize(intent.size))
    return reject('INVALID_SIZE', `size ${intent.size} is not a positive whole number`);
  const bad =
    misaligned(contract, 'limitPrice', intent.limitPrice) ??
    misaligned(contract, 'stopPrice', intent.stopPrice) ??
    misaligned(contract, 'trailPrice', intent.trailPrice);
  if (bad !== undefined) return bad;
  const last = state.lastPrice(order.contractId);
  const far =
    tooFar(contract, 'limitPrice', intent.limitPrice, last, limits) ??
    tooFar(contract, 'stopPrice', intent.stopPrice, last, limits);
  if (far !== undefined) return far;
  if (state.tradingState === 'HALTED') return reject('STATE_HALTED', 'modify refused: trading is HALTED');
  if (intent.trailPrice !== undefined) {
    const trail = checkTrail(contract, order.side, intent.trailPrice, state.lastPrice(order.contractId), limits);
    if (trail !== undefined) return trail;
    const current = order.trailStop;
    if (
      limits.refuseLooseningTrail &&
      current === current &&
      (order.side === 'sell' ? intent.trailPrice < current : intent.trailPrice > current)
    ) {
      return reject(
        'TRAIL_LOOSENS',
        `trailPrice ${priceText(contract, intent.trailPrice)} is looser than the current stop ${priceText(contract, current)}`,
      );
    }
  }
  if (
    limits.maxOrderRate !== undefined &&
    state.ordersSince(state.now - limits.maxOrderRate.windowMs) >= limits.maxOrderRate.orders
  ) {
    return reject(
      'ORDER_RATE',
      `more than ${limits.maxOrderRate.orders} orders within ${limits.maxOrderRate.windowMs} ms`,
    );
  }
  const position = state.position(order.contractId);
  const reducing = order.side === 'buy' ? position < 0 : position > 0;
  if (intent.size !== undefined && intent.size > order.size && !reducing) {
    // A bigger entry order adds risk: the same no-new-risk checks as a place.
    const grow: PlaceIntent = {
      kind: 'place',
      contractId: order.contractId,
      side: order.side,
      size: intent.size - order.size,
      order: { type: 'market' },
    };
    const result = checkPlace(grow, state, { ...limits, maxOrderRate: undefined, maxOpenOrders: undefined });
    if (!result.accepted) return result;
    if (result.size !== undefined)
      return reject(result.adjusted ?? 'MAX_POSITION_SIZE', result.message ?? 'size increase refused');
  }
  return ACCEPTED;
}

function round(value: number): number {
  return Math.round(value * 100) / 100;
}

function lockText(until: number): string {
  return until === Infinity ? 'further notice' : new Date(until).toISOString();
}
