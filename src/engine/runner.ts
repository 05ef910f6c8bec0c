/**
 * The runner: drives strategies, the risk guard, a venue and accounting from bar chunks.
 *
 * Per pushed chunk: (1) the chunk goes through each strategy's chunk pipeline; intents emitted while it
 * does carry `at`, the bar index in the chunk at whose close they were decided; (2) for each bar i: the
 * venue matches its working orders against bar i (fills arrive synchronously on `venue.events`),
 * accounting marks the bar, the account's rule floors are checked at the bar's worst price, per-bar
 * subscribers see bar i, and the intents decided at bar i are stamped, guarded and sent to the venue.
 * Nothing in this loop allocates unless something happens. Driven synchronously by a backtest (one
 * `push` per chunk, in one run) or asynchronously by a live adapter (1-bar chunks, fills whenever the
 * venue reports them); intents emitted outside a push are processed at once.
 *
 * `createEngine` only wires the parts, each with one job: the BarDriver (the loop above), the
 * StrategyHost (strategies and their streams), the IntentRouter (intent to guarded venue order), the
 * GuardStep (what the risk guard sees), the VenueBridge (venue reports into book and accounting), the
 * RuleEnforcer (breaches, day rolls, flat-by), the TradingStateMachine, the StrategyLedger (each
 * strategy's own lines of the account), the StrategyPauses, the DecisionLog and the BarClock they share.
 */
import { Subscription, type Observable } from 'rxjs';
import { Accounting, type AccountSnapshot, type ClosedTrade, type PositionView } from './accounting.ts';
import { BarClock } from './bar-clock.ts';
import type { BlockSpill } from './column-blocks.ts';
import type { BlockLease } from './block-stock.ts';
import { BarDriver } from './bar-driver.ts';
import { SessionClock, TradingCalendar } from './trading-day.ts';
import { MarketSession, type MarketHours } from './market-hours.ts';
import { DecisionLog, type Decision } from './decision-log.ts';
import { EquityRecorder, type EquityCurve } from './equity-recorder.ts';
import { EngineError } from './errors.ts';
import { GuardStep } from './guard-step.ts';
import { IntentRouter, type StampedIntent } from './intent-router.ts';
import { silentLogger, type Logger } from './log.ts';
import { Multicast, type HotStream } from './multicast.ts';
import { ownFill, ownUpdate } from './event-copies.ts';
import { OrderBook, publicOrder } from './order-book.ts';
import { OrderRate } from './order-rate.ts';
import { PassLock, type PassLockEvent, type PassLockOptions } from './pass-lock.ts';
import { riskConfigSchema, type ResolvedRiskConfig, type RiskConfig, type TradingState } from './risk.ts';
import { RuleEnforcer } from './rule-enforcer.ts';
import { RuleBook, type AccountConfig, type AccountLimits, type Breach } from './account-rules.ts';
import { StrategyHost, type StrategyEntry, type StrategyFailure } from './strategy-host.ts';
import { StrategyLedger, type StrategyPosition, type StrategySnapshot } from './strategy-ledger.ts';
import { StrategyPauses, type StrategyStateChange } from './strategy-pause.ts';
import type { WorkingOrder } from './strategy.ts';
import { TradingStateMachine, type TradingStateChange } from './trading-state.ts';
import type {
  BarChunk,
  BarQuoteModel,
  ContractSpec,
  Fill,
  Intent,
  MarketData,
  MarketTrade,
  OrderUpdate,
  Quote,
  Timeframe,
  Venue,
  VenueTraits,
} from './types.ts';
import { VenueBridge } from './venue-bridge.ts';

export type { StrategyEntry, StrategyFailure } from './strategy-host.ts';
export { failureError } from './strategy-host.ts';
export type { StampedIntent } from './intent-router.ts';
export type { Decision } from './decision-log.ts';
export type { TradingStateChange } from './trading-state.ts';
export type { PassLockEvent, PassLockOptions } from './pass-lock.ts';
export type { EquityCurve } from './equity-recorder.ts';
export { UNATTRIBUTED, type StrategyPosition, type StrategySnapshot } from './strategy-ledger.ts';
export type { StrategyStateChange } from './strategy-pause.ts';

export interface EngineOptions {
  readonly strategies: readonly StrategyEntry[];
  readonly contracts: readonly ContractSpec[];
  /**
   * Where orders go. Its `traits` tell the engine what it is: live or simulated (live mode), whether its
   * fills can repeat (fill-id memory), how its account rounds PnL (`VenueTraits`).
   */
  readonly venue: Venue;
  readonly risk?: RiskConfig;
  readonly account: AccountConfig;
  readonly logger?: Logger;
  /** Next sequence number of client ids, for all strategies or per strategy id (live restarts); 1 by default. */
  readonly sequenceStart?: number | Readonly<Record<string, number>>;
  /** Engine clock (epoch ms); by default the end of the last bar pushed. Live passes `Date.now`. */
  readonly clock?: () => number;
  /**
   * What a strategy that throws (or errors its Observable) does: `throw` (default) makes the `push` in
   * which it happened throw a `StrategyError` with code STRATEGY_FAILED once the chunk is processed;
   * `log` only logs it and emits it on `errors$` (the other strategies carry on).
   */
  readonly onStrategyError?: 'throw' | 'log';
  /** Record equity at every bar's close (for the equity curve). */
  readonly recordEquity?: boolean;
  /**
   * How many bars the run will push, when known (a backtest): the equity curve is then allocated once at
   * that size instead of doubling as it grows (a 10 M-bar curve: 160 MB instead of 268 MB and a copy).
   */
  readonly expectedBars?: number;
  /** Where the equity points go (a streamed run drains it after every chunk); the engine's own otherwise. */
  readonly equityRecorder?: EquityRecorder;
  /** Where full blocks of the closed trades' columns go (a streamed backtest's); all kept in memory otherwise. */
  readonly tradeSpill?: BlockSpill;
  /** Where the closed trades' blocks come from (a sweep's run, lent its thread's spares); new ones otherwise. */
  readonly tradeLease?: BlockLease;
  /**
   * Last traded price in ticks where the adapter knows one (live quotes, `MarketData.lastPrice`); the
   * guard's trailPrice checks prefer it to the last close.
   */
  readonly lastPrice?: (contractId: string) => number | undefined;
  /**
   * Id prefix of the engine's own orders (flatten on a breach, flat-by, kill switch); `risk` by default.
   * Bots that share an account need different ones: a customTag is unique per account.
   */
  readonly riskStrategyId?: string;
  /** Live quotes and market trades (`MarketData.quotes`/`marketTrades`); without them strategies get one per bar. */
  readonly quotes?: (contractId: string) => Observable<Quote>;
  readonly marketTrades?: (contractId: string) => Observable<MarketTrade>;
  /** The spread of the quotes made from bars (the backtest's spread model); none by default. */
  readonly barQuote?: BarQuoteModel;
  /**
   * Each contract's market hours by contract id (the adapters build them from the exchange calendar of the
   * contract's root). The guard refuses new risk while a contract's market is closed (MARKET_CLOSED) and
   * applies `risk.flatBeforeClose`; `ctx.session` reads them. A contract without hours counts as always open.
   */
  readonly marketHours?: Readonly<Record<string, MarketHours>>;
  /**
   * The evaluation's pass-lock (`evaluationPassLock` builds it from the rules and the configured mode):
   * once the pass conditions are met the guard refuses new risk (PASS_LOCKED), and `flatten` closes every
   * position. Absent: no lock.
   */
  readonly passLock?: PassLockOptions;
}

/** Default id of the engine's own intents (flatten on a rule breach, flat-by, kill switch). */
export const RISK_STRATEGY_ID = 'risk';

/** A known account state to resume from (live restart, after reconciling with the gateway). */
export interface RestoreState {
  /** Current balance (realized, after fees). */
  readonly balance?: number;
  /** Balance at the start of the current trading day (daily limits are measured from it). */
  readonly startOfDayBalance?: number;
  /** Highest end-of-day balance so far (trailing maximum loss limits). */
  readonly highBalance?: number;
  /** Highest equity so far, unrealized included (intraday trailing maximum loss limit). */
  readonly highEquity?: number;
  readonly positions?: ReadonlyArray<{ contractId: string; size: number; averagePrice: number }>;
}

export interface Engine {
  /** Process a chunk of closed bars (a partial last bar only marks prices). */
  push(chunk: BarChunk): void;
  /**
   * History before the first live bar, run through the strategies only (no venue, no rules, no equity,
   * intents dropped), so their indicators are warm when the first live decision is made.
   */
  warmUp(chunk: BarChunk): void;
  readonly intents$: Observable<StampedIntent>;
  readonly decisions$: Observable<Decision>;
  /**
   * The fills the engine applied. A plain listener (`fills$.listen`, the backtest's recorder) reads each
   * in the call: it may be the venue's view, rewritten for the next fill, while no subscriber keeps fills.
   */
  readonly fills$: HotStream<Fill>;
  readonly orders$: Observable<OrderUpdate>;
  readonly trades$: Observable<ClosedTrade>;
  readonly positions$: Observable<PositionView>;
  readonly account$: Observable<AccountSnapshot>;
  readonly breaches$: Observable<Breach>;
  readonly tradingState$: Observable<TradingStateChange>;
  /** A strategy instance paused or resumed (`setStrategyPaused`), with who and why. */
  readonly strategyStates$: Observable<StrategyStateChange>;
  /** The evaluation's pass-lock engaging (once). */
  readonly passLock$: Observable<PassLockEvent>;
  /** The pass-lock's event once engaged, else undefined. */
  passLocked(): PassLockEvent | undefined;
  /** Strategies that failed (their intents stop). */
  readonly errors$: Observable<StrategyFailure>;
  /** Decisions the guard rejected so far, by reason code in the order each code first occurred. */
  rejections(): Readonly<Record<string, number>>;
  readonly accounting: Accounting;
  readonly rules: RuleBook;
  readonly riskConfig: ResolvedRiskConfig;
  snapshot(): AccountSnapshot;
  tradingState(): TradingStateChange;
  /** Operator control: ACTIVE, REDUCING or HALTED until changed again. */
  setTradingState(state: TradingState, reason: string): void;
  /**
   * Pause (or resume) one strategy instance: its stream keeps running, but the guard step refuses its
   * intents that open or add risk (STRATEGY_PAUSED); what reduces its position, cancels and flattens pass.
   * `reason` says who and why (`strategyStates$`). An unknown id throws (UNKNOWN_STRATEGY).
   */
  setStrategyPaused(strategyId: string, paused: boolean, reason: string): void;
  /** The instances paused now. */
  pausedStrategies(): StrategyStateChange[];
  /** Cancel every working order, close every position, HALT and lock out until `setTradingState('ACTIVE')`. */
  killSwitch(reason: string): void;
  /**
   * Change the account's limits while running (the gateway's administrator changed them): the rule
   * floors and the guard's personal limits follow from the next check on. A limit left out is removed.
   */
  setAccountLimits(limits: AccountLimits): void;
  /**
   * The clock reached `time` (the engine clock by default) without a bar: the trading day turns at its
   * boundary (17:00 CT) and the calendar flat-by applies, as a bar would make them. Live sessions call it
   * on a timer, so the guard's day turns when the gateway's does, bar or no bar.
   */
  advance(time?: number): void;
  /** Submit an intent on behalf of a strategy id (operator commands); guarded like any other. */
  submit(strategyId: string, intent: Intent): void;
  /** The engine's book of working orders. */
  openOrders(): WorkingOrder[];
  /**
   * Resume from a known state before the first push (live restart). Working orders are restored by
   * emitting their `OrderUpdate`s on `venue.events`: unknown working orders join the book.
   */
  restore(state: RestoreState): void;
  /** The next sequence number each strategy will use (journal it for restarts). */
  nextSequence(strategyId: string): number;
  /**
   * Each strategy's own line per contract (position, average price, PnL, fees, trades), attributed from
   * fills by their order's owner, and the unattributed rest (`UNATTRIBUTED`): per contract they sum to the
   * account's position.
   */
  strategyPositions(): StrategyPosition[];
  /** One strategy's lines and totals (`UNATTRIBUTED` for the rest). */
  strategySnapshot(strategyId: string): StrategySnapshot;
  /** One strategy's closed trades, in the order they closed: the input of its statistics. */
  strategyTrades(strategyId: string): ClosedTrade[];
  /**
   * After `restore`, hand `size` contracts (signed) of a restored position, which no strategy owns, to a
   * strategy (at the restored average price; its journal says who held what).
   */
  assignPosition(strategyId: string, contractId: string, size: number): void;
  equityCurve(): EquityCurve;
  close(): void;
}

/** Closed trades a live engine keeps in `accounting.trades` (the latest; the journal holds every fill). */
export const LIVE_TRADE_MEMORY = 4_096;

export function createEngine(options: EngineOptions): Engine {
  const logger = options.logger ?? silentLogger;
  const venue = options.venue;
  const limits = riskConfigSchema.parse(options.risk ?? {});
  if (options.contracts.length === 0)
    throw new EngineError('NO_CONTRACTS', 'createEngine: at least one contract is needed');
  const traits = venueTraits(venue);
  const contracts = new Map(options.contracts.map((c) => [c.id, c]));
  const rules = new RuleBook(options.account);
  const accounting = new Accounting(options.contracts, rules.config.startingBalance, {
    rememberFills: traits.fillsCanRepeat,
    pnlInCents: traits.pnlRounding === 'cents',
    // A live session runs for weeks and journals every fill: it keeps a window of closed trades.
    ...(traits.kind === 'live' ? { tradeMemory: LIVE_TRADE_MEMORY } : {}),
    ...(options.tradeSpill === undefined ? {} : { tradeSpill: options.tradeSpill }),
    ...(options.tradeLease === undefined ? {} : { tradeLease: options.tradeLease }),
  });
  const riskStrategyId = options.riskStrategyId ?? RISK_STRATEGY_ID;
  const ledger = new StrategyLedger({
    contracts: options.contracts,
    accounting,
    riskStrategyId,
    // A live account's fills are few and may be foreign (a manual trade): book them all from the start.
    bookEverything: traits.kind === 'live',
    ...(traits.kind === 'live' ? { tradeMemory: LIVE_TRADE_MEMORY } : {}),
  });
  const calendar = new TradingCalendar(limits.tradingDay);
  const sessions =
    limits.sessions === undefined ? undefined : new SessionClock(limits.sessions, limits.tradingDay.timeZone);

  const intents$ = new Multicast<StampedIntent>();
  const decisions$ = new Multicast<Decision>();
  // The venue's views pass through: their subscribers get copies (event-copies.ts).
  const fills$ = new Multicast<Fill>(ownFill);
  const orders$ = new Multicast<OrderUpdate>(ownUpdate);
  const trades$ = new Multicast<ClosedTrade>();
  const positions$ = new Multicast<PositionView>();
  const account$ = new Multicast<AccountSnapshot>();
  const breaches$ = new Multicast<Breach>();
  const tradingState$ = new Multicast<TradingStateChange>();
  const strategyStates$ = new Multicast<StrategyStateChange>();
  const errors$ = new Multicast<StrategyFailure>();
  const passLock$ = new Multicast<PassLockEvent>();
  const decisions = new DecisionLog(decisions$, logger);
  const passLock =
    options.passLock === undefined
      ? undefined
      : new PassLock(options.passLock, rules.config.startingBalance, passLock$, logger);

  const book = new OrderBook(traits.kind !== 'live');
  const barClock = new BarClock(options.clock);
  const clock = barClock.time;

  const equity =
    options.equityRecorder ?? new EquityRecorder(options.recordEquity === true ? (options.expectedBars ?? 0) : 0);
  const trading = new TradingStateMachine(tradingState$, logger);
  const pauses = new StrategyPauses(strategyStates$, logger);
  const rate = new OrderRate(limits.maxOrderRate?.orders ?? 0);
  const markets = new Map<string, MarketSession>();
  for (const [contractId, hours] of Object.entries(options.marketHours ?? {})) {
    if (!contracts.has(contractId))
      throw new EngineError('UNKNOWN_CONTRACT', `marketHours: unknown contract '${contractId}'`);
    markets.set(contractId, new MarketSession(hours, calendar));
  }
  const flatBeforeCloseMs = (limits.flatBeforeClose?.minutes ?? 0) * 60_000;
  const guard = new GuardStep(
    contracts,
    accounting,
    book,
    rules,
    trading,
    rate,
    sessions,
    options.lastPrice,
    markets,
    flatBeforeCloseMs,
    passLock,
  );
  const router = new IntentRouter({
    contracts,
    defaultContract: options.contracts[0]!.id,
    venue,
    limits,
    book,
    accounting,
    guard,
    rate,
    trading,
    decisions,
    intents$,
    barClock,
    logger,
    riskStrategyId,
    sequenceStart: options.sequenceStart,
    findInstance: (strategyId) => host.find(strategyId),
    ledger,
    pauses,
  });
  const keeper = router.keeper;
  const enforcer = new RuleEnforcer({
    rules,
    accounting,
    calendar,
    sessions,
    markets,
    book,
    limits,
    trading,
    router,
    barClock,
    breaches$,
    account$,
    logger,
    passLock,
  });

  const host = new StrategyHost({
    options,
    contracts,
    calendar,
    riskStrategyId,
    limits,
    accounting,
    book,
    guard,
    ledger,
    barClock,
    fills$,
    orders$,
    positions$,
    account$,
    errors$,
    logger,
  });
  // Listening starts here, after the strategies' contexts exist and before their streams run, as it always has.
  const venueBridge = new VenueBridge({
    venue,
    book,
    accounting,
    rules,
    enforcer,
    guard,
    trading,
    decisions,
    keeper,
    ledger,
    barClock,
    fills$,
    orders$,
    trades$,
    positions$,
    account$,
    logger,
  });
  const driver = new BarDriver({
    contracts,
    venue,
    accounting,
    rules,
    book,
    sessions,
    enforcer,
    router,
    host,
    decisions,
    equity,
    barClock,
    logger,
    recordEquity: options.recordEquity === true,
    singleContract: options.contracts.length === 1,
    throwOnFailure: options.onStrategyError !== 'log',
  });
  host.start((instance, strategyId, intent) => driver.receive(instance, strategyId, intent));

  return {
    push: (chunk) => driver.push(chunk),
    warmUp: (chunk) => driver.warmUp(chunk),
    intents$: intents$.asObservable(),
    decisions$: decisions$.asObservable(),
    fills$: fills$.asObservable(),
    orders$: orders$.asObservable(),
    trades$: trades$.asObservable(),
    positions$: positions$.asObservable(),
    account$: account$.asObservable(),
    breaches$: breaches$.asObservable(),
    tradingState$: tradingState$.asObservable(),
    strategyStates$: strategyStates$.asObservable(),
    passLock$: passLock$.asObservable(),
    passLocked: () => passLock?.engaged,
    errors$: errors$.asObservable(),
    rejections: () => decisions.rejectionCounts(),
    accounting,
    rules,
    riskConfig: limits,
    snapshot: () => accounting.snapshot(),
    tradingState: () => trading.current,
    setTradingState: (next, reason) => trading.set(next, reason, clock()),
    setStrategyPaused(strategyId, paused, reason) {
      if (host.find(strategyId) === undefined)
        throw new EngineError('UNKNOWN_STRATEGY', `setStrategyPaused: no strategy instance '${strategyId}'`);
      pauses.set(strategyId, paused, reason, clock());
    },
    pausedStrategies: () => pauses.current(),
    killSwitch(reason) {
      trading.lockedUntil = Infinity;
      trading.change('HALTED', `kill switch: ${reason}`, Infinity, clock());
      router.flattenAll(`kill switch: ${reason}`, clock());
    },
    setAccountLimits(accountLimits) {
      rules.setLimits(accountLimits);
      logger.info({ limits: accountLimits }, 'account limits changed');
    },
    advance(at) {
      const time = at ?? clock();
      if (!(time === time)) return;
      if (time >= enforcer.nextDayStart) enforcer.rollDay(time);
      if (time >= enforcer.marketCheckAt) enforcer.checkMarkets(time);
      enforcer.flushPassLock(time);
    },
    submit(strategyId, intent) {
      driver.receive(host.find(strategyId), strategyId, intent);
    },
    openOrders: () => book.values().map(publicOrder),
    restore(restored) {
      accounting.restore(restored.balance ?? accounting.balance, restored.positions ?? []);
      // Open today's trading day now, so the first bar does not reset the day's starting balance.
      const time = clock();
      if (time === time) enforcer.rollDay(time);
      rules.restore(restored);
      if (restored.startOfDayBalance !== undefined) accounting.restoreDayStart(restored.startOfDayBalance);
      ledger.restore(restored.positions ?? []);
    },
    nextSequence: (strategyId) => router.nextSequence(strategyId),
    strategyPositions: () => ledger.positions(),
    strategySnapshot: (strategyId) => ledger.snapshot(strategyId),
    strategyTrades: (strategyId) => ledger.trades(strategyId),
    assignPosition: (strategyId, contractId, size) => ledger.assign(strategyId, contractId, size),
    equityCurve: () => equity.curve(),
    close() {
      host.close();
      venueBridge.close();
      for (const subject of [
        intents$,
        decisions$,
        fills$,
        orders$,
        trades$,
        positions$,
        account$,
        breaches$,
        tradingState$,
        strategyStates$,
        passLock$,
        errors$,
      ]) {
        (subject as Multicast<unknown>).complete();
      }
    },
  };
}

/** The venue's traits, checked: a venue written in plain JavaScript may lack them, and the engine cannot guess. */
function venueTraits(venue: Venue): VenueTraits {
  const traits = (venue as Partial<Venue>).traits;
  if (
    traits === undefined ||
    (traits.kind !== 'live' && traits.kind !== 'simulated') ||
    typeof traits.fillsCanRepeat !== 'boolean' ||
    (traits.pnlRounding !== 'cents' && traits.pnlRounding !== 'none') ||
    typeof traits.keepsCommands !== 'boolean'
  )
    throw new EngineError(
      'INVALID_VENUE',
      `createEngine: the venue must declare its traits { kind: 'live' | 'simulated', fillsCanRepeat: boolean, pnlRounding: 'cents' | 'none', keepsCommands: boolean }, got ${JSON.stringify(traits)}`,
    );
  return traits;
}

/**
 * Feed an engine from a `MarketData` source (a replay or a live poller): pushes every chunk of each
 * subscription as it arrives. Returns the subscription; errors are logged and stop that feed.
 */
export function connectMarketData(
  engine: Pick<Engine, 'push'>,
  marketData: MarketData,
  feeds: ReadonlyArray<{ contractId: string; timeframe: Timeframe }>,
  logger: Logger = silentLogger,
): Subscription {
  const all = new Subscription();
  for (const feed of feeds) {
    all.add(
      marketData.bars(feed.contractId, feed.timeframe).subscribe({
        next: (chunk) => engine.push(chunk),
        error: (error: unknown) => logger.error({ err: error, contractId: feed.contractId }, 'market data feed failed'),
      }),
    );
  }
  return all;
}
