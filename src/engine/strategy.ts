/**
 * A strategy module: a name, a zod schema of its parameters (with defaults) and a function from its
 * context to an Observable of intents. The same module runs in a backtest, on paper and live.
 */
import type { Observable } from 'rxjs';
import type { z } from 'zod';
import type { AccountSnapshot, PositionView } from './accounting.ts';
import type { Logger } from './log.ts';
import type { SessionInfo } from './market-hours.ts';
import type {
  BarChunk,
  BarRecord,
  ContractSpec,
  Fill,
  Intent,
  MarketTrade,
  OrderSpec,
  OrderState,
  OrderUpdate,
  Quote,
  Side,
  Timeframe,
} from './types.ts';
import { TicklineError, type ErrorKind } from './errors.ts';

/** A working order as the engine's book sees it. */
export interface WorkingOrder {
  readonly id: string;
  readonly strategyId: string;
  readonly contractId: string;
  readonly side: Side;
  /** Original size. */
  readonly size: number;
  readonly filledSize: number;
  readonly order: OrderSpec;
  readonly state: OrderState;
  /** Current stop level of a trailing stop in ticks as the engine tracks it from bars, NaN otherwise. */
  readonly trailStop: number;
}

/**
 * Position sizing from the money at risk, in whole contracts. Sizes count the contracts an entry opens
 * (a reversal closes the opposite position first: add its size). Read at the bar you decide on (per-bar
 * style): the figure is the risk guard's at that moment, the one it checks the entry against.
 */
export interface PositionSizing {
  /**
   * The money a new entry may risk now: what is left under the tightest of the daily loss floor, the
   * maximum loss floor (each with `risk.safetyBuffer`) and the personal daily loss limit, exactly the
   * guard's figure for RISK_EXCEEDS_ROOM; Infinity when none is set, 0 or less at a floor.
   */
  room(): number;
  /**
   * The most contracts an entry with a stop `stopTicks` away may open without being refused as
   * RISK_EXCEEDS_ROOM: floor(room / (stopTicks x tick value)), 0 when not even one fits, Infinity without
   * limits. 0 for a stop that is not a positive number of ticks.
   */
  maxSizeForStop(stopTicks: number, contractId?: string): number;
  /**
   * Contracts that risk at most `money` with a stop `stopTicks` away (floor(money / (stopTicks x tick
   * value))), never more than `maxSizeForStop(stopTicks)`: an entry of this size with that stop as its
   * bracket's `stopLossTicks` is never refused as RISK_EXCEEDS_ROOM. 0 when not even one contract fits.
   */
  fromRisk(money: number, stopTicks: number, contractId?: string): number;
}

export interface StrategyContext<P = unknown> {
  /** The strategy instance's id: prefix of its intents' client ids. */
  readonly id: string;
  readonly params: P;
  readonly contracts: readonly ContractSpec[];
  /** The primary (first) contract. */
  readonly contract: ContractSpec;
  /**
   * Closed bars as chunks, of the primary contract by default. A timeframe coarser than the base stream
   * is aggregated from it (a bar is emitted at the base bar that completes it; `baseIndex` says which).
   */
  bars(contractId?: string, timeframe?: Timeframe): Observable<BarChunk>;
  /**
   * The same bars one by one, emitted inside the runner's per-bar loop: after the venue filled orders
   * at that bar and accounting was updated, so `position()` and `openOrders()` are current.
   */
  barRecords(contractId?: string, timeframe?: Timeframe): Observable<BarRecord>;
  /**
   * Best bid and ask (ticks): live quotes in paper and live trading where the gateway has a market hub;
   * otherwise one at each bar's close (in a backtest with its spread model), so a strategy runs unchanged.
   */
  quotes(contractId?: string): Observable<Quote>;
  /** Market trades: live prints where the gateway has them, otherwise one print of each bar's volume at its close. */
  trades(contractId?: string): Observable<MarketTrade>;
  position(contractId?: string): number;
  /** Average entry price in ticks, NaN when flat. */
  averagePrice(contractId?: string): number;
  /** Last price in ticks (last close or the venue's last trade), NaN when unknown. */
  lastPrice(contractId?: string): number;
  /**
   * Bar fields and the getters above are ticks (the engine's unit, and the fast one); these give the
   * decimal price of a number of ticks, and the ticks of a price (fractional when it is off the grid).
   */
  toPrice(ticks: number, contractId?: string): number;
  toTicks(price: number, contractId?: string): number;
  /** This strategy's working orders (of one contract, or all). */
  openOrders(contractId?: string): readonly WorkingOrder[];
  readonly fills: Observable<Fill>;
  readonly orders: Observable<OrderUpdate>;
  /** A contract's position after each fill. */
  readonly positions: Observable<PositionView>;
  /** The account (balance, equity, day PnL) after each fill and at each new trading day. */
  readonly account: Observable<AccountSnapshot>;
  /** The engine's clock: epoch ms (the end of the bar being processed in a backtest). */
  now(): number;
  /**
   * The primary contract's market at the engine's clock (`now()`): open or not, minutes to the close, the
   * next close and open, the trading day; from the exchange calendar of the contract's root (backtest,
   * paper and live alike), always open without known hours. Read it when deciding: its fields are getters
   * of the current time, and reading them allocates nothing.
   */
  readonly session: SessionInfo;
  /** The same at any instant, of any of the strategy's contracts (for chunk pipelines: a bar's end is `time[i]` + the bar's length). */
  sessionAt(time: number, contractId?: string): SessionInfo;
  /** Sizes from the money risked and the stop's distance, within the risk guard's room (`PositionSizing`). */
  readonly sizing: PositionSizing;
  readonly logger: Logger;
}

/** A series the report draws with a run: an indicator over the candles, or in a pane of its own. */
export interface StrategyPlot {
  readonly name: string;
  /** One value per bar of the run's bars (NaN where undefined, as during warm-up). */
  values(bars: BarChunk): ArrayLike<number>;
  /** 'price' (default): values in ticks, like the bars, drawn over the candles; 'own': any unit, in a pane below. */
  readonly pane?: 'price' | 'own';
}

export interface StrategyModule<S extends z.ZodType = z.ZodType> {
  readonly name: string;
  readonly description?: string;
  readonly params: S;
  /**
   * Bars the strategy needs before its decisions mean anything (its longest indicator period): a number,
   * or one computed from the parameters. Its intents during those first bars are refused (WARM_UP), in a
   * backtest as in paper and live, where that much history is run through it before the first live bar.
   */
  readonly warmup?: number | ((params: z.output<S>) => number);
  run(context: StrategyContext<z.output<S>>): Observable<Intent>;
  /** Series to draw on the backtest report, for example `(p) => [{ name: 'SMA 10', values: (bars) => sma(p.fast)().update(bars) }]`. Reports only. */
  plots?(params: z.output<S>): readonly StrategyPlot[];
}

/** The warm-up of a strategy with these (parsed) parameters, in bars; 0 when it declares none. */
export function warmupBars<S extends z.ZodType>(module: StrategyModule<S>, params: z.output<S>): number {
  const declared = typeof module.warmup === 'function' ? module.warmup(params) : (module.warmup ?? 0);
  if (!Number.isInteger(declared) || declared < 0)
    throw new StrategyError(
      'STRATEGY_INVALID',
      `strategy '${module.name}': warmup must be a whole number of bars, got ${declared}`,
    );
  return declared;
}

export function defineStrategy<S extends z.ZodType>(module: StrategyModule<S>): StrategyModule<S> {
  if (typeof module.name !== 'string' || module.name === '')
    throw new StrategyError('STRATEGY_INVALID', 'a strategy needs a non-empty name');
  if (typeof (module.params as { safeParse?: unknown } | undefined)?.safeParse !== 'function')
    throw new StrategyError('STRATEGY_INVALID', `strategy '${module.name}': params must be a zod schema`);
  if (typeof module.run !== 'function')
    throw new StrategyError('STRATEGY_INVALID', `strategy '${module.name}': run must be a function`);
  return Object.freeze({ ...module });
}

export class StrategyError extends TicklineError {
  override readonly name = 'StrategyError';
  /** The strategy instance that failed (STRATEGY_FAILED). */
  readonly strategyId: string | undefined;
  /** Start of the bar being processed when it failed (epoch ms), where there was one. */
  readonly barTime: number | undefined;
  readonly kind: ErrorKind;
  constructor(
    readonly code: 'STRATEGY_NOT_FOUND' | 'STRATEGY_INVALID' | 'STRATEGY_PARAMS' | 'STRATEGY_FAILED',
    message: string,
    options?: { cause?: unknown; strategyId?: string; barTime?: number },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.strategyId = options?.strategyId;
    this.barTime = options?.barTime;
    // A strategy that cannot be found, loaded or given its parameters never ran; one that threw did.
    this.kind = code === 'STRATEGY_FAILED' ? 'runtime' : 'config';
  }
}

/** True for a value shaped like a strategy module (defined with `defineStrategy` or by hand). */
export function isStrategyModule(value: unknown): value is StrategyModule {
  if (typeof value !== 'object' || value === null) return false;
  const candidate = value as Partial<StrategyModule>;
  // Duck-typed rather than instanceof: a quant's file may resolve its own copy of zod.
  return (
    typeof candidate.name === 'string' &&
    typeof (candidate.params as { safeParse?: unknown } | undefined)?.safeParse === 'function' &&
    typeof candidate.run === 'function'
  );
}

/** Validate parameters against the strategy's schema; every problem is named at once. */
export function parseParams<S extends z.ZodType>(module: StrategyModule<S>, params: unknown): z.output<S> {
  const result = module.params.safeParse(params ?? {});
  if (!result.success) {
    const problems = result.error.issues
      .map((issue) => `${issue.path.join('.') || '(params)'}: ${issue.message}`)
      .join('; ');
    throw new StrategyError('STRATEGY_PARAMS', `strategy '${module.name}' parameters: ${problems}`);
  }
  return result.data;
}
