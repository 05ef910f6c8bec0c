import type { Accounting } from './accounting.ts';
import type { BarClock } from './bar-clock.ts';
import type { SessionClock } from './trading-day.ts';
import { prefetchColumns, sliceChunk } from './chunks.ts';
import type { DecisionLog } from './decision-log.ts';
import type { EquityRecorder } from './equity-recorder.ts';
import { EngineError } from './errors.ts';
import { barCursor } from './indicators.ts';
import type { IntentRouter } from './intent-router.ts';
import type { Logger } from './log.ts';
import type { OrderBook } from './order-book.ts';
import { PendingIntents } from './pending-intents.ts';
import type { RuleEnforcer } from './rule-enforcer.ts';
import type { RuleBook } from './account-rules.ts';
import type { Instance, StrategyHost } from './strategy-host.ts';
import { targetKey } from './target-keeper.ts';
import { nominalMs, timeframeLabel } from './timeframe.ts';
import { unhandled } from './unhandled.ts';
import { advanceTrail, trailStopPrice } from './trailing.ts';
import type { BarChunk, ContractSpec, Intent, Venue } from './types.ts';

export interface BarDriverParts {
  readonly contracts: ReadonlyMap<string, ContractSpec>;
  readonly venue: Venue;
  readonly accounting: Accounting;
  readonly rules: RuleBook;
  readonly book: OrderBook;
  readonly sessions: SessionClock | undefined;
  readonly enforcer: RuleEnforcer;
  readonly router: IntentRouter;
  readonly host: StrategyHost;
  readonly decisions: DecisionLog;
  readonly equity: EquityRecorder;
  readonly barClock: BarClock;
  readonly logger: Logger;
  /** Record equity at every bar's close. */
  readonly recordEquity: boolean;
  /** The engine trades one contract: a flat bar's equity needs no other contract's unrealized PnL. */
  readonly singleContract: boolean;
  /** A strategy's failure makes `push` throw (else it is only logged and reported). */
  readonly throwOnFailure: boolean;
}

/**
 * Drives the engine from bar chunks: runs each chunk through the strategies, then bar by bar lets the
 * venue match, marks accounting, checks the account's rules, and decides the intents made at that bar;
 * decides intents made outside a push at once.
 */
export class BarDriver {
  /** History pushed only to warm the strategies up (live start): no venue, no rules, no intents. */
  private history = false;
  /** A live catch-up push (several bars at once) is under way. */
  private catchUp = false;
  /** Bars pushed so far per contract, before the current push (for the strategies' warm-up). */
  private readonly barsSeen = new Map<string, number>();
  private seenBefore = 0;
  // Intents decided during a push wait here for their bar.
  private readonly pending = new PendingIntents();
  private readonly contracts: ReadonlyMap<string, ContractSpec>;
  private readonly venue: Venue;
  private readonly accounting: Accounting;
  private readonly rules: RuleBook;
  private readonly book: OrderBook;
  private readonly sessions: SessionClock | undefined;
  private readonly enforcer: RuleEnforcer;
  private readonly router: IntentRouter;
  private readonly host: StrategyHost;
  private readonly decisions: DecisionLog;
  private readonly equity: EquityRecorder;
  private readonly barClock: BarClock;
  private readonly logger: Logger;
  /** The venue answers later (its traits' kind is `live`): live mode. */
  private readonly live: boolean;
  private readonly recordEquity: boolean;
  private readonly singleContract: boolean;
  private readonly throwOnFailure: boolean;

  constructor(parts: BarDriverParts) {
    this.contracts = parts.contracts;
    this.venue = parts.venue;
    this.accounting = parts.accounting;
    this.rules = parts.rules;
    this.book = parts.book;
    this.sessions = parts.sessions;
    this.enforcer = parts.enforcer;
    this.router = parts.router;
    this.host = parts.host;
    this.decisions = parts.decisions;
    this.equity = parts.equity;
    this.barClock = parts.barClock;
    this.logger = parts.logger;
    this.live = parts.venue.traits.kind === 'live';
    this.recordEquity = parts.recordEquity;
    this.singleContract = parts.singleContract;
    this.throwOnFailure = parts.throwOnFailure;
  }

  /** Run history through the strategies only (no venue, no rules, no equity, intents dropped). */
  warmUp(chunk: BarChunk): void {
    this.history = true;
    try {
      this.push(chunk);
    } finally {
      this.history = false;
    }
  }

  /** An intent from a strategy (or the operator): held for its bar during a push, else decided at once. */
  receive(instance: Instance | undefined, strategyId: string, intent: Intent): void {
    const barClock = this.barClock;
    // A failed strategy decides nothing more; what an operator sends on its behalf to close what it left
    // (its own line's flatten, a cancel of its orders) still goes through the guard.
    if (instance?.failed === true && intent.kind !== 'flatten' && intent.kind !== 'cancel') {
      this.logger.debug({ strategyId }, 'intent of a failed strategy ignored');
      return;
    }
    if (this.history) return;
    if (this.catchUp && barClock.index >= 0) {
      this.pending.push(instance, strategyId, intent, barClock.pushLength - 1);
      return;
    }
    if (barClock.index >= 0 && this.warming(instance, barClock.index)) {
      this.refuseWarmUp(instance!, strategyId, intent, barClock.index);
      return;
    }
    if (barClock.pushing) {
      let at = intent.at;
      if (at === undefined) at = barClock.pipelineIndex();
      this.pending.push(instance, strategyId, intent, at);
      return;
    }
    this.router.processIntent(instance, strategyId, intent, barClock.barStartOr(barClock.time()), barClock.current());
  }

  push(chunk: BarChunk): void {
    if (chunk.length === 0) return;
    const contract = this.contracts.get(chunk.contractId);
    if (contract === undefined)
      throw new EngineError('UNKNOWN_CONTRACT', `push: unknown contract '${chunk.contractId}'`);
    if (chunk.partial === true) {
      if (chunk.length > 1) this.push(sliceChunk(chunk, 0, chunk.length - 1));
      this.markPartial(chunk, chunk.length - 1);
      return;
    }
    // Locals, not this.x in the bar loop: each part is loaded once per chunk.
    const { barClock, host, pending, enforcer, router, accounting, rules, book, venue, equity, sessions } = this;
    const onBreach = enforcer.onBreach;
    const n = chunk.length;
    const barMs = nominalMs(chunk.timeframe);
    const contractId = chunk.contractId;
    const seenBefore = this.barsSeen.get(contractId) ?? 0;
    this.seenBefore = seenBefore;
    this.barsSeen.set(contractId, seenBefore + n);

    // (1) the strategies' chunk pipelines
    pending.clear();
    barClock.pushing = true;
    barClock.chunk = chunk;
    barClock.pushLength = n;
    prefetchColumns(chunk);
    try {
      host.pushChunk(chunk);
    } finally {
      barClock.pushing = false;
      barCursor.at = -1;
    }
    pending.sortByBar();
    // A live catch-up (several bars at once): every decision waits for the last bar, where only each
    // strategy's last target per contract is sent.
    this.catchUp = this.live && n > 1;
    if (this.catchUp) pending.moveAllTo(n - 1);

    const listening = host.prepareBarRecords(chunk);

    // (2) bar by bar
    const { time, high, low, close } = chunk;
    const recordEquity = this.recordEquity;
    if (recordEquity) equity.reserve(n);
    const positionBook = accounting.bookOf(contractId);
    const single = this.singleContract;
    const hasOnBar = venue.onBar !== undefined;
    const rulesActive = rules.active;
    barClock.chunk = chunk;
    // A throw RxJS could only report asynchronously is the failure of the strategy being dispatched to
    // (the host narrows it down), else of the run's strategy: at once, at this bar.
    const outerCatcher = unhandled.catcher;
    unhandled.catcher = host.failUnattributed;
    const stopOnFailure = this.throwOnFailure;
    let stopped = false;
    // Whether a bar can be passed over when nothing works at the venue: nothing below reads such a bar
    // unless it is a day's first, a market check's, or one an intent waits for (most bars of a backtest);
    // only its equity is recorded.
    const mayPassOver =
      !this.history &&
      !rulesActive &&
      !listening &&
      !this.catchUp &&
      sessions === undefined &&
      enforcer.passLock === undefined &&
      // A venue that matches bars and cannot say when it has nothing to match needs every bar.
      (!hasOnBar || venue.matchesBars !== undefined);
    try {
      for (let i = 0; i < n; i++) {
        // A synchronous run stops after the bar a strategy failed on: what ran is the bars up to it.
        if (stopOnFailure && host.failures.length !== 0 && failedBefore(host.failures[0]!.barIndex, i)) {
          stopped = true;
          break;
        }
        if (
          mayPassOver &&
          host.failures.length === 0 &&
          book.trailingCount === 0 &&
          (!hasOnBar || !venue.matchesBars!())
        ) {
          // Bars i .. k-2 would each be overwritten by the next one's marks: only bar k-1 is run whole.
          const end = Math.min(n, pending.nextAt(n));
          const limit = Math.min(enforcer.nextDayStart, enforcer.marketCheckAt - barMs);
          let k = i;
          while (k < end && time[k]! < limit) k++;
          if (k - 1 > i) {
            if (recordEquity)
              for (let q = i; q < k - 1; q++) {
                positionBook.lastPrice = close[q]!;
                equity.record(time[q]!, accounting.equity());
              }
            i = k - 1;
          }
        }
        barClock.index = i;
        const barTime = time[i]!;
        if (this.history) {
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
          rules.evaluate(
            barTime,
            balance,
            balance + accounting.unrealizedWith(contractId, worst),
            balance + accounting.unrealizedWith(contractId, best),
            onBreach,
          );
        }
        positionBook.lastPrice = close[i]!;
        // After the venue's fills of this bar, at its close: a pass locks before this bar's intents.
        const passLock = enforcer.passLock;
        if (passLock !== undefined) {
          if (passLock.due(accounting.balance)) enforcer.checkPassLock(barTime, accounting.equity());
          if (passLock.flattenDue) enforcer.flushPassLock(barClock.now);
        }
        if (book.trailingCount > 0) this.advanceTrails(contractId, high[i]!, low[i]!);
        if (sessions !== undefined) enforcer.checkSession(barClock.now);
        if (barClock.now >= enforcer.marketCheckAt) enforcer.checkMarkets(barClock.now);
        if (listening) host.emitBarRecords(chunk, i);
        if (this.catchUp && i === n - 1) this.coalesceTargets(barTime);
        // Between two calls into the engine no caller holds a book order: gone ones can be made over.
        book.reclaim();
        while (pending.cursor < pending.length && pending.at(pending.cursor) === i) {
          const k = pending.cursor++;
          const instance = pending.instance(k);
          if (this.warming(instance, i)) this.refuseWarmUp(instance!, pending.strategyId(k), pending.intent(k), i);
          else router.processAtBar(instance, pending.strategyId(k), pending.intent(k));
        }
        if (recordEquity) equity.record(barTime, accounting.equity());
      }
    } finally {
      unhandled.catcher = outerCatcher;
      barClock.index = -1;
      barClock.chunk = undefined;
      this.catchUp = false;
    }
    // Intents stamped beyond the chunk (a bad `at`) are still decided, at the last bar: never dropped.
    while (!stopped && pending.cursor < pending.length) {
      const k = pending.cursor++;
      this.logger.warn(
        { strategyId: pending.strategyId(k), at: pending.at(k), length: n },
        'intent stamped outside its chunk; decided at the last bar',
      );
      router.processIntent(pending.instance(k), pending.strategyId(k), pending.intent(k), time[n - 1]!, barClock.now);
    }
    pending.clear();
    if (host.failures.length > 0 && this.throwOnFailure) host.throwFailure();
  }

  /**
   * Several bars at once (a live feed catching up after an outage): a target is a target, so only each
   * strategy's last target (or flatten) per contract is sent; the earlier ones are recorded as superseded.
   */
  private coalesceTargets(time: number): void {
    const pending = this.pending;
    const seen = new Set<string>();
    const kept: number[] = [];
    for (let k = pending.length - 1; k >= pending.cursor; k--) {
      const intent = pending.intent(k);
      const strategyId = pending.strategyId(k);
      if (intent.kind === 'target' || intent.kind === 'flatten') {
        const contractId =
          intent.contractId === undefined ? '*' : this.router.resolveContract(pending.instance(k), intent.contractId);
        const key = targetKey(strategyId, contractId);
        if (seen.has(key) || seen.has(targetKey(strategyId, '*'))) {
          this.decisions.decide(
            strategyId,
            intent,
            undefined,
            {
              accepted: false,
              code: 'SUPERSEDED',
              message: `decided at bar ${pending.at(k)} of a catch-up of ${this.barClock.pushLength} bars; a later target replaced it`,
            },
            time,
          );
          continue;
        }
        seen.add(key);
      }
      kept.push(k);
    }
    kept.reverse();
    pending.keepUndecided(kept);
  }

  /** True while bar `index` of the current push is within the instance's declared warm-up (never without an instance). */
  private warming(instance: Instance | undefined, index: number): boolean {
    const chunk = this.barClock.chunk;
    if (instance === undefined || instance.warmup === 0 || chunk === undefined) return false;
    // Past the warm-up, as nearly every intent of a run is, the contracts need not be compared.
    if (this.seenBefore + index + 1 > baseWarmup(instance, chunk)) return false;
    return instance.contracts[0]!.id === chunk.contractId;
  }

  private refuseWarmUp(instance: Instance, strategyId: string, intent: Intent, index: number): void {
    const time = this.barClock.chunk?.time[index] ?? this.barClock.time();
    this.decisions.decide(
      strategyId,
      intent,
      undefined,
      {
        accepted: false,
        code: 'WARM_UP',
        message:
          instance.timeframe === undefined || this.barClock.chunk === undefined
            ? `bar ${this.seenBefore + index + 1} of a ${instance.warmup}-bar warm-up`
            : `bar ${this.seenBefore + index + 1} of a ${baseWarmup(instance, this.barClock.chunk)}-bar warm-up (${instance.warmup} bars of ${timeframeLabel(instance.timeframe)})`,
      },
      time,
    );
  }

  private markPartial(chunk: BarChunk, i: number): void {
    const { accounting, rules, enforcer } = this;
    const barTime = chunk.time[i]!;
    if (barTime >= enforcer.nextDayStart) enforcer.rollDay(barTime);
    const contractId = chunk.contractId;
    const position = accounting.position(contractId);
    const balance = accounting.balance;
    const worst = position >= 0 ? chunk.low[i]! : chunk.high[i]!;
    const best = position >= 0 ? chunk.high[i]! : chunk.low[i]!;
    rules.evaluate(
      barTime,
      balance,
      balance + accounting.unrealizedWith(contractId, worst),
      balance + accounting.unrealizedWith(contractId, best),
      enforcer.onBreach,
    );
    accounting.mark(contractId, chunk.close[i]!);
  }

  private advanceTrails(contractId: string, high: number, low: number): void {
    const book = this.book;
    for (let k = 0; k < book.size; k++) {
      const order = book.at(k);
      if (order.trail === undefined || order.contractId !== contractId) continue;
      order.trail = advanceTrail(order.trail, order.side === 'sell' ? high : low);
      order.trailStop = trailStopPrice(order.trail);
    }
  }
}

/** A coarser instance declared its warm-up in its own bars: as many base bars as they span. */
function baseWarmup(instance: Instance, chunk: BarChunk): number {
  if (instance.timeframe === undefined) return instance.warmup;
  return instance.warmup * Math.max(1, Math.ceil(nominalMs(instance.timeframe) / nominalMs(chunk.timeframe)));
}

/** True when bar `i` comes after the bar a failure was recorded at (every bar for a failure outside one). */
function failedBefore(barIndex: number | undefined, i: number): boolean {
  return barIndex === undefined || barIndex < i;
}
