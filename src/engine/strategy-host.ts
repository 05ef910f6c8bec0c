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
import type { Logger } from './log.ts';
import { Multicast } from './multicast.ts';
import { publicOrder, type OrderBook } from './order-book.ts';
import { Resampler, resample } from './resample.ts';
import {
  StrategyError,
  parseParams,
  warmupBars,
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
} from './types.ts';

export interface StrategyEntry {
  readonly strategy: StrategyModule;
  /** Raw parameters, validated against the strategy's schema (defaults applied). */
  readonly params?: unknown;
  /** Instance id, prefix of its client ids; the strategy's name by default. */
  readonly id?: string;
  /** Contract ids it trades, the first being its primary; all of the engine's by default. */
  readonly contracts?: readonly string[];
}

export interface StrategyFailure {
  readonly strategyId: string;
  readonly error: unknown;
  /** Start of the bar being processed when it failed (epoch ms); NaN outside a bar. */
  readonly barTime: number;
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
}

interface BarListener {
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
  readonly accounting: Accounting;
  readonly book: OrderBook;
  readonly guard: GuardStep;
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
    for (const { instance, module, context } of this.runs) {
      instance.subscription = module.run(context).subscribe({
        next: (intent) => receive(instance, instance.id, intent),
        error: (error: unknown) => this.failStrategy(instance, error),
      });
    }
    this.runs.length = 0;
  }

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
      subject.next(chunk);
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
    for (const listener of this.barListeners) {
      if (listener.contractId !== chunk.contractId || !listener.subject.observed) continue;
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
    } = parts;
    const { instances, barListeners } = this;
    const module = entry.strategy;
    const id = entry.id ?? module.name;
    if (id === riskStrategyId || instances.some((other) => other.id === id)) {
      throw new EngineError(
        'DUPLICATE_STRATEGY_ID',
        `strategy id '${id}' is ${id === riskStrategyId ? "the engine's own (riskStrategyId)" : 'used twice'}`,
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
    const instance: Instance = {
      id,
      contracts: own,
      chunkSubjects: new Map(),
      failed: false,
      warmup: warmupBars(module, params),
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
    const context: StrategyContext = {
      id,
      params,
      contracts: own,
      contract: own[0]!,
      bars(contractId, timeframe) {
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
      barRecords(contractId, timeframe) {
        const subject = new Multicast<BarRecord>();
        barListeners.push({
          contractId: resolve(contractId),
          subject,
          resampler: timeframe === undefined ? undefined : new Resampler(timeframe),
          derived: undefined,
          cursor: 0,
        });
        return contain(subject.asObservable());
      },
      quotes(contractId) {
        const resolved = resolve(contractId);
        return options.quotes !== undefined
          ? contain(options.quotes(resolved))
          : context.barRecords(resolved).pipe(quotesFromBars(options.barQuote));
      },
      trades(contractId) {
        const resolved = resolve(contractId);
        return options.marketTrades !== undefined
          ? contain(options.marketTrades(resolved))
          : context.barRecords(resolved).pipe(tradesFromBars());
      },
      position: (contractId) => guard.position(resolve(contractId)),
      averagePrice: (contractId) => accounting.averagePrice(resolve(contractId)),
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
      logger: strategyLogger,
    };
    instances.push(instance);
    return { instance, context };
  }

  /** A strategy threw (in any callback) or its stream errored: it stops here, the engine and the others go on. */
  private failStrategy(instance: Instance, error: unknown): void {
    if (instance.failed) return;
    instance.failed = true;
    const index =
      this.barClock.index >= 0 ? this.barClock.index : this.barClock.pushing ? this.barClock.pipelineIndex() : -1;
    const barTime = this.barClock.chunk !== undefined && index >= 0 ? this.barClock.chunk.time[index]! : NaN;
    const failure: StrategyFailure = { strategyId: instance.id, error, barTime };
    this.logger.error(
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
