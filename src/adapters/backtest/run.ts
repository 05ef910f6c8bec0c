/**
 * One backtest: history replayed through the engine (strategies, risk guard, rule floors, accounting)
 * with the fill model as its venue. Synchronous and deterministic: the same inputs give the same fills,
 * trades, equity, violations and order list hash, byte for byte.
 */
import { createEngine } from '../../engine/runner.ts';
import type { MarketHours } from '../../engine/market-hours.ts';
import type { Breach } from '../../engine/account-rules.ts';
import type { ResolvedRiskConfig, RiskConfig } from '../../engine/risk.ts';
import type { PassLockEvent, PassLockOptions } from '../../engine/pass-lock.ts';
import { StrategyError, type StrategyModule } from '../../engine/strategy.ts';
import type { BarColumns, Fill, Timeframe } from '../../engine/types.ts';
import { mappedTradeList, type TradeList } from '../../engine/trade-columns.ts';
import { silentLogger, type Logger } from '../../engine/log.ts';
import type {
  ClosedTrade,
  ClosestApproach,
  DecisionRecord,
  DecisionSequence,
  ReportViolation,
  RuleName,
} from '../../report/report-types.ts';
import type { AccountConfig } from './backtest-config.ts';
import type { BacktestContract } from './contract.ts';
import { SimulatedVenue, type FillModelOptions, type OrderRecord } from './simulated-venue.ts';
import { DecisionColumns } from './decision-columns.ts';
import { ReplayMarketData } from './replay.ts';
import { quoteOf } from '../../market/quotes.ts';
import { nominalMs } from '../../engine/timeframe.ts';
import {
  RISK_STRATEGY_ID,
  UNATTRIBUTED,
  type Engine,
  type StrategyPosition,
  type StrategySnapshot,
} from '../../engine/runner.ts';
import { adjustedStrategy, PriceAdjustment } from './adjusted-strategy.ts';
import {
  idleBetween,
  planContinuity,
  segmentIndexAt,
  type AdjustMode,
  type ContinuityPlan,
  type HistoryBreak,
  type HistorySegment,
} from '../../data/continuous.ts';
import { sliceByIndex } from '../../data/columns.ts';
import { EquityRecorder, type EquityCurve } from '../../engine/equity-recorder.ts';
import { BarTimedEquity } from './bar-timed-equity.ts';
import { FillColumns } from './order-columns.ts';
import { FileSpill } from './file-spill.ts';
import type { BlockLease } from '../../engine/block-stock.ts';
import type { BlockSpill } from '../../engine/column-blocks.ts';

/** Rolls and gaps: how the run treats a change of contract month and a long stretch without bars. */
export interface ContinuityOptions {
  /** The months of a continuous history (a root's front month at each date); absent or empty: one contract. */
  readonly segments?: readonly HistorySegment[];
  /** At a roll a position is closed in the old month and reopened in the new (`roll`), or only closed (`flatten`). */
  readonly rollMode?: 'roll' | 'flatten';
  readonly adjust?: AdjustMode;
  /** A gap between bars longer than this (ms) is a gap; default 96 hours (longer than any weekend). */
  readonly gapLimitMs?: number;
  /** Flatten open positions at the last bar before a gap (default true). */
  readonly flattenGaps?: boolean;
}

/** A change of contract month in the run, and what was done with the position held across it. */
export interface RollRecord {
  /** Start of the new month's first bar. */
  readonly time: number;
  readonly from: string;
  readonly to: string;
  /** Signed position held at the old month's last bar. */
  readonly position: number;
  readonly action: 'rolled' | 'flattened' | 'flat';
}

/** A stretch without bars longer than the gap limit. */
export interface GapRecord {
  /** End of the last bar before it. */
  readonly from: number;
  /** Start of the first bar after it. */
  readonly to: number;
  /** Signed position closed at the last bar before it (0: none was open, or gaps are not flattened). */
  readonly flattened: number;
}

/** The default gap limit: longer than a weekend, a long weekend included. */
export const DEFAULT_GAP_LIMIT_MS = 96 * 3_600_000;

/** One strategy instance of a run of several in one engine (a node's account). */
export interface BacktestStrategy {
  /** The instance's id: the prefix of its order ids, and the key of its figures. */
  readonly id: string;
  readonly strategy: StrategyModule;
  readonly params: unknown;
  /** Size multiplier (`StrategyEntry.size`); 1 by default. */
  readonly size?: number;
  /** Its own timeframe, resampled from the run's bars (`StrategyEntry.timeframe`); the run's by default. */
  readonly timeframe?: Timeframe;
}

/** One instance's own line of the account, as the engine's strategy ledger attributes it. */
export interface BacktestStrategyResult {
  readonly id: string;
  readonly strategy: string;
  readonly size: number;
  readonly snapshot: StrategySnapshot;
  /** Its closed trades in closing order. */
  readonly trades: readonly ClosedTrade[];
}

export interface BacktestRunInput {
  readonly contract: BacktestContract;
  /** History of `contract`, oldest first, in `dataTimeframe`. */
  readonly bars: BarColumns;
  readonly dataTimeframe: Timeframe;
  /** What the strategy trades; aggregated from the data when coarser. */
  readonly timeframe: Timeframe;
  readonly strategy: StrategyModule;
  readonly params: unknown;
  /**
   * Several instances traded in the one engine on the one contract (a node's account), each with its own
   * line, in place of `strategy` and `params`; the result then holds each one's figures.
   */
  readonly strategies?: readonly BacktestStrategy[];
  readonly account: AccountConfig;
  readonly risk: RiskConfig;
  /** The contract's market hours (the guard's MARKET_CLOSED and calendar flat-by, `ctx.session`); none: always open. */
  readonly marketHours?: MarketHours;
  readonly fills: FillModelOptions;
  /** Record the equity at every bar (for reports, and for a sweep's drawdown figures). */
  readonly recordEquity?: boolean;
  /**
   * Where the run's columns and equity points come from: a caller that runs one backtest after another and
   * keeps only figures of each (a sweep's thread) lends each its spares. The result must not be read once
   * the lease ends: its orders, fills, trades and curve are another run's from then on.
   */
  readonly blocks?: BlockLease;
  /** Keep every risk-guard decision (decisions.csv, the report); default: as `recordEquity`. Counts are always kept. */
  readonly recordDecisions?: boolean;
  /**
   * Where each recorded decision goes as it is made, in place of the result's `decisions` (then empty): a
   * run that writes decisions.csv as it goes.
   */
  readonly onDecision?: (record: DecisionRecord) => void;
  readonly logger?: Logger;
  /** Called after every replayed chunk with bars done and total. */
  readonly onProgress?: (done: number, total: number) => void;
  /** Rolls and gaps; absent: the history is replayed as one stretch, as it is. */
  readonly continuity?: ContinuityOptions;
  /** The evaluation's pass-lock (the engine's; paper and live use the same). */
  readonly passLock?: PassLockOptions;
}

/** A violation that would have happened, in the vocabulary of spec 2.10. */
export interface BacktestViolation {
  readonly type: 3 | 5 | 6;
  /** Which rule broke (type 6 covers both the daily and the maximum loss limit). */
  readonly rule: RuleName;
  readonly duration: 0 | 1 | 2;
  /** Start of the minute (bar) in which it triggered, ISO 8601 UTC. */
  readonly triggeredAt: string;
  readonly tradingDay: string;
  readonly balance: number;
  /** Equity at the bar's worst price (best price for a profit target) that crossed the level. */
  readonly violationBalance: number;
  readonly violationTotalDayPnl: number;
  /** The equity floor (rule breaks) or day-PnL level (personal limits) that was crossed. */
  readonly level: number;
  /** The maximum-loss floor that was crossed (maximum loss limit breaks only). */
  readonly minimumBalance: number | null;
  /** The account's configured limits at the time, as spec 2.10 carries them. */
  readonly dailyLossLimit: number | null;
  readonly personalDailyLossLimit: number | null;
  readonly personalDailyProfitTarget: number | null;
}

export interface BacktestRunResult {
  readonly bars: number;
  readonly fills: readonly Fill[];
  readonly orders: readonly OrderRecord[];
  /**
   * The orders one at a time, each made from the run's columns as it is reached, not kept: what writes
   * orders.json reads, so a long run's list is never all objects at once. The same records as `orders`.
   */
  readonly eachOrder?: () => Iterable<OrderRecord>;
  readonly orderListHash: string;
  readonly trades: readonly ClosedTrade[];
  /**
   * The same trades made from the run's columns as each is read, none kept: what the report and the result
   * files read, so a long run's trades are never all objects at once.
   */
  readonly tradeList: TradeList<ClosedTrade>;
  readonly equity: { readonly time: Float64Array; readonly equity: Float64Array };
  readonly violations: readonly BacktestViolation[];
  readonly reportViolations: readonly ReportViolation[];
  readonly closestApproach: readonly ClosestApproach[];
  readonly passed: boolean;
  readonly verdict: string;
  readonly startingBalance: number;
  readonly endingBalance: number;
  readonly endingEquity: number;
  readonly realizedPnl: number;
  readonly fees: number;
  /** Position still open at the end (signed contracts), marked at the last close. */
  readonly openPosition: number;
  readonly riskConfig: ResolvedRiskConfig;
  /** Intents the risk guard rejected. */
  readonly rejectedIntents: number;
  /** Rejections by reason code, in the order each code first occurred. */
  readonly rejections: Readonly<Record<string, number>>;
  /** The balance (realized, after fees) after each fill, for the evaluation's end-of-day floors. */
  readonly balance: { readonly time: readonly number[]; readonly balance: readonly number[] };
  /** Every decision of the guard with the position and equity it saw; empty when not recorded. */
  readonly decisions: DecisionSequence;
  /** Why the run stopped before the end of the history (a failing strategy); `bars` says how far it got. */
  readonly failure?: Error;
  /** Every change of contract month (continuous runs), with what was done with the position. */
  readonly rolls: readonly RollRecord[];
  /** Every gap longer than the limit (runs with `continuity`). */
  readonly gaps: readonly GapRecord[];
  /** Each instance's own figures, in the order given (runs of `strategies` only). */
  readonly strategies?: readonly BacktestStrategyResult[];
  /** When the evaluation's pass-lock engaged (runs with `passLock`); absent otherwise or when it never did. */
  readonly passLock?: PassLockEvent;
}

export function runBacktest(input: BacktestRunInput): BacktestRunResult {
  const recorder = input.recordEquity === false ? undefined : new BarTimedEquity(input.bars.time, input.blocks);
  const session = startRun(input, input.bars.time.length, recorder);
  const continuity = input.continuity;
  if (continuity === undefined) {
    session.replay(input.bars);
  } else {
    const plan = planContinuity(
      input.bars,
      session.segments,
      session.barMs,
      continuity.gapLimitMs ?? DEFAULT_GAP_LIMIT_MS,
    );
    replayInPieces(plan, input.bars, session.adjustment, session.replay, session.failed, (at) =>
      session.breaks.handle(at, edgeAt(input.bars, at.index)),
    );
  }
  // The recorder's curve holds the bars' own time column while every point is at its bar's time.
  return session.finish((engine) => engine.equityCurve());
}

/** A run whose history comes chunk by chunk (a bar cache import read one stored chunk at a time). */
// No lease (`blocks`): a streamed run's blocks are parked in its spill before it ends, so they are its own.
export interface StreamedRunInput extends Omit<BacktestRunInput, 'bars' | 'continuity' | 'blocks'> {
  /** The history, oldest first, in consecutive chunks of any size; each is let go once replayed. */
  readonly chunks: Iterable<BarColumns>;
  /** How many bars the chunks hold (for progress). */
  readonly total: number;
  /** Gaps as in a whole run; a streamed history is one contract, so no segments. */
  readonly continuity?: Omit<ContinuityOptions, 'segments'>;
  /**
   * Each replayed stretch of bars with the equity points the engine recorded for it (one per bar, fewer
   * once a strategy failed: the bars after a failure come with none), before the next stretch is read.
   */
  readonly onBars?: (bars: BarColumns, equity: EquityCurve, records: RunRecordsSoFar) => void;
  /**
   * Where full blocks of the run's order, fill and trade columns go, so that its memory stops growing with
   * them: a temporary file (`FileSpill`) by default.
   */
  readonly spill?: BlockSpill;
}

/** What a run has recorded so far, for a streamed run's consumers to read as the bars pass. */
export interface RunRecordsSoFar {
  /** The fills so far as columns (`timeAt(k)`; `fill(k)` makes one as an object). */
  readonly fills: FillColumns;
  /** Closed trades in closing order, made from the engine's columns as they are read. */
  readonly trades: TradeList;
  /** When the open position opened (every later trade's entry time), NaN when flat. */
  readonly openSince: number;
}

/**
 * The same run as `runBacktest` over the same bars, with memory that does not grow with them: each chunk
 * is pushed into the engine as it is read, its equity points handed to `onBars` and dropped, and the long
 * gaps found between consecutive bars as they pass (the same breaks `planContinuity` finds in a whole
 * history without segments). The result's `equity` is empty: what needs the curve reads it in `onBars`.
 */
export function runStreamedBacktest(input: StreamedRunInput): BacktestRunResult {
  const recorder = new EquityRecorder();
  const session = startRun(input, input.total, recorder, input.spill ?? new FileSpill());
  const gapLimitMs = input.continuity?.gapLimitMs ?? DEFAULT_GAP_LIMIT_MS;
  const barMs = session.barMs;
  let previousTime = Number.NaN;
  let previousClose = Number.NaN;
  let seen = 0;
  const pass = (bars: BarColumns): void => {
    if (bars.time.length === 0) return;
    const ran = !session.failed();
    if (ran) session.replay(bars);
    const equity = recorder.drain();
    input.onBars?.(bars, ran ? equity : EMPTY_CURVE, session.records());
  };
  for (const chunk of input.chunks) {
    const n = chunk.time.length;
    let start = 0;
    for (let i = 0; i < n; i++) {
      const t = chunk.time[i]!;
      const idle = idleBetween(previousTime, t, barMs);
      if (input.continuity !== undefined && idle > gapLimitMs) {
        pass(sliceByIndex(chunk, start, i));
        start = i;
        // A failed run stops replaying; its breaks are not handled, as in a whole run.
        if (!session.failed())
          session.breaks.handle(
            { index: seen + i, gapMs: idle },
            { lastTime: previousTime, lastClose: previousClose, nextTime: t },
          );
      }
      previousTime = t;
      previousClose = chunk.close[i]!;
    }
    pass(sliceByIndex(chunk, start, n));
    seen += n;
  }
  return session.finish(() => EMPTY_CURVE);
}

const EMPTY_CURVE: EquityCurve = { time: new Float64Array(0), equity: new Float64Array(0) };

/** The engine and everything a run records, ready for bars; `finish` turns it into the result. */
interface RunSession {
  readonly segments: readonly HistorySegment[];
  readonly adjustment: PriceAdjustment;
  readonly barMs: number;
  readonly breaks: BreakHandler;
  readonly replay: (bars: BarColumns) => void;
  readonly failed: () => boolean;
  readonly records: () => RunRecordsSoFar;
  readonly finish: (equityOf: (engine: Engine) => EquityCurve) => BacktestRunResult;
}

function startRun(
  input: Omit<BacktestRunInput, 'bars'>,
  total: number,
  equityRecorder?: EquityRecorder,
  spill?: BlockSpill,
): RunSession {
  const { contract, account } = input;
  const venue = new SimulatedVenue(input.fills, spill, input.blocks);
  const touch = input.fills.touch;
  const { profitTarget, ...rules } = account;
  const continuity = input.continuity;
  const segments = continuity?.segments ?? [];
  const adjustment = new PriceAdjustment(continuity?.adjust ?? 'difference');
  // Only a history of several months needs the strategy's adjusted view.
  const adjusted = (module: StrategyModule): StrategyModule =>
    segments.length > 1 && adjustment.mode !== 'none' ? adjustedStrategy(module, adjustment) : module;
  const strategy = adjusted(input.strategy);
  const engine = createEngine({
    strategies:
      input.strategies === undefined
        ? [{ strategy, params: input.params }]
        : input.strategies.map((s) => ({
            strategy: adjusted(s.strategy),
            params: s.params,
            id: s.id,
            ...(s.size === undefined ? {} : { size: s.size }),
            ...(s.timeframe === undefined ? {} : { timeframe: s.timeframe }),
          })),
    contracts: [contract],
    venue,
    risk: input.risk,
    account: rules,
    ...(input.marketHours === undefined ? {} : { marketHours: { [contract.id]: input.marketHours } }),
    ...(input.passLock === undefined ? {} : { passLock: input.passLock }),
    logger: input.logger ?? silentLogger,
    recordEquity: input.recordEquity ?? true,
    expectedBars: total,
    ...(equityRecorder === undefined ? {} : { equityRecorder }),
    ...(spill === undefined ? {} : { tradeSpill: spill }),
    ...(input.blocks === undefined ? {} : { tradeLease: input.blocks }),
    // A strategy's ctx.quotes() sees the book the fill model fills at: the spread model at each close.
    ...(touch === undefined
      ? {}
      : { barQuote: (bar, _previous, direction) => quoteOf(touch, bar.close, direction, bar) }),
  });
  const fills = new FillColumns(spill, input.blocks);
  const breaches: Breach[] = [];
  const decisions = new DecisionColumns();
  const recordDecisions = input.recordDecisions ?? input.recordEquity ?? true;
  // A listener, not a subscriber: it reads each fill in the call, so the venue makes no object a fill for it.
  engine.fills$.listen((fill) => fills.push(fill, engine.accounting.balance));
  engine.breaches$.subscribe((breach) => breaches.push(breach));
  // Observed only to record them: the rejection counts come from the engine, and an observed decisions$
  // makes an object for every order.
  if (recordDecisions) {
    const onDecision = input.onDecision;
    engine.decisions$.subscribe((d) => {
      const position = engine.accounting.position(contract.id);
      const equity = engine.accounting.equity();
      if (onDecision === undefined) {
        decisions.push(d.strategyId, d.intent, d.origin, d.result, d.time, position, equity);
        return;
      }
      // Field by field: a spread copy of each of a long run's decisions was a second of a 10 M-bar run.
      const { strategyId, intent, origin, result, time } = d;
      onDecision(
        origin === undefined
          ? { strategyId, intent, result, time, position, equity }
          : { strategyId, intent, origin, result, time, position, equity },
      );
    });
  }

  let done = 0;
  // The replay emits synchronously; an error in a push (a failing strategy) must reach the caller, not
  // rxjs' asynchronous unhandled-error path, so it is caught here and rethrown after the replay stops.
  let failure: { error: unknown } | undefined;
  const replay = (bars: BarColumns): void => {
    const feed = new ReplayMarketData([{ contractId: contract.id, timeframe: input.dataTimeframe, bars }])
      .bars(contract.id, input.timeframe)
      .subscribe((chunk) => {
        if (failure !== undefined) return;
        try {
          engine.push(chunk);
        } catch (error) {
          failure = { error };
          // The engine stopped after the bar the strategy failed on: those bars ran.
          done += barsThrough(chunk.time, error instanceof StrategyError ? error.barTime : undefined);
          input.onProgress?.(done, total);
          return;
        }
        done += chunk.length;
        input.onProgress?.(done, total);
      });
    feed.unsubscribe();
  };
  const rolls: RollRecord[] = [];
  const gaps: GapRecord[] = [];
  const barMs = nominalMs(input.timeframe);
  const breaks = new BreakHandler(
    engine,
    venue,
    contract.id,
    barMs,
    continuity ?? {},
    rolls,
    gaps,
    input.logger ?? silentLogger,
    input.strategies !== undefined,
  );
  const finish = (equityOf: (engine: Engine) => EquityCurve): BacktestRunResult => {
    // A failing strategy stops the run; what ran until then is still a result (written, then reported).
    const snapshot = engine.snapshot();
    const passLock = engine.passLocked();
    const equity = equityOf(engine);
    engine.close();
    return runResult({
      input,
      engine,
      venue,
      snapshot,
      equity,
      fills,
      breaches,
      decisions,
      rolls,
      gaps,
      segments,
      done,
      failure,
      profitTarget,
      passLock,
    });
  };
  const book = engine.accounting.bookOf(contract.id);
  const closedTrades = engine.accounting.closedTrades.list();
  const records = (): RunRecordsSoFar => ({
    fills,
    trades: closedTrades,
    openSince: book.size === 0 ? Number.NaN : book.entryTime,
  });
  return { segments, adjustment, barMs, breaks, replay, failed: () => failure !== undefined, records, finish };
}

interface RunRecords {
  readonly input: Omit<BacktestRunInput, 'bars'>;
  readonly engine: Engine;
  readonly venue: SimulatedVenue;
  readonly snapshot: ReturnType<Engine['snapshot']>;
  readonly equity: EquityCurve;
  readonly fills: FillColumns;
  readonly breaches: Breach[];
  readonly decisions: DecisionColumns;
  readonly rolls: RollRecord[];
  readonly gaps: GapRecord[];
  readonly segments: readonly HistorySegment[];
  readonly done: number;
  readonly failure: { error: unknown } | undefined;
  readonly profitTarget: number | undefined;
  readonly passLock: PassLockEvent | undefined;
}

function runResult(records: RunRecords): BacktestRunResult {
  const {
    input,
    engine,
    venue,
    snapshot,
    equity,
    fills,
    breaches,
    decisions,
    rolls,
    gaps,
    segments,
    done,
    failure,
    profitTarget,
    passLock,
  } = records;
  const { contract, account } = input;
  const violations = breaches.map((b) => toViolation(b, account));
  const reportViolations: ReportViolation[] = violations.map((v) => ({
    time: Date.parse(v.triggeredAt),
    type: v.type,
    rule: v.rule,
    duration: v.duration,
    balance: v.violationBalance,
    message: violationMessage(v),
  }));
  const closestApproach = approaches(engine.rules.closest, account);
  const mllBroken = breaches.some((b) => b.type === 6 && b.rule === 'maximumLossLimit');
  const target = profitTarget === undefined ? undefined : account.startingBalance + profitTarget;
  let passed: boolean;
  let verdict: string;
  if (mllBroken) {
    passed = false;
    verdict = 'maximum loss limit broken (permanent violation)';
  } else if (target !== undefined && snapshot.balance < target) {
    passed = false;
    verdict = `profit target not reached: balance ${snapshot.balance.toFixed(2)} < ${target.toFixed(2)}`;
  } else {
    passed = true;
    const daily = breaches.filter((b) => b.type === 6).length;
    verdict = target !== undefined ? 'profit target reached without a permanent violation' : 'no permanent violation';
    if (daily > 0) verdict += ` (${daily} daily loss limit break${daily > 1 ? 's' : ''}, trading paused those days)`;
  }
  // The getters below hold the accounting, not the engine: a result read long after its run (the outputs
  // of a 10 M-bar run) must not keep the engine's own equity times (80 MB) that the bars' times replaced.
  const accounting = engine.accounting;
  const strategies = input.strategies === undefined ? undefined : strategyResults(engine, input.strategies, segments);
  const rejections = engine.rejections();
  let rejectedIntents = 0;
  for (const code in rejections) rejectedIntents += rejections[code]!;
  // The fills, orders and balances are kept as columns and made objects only when a caller reads them: a
  // sweep's runs never do, so their objects are never made.
  let fillObjects: Fill[] | undefined;
  let orderObjects: readonly OrderRecord[] | undefined;
  let balanceColumns: BacktestRunResult['balance'] | undefined;
  let tradeObjects: readonly ClosedTrade[] | undefined;
  const tradeList = inMonths(accounting.closedTrades.list(), segments);
  return {
    bars: done,
    get fills() {
      fillObjects ??= fills.toFills();
      return fillObjects;
    },
    get orders() {
      orderObjects ??= venue.orders();
      return orderObjects;
    },
    eachOrder: () => orderObjects ?? venue.eachOrder(),
    orderListHash: venue.orderListHash(),
    get trades() {
      tradeObjects ??= Array.from(tradeList);
      return tradeObjects;
    },
    tradeList,
    equity,
    violations,
    reportViolations,
    closestApproach,
    passed,
    verdict,
    ...(passLock === undefined ? {} : { passLock }),
    startingBalance: account.startingBalance,
    endingBalance: snapshot.balance,
    endingEquity: snapshot.equity,
    realizedPnl: snapshot.realizedPnl,
    fees: snapshot.fees,
    openPosition: snapshot.positions.find((p) => p.contractId === contract.id)?.size ?? 0,
    riskConfig: engine.riskConfig,
    rejectedIntents,
    rejections,
    get balance() {
      balanceColumns ??= fills.balances();
      return balanceColumns;
    },
    decisions,
    rolls,
    gaps,
    ...(strategies === undefined ? {} : { strategies }),
    ...(failure === undefined
      ? {}
      : { failure: failure.error instanceof Error ? failure.error : new Error(String(failure.error)) }),
  };
}

/** Each instance's own figures, in the order given. */
function strategyResults(
  engine: Engine,
  instances: readonly BacktestStrategy[],
  segments: readonly HistorySegment[],
): BacktestStrategyResult[] {
  return instances.map((s) => ({
    id: s.id,
    strategy: s.strategy.name,
    size: s.size ?? 1,
    snapshot: engine.strategySnapshot(s.id),
    trades: Array.from(inMonths(engine.strategyTrades(s.id), segments)),
  }));
}

/**
 * Trades labelled with the month they were made in (a continuous run's engine trades one id), each as it
 * is read.
 */
function inMonths(trades: TradeList<ClosedTrade>, segments: readonly HistorySegment[]): TradeList<ClosedTrade> {
  if (segments.length === 0) return trades;
  return mappedTradeList(trades, (t) => ({
    ...t,
    contractId: segments[segmentIndexAt(segments, t.entryTime)]!.contractId,
  }));
}

function toViolation(b: Breach, account: AccountConfig): BacktestViolation {
  const rule: RuleName = b.type === 6 ? b.rule! : b.type === 3 ? 'personalDailyLossLimit' : 'personalDailyProfitTarget';
  return {
    type: b.type,
    rule,
    duration: b.duration,
    triggeredAt: new Date(b.time).toISOString(),
    tradingDay: b.tradingDay,
    balance: b.balance,
    violationBalance: b.equity,
    violationTotalDayPnl: b.dayPnl,
    level: b.level,
    minimumBalance: rule === 'maximumLossLimit' ? b.level : null,
    dailyLossLimit: account.dailyLossLimit ?? null,
    personalDailyLossLimit: account.personalDailyLossLimit ?? null,
    personalDailyProfitTarget: account.personalDailyProfitTarget ?? null,
  };
}

function violationMessage(v: BacktestViolation): string {
  switch (v.rule) {
    case 'dailyLossLimit':
      return `daily loss limit: equity ${v.violationBalance.toFixed(2)} reached the day's floor ${v.level.toFixed(2)}; flattened, trading paused until the next trading day`;
    case 'maximumLossLimit':
      return `maximum loss limit: equity ${v.violationBalance.toFixed(2)} reached the floor ${v.level.toFixed(2)}; flattened, account closed`;
    case 'personalDailyLossLimit':
      return `personal daily loss limit: day PnL ${v.violationTotalDayPnl.toFixed(2)} reached ${v.level.toFixed(2)}; only reducing orders for the rest of the day`;
    case 'personalDailyProfitTarget':
      return `personal daily profit target: day PnL ${v.violationTotalDayPnl.toFixed(2)} reached ${v.level.toFixed(2)}; only reducing orders for the rest of the day`;
  }
}

function approaches(
  closest: Record<RuleName, { headroom: number; time: number }>,
  account: AccountConfig,
): ClosestApproach[] {
  const configured: Record<RuleName, boolean> = {
    dailyLossLimit: account.dailyLossLimit !== undefined,
    maximumLossLimit: account.maximumLossLimit !== undefined,
    personalDailyLossLimit: account.personalDailyLossLimit !== undefined,
    personalDailyProfitTarget: account.personalDailyProfitTarget !== undefined,
  };
  return (Object.keys(configured) as RuleName[])
    .filter((rule) => configured[rule])
    .map((rule) => {
      const a = closest[rule];
      return Number.isFinite(a.headroom)
        ? { rule, minRoom: a.headroom, time: a.time }
        : { rule, minRoom: 0, time: null };
    });
}

/** The history replayed piece by piece between its breaks, each piece with its segment's adjustment. */
function replayInPieces(
  plan: ContinuityPlan,
  bars: BarColumns,
  adjustment: PriceAdjustment,
  replay: (bars: BarColumns) => void,
  failed: () => boolean,
  onBreak: (at: HistoryBreak) => void,
): void {
  let start = 0;
  for (let k = 0; k <= plan.breaks.length; k++) {
    const end = k < plan.breaks.length ? plan.breaks[k]!.index : bars.time.length;
    const segment = plan.pieceSegments[k]!;
    adjustment.set(plan.offsets[segment]!, plan.ratios[segment]!);
    replay(sliceByIndex(bars, start, end));
    if (failed()) return;
    if (k < plan.breaks.length) onBreak(plan.breaks[k]!);
    start = end;
  }
}

/** The bars on either side of a break: the last one before it (its start and close) and the first after. */
interface BreakEdge {
  readonly lastTime: number;
  readonly lastClose: number;
  readonly nextTime: number;
}

function edgeAt(bars: BarColumns, index: number): BreakEdge {
  return { lastTime: bars.time[index - 1]!, lastClose: bars.close[index - 1]!, nextTime: bars.time[index]! };
}

/**
 * What happens at a break: before a long gap the position is flattened at the last bar's close (unless
 * gaps are configured not to be); at a roll it is closed in the old month at that close and, in `roll`
 * mode, reopened in the new month at the next bar's open. Both fills pay slippage and fees like any
 * other; working orders of the old month are cancelled.
 */
class BreakHandler {
  constructor(
    private readonly engine: Engine,
    private readonly venue: SimulatedVenue,
    private readonly contractId: string,
    private readonly barMs: number,
    private readonly options: ContinuityOptions,
    private readonly rolls: RollRecord[],
    private readonly gaps: GapRecord[],
    private readonly logger: Logger,
    /** Several strategies share the contract: each line is reopened by an order of its own. */
    private readonly byLine: boolean,
  ) {}

  handle(at: HistoryBreak, edge: BreakEdge): void {
    const end = edge.lastTime + this.barMs;
    const position = this.engine.accounting.position(this.contractId);
    const flattenGap = at.gapMs !== undefined && (this.options.flattenGaps ?? true);
    // Read before the close below takes every line flat.
    const lines = this.byLine ? this.engine.strategyPositions().filter((p) => p.size !== 0) : [];
    if (flattenGap || at.roll !== undefined) this.close(flattenGap ? 'gap' : 'roll', end, edge.lastClose);
    if (at.gapMs !== undefined) {
      const flattened = flattenGap ? position : 0;
      this.gaps.push({ from: end, to: edge.nextTime, flattened });
      if (flattened !== 0)
        this.logger.info(
          { from: new Date(end).toISOString(), to: new Date(edge.nextTime).toISOString(), position },
          'gap in the data: position flattened at the last bar before it',
        );
    }
    if (at.roll !== undefined) {
      const reopen = !flattenGap && position !== 0 && (this.options.rollMode ?? 'roll') === 'roll';
      if (reopen && this.byLine) {
        this.reopenLines(lines);
      } else if (reopen) {
        this.engine.submit('roll', {
          kind: 'place',
          contractId: this.contractId,
          side: position > 0 ? 'buy' : 'sell',
          size: Math.abs(position),
          order: { type: 'market' },
        });
      }
      const action = position === 0 ? 'flat' : reopen ? 'rolled' : 'flattened';
      this.rolls.push({ time: edge.nextTime, from: at.roll.from, to: at.roll.to, position, action });
      this.logger.info({ from: at.roll.from, to: at.roll.to, position, action }, 'contract roll');
    }
  }

  /**
   * The same lines in the new month, each under its owner's id (`<id>-roll<n>`), so every strategy's line
   * and target carry on across the roll; a single order of the net would leave them to nobody.
   */
  private reopenLines(lines: readonly StrategyPosition[]): void {
    this.reopened++;
    for (const line of lines) {
      const owner = line.strategyId === UNATTRIBUTED ? 'roll' : line.strategyId;
      this.engine.submit(owner, {
        kind: 'place',
        id: `${owner}-roll${this.reopened}`,
        contractId: this.contractId,
        side: line.size > 0 ? 'buy' : 'sell',
        size: Math.abs(line.size),
        order: { type: 'market' },
      });
    }
  }

  private reopened = 0;

  /** Cancel the working orders and close the position at `price`, now. */
  private close(by: 'gap' | 'roll', time: number, price: number): void {
    if (this.engine.accounting.position(this.contractId) === 0 && this.engine.openOrders().length === 0) return;
    // On a contract several strategies share, a flatten under any id but the engine's own closes only that
    // id's line (none): the account's is the engine's.
    this.engine.submit(this.byLine ? RISK_STRATEGY_ID : by, { kind: 'flatten', contractId: this.contractId });
    this.venue.settleAt(this.contractId, time, price);
  }
}

/** Bars of a chunk up to and including the one starting at `barTime` (none without a bar). */
function barsThrough(time: ArrayLike<number>, barTime: number | undefined): number {
  if (barTime === undefined) return 0;
  let lo = 0;
  let hi = time.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (time[mid]! <= barTime) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
