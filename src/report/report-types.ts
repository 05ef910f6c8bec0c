/**
 * What a report is made of. Adapter-neutral: the backtest (or a live session's journal) fills a
 * `ReportInput`; `computeStatistics` and `renderReport` read nothing else.
 *
 * Units, one convention everywhere:
 * - times are epoch milliseconds (UTC); a bar's time is its start, as in the engine's `BarChunk`;
 * - prices are integer ticks, as in the engine (the report converts to decimals with `contract.tickSize`);
 * - money is in the account currency, as plain numbers (fees included where said so).
 */
import type { DailyStatistics, DayStatistics } from '../protocol/schemas.ts';
import type { ClosedTrade as EngineClosedTrade } from '../engine/accounting.ts';
import type { TradeList } from '../engine/trade-columns.ts';
import type { TradingDayConfig } from '../engine/trading-day.ts';
import type { GuardResult } from '../engine/risk.ts';
import type { Intent } from '../engine/types.ts';
import type { RunEvaluation } from './evaluation-report.ts';
import type { PreparedChart } from './chart-data.ts';
import type { TradeExcursions } from './trade-analysis.ts';
import type { DecisionTally } from './decisions.ts';

export interface ReportContract {
  /** The gateway's contract id, for example `CON.F.US.EP.Z25`. */
  readonly id: string;
  /** Short code shown to people, for example `ESZ5`. */
  readonly name: string;
  /** Product symbol used in the daily statistics' `products` (spec 2.16), for example `F.US.EP`. Defaults to `name`. */
  readonly symbolId?: string;
  readonly tickSize: number;
  readonly tickValue: number;
}

/**
 * Bar columns, oldest first, prices in ticks. Typed arrays from the engine's `BarChunk` can be passed as
 * they are (concatenated over the run); plain arrays work too.
 */
export interface ReportBars {
  readonly time: ArrayLike<number>;
  readonly open: ArrayLike<number>;
  readonly high: ArrayLike<number>;
  readonly low: ArrayLike<number>;
  readonly close: ArrayLike<number>;
}

/**
 * One round turn, the engine's closed trade: `size` contracts opened at `entryTime` and closed at
 * `exitTime`, gross `pnl` and the `fees` of both sides. A position closed in parts is several trades (one
 * per closing fill), each with its share of the entry. A report reads only these fields, so a journal can
 * build them too.
 */
export type { TradeList };

export type ClosedTrade = Pick<
  EngineClosedTrade,
  'contractId' | 'side' | 'size' | 'entryTime' | 'exitTime' | 'entryPrice' | 'exitPrice' | 'pnl' | 'fees' | 'label'
>;

/**
 * Marked-to-market equity (balance after fees + open PnL), one point per bar close or per change, oldest
 * first. Drawdown, Sharpe and Sortino are computed from it.
 */
export interface EquityCurve {
  readonly time: ArrayLike<number>;
  readonly equity: ArrayLike<number>;
}

/** Which account rule a violation or an approach belongs to. */
export type RuleName = 'dailyLossLimit' | 'maximumLossLimit' | 'personalDailyLossLimit' | 'personalDailyProfitTarget';

/** A violation that would have happened, in the vocabulary of spec 2.10. */
export interface ReportViolation {
  /** Epoch ms of the minute it triggered. */
  readonly time: number;
  /** 3 = personal daily loss limit, 5 = personal daily profit target, 6 = rule break (daily or maximum loss limit). */
  readonly type: 3 | 5 | 6;
  /** Which rule; for type 6 it tells the daily from the maximum loss limit. */
  readonly rule: RuleName;
  /** 0 = personal-limit violation, 1 = permanent, 2 = temporary (spec 2.10). */
  readonly duration: 0 | 1 | 2;
  /** Money: the equity that crossed the floor. */
  readonly balance: number;
  readonly message: string;
}

/**
 * The closest the equity came to a limit over the run: `minRoom` is the least money left between equity
 * (at the worst price of a bar) and the floor (negative when crossed); for a profit target it is the least
 * money still missing to reach it.
 */
export interface ClosestApproach {
  readonly rule: RuleName;
  readonly minRoom: number;
  /** Epoch ms where it happened; null when the rule never had a position to measure. */
  readonly time: number | null;
}

/**
 * One risk-guard decision, as the engine's `decisions$` stream carries it (src/engine/runner.ts `Decision`),
 * with the state the guard saw: the position of the backtest's contract and the equity at that moment.
 */
export interface DecisionRecord {
  /** Epoch ms of the decision. */
  readonly time: number;
  readonly strategyId: string;
  readonly intent: Intent;
  /** The target or flatten intent this order was expanded from. */
  readonly origin?: Intent;
  readonly result: GuardResult;
  /** Signed position (contracts) when it was decided. */
  readonly position?: number;
  /** Equity (balance + open PnL) when it was decided. */
  readonly equity?: number;
}

/**
 * Decisions in the order they were made, read one at a time: an array is one, and a backtest keeps its
 * decisions as columns (src/adapters/backtest/decision-columns.ts), each made as an object when read.
 */
export interface DecisionSequence extends Iterable<DecisionRecord> {
  readonly length: number;
  at(index: number): DecisionRecord | undefined;
}

/** A series drawn with the run: a strategy's indicator, one value per bar (NaN where undefined). */
export interface ReportOverlay {
  readonly name: string;
  /** 'price' (default): values in ticks, drawn over the candles; 'own': any unit, in a pane below the price. */
  readonly pane?: 'price' | 'own';
  readonly values: ArrayLike<number>;
  /**
   * Bars per value (default 1): `values[j]` is the value of the last bar of bars `j * barsPerValue` to
   * `(j + 1) * barsPerValue - 1` (`candleValues`), which is all a chart of that many bars a candle, or a
   * multiple of it, draws.
   */
  readonly barsPerValue?: number;
}

/**
 * A run's bars as they passed (src/adapters/backtest/run-gathering.ts): their count and range and the chart's
 * candles, equity and drawdown, built online. A report with it has an empty `equity` (and a streamed run's
 * empty `bars`).
 */
export interface StreamedBars {
  readonly count: number;
  /** Start of the first and of the last bar (epoch ms). */
  readonly first: number;
  readonly last: number;
  readonly chart: PreparedChart;
  /** Each trade's MAE and MFE, gathered while the bars passed (`ExcursionTracker`). */
  readonly excursions?: TradeExcursions;
}

export interface ReportInput {
  readonly title: string;
  readonly contract: ReportContract;
  readonly startingBalance: number;
  readonly bars: ReportBars;
  /** Closed trades in the order they closed (an array, or a run's columns making each as it is read). */
  readonly trades: TradeList<ClosedTrade>;
  readonly equity: EquityCurve;
  readonly violations: readonly ReportViolation[];
  readonly closestApproach: readonly ClosestApproach[];
  /** Whether the account passed (no permanent violation, target reached where one is set: the backtest decides). */
  readonly passed: boolean;
  /** Why it failed or passed, in one line, shown next to the verdict. */
  readonly verdict?: string;
  /** Hash of the run's order list, shown so a regression is visible at a glance. */
  readonly orderListHash: string;
  /** Flat summary of the configuration (strategy, parameters, fill rules, data range), shown as a table. */
  readonly config?: Readonly<Record<string, string | number | boolean | null>>;
  /** Shown in the footer when given; never taken from the clock, so a report is byte-identical across runs. */
  readonly generatedAt?: string;
  /** Hour (America/Chicago) at which a trading day starts. Default 17 (CME Globex). Ignored when `tradingDay` is given. */
  readonly tradingDayStartHour?: number;
  /** The trading day as the engine configures it (`riskConfig.tradingDay`); default 17:00 America/Chicago. */
  readonly tradingDay?: TradingDayConfig;
  /** Where the bars came from (file, source, contract months spliced), shown with the data range. */
  readonly data?: string;
  /** Where the data changes contract month (spliced futures data): marked on the chart. */
  readonly rolls?: readonly { readonly time: number; readonly contract: string }[];
  /** Stretches without bars longer than the run's gap limit (`to`: the first bar after), with the position closed before each: marked on the chart. */
  readonly gaps?: readonly { readonly from: number; readonly to: number; readonly flattened: number }[];
  /** The bars' timeframe, for example `5m`. */
  readonly timeframe?: string;
  /** The strategy's indicators (its `plots`), one value per bar. */
  readonly overlays?: readonly ReportOverlay[];
  /** The strategy and the parameters it actually ran with (defaults applied), shown near the top. */
  readonly strategy?: { readonly name: string; readonly params: Readonly<Record<string, unknown>> };
  /** The run against a prop-firm evaluation's rules and its Monte Carlo pass probability (src/report/evaluation-report.ts). */
  readonly evaluation?: RunEvaluation;
  /** Every risk-guard decision of the run, in the order made: the report's decisions section and chart markers. */
  readonly decisions?: DecisionSequence;
  /**
   * The run's decisions counted as they were made, in place of `decisions` (a run that wrote decisions.csv
   * as it went keeps no records): the same summary.
   */
  readonly decisionTally?: DecisionTally;
  /**
   * A run's bars summarised while they passed: a streamed run's (`bars` and `equity` are then empty), or a
   * whole run's that kept no equity curve (`equity` empty; `bars` kept for the plots).
   */
  readonly streamed?: StreamedBars;
  /** Lines shown under the verdict: what the report leaves out, and why. */
  readonly notes?: readonly string[];
  /** Each strategy's own line of an account several trade (a node's account): the report's strategies section. */
  readonly strategies?: readonly ReportStrategy[];
}

/** One strategy instance's figures in a run of several on one account (money in cents). */
export interface ReportStrategy {
  readonly id: string;
  readonly strategy: string;
  readonly params: Readonly<Record<string, unknown>>;
  /** Its size multiplier on the account. */
  readonly size: number;
  readonly timeframe: string;
  /** realized + unrealized - fees. */
  readonly netPnl: number;
  readonly realizedPnl: number;
  readonly unrealizedPnl: number;
  readonly fees: number;
  readonly trades: number;
  /** Trades won after fees over trades; null without trades. */
  readonly winRate: number | null;
  readonly profitFactor: number | null;
  /** Its own position at the end (signed contracts). */
  readonly position: number;
}

/**
 * Everything `computeStatistics` derives. Money is rounded to cents, ratios to 4 decimals, so the same
 * input gives byte-identical JSON. A statistic that is undefined for the input (no trades, no losses,
 * zero variance) is `null`, never NaN or Infinity.
 */
export interface Statistics {
  readonly startingBalance: number;
  /** Last point of the equity curve (starting balance when the curve is empty). */
  readonly endingEquity: number;
  /** Sum of trade PnL minus fees. */
  readonly netPnl: number;
  /** Sum of trade PnL before fees. */
  readonly grossPnl: number;
  readonly fees: number;
  /** Net PnL over the starting balance, in percent. */
  readonly returnPct: number | null;
  readonly trades: number;
  /** Contracts traded in round turns (sum of trade sizes). */
  readonly contracts: number;
  /** Trades whose net PnL (after fees) is > 0, < 0, = 0 (to the cent). */
  readonly winningTrades: number;
  readonly losingTrades: number;
  readonly neutralTrades: number;
  /** winningTrades / trades, in [0, 1]; null without trades. */
  readonly winRate: number | null;
  /** Sum of net wins / |sum of net losses|; null without losing trades (infinite) or without trades. */
  readonly profitFactor: number | null;
  /** Net PnL per trade. */
  readonly expectancy: number | null;
  readonly averageWin: number | null;
  /** Negative number (money lost by the average losing trade). */
  readonly averageLoss: number | null;
  readonly largestWin: number | null;
  /** Negative number. */
  readonly largestLoss: number | null;
  /** Largest fall of equity from a running peak, in money (>= 0). The starting balance is the first peak. */
  readonly maxDrawdown: number;
  /** Largest fall from a running peak relative to that peak, in percent (>= 0). */
  readonly maxDrawdownPct: number;
  /** Epoch ms of the peak and of the trough of the largest money drawdown; null when there was none. */
  readonly maxDrawdownPeakTime: number | null;
  readonly maxDrawdownTroughTime: number | null;
  /** Longest time underwater: from a peak until equity first regains it (or the end of the curve), in ms. */
  readonly maxDrawdownDurationMs: number;
  /** Annualised (x sqrt 252) mean / sample standard deviation of daily returns, risk-free rate 0. */
  readonly sharpe: number | null;
  /** Annualised (x sqrt 252) mean / downside deviation (target 0, over all days) of daily returns. */
  readonly sortino: number | null;
  /** Fraction of bars during which a position was open, in [0, 1]; null without bars. */
  readonly exposure: number | null;
  /** Trading days (17:00 America/Chicago boundary) with bars or trades. */
  readonly tradingDays: number;
  /** One record per trading day, shape of spec 2.16. */
  readonly daily: readonly DailyStatistics[];
  /** One record per trading day, shape of spec 2.17. */
  readonly dayStats: readonly DayStatistics[];
}
