import { Subject, type Observable, type Subscription } from 'rxjs';
import type { AccountSnapshot, Accounting, PositionView } from './accounting.ts';
import type { BarClock } from './bar-clock.ts';
import { quotesFromBars, tradesFromBars } from './bar-quotes.ts';
import { barRecord } from './chunks.ts';
import { barCursor } from './indicators.ts';
import { ContainedObservable } from './contained.ts';
import { EngineError } from './errors.ts';
import type { GuardStep } from './guard-step.ts';
import { MarketSession, SessionView, sessionSnapshot, type MarketHours } from './market-hours.ts';
import type { TradingCalendar } from './trading-day.ts';
import type { ResolvedRiskConfig } from './risk.ts';
import type { Logger } from './log.ts';
import { Multicast } from './multicast.ts';
import { publicOrder, type OrderBook } from './order-book.ts';
import { Resampler, resample } from './resample.ts';
import { nominalMs } from './timeframe.ts';
import { ownPosition } from './strategy-exposure.ts';
import { UNATTRIBUTED, type StrategyLedger } from './strategy-ledger.ts';
import { installUnhandledCatcher, unhandled } from './unhandled.ts';
import {
  StrategyError,
  parseParams,
  warmupBars,
  type PositionSizing,
  type StrategyContext,
  type StrategyModule,
  type WorkingOrder,
} from './strategy.ts';
import type {
  BarChunk,
  BarRecord,
  ContractSpec,
  Fill,
  Intent,
  MarketTrade,
  OrderUpdate,
  BarQuoteModel,
  Quote,
  Timeframe,
} from './types.ts';

export interface StrategyEntry {
  readonly strategy: StrategyModule;
  /** Raw parameters, validated against the strategy's schema (defaults applied). */
  readonly params?: unknown;
  /** Instance id, prefix of its client ids; the strategy's name by default. */
  readonly id?: string;
  /** Contract ids it trades, the first being its primary; all of the engine's by default. */
  readonly contracts?: readonly string[];
  /**
   * Size multiplier of this instance (a positive whole number, 1 by default): the size of every place and
   * target it emits, and the new size of its modifies, is multiplied by it (a copy of a strategy at twice
   * the size). It sees real contracts (`ctx.position()`); `ctx.sizing`'s sizes are divided by it.
   */
  readonly size?: number;
  /**
   * The instance's timeframe: its default `ctx.bars()` and `ctx.barRecords()` are resampled to it from the
   * base stream the engine is pushed (a 5-minute bot on a 1-minute feed); its declared warm-up counts bars
   * of it. The base stream's timeframe by default.
   */
  readonly timeframe?: Timeframe;
}

export interface StrategyFailure {
  readonly strategyId: string;
  readonly error: unknown;
  /** Start of the bar being processed when it failed (epoch ms); NaN outside a bar. */
  readonly barTime: number;
  /** Index of that bar in the chunk being pushed; -1 (or absent) outside a bar. */
  readonly barIndex?: number;
}

export interface Instance {
  readonly id: string;
  readonly contracts: readonly ContractSpec[];
  readonly chunkSubjects: Map<string, Subject<BarChunk>>;
  subscription?: Subscription;
  /** Set when it threw or its stream errored: its intents are ignored from then on. */
  failed: boolean;
  /** Bars of its primary contract it must see before its intents count (its declared warm-up). */
  readonly warmup: number;
  /** Fails this instance (made once: handed to RxJS's unhandled-error path while it is being dispatched to). */
  readonly fail: (error: unknown) => void;
  /** Its size multiplier (1: its intents pass as they are). */
  readonly size: number;
  /** Its timeframe, when it is not the base stream's. */
  readonly timeframe: Timeframe | undefined;
}

interface BarListener {
  readonly instance: Instance;
  readonly contractId: string;
  readonly subject: Multicast<BarRecord>;
  readonly resampler: Resampler | undefined;
  derived: BarChunk | undefined;
  cursor: number;
}

/** What of the engine's options the host reads. */
export interface StrategyHostOptions {
  readonly strategies: readonly StrategyEntry[];
  readonly contracts: readonly ContractSpec[];
  readonly quotes?: (contractId: string) => Observable<Quote>;
  readonly marketTrades?: (contractId: string) => Observable<MarketTrade>;
  readonly marketHours?: Readonly<Record<string, MarketHours>>;
  readonly barQuote?: BarQuoteModel;
}

export interface StrategyHostParts {
  readonly options: StrategyHostOptions;
  readonly contracts: ReadonlyMap<string, ContractSpec>;
  /** The engine's trading day (ctx.session's day for a contract without market hours). */
  readonly calendar: TradingCalendar;
  readonly riskStrategyId: string;
  /** The guard's limits (its safety buffer sizes `ctx.sizing`'s room). */
  readonly limits: Pick<ResolvedRiskConfig, 'safetyBuffer'>;
  readonly accounting: Accounting;
  readonly book: OrderBook;
  readonly guard: GuardStep;
  /** Each strategy's own lines (the host registers every instance's contracts with it). */
  readonly ledger: StrategyLedger;
  readonly barClock: BarClock;
  readonly fills$: Multicast<Fill>;
  readonly orders$: Multicast<OrderUpdate>;
  readonly positions$: Multicast<PositionView>;
  readonly account$: Multicast<AccountSnapshot>;
  readonly errors$: Multicast<StrategyFailure>;
  readonly logger: Logger;
}

/**
 * The strategies' side of the engine: one instance and context per strategy entry, the chunk and bar
 * streams they read, and what happens when one fails.
 */
export class StrategyHost {
  readonly instances: Instance[] = [];
  /** Failures not yet reported by a push (a synchronous run stops on the first). */
  readonly failures: StrategyFailure[] = [];
  private readonly barListeners: BarListener[] = [];
  private readonly runs: Array<{ instance: Instance; module: StrategyModule; context: StrategyContext }> = [];
  // The other parts are read only while the contexts are built (by their closures from then on).
  private readonly barClock: BarClock;
  private readonly errors$: Multicast<StrategyFailure>;
  private readonly logger: Logger;

  constructor(parts: StrategyHostParts) {
    this.barClock = parts.barClock;
    this.errors$ = parts.errors$;
    this.logger = parts.logger;
    for (const entry of parts.options.strategies)
      this.runs.push({ ...this.host(parts, entry), module: entry.strategy });
  }

  /** Run the strategies: their intents go to `receive`. */
  start(receive: (instance: Instance, strategyId: string, intent: Intent) => void): void {
    installUnhandledCatcher();
    for (const { instance, module, context } of this.runs) {
      const outer = unhandled.catcher;
      unhandled.catcher = instance.fail;
      try {
        const size = instance.size;
        instance.subscription = module.run(context).subscribe({
          next:
            size === 1
              ? (intent) => receive(instance, instance.id, intent)
              : (intent) => receive(instance, instance.id, scaled(intent, size)),
          error: instance.fail,
        });
      } catch (error) {
        // `run` itself threw (or a subscription it made at once): the strategy never starts.
        this.failStrategy(instance, error);
      } finally {
        unhandled.catcher = outer;
      }
    }
    this.runs.length = 0;
  }

  /**
   * Who fails for an error RxJS reports while the engine is not dispatching to one strategy (an engine
   * event, a stream combined by hand): the only strategy, else the first that has not failed.
   */
  readonly failUnattributed = (error: unknown): void => {
    const instance = this.instances.find((i) => !i.failed) ?? this.instances[0];
    if (instance !== undefined) this.failStrategy(instance, error);
  };

  find(strategyId: string): Instance | undefined {
    return this.instances.find((i) => i.id === strategyId);
  }

  /** A chunk through every strategy's chunk pipeline of its contract. */
  pushChunk(chunk: BarChunk): void {
    const contractId = chunk.contractId;
    for (const instance of this.instances) {
      const subject = instance.chunkSubjects.get(contractId);
      if (subject === undefined) continue;
      barCursor.at = -1;
      const outer = unhandled.catcher;
      unhandled.catcher = instance.fail;
      try {
        subject.next(chunk);
      } finally {
        unhandled.catcher = outer;
      }
    }
  }

  /** Ready the bar streams of a chunk's contract; false when nobody listens to them. */
  prepareBarRecords(chunk: BarChunk): boolean {
    let listening = false;
    for (const listener of this.barListeners) {
      if (listener.contractId !== chunk.contractId || !listener.subject.observed) continue;
      listening = true;
      if (listener.resampler !== undefined) {
        listener.derived = listener.resampler.update(chunk);
        listener.cursor = 0;
      }
    }
    return listening;
  }

  emitBarRecords(chunk: BarChunk, i: number): void {
    const listeners = this.barListeners;
    for (let k = 0; k < listeners.length; k++) {
      const listener = listeners[k]!;
      if (listener.contractId !== chunk.contractId || !listener.subject.observed) continue;
      const outer = unhandled.catcher;
      unhandled.catcher = listener.instance.fail;
      try {
        if (listener.resampler === undefined) {
          listener.subject.next(barRecord(chunk, i));
          continue;
        }
        const derived = listener.derived;
        if (derived === undefined) continue;
        while (listener.cursor < derived.length && derived.baseIndex![listener.cursor] === i) {
          listener.subject.next(barRecord(derived, listener.cursor));
          listener.cursor++;
        }
      } finally {
        unhandled.catcher = outer;
      }
    }
  }

  /** A strategy that failed stops the synchronous run loudly instead of quietly trading without it. */
  throwFailure(): never {
    const failure = this.failures[0]!;
    this.failures.length = 0;
    throw failureError(failure);
  }

  close(): void {
    for (const instance of this.instances) {
      instance.subscription?.unsubscribe();
      for (const subject of instance.chunkSubjects.values()) subject.complete();
    }
    for (const listener of this.barListeners) listener.subject.complete();
  }

  /** One strategy entry's instance and the context its `run` gets. */
  private host(parts: StrategyHostParts, entry: StrategyEntry): { instance: Instance; context: StrategyContext } {
    const {
      options,
      contracts,
      riskStrategyId,
      guard,
      accounting,
      book,
      fills$,
      orders$,
      positions$,
      account$,
      barClock,
      logger,
      ledger,
    } = parts;
    const { instances, barListeners } = this;
    const module = entry.strategy;
    const id = entry.id ?? module.name;
    if (id === riskStrategyId || id === UNATTRIBUTED || instances.some((other) => other.id === id)) {
      throw new EngineError(
        'DUPLICATE_STRATEGY_ID',
        `strategy id '${id}' is ${id === riskStrategyId ? "the engine's own (riskStrategyId)" : id === UNATTRIBUTED ? 'the ledger line of what no strategy owns' : 'used twice'}`,
      );
    }
    const contractOf = (contractId: string): ContractSpec => {
      const contract = contracts.get(contractId);
      if (contract === undefined)
        throw new EngineError('UNKNOWN_CONTRACT', `strategy '${id}': unknown contract '${contractId}'`);
      return contract;
    };
    const own = (entry.contracts ?? options.contracts.map((c) => c.id)).map(contractOf);
    const params = parseParams(module, entry.params);
    const multiplier = entry.size ?? 1;
    if (!Number.isInteger(multiplier) || multiplier < 1)
      throw new EngineError(
        'INVALID_SIZE',
        `strategy '${id}': size must be a positive whole number, got ${multiplier}`,
      );
    const ownTimeframe = entry.timeframe;
    if (ownTimeframe !== undefined && !(nominalMs(ownTimeframe) > 0))
      throw new EngineError('INVALID_TIMEFRAME', `strategy '${id}': timeframe ${JSON.stringify(ownTimeframe)}`);
    const instance: Instance = {
      id,
      contracts: own,
      chunkSubjects: new Map(),
      failed: false,
      warmup: warmupBars(module, params),
      fail: (error: unknown) => this.failStrategy(instance, error),
      size: multiplier,
      timeframe: ownTimeframe,
    };
    const contain = <T>(source: Observable<T>): Observable<T> =>
      new ContainedObservable(source, (error) => this.failStrategy(instance, error));
    const resolve = (contractId: string | undefined) => contractId ?? own[0]!.id;
    const strategyLogger = logger.child({ strategy: id });
    // The context's own span caches: a strategy reading another time than the guard's evicts nothing of the guard's.
    const markets = new Map<string, MarketSession>();
    const marketOf = (contractId: string): MarketSession => {
      let market = markets.get(contractId);
      if (market === undefined) {
        contractOf(contractId);
        market = new MarketSession(options.marketHours?.[contractId], parts.calendar);
        markets.set(contractId, market);
      }
      return market;
    };
    const session = new SessionView(marketOf(own[0]!.id), () => barClock.current());
    const safetyBuffer = parts.limits.safetyBuffer;
    const room = () => guard.roomNow(safetyBuffer);
    // Sizes the engine will multiply by the instance's size: what it is told fits is what fits once multiplied.
    const maxSizeForStop = (stopTicks: number, contractId?: string): number => {
      if (!(stopTicks > 0) || !Number.isFinite(stopTicks)) return 0;
      const perContract = stopTicks * contractOf(resolve(contractId)).grid.tickValue * multiplier;
      return sizeWithin(room(), perContract);
    };
    const sizing: PositionSizing = {
      room,
      maxSizeForStop,
      fromRisk: (money, stopTicks, contractId) => {
        if (!(stopTicks > 0) || !Number.isFinite(stopTicks)) return 0;
        const perContract = stopTicks * contractOf(resolve(contractId)).grid.tickValue * multiplier;
        return Math.min(sizeWithin(money, perContract), maxSizeForStop(stopTicks, contractId));
      },
    };
    const barRecordsOf = (contractId: string, timeframe: Timeframe | undefined): Observable<BarRecord> => {
      const subject = new Multicast<BarRecord>();
      barListeners.push({
        instance,
        contractId,
        subject,
        resampler: timeframe === undefined ? undefined : new Resampler(timeframe),
        derived: undefined,
        cursor: 0,
      });
      return contain(subject.asObservable());
    };
    const context: StrategyContext = {
      id,
      params,
      contracts: own,
      contract: own[0]!,
      bars(contractId, requested) {
        const timeframe = requested ?? ownTimeframe;
        const resolved = resolve(contractId);
        if (!contracts.has(resolved))
          throw new EngineError('UNKNOWN_CONTRACT', `strategy '${id}': bars of unknown contract '${resolved}'`);
        let subject = instance.chunkSubjects.get(resolved);
        if (subject === undefined) {
          subject = new Subject<BarChunk>();
          instance.chunkSubjects.set(resolved, subject);
        }
        return contain(timeframe === undefined ? subject.asObservable() : subject.pipe(resample(timeframe)));
      },
      barRecords: (contractId, timeframe) => barRecordsOf(resolve(contractId), timeframe ?? ownTimeframe),
      // Quotes and prints made from bars follow the base stream, whatever the instance's timeframe.
      quotes(contractId) {
        const resolved = resolve(contractId);
        return options.quotes !== undefined
          ? contain(options.quotes(resolved))
          : barRecordsOf(resolved, undefined).pipe(quotesFromBars(options.barQuote));
      },
      trades(contractId) {
        const resolved = resolve(contractId);
        return options.marketTrades !== undefined
          ? contain(options.marketTrades(resolved))
          : barRecordsOf(resolved, undefined).pipe(tradesFromBars());
      },
      // On a contract strategies share, a strategy sees its own line, as its targets move it.
      position: (contractId) => {
        const resolved = resolve(contractId);
        return ledger.anyShared && ledger.isShared(resolved)
          ? ownPosition(book, ledger, id, resolved)
          : guard.position(resolved);
      },
      averagePrice: (contractId) => {
        const resolved = resolve(contractId);
        return ledger.anyShared && ledger.isShared(resolved)
          ? ledger.averagePrice(id, resolved)
          : accounting.averagePrice(resolve(contractId));
      },
      lastPrice: (contractId) => accounting.lastPrice(resolve(contractId)),
      toPrice: (ticks, contractId) => contractOf(resolve(contractId)).grid.toPrice(ticks),
      toTicks: (price, contractId) => contractOf(resolve(contractId)).grid.toTicks(price),
      openOrders: (contractId) => {
        const out: WorkingOrder[] = [];
        for (let k = 0; k < book.size; k++) {
          const order = book.at(k);
          if (order.strategyId === id && (contractId === undefined || order.contractId === contractId))
            out.push(publicOrder(order));
        }
        return out;
      },
      fills: contain(fills$.asObservable()),
      orders: contain(orders$.asObservable()),
      positions: contain(positions$.asObservable()),
      account: contain(account$.asObservable()),
      now: () => barClock.current(),
      session,
      sessionAt: (time, contractId) => sessionSnapshot(marketOf(resolve(contractId)), time),
      sizing,
      logger: strategyLogger,
    };
    instances.push(instance);
    parts.ledger.register(
      id,
      own.map((c) => c.id),
    );
    return { instance, context };
  }

  /** A strategy threw (in any callback) or its stream errored: it stops here, the engine and the others go on. */
  private failStrategy(instance: Instance, error: unknown): void {
    if (instance.failed) return;
    instance.failed = true;
    const index =
      this.barClock.index >= 0 ? this.barClock.index : this.barClock.pushing ? this.barClock.pipelineIndex() : -1;
    const barTime = this.barClock.chunk !== undefined && index >= 0 ? this.barClock.chunk.time[index]! : NaN;
    const failure: StrategyFailure = {
      strategyId: instance.id,
      error,
      barTime,
      barIndex: barTime === barTime ? index : -1,
    };
    this.logger.warn(
      { err: error, strategy: instance.id, bar: barTime === barTime ? new Date(barTime).toISOString() : undefined },
      'strategy failed; its intents stop',
    );
    this.failures.push(failure);
    this.errors$.next(failure);
    // Unsubscribing is deferred: the failure may be reported from inside the stream being torn down.
    queueMicrotask(() => instance.subscription?.unsubscribe());
  }
}

/** The error a failed strategy stops a synchronous run with: its id and the bar it failed on. */
export function failureError(failure: StrategyFailure): StrategyError {
  const reason = failure.error instanceof Error ? failure.error.message : String(failure.error);
  const at = failure.barTime === failure.barTime ? ` at the bar of ${new Date(failure.barTime).toISOString()}` : '';
  return new StrategyError('STRATEGY_FAILED', `strategy '${failure.strategyId}' failed${at}: ${reason}`, {
    cause: failure.error,
    strategyId: failure.strategyId,
    ...(failure.barTime === failure.barTime ? { barTime: failure.barTime } : {}),
  });
}

/** A strategy's intent at its instance's size: sizes that are not whole numbers stay as they are, for the guard to refuse. */
function scaled(intent: Intent, size: number): Intent {
  switch (intent.kind) {
    case 'place':
    case 'target':
      return Number.isInteger(intent.size) ? { ...intent, size: intent.size * size } : intent;
    case 'modify':
      return intent.size !== undefined && Number.isInteger(intent.size)
        ? { ...intent, size: intent.size * size }
        : intent;
    default:
      return intent;
  }
}

/** Whole contracts of `perContract` risk each that fit in `money` (the guard's `risk > room` never holds for them). */
function sizeWithin(money: number, perContract: number): number {
  if (!(money > 0)) return 0;
  if (money === Infinity) return Infinity;
  let size = Math.floor(money / perContract);
  // The guard compares perContract x size with the room: a quotient rounded up must not pass for one that fits.
  while (size > 0 && perContract * size > money) size--;
  return size;
}
