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
 */
import { Subject, Subscription, type Observable } from 'rxjs';
import { Accounting, type AccountSnapshot, type ClosedTrade, type PositionView } from './accounting.ts';
import { SessionClock, TradingCalendar, type SessionPhase } from './calendar.ts';
import { barCursor } from './indicators.ts';
import { silentLogger, type Logger } from './log.ts';
import { Multicast } from './multicast.ts';
import { ContainedObservable } from './contained.ts';
import { intentShapeProblem } from './intent-shape.ts';
import { BarClock } from './bar-clock.ts';
import { EquityRecorder, type EquityCurve } from './equity-recorder.ts';
import { DecisionLog, type Decision } from './decision-log.ts';
import { GuardStep } from './guard-step.ts';
import { IntentRouter, type StampedIntent } from './intent-router.ts';
import { OrderRate } from './order-rate.ts';
import { RuleEnforcer } from './rule-enforcer.ts';
import { VenueBridge } from './venue-bridge.ts';
import { StrategyHost, type Instance, type StrategyEntry, type StrategyFailure } from './strategy-host.ts';
import { TradingStateMachine, type TradingStateChange } from './trading-state.ts';
import { modifiedSpec, OrderBook, orderTowards, publicOrder, trackTrail } from './order-book.ts';
import { barRecord, sliceChunk } from './chunks.ts';
import { TargetKeeper, targetKey } from './target-keeper.ts';
import { modifyInTicks, placeInTicks } from './price-units.ts';
import { Resampler, resample } from './resample.ts';
import { quotesFromBars, tradesFromBars } from './bar-quotes.ts';
import { checkIntent, riskConfigSchema, type GuardOrder, type GuardResult, type GuardState, type ResolvedRiskConfig, type RiskConfig, type TradingState } from './risk.ts';
import { RuleBook, type AccountConfig, type AccountLimits, type Breach } from './rules.ts';
import { StrategyError, parseParams, warmupBars, type StrategyContext, type StrategyModule, type WorkingOrder } from './strategy.ts';
import { nominalMs } from './timeframe.ts';
import { advanceTrail, trailStopPrice } from './trailing.ts';
import type {
  BarChunk,
  BarQuoteModel,
  BarRecord,
  ContractSpec,
  Fill,
  Intent,
  MarketData,
  MarketTrade,
  ModifyIntent,
  OrderSpec,
  OrderState,
  OrderUpdate,
  PlaceIntent,
  Quote,
  Side,
  Timeframe,
  Venue,
  VenueEvent,
} from './types.ts';
import { EngineError } from './errors.ts';


export type { StrategyEntry, StrategyFailure } from './strategy-host.ts';
export { failureError } from './strategy-host.ts';

export interface EngineOptions {
  readonly strategies: readonly StrategyEntry[];
  readonly contracts: readonly ContractSpec[];
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
   * Book each closed trade's PnL in cents, as the gateway does (live and paper trading), so the engine's
   * balance is the account's; a backtest keeps it exact.
   */
  readonly tradePnlInCents?: boolean;
  /**
   * How many bars the run will push, when known (a backtest): the equity curve is then allocated once at
   * that size instead of doubling as it grows (a 10 M-bar curve: 160 MB instead of 268 MB and a copy).
   */
  readonly expectedBars?: number;
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
  /**
   * The venue answers asynchronously (paper and live): several bars pushed at once (after an outage) send
   * only each strategy's last target per contract, and when a pending order's outcome turns out to execute
   * the strategy's last target is re-asserted. A backtest's venue answers at once and leaves it off.
   */
  readonly live?: boolean;
  /** The venue never reports a fill twice (the backtest's): skip the fill-id de-duplication. */
  readonly uniqueFills?: boolean;
  /** Live quotes and market trades (`MarketData.quotes`/`marketTrades`); without them strategies get one per bar. */
  readonly quotes?: (contractId: string) => Observable<Quote>;
  readonly marketTrades?: (contractId: string) => Observable<MarketTrade>;
  /** The spread of the quotes made from bars (the backtest's spread model); none by default. */
  readonly barQuote?: BarQuoteModel;
}

/** Default id of the engine's own intents (flatten on a rule breach, flat-by, kill switch). */
export const RISK_STRATEGY_ID = 'risk';

export type { StampedIntent } from './intent-router.ts';

export type { Decision } from './decision-log.ts';


export type { TradingStateChange } from './trading-state.ts';

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

export type { EquityCurve } from './equity-recorder.ts';

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
  readonly fills$: Observable<Fill>;
  readonly orders$: Observable<OrderUpdate>;
  readonly trades$: Observable<ClosedTrade>;
  readonly positions$: Observable<PositionView>;
  readonly account$: Observable<AccountSnapshot>;
  readonly breaches$: Observable<Breach>;
  readonly tradingState$: Observable<TradingStateChange>;
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
  /** Cancel every working order, close every position, HALT and lock out until `setTradingState('ACTIVE')`. */
  killSwitch(reason: string): void;
  /**
   * Change the account's limits while running (the gateway's administrator changed them): the rule
   * floors and the guard's personal limits follow from the next check on. A limit left out is removed.
   */
  setAccountLimits(limits: AccountLimits): void;
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
  equityCurve(): EquityCurve;
  close(): void;
}


interface PendingIntent {
  readonly instance: Instance | undefined;
  readonly strategyId: string;
  readonly intent: Intent;
  readonly at: number;
}



export function createEngine(options: EngineOptions): Engine {
  const logger = options.logger ?? silentLogger;
  const venue = options.venue;
  const limits = riskConfigSchema.parse(options.risk ?? {});
  if (options.contracts.length === 0) throw new EngineError('NO_CONTRACTS', 'createEngine: at least one contract is needed');
  const contracts = new Map(options.contracts.map((c) => [c.id, c]));
  const rules = new RuleBook(options.account);
  const accounting = new Accounting(options.contracts, rules.config.startingBalance, { rememberFills: options.uniqueFills !== true, pnlInCents: options.tradePnlInCents === true });
  const calendar = new TradingCalendar(limits.tradingDay);
  const sessions = limits.sessions === undefined ? undefined : new SessionClock(limits.sessions, limits.tradingDay.timeZone);

  const intents$ = new Multicast<StampedIntent>();
  const decisions$ = new Multicast<Decision>();
  const fills$ = new Multicast<Fill>();
  const orders$ = new Multicast<OrderUpdate>();
  const trades$ = new Multicast<ClosedTrade>();
  const positions$ = new Multicast<PositionView>();
  const account$ = new Multicast<AccountSnapshot>();
  const breaches$ = new Multicast<Breach>();
  const tradingState$ = new Multicast<TradingStateChange>();
  const errors$ = new Multicast<StrategyFailure>();
  const decisions = new DecisionLog(decisions$, logger);

  const book = new OrderBook();
  const live = options.live === true;
  const riskStrategyId = options.riskStrategyId ?? RISK_STRATEGY_ID;
  const barClock = new BarClock(options.clock);
  const clock = barClock.time;

  // Intents decided during a push wait here for their bar.
  let catchUp = false;
  /** History pushed only to warm the strategies up (live start): no venue, no rules, no intents. */
  let history = false;
  /** Bars pushed so far per contract, before the current push (for the strategies' warm-up). */
  const barsSeen = new Map<string, number>();
  let seenBefore = 0;
  const pending: PendingIntent[] = [];
  let pendingCursor = 0;


  const equity = new EquityRecorder(options.recordEquity === true ? (options.expectedBars ?? 0) : 0);
  const trading = new TradingStateMachine(tradingState$, logger);
  const rate = new OrderRate(limits.maxOrderRate?.orders ?? 0);
  const guard = new GuardStep(contracts, accounting, book, rules, trading, rate, sessions, options.lastPrice);
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
    live,
    riskStrategyId,
    sequenceStart: options.sequenceStart,
    findInstance: (strategyId) => host.find(strategyId),
  });
  const keeper = router.keeper;
  const enforcer = new RuleEnforcer({ rules, accounting, calendar, sessions, limits, trading, router, barClock, breaches$, account$, logger });
  const onBreach = enforcer.onBreach;


  // ---------------------------------------------------------------- ids and intents

  function receive(instance: Instance | undefined, strategyId: string, intent: Intent): void {
    if (instance?.failed === true) {
      logger.debug({ strategyId }, 'intent of a failed strategy ignored');
      return;
    }
    if (history) return;
    if (catchUp && barClock.index >= 0) {
      pending.push({ instance, strategyId, intent, at: barClock.pushLength - 1 });
      return;
    }
    if (barClock.index >= 0 && warming(instance, barClock.index)) {
      refuseWarmUp(strategyId, intent, barClock.index);
      return;
    }
    if (barClock.pushing) {
      let at = intent.at;
      if (at === undefined) at = barClock.pipelineIndex();
      pending.push({ instance, strategyId, intent, at });
      return;
    }
    const chunk = barClock.chunk;
    const decidedAt = chunk !== undefined && barClock.index >= 0 ? chunk.time[barClock.index]! : clock();
    router.processIntent(instance, strategyId, intent, decidedAt, barClock.current());
  }

  // ---------------------------------------------------------------- bars

  function push(chunk: BarChunk): void {
    if (chunk.length === 0) return;
    const contract = contracts.get(chunk.contractId);
    if (contract === undefined) throw new EngineError('UNKNOWN_CONTRACT', `push: unknown contract '${chunk.contractId}'`);
    if (chunk.partial === true) {
      if (chunk.length > 1) push(sliceChunk(chunk, 0, chunk.length - 1));
      markPartial(chunk, chunk.length - 1);
      return;
    }
    const n = chunk.length;
    const barMs = nominalMs(chunk.timeframe);
    const contractId = chunk.contractId;
    seenBefore = barsSeen.get(contractId) ?? 0;
    barsSeen.set(contractId, seenBefore + n);

    // (1) the strategies' chunk pipelines
    pending.length = 0;
    pendingCursor = 0;
    barClock.pushing = true;
    barClock.chunk = chunk;
    barClock.pushLength = n;
    try {
      host.pushChunk(chunk);
    } finally {
      barClock.pushing = false;
      barCursor.at = -1;
    }
    let sorted = true;
    for (let k = 1; k < pending.length; k++) if (pending[k]!.at < pending[k - 1]!.at) sorted = false;
    if (!sorted) pending.sort((a, b) => a.at - b.at);
    // A live catch-up (several bars at once): every decision waits for the last bar, where only each
    // strategy's last target per contract is sent.
    catchUp = live && n > 1;
    if (catchUp) for (let k = 0; k < pending.length; k++) pending[k] = { ...pending[k]!, at: n - 1 };

    const listening = host.prepareBarRecords(chunk);

    // (2) bar by bar
    const { time, high, low, close } = chunk;
    const recordEquity = options.recordEquity === true;
    if (recordEquity) equity.reserve(n);
    const positionBook = accounting.bookOf(contractId);
    const single = options.contracts.length === 1;
    const hasOnBar = venue.onBar !== undefined;
    const rulesActive = rules.active;
    barClock.chunk = chunk;
    try {
      for (let i = 0; i < n; i++) {
        barClock.index = i;
        const barTime = time[i]!;
        if (history) {
          // Warm-up history: the strategies see the bar, nothing else happens.
          positionBook.lastPrice = close[i]!;
          if (listening) host.emitBarRecords(chunk, i);
          continue;
        }
        // By index, not the time itself: with rollDay inlined here, V8 boxed barTime on every bar to pass it
        // (a 16-byte heap number a bar, 17 MB of garbage per 1M-bar run) whenever a position was open.
        if (barTime >= enforcer.nextDayStart) enforcer.rollDayAtBar(time, i);
        barClock.now = barTime + barMs;
        barClock.lastBarEnd = barClock.now;
        if (hasOnBar) venue.onBar!(chunk, i);

        const position = positionBook.size;
        if (!rulesActive) {
          // nothing to check
        } else if (position === 0) {
          const balance = accounting.balance;
          const others = single ? 0 : accounting.unrealizedPnl();
          rules.evaluate(barTime, balance, balance + others, balance + others, onBreach);
        } else {
          const balance = accounting.balance;
          const worst = position > 0 ? low[i]! : high[i]!;
          const best = position > 0 ? high[i]! : low[i]!;
          rules.evaluate(barTime, balance, balance + accounting.unrealizedWith(contractId, worst), balance + accounting.unrealizedWith(contractId, best), onBreach);
        }
        positionBook.lastPrice = close[i]!;
        if (book.trailingCount > 0) advanceTrails(contractId, high[i]!, low[i]!);
        if (sessions !== undefined) enforcer.checkSession(barClock.now);
        if (listening) host.emitBarRecords(chunk, i);
        if (catchUp && i === n - 1) coalesceTargets(barTime);
        while (pendingCursor < pending.length && pending[pendingCursor]!.at === i) {
          const item = pending[pendingCursor++]!;
          if (warming(item.instance, i)) refuseWarmUp(item.strategyId, item.intent, i);
          else router.processIntent(item.instance, item.strategyId, item.intent, barTime, barClock.now);
        }
        if (recordEquity) equity.record(barTime, accounting.equity());
      }
    } finally {
      barClock.index = -1;
      barClock.chunk = undefined;
      catchUp = false;
    }
    // Intents stamped beyond the chunk (a bad `at`) are still decided, at the last bar: never dropped.
    while (pendingCursor < pending.length) {
      const item = pending[pendingCursor++]!;
      logger.warn({ strategyId: item.strategyId, at: item.at, length: n }, 'intent stamped outside its chunk; decided at the last bar');
      router.processIntent(item.instance, item.strategyId, item.intent, time[n - 1]!, barClock.now);
    }
    pending.length = 0;
    if (host.failures.length > 0 && options.onStrategyError !== 'log') host.throwFailure();
  }

  /**
   * Several bars at once (a live feed catching up after an outage): a target is a target, so only each
   * strategy's last target (or flatten) per contract is sent; the earlier ones are recorded as superseded.
   */
  function coalesceTargets(time: number): void {
    const seen = new Set<string>();
    const kept: PendingIntent[] = [];
    for (let k = pending.length - 1; k >= pendingCursor; k--) {
      const item = pending[k]!;
      const intent = item.intent;
      if (intent.kind === 'target' || intent.kind === 'flatten') {
        const contractId = intent.contractId === undefined ? '*' : router.resolveContract(item.instance, intent.contractId);
        const key = targetKey(item.strategyId, contractId);
        if (seen.has(key) || seen.has(targetKey(item.strategyId, '*'))) {
          decisions.decide(item.strategyId, intent, undefined, { accepted: false, code: 'SUPERSEDED', message: `decided at bar ${item.at} of a catch-up of ${barClock.pushLength} bars; a later target replaced it` }, time);
          continue;
        }
        seen.add(key);
      }
      kept.push(item);
    }
    kept.reverse();
    pending.length = pendingCursor;
    for (const item of kept) pending.push(item);
  }

  /** True while bar `index` of the current push is within the instance's declared warm-up. */
  function warming(instance: Instance | undefined, index: number): boolean {
    if (instance === undefined || instance.warmup === 0 || barClock.chunk === undefined) return false;
    if (instance.contracts[0]!.id !== barClock.chunk.contractId) return false;
    return seenBefore + index + 1 <= instance.warmup;
  }

  function refuseWarmUp(strategyId: string, intent: Intent, index: number): void {
    const instance = host.find(strategyId);
    const time = barClock.chunk?.time[index] ?? clock();
    decisions.decide(strategyId, intent, undefined, { accepted: false, code: 'WARM_UP', message: `bar ${seenBefore + index + 1} of a ${instance?.warmup ?? 0}-bar warm-up` }, time);
  }

  function markPartial(chunk: BarChunk, i: number): void {
    const barTime = chunk.time[i]!;
    if (barTime >= enforcer.nextDayStart) enforcer.rollDay(barTime);
    const contractId = chunk.contractId;
    const position = accounting.position(contractId);
    const balance = accounting.balance;
    const worst = position >= 0 ? chunk.low[i]! : chunk.high[i]!;
    const best = position >= 0 ? chunk.high[i]! : chunk.low[i]!;
    rules.evaluate(barTime, balance, balance + accounting.unrealizedWith(contractId, worst), balance + accounting.unrealizedWith(contractId, best), onBreach);
    accounting.mark(contractId, chunk.close[i]!);
  }

  function advanceTrails(contractId: string, high: number, low: number): void {
    for (let k = 0; k < book.size; k++) {
      const order = book.at(k);
      if (order.trail === undefined || order.contractId !== contractId) continue;
      order.trail = advanceTrail(order.trail, order.side === 'sell' ? high : low);
      order.trailStop = trailStopPrice(order.trail);
    }
  }

  const host = new StrategyHost({ options, contracts, riskStrategyId, accounting, book, guard, barClock, fills$, orders$, positions$, account$, errors$, logger });
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
    barClock,
    fills$,
    orders$,
    trades$,
    positions$,
    account$,
    logger,
    live,
  });
  host.start(receive);

  return {
    push,
    warmUp(chunk) {
      history = true;
      try {
        push(chunk);
      } finally {
        history = false;
      }
    },
    intents$: intents$.asObservable(),
    decisions$: decisions$.asObservable(),
    fills$: fills$.asObservable(),
    orders$: orders$.asObservable(),
    trades$: trades$.asObservable(),
    positions$: positions$.asObservable(),
    account$: account$.asObservable(),
    breaches$: breaches$.asObservable(),
    tradingState$: tradingState$.asObservable(),
    errors$: errors$.asObservable(),
    rejections: () => decisions.rejectionCounts(),
    accounting,
    rules,
    riskConfig: limits,
    snapshot: () => accounting.snapshot(),
    tradingState: () => trading.current,
    setTradingState: (next, reason) => trading.set(next, reason, clock()),
    killSwitch(reason) {
      trading.lockedUntil = Infinity;
      trading.change('HALTED', `kill switch: ${reason}`, Infinity, clock());
      router.flattenAll(`kill switch: ${reason}`, clock());
    },
    setAccountLimits(accountLimits) {
      rules.setLimits(accountLimits);
      guard.followLimits();
      logger.info({ limits: accountLimits }, 'account limits changed');
    },
    submit(strategyId, intent) {
      receive(host.find(strategyId), strategyId, intent);
    },
    openOrders: () => book.values().map(publicOrder),
    restore(restored) {
      accounting.restore(restored.balance ?? accounting.balance, restored.positions ?? []);
      // Open today's trading day now, so the first bar does not reset the day's starting balance.
      const time = clock();
      if (time === time) enforcer.rollDay(time);
      rules.restore(restored);
      if (restored.startOfDayBalance !== undefined) accounting.restoreDayStart(restored.startOfDayBalance);
    },
    nextSequence: (strategyId) => router.nextSequence(strategyId),
    equityCurve: () => equity.curve(),
    close() {
      host.close();
      venueBridge.close();
      for (const subject of [intents$, decisions$, fills$, orders$, trades$, positions$, account$, breaches$, tradingState$, errors$]) {
        (subject as Multicast<unknown>).complete();
      }
    },
  };
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
