/**
 * Statistics of a run, from its trades, equity curve and bars. Pure functions: the same input gives the
 * same output to the byte. Money is summed in floating point (in input order) and rounded to cents only
 * at the end, so rounding never accumulates; ratios are rounded to 4 decimals.
 */
import type { DailyStatistics, DayStatistics } from '../protocol/schemas.ts';
import { DEFAULT_TRADING_DAY, TradingCalendar, type TradingDayConfig } from '../engine/trading-day.ts';
import type { ClosedTrade, EquityCurve, ReportBars, ReportInput, Statistics, TradeList } from './report-types.ts';
import { isCheckedBarTimes, validateReportInput } from './validate.ts';
import { tradeReader } from '../engine/trade-columns.ts';

/** Trading days per year used to annualise Sharpe and Sortino. */
export const TRADING_DAYS_PER_YEAR = 252;

/** Money rounded to cents, half away from zero; never `-0`. */
export function cents(value: number): number {
  // The 1e-9 nudge keeps sums such as 1.005 (stored as 1.00499999...) rounding the way a person would.
  const rounded = (Math.sign(value) * Math.round(Math.abs(value) * 100 + 1e-9)) / 100;
  return rounded === 0 ? 0 : rounded;
}

/** A ratio rounded to 4 decimals; null stays null and a non-finite value becomes null. */
export function ratio(value: number | null): number | null {
  if (value === null || !Number.isFinite(value)) return null;
  const rounded = Math.round(value * 10_000) / 10_000;
  return rounded === 0 ? 0 : rounded;
}

// ------------------------------------------------------------------ trades

/** The statistics that depend on the trades alone. */
export type TradeStatistics = Pick<
  Statistics,
  | 'netPnl'
  | 'grossPnl'
  | 'fees'
  | 'trades'
  | 'contracts'
  | 'winningTrades'
  | 'losingTrades'
  | 'neutralTrades'
  | 'winRate'
  | 'profitFactor'
  | 'expectancy'
  | 'averageWin'
  | 'averageLoss'
  | 'largestWin'
  | 'largestLoss'
>;

/** A trade's PnL after fees, to the cent: what decides whether it won. */
export function netTradePnl(trade: Pick<ClosedTrade, 'pnl' | 'fees'>): number {
  return cents(trade.pnl - trade.fees);
}

export function tradeStatistics(trades: TradeList<ClosedTrade>): TradeStatistics {
  let gross = 0;
  let fees = 0;
  let contracts = 0;
  let winSum = 0;
  let lossSum = 0;
  let wins = 0;
  let losses = 0;
  let largestWin = Number.NEGATIVE_INFINITY;
  let largestLoss = Number.POSITIVE_INFINITY;
  for (const reader = tradeReader(trades); reader.next(); ) {
    const trade = reader.row;
    gross += trade.pnl;
    fees += trade.fees;
    contracts += trade.size;
    const net = netTradePnl(trade);
    if (net > 0) {
      wins++;
      winSum += net;
      if (net > largestWin) largestWin = net;
    } else if (net < 0) {
      losses++;
      lossSum += net;
      if (net < largestLoss) largestLoss = net;
    }
  }
  const count = trades.length;
  const net = gross - fees;
  return {
    netPnl: cents(net),
    grossPnl: cents(gross),
    fees: cents(fees),
    trades: count,
    contracts,
    winningTrades: wins,
    losingTrades: losses,
    neutralTrades: count - wins - losses,
    winRate: count === 0 ? null : ratio(wins / count),
    // With no losing trade the factor is infinite: reported as null, the table says why.
    profitFactor: losses === 0 ? null : ratio(winSum / -lossSum),
    expectancy: count === 0 ? null : cents(net / count),
    averageWin: wins === 0 ? null : cents(winSum / wins),
    averageLoss: losses === 0 ? null : cents(lossSum / losses),
    largestWin: wins === 0 ? null : largestWin,
    largestLoss: losses === 0 ? null : largestLoss,
  };
}

// ------------------------------------------------------------------ drawdown

export interface DrawdownStatistics {
  readonly maxDrawdown: number;
  readonly maxDrawdownPct: number;
  readonly maxDrawdownPeakTime: number | null;
  readonly maxDrawdownTroughTime: number | null;
  readonly maxDrawdownDurationMs: number;
}

/** Steps between equity points longer than this are time without data (a gap), not time in drawdown. */
export const DEFAULT_IDLE_LIMIT_MS = 96 * 3_600_000;

/**
 * Drawdown of an equity curve. The starting balance is the first peak, dated at the first point of the
 * curve (the balance before the first bar). Duration is the longest time from a peak until equity first
 * gets back to it, or until the end of the curve when it never does; a step between points longer than
 * `idleLimitMs` is time without data and counts nothing (seven years between two samples of history are
 * not seven years under water).
 */
export function drawdownStatistics(
  curve: EquityCurve,
  startingBalance: number,
  idleLimitMs = DEFAULT_IDLE_LIMIT_MS,
): DrawdownStatistics {
  const tracker = new DrawdownTracker(startingBalance, idleLimitMs);
  tracker.add(curve);
  return tracker.result();
}

/**
 * `drawdownStatistics` over a curve given in consecutive parts (a streamed run's chunks): the same loop
 * with its state kept between parts, so the figures are those of the whole curve, exactly.
 */
export class DrawdownTracker {
  /** The loop's state between parts (the DRAWDOWN_* slots). */
  private readonly state = new Float64Array(DRAWDOWN_SLOTS);
  private points = 0;

  constructor(
    startingBalance: number,
    private readonly idleLimitMs = DEFAULT_IDLE_LIMIT_MS,
  ) {
    const state = this.state;
    state[PEAK] = startingBalance;
    state[MAX_PEAK_TIME] = Number.NaN;
    state[MAX_TROUGH_TIME] = Number.NaN;
    state[PREVIOUS_TIME] = Number.NaN;
  }

  add(curve: EquityCurve): void {
    const { time, equity } = curve;
    const length = Math.min(time.length, equity.length);
    if (length === 0) return;
    if (this.points === 0) this.state[PEAK_TIME] = time[0] as number;
    drawdownSteps(time, equity, length, this.state, this.idleLimitMs);
    this.points += length;
  }

  result(): DrawdownStatistics {
    const state = this.state;
    const longestUnderwater =
      state[UNDERWATER] === 1 ? Math.max(state[LONGEST_UNDERWATER]!, state[SINCE_PEAK]!) : state[LONGEST_UNDERWATER]!;
    const peakTime = state[MAX_PEAK_TIME]!;
    const troughTime = state[MAX_TROUGH_TIME]!;
    return {
      maxDrawdown: cents(state[MAX_DRAWDOWN]!),
      maxDrawdownPct: ratio(state[MAX_DRAWDOWN_FRACTION]! * 100) ?? 0,
      maxDrawdownPeakTime: Number.isNaN(peakTime) ? null : peakTime,
      maxDrawdownTroughTime: Number.isNaN(troughTime) ? null : troughTime,
      maxDrawdownDurationMs: longestUnderwater,
    };
  }
}

const PEAK = 0;
/** 1 under water, 0 not. */
const UNDERWATER = 1;
/** Time with data since the peak. */
const SINCE_PEAK = 2;
const LONGEST_UNDERWATER = 3;
const MAX_DRAWDOWN = 4;
const MAX_DRAWDOWN_FRACTION = 5;
/** NaN until the first drawdown. */
const MAX_PEAK_TIME = 6;
const MAX_TROUGH_TIME = 7;
const PEAK_TIME = 8;
/** NaN before the first point: no step before it. */
const PREVIOUS_TIME = 9;
const DRAWDOWN_SLOTS = 10;

/**
 * The drawdown loop over the next `length` points of a curve, its state read from and written back to
 * `state`. A function of numbers and arrays alone: as a method reading and writing the
 * tracker's fields, V8 ran it as code entered in the middle of the loop, which made a heap object of
 * every new peak and deepest point (7 MB and 4 ms for a 1 M-point curve of a sweep's run; 10 MB and
 * 0.2-0.3 s for a rising curve, against 0.04 MB and 6 ms here).
 */
function drawdownSteps(
  time: ArrayLike<number>,
  equity: ArrayLike<number>,
  length: number,
  state: Float64Array,
  idleLimitMs: number,
): void {
  let peak = state[PEAK]!;
  let underwater = state[UNDERWATER] === 1;
  let sincePeak = state[SINCE_PEAK]!;
  let longestUnderwater = state[LONGEST_UNDERWATER]!;
  let maxDrawdown = state[MAX_DRAWDOWN]!;
  let maxDrawdownFraction = state[MAX_DRAWDOWN_FRACTION]!;
  let maxPeakTime = state[MAX_PEAK_TIME]!;
  let maxTroughTime = state[MAX_TROUGH_TIME]!;
  let peakTime = state[PEAK_TIME]!;
  let previousTime = state[PREVIOUS_TIME]!;
  for (let i = 0; i < length; i++) {
    const t = time[i] as number;
    const value = equity[i] as number;
    // The first point's step is NaN, which adds nothing.
    const step = t - previousTime;
    if (step <= idleLimitMs) sincePeak += step;
    previousTime = t;
    if (value >= peak) {
      if (underwater && sincePeak > longestUnderwater) longestUnderwater = sincePeak;
      underwater = false;
      peak = value;
      peakTime = t;
      sincePeak = 0;
      continue;
    }
    underwater = true;
    const drawdown = peak - value;
    if (drawdown > maxDrawdown) {
      maxDrawdown = drawdown;
      maxPeakTime = peakTime;
      maxTroughTime = t;
    }
    if (peak > 0 && drawdown / peak > maxDrawdownFraction) maxDrawdownFraction = drawdown / peak;
  }
  state[PEAK] = peak;
  state[UNDERWATER] = underwater ? 1 : 0;
  state[SINCE_PEAK] = sincePeak;
  state[LONGEST_UNDERWATER] = longestUnderwater;
  state[MAX_DRAWDOWN] = maxDrawdown;
  state[MAX_DRAWDOWN_FRACTION] = maxDrawdownFraction;
  state[MAX_PEAK_TIME] = maxPeakTime;
  state[MAX_TROUGH_TIME] = maxTroughTime;
  state[PEAK_TIME] = peakTime;
  state[PREVIOUS_TIME] = previousTime;
}

// ------------------------------------------------------------------ daily returns, Sharpe, Sortino

/**
 * The input's exchange trading day, as the engine defines it (src/engine/trading-day.ts): `tradingDay` as
 * given, else `tradingDayStartHour` (default 17) in America/Chicago.
 */
export function tradingDayConfig(input: Pick<ReportInput, 'tradingDay' | 'tradingDayStartHour'>): TradingDayConfig {
  if (input.tradingDay !== undefined) return input.tradingDay;
  if (input.tradingDayStartHour === undefined) return DEFAULT_TRADING_DAY;
  return {
    timeZone: DEFAULT_TRADING_DAY.timeZone,
    startsAt: `${String(input.tradingDayStartHour).padStart(2, '0')}:00`,
  };
}

/** Equity at the end of each trading day of the curve, oldest first. */
export function endOfDayEquity(
  curve: EquityCurve,
  calendar = new TradingCalendar(),
): { day: string; equity: number }[] {
  const days: { day: string; equity: number }[] = [];
  addDayEnds(days, curve, calendar);
  return days;
}

/**
 * `endOfDayEquity` continued over the next part of a curve (a streamed run's chunk). A run of points in
 * one trading day is found by comparing times with the day's bounds, and named once: a sweep computes this
 * for every run over every bar, and a day's name per point was a tenth of each run's time. Over the times of
 * checked bars (a backtest's curve is timed by its bars) a day's last point is searched for, not walked to:
 * the walk over every point was 2.6 ms of a sweep's run on 1 M bars. Other times are walked, in whatever
 * order they come.
 */
export function addDayEnds(
  days: { day: string; equity: number }[],
  curve: EquityCurve,
  calendar: TradingCalendar,
): void {
  const time = curve.time;
  const length = Math.min(time.length, curve.equity.length);
  const ordered = isCheckedBarTimes(time);
  let i = 0;
  while (i < length) {
    const first = time[i] as number;
    const day = calendar.dayOf(first);
    const start = calendar.dayStart(first);
    const end = calendar.nextDayStart(first);
    let j: number;
    if (ordered) j = firstAtOrAfter(time, end, i + 1, length);
    else {
      j = i + 1;
      while (j < length && (time[j] as number) >= start && (time[j] as number) < end) j++;
    }
    const value = curve.equity[j - 1] as number;
    const last = days[days.length - 1];
    if (last !== undefined && last.day === day) last.equity = value;
    else days.push({ day, equity: value });
    i = j;
  }
}

/**
 * The first index from `from` (below `length`) whose time is `end` or later, `length` when none, over times
 * that never go back: found by steps that double from `from`, then halve.
 */
function firstAtOrAfter(time: ArrayLike<number>, end: number, from: number, length: number): number {
  // Every index in [low, ...) before `high` is unknown; every index below `low` is before `end`.
  let low = from;
  let high = length;
  let step = 1;
  while (low < length) {
    const probe = Math.min(low + step - 1, length - 1);
    if ((time[probe] as number) >= end) {
      high = probe;
      break;
    }
    low = probe + 1;
    step *= 2;
  }
  while (low < high) {
    const mid = (low + high) >>> 1;
    if ((time[mid] as number) < end) low = mid + 1;
    else high = mid;
  }
  return low;
}

/**
 * Simple daily returns: each day's closing equity over the previous day's (the starting balance before
 * the first day). Null when a previous equity is not positive, since a return is then meaningless.
 */
export function dailyReturns(dayEnds: readonly { equity: number }[], startingBalance: number): number[] | null {
  const returns: number[] = [];
  let previous = startingBalance;
  for (const { equity } of dayEnds) {
    if (!(previous > 0)) return null;
    returns.push(equity / previous - 1);
    previous = equity;
  }
  return returns;
}

function mean(values: readonly number[]): number {
  let sum = 0;
  for (const value of values) sum += value;
  return sum / values.length;
}

/** Relative spread below which a series counts as constant (float noise, not variance). */
const ZERO_VARIANCE = 1e-12;

/**
 * Annualised Sharpe ratio of daily returns, risk-free rate 0: mean / sample standard deviation (n - 1)
 * x sqrt(252). Null with fewer than two returns or no variance (no trades gives all-zero returns).
 */
export function sharpeRatio(returns: readonly number[]): number | null {
  if (returns.length < 2) return null;
  const average = mean(returns);
  let squares = 0;
  for (const value of returns) squares += (value - average) ** 2;
  const deviation = Math.sqrt(squares / (returns.length - 1));
  if (deviation <= ZERO_VARIANCE) return null;
  return ratio((average / deviation) * Math.sqrt(TRADING_DAYS_PER_YEAR));
}

/**
 * Annualised Sortino ratio of daily returns, target 0: mean / downside deviation x sqrt(252), where the
 * downside deviation is sqrt(sum(min(r, 0)^2) / n) over all n days. Null with fewer than two returns or
 * no losing day (the ratio would be infinite).
 */
export function sortinoRatio(returns: readonly number[]): number | null {
  if (returns.length < 2) return null;
  let downside = 0;
  for (const value of returns) if (value < 0) downside += value * value;
  const deviation = Math.sqrt(downside / returns.length);
  if (deviation <= ZERO_VARIANCE) return null;
  return ratio((mean(returns) / deviation) * Math.sqrt(TRADING_DAYS_PER_YEAR));
}

// ------------------------------------------------------------------ exposure

/** Index of the last bar starting at or before `t` (-1 when `t` is before every bar). */
function lastBarAtOrBefore(time: ArrayLike<number>, t: number): number {
  let low = 0;
  let high = time.length - 1;
  let found = -1;
  while (low <= high) {
    const middle = (low + high) >> 1;
    if ((time[middle] as number) <= t) {
      found = middle;
      low = middle + 1;
    } else {
      high = middle - 1;
    }
  }
  return found;
}

/** Index of the last bar starting strictly before `t`. */
function lastBarBefore(time: ArrayLike<number>, t: number): number {
  let low = 0;
  let high = time.length - 1;
  let found = -1;
  while (low <= high) {
    const middle = (low + high) >> 1;
    if ((time[middle] as number) < t) {
      found = middle;
      low = middle + 1;
    } else {
      high = middle - 1;
    }
  }
  return found;
}

/**
 * Fraction of bars during which a position was open: a bar counts when a trade's [entry, exit) overlaps
 * it; a trade opened and closed at the same instant counts for the bar containing that instant.
 */
export function exposure(bars: Pick<ReportBars, 'time'>, trades: TradeList<ClosedTrade>): number | null {
  const union = new SpanUnion();
  for (const trade of trades)
    addTradeSpan(
      union,
      trade,
      (t) => lastBarAtOrBefore(bars.time, t),
      (t) => lastBarBefore(bars.time, t),
    );
  return exposureOf(bars.time.length, union.covered);
}

/**
 * The bars a trade covers, [first, last] (added to `union`; none when it covers none), from where its
 * times fall among the bars: the index of the last bar starting at or before, and strictly before, an
 * instant. A streamed run finds those without the bars (src/adapters/backtest/streamed.ts).
 */
export function addTradeSpan(
  union: SpanUnion,
  trade: Pick<ClosedTrade, 'entryTime' | 'exitTime'>,
  atOrBefore: (t: number) => number,
  before: (t: number) => number,
): void {
  const first = Math.max(0, atOrBefore(trade.entryTime));
  const last = trade.exitTime > trade.entryTime ? before(trade.exitTime) : first;
  if (last >= first) union.add(first, last);
}

/**
 * The union of spans of bar indexes [first, last], kept as its disjoint runs in order, and the number of
 * bars it covers. Spans come in any order; a run's come in the order its trades closed, each at or after
 * the one before, so they extend the last run or start a new one: a position held throughout is one run,
 * however many trades it took.
 */
export class SpanUnion {
  /** Bars in the union. */
  covered = 0;
  private readonly starts: number[] = [];
  private readonly ends: number[] = [];

  add(first: number, last: number): void {
    const { starts, ends } = this;
    const n = starts.length;
    if (n === 0 || first > ends[n - 1]! + 1) {
      starts.push(first);
      ends.push(last);
      this.covered += last - first + 1;
      return;
    }
    if (first >= starts[n - 1]!) {
      if (last > ends[n - 1]!) {
        this.covered += last - ends[n - 1]!;
        ends[n - 1] = last;
      }
      return;
    }
    // Out of order: the runs it touches (overlapping or adjacent) become one.
    let i = 0;
    while (i < n && ends[i]! + 1 < first) i++;
    let j = i;
    let start = first;
    let end = last;
    while (j < n && starts[j]! <= last + 1) {
      start = Math.min(start, starts[j]!);
      end = Math.max(end, ends[j]!);
      this.covered -= ends[j]! - starts[j]! + 1;
      j++;
    }
    starts.splice(i, j - i, start);
    ends.splice(i, j - i, end);
    this.covered += end - start + 1;
  }
}

/** Exposure from the bars the trades cover (`SpanUnion.covered`) over the bar count. */
export function exposureOf(count: number, covered: number): number | null {
  return count === 0 ? null : ratio(covered / count);
}

// ------------------------------------------------------------------ daily records (spec 2.16, 2.17)

/**
 * One record per trading day that had bars or closed trades. Trades belong to the day they closed in, as
 * the gateway books them; `totalPnL` is before fees (`totalFees` beside it, as the gateway reports a
 * trade's pnl and fees apart), while a trade wins or loses on its PnL after fees, as in the headline
 * statistics; `winRate` is a fraction in [0, 1], `balance` the realised balance (after fees) at the
 * day's end, and `totalTradedContracts` counts round-turn contracts. `tradeDay` and `tradeDate` are the trading day's
 * date at 00:00 UTC.
 */
export function dailyStatistics(
  input: Pick<ReportInput, 'trades' | 'equity' | 'startingBalance' | 'contract' | 'tradingDay' | 'tradingDayStartHour'>,
  calendar = new TradingCalendar(tradingDayConfig(input)),
): DailyStatistics[] {
  const days = new Set<string>();
  const length = Math.min(input.equity.time.length, input.equity.equity.length);
  let previous = '';
  for (let i = 0; i < length; i++) {
    // A day's bars come together: one set insertion a day, not one a bar.
    const day = calendar.dayOf(input.equity.time[i] as number);
    if (day !== previous) days.add(day);
    previous = day;
  }
  return dailyRecords(days, input, calendar);
}

/** What a trading day's closed trades add up to. */
interface DayTally {
  trades: number;
  pnl: number;
  fees: number;
  wins: number;
  losses: number;
  /** Round-turn contracts by symbol, in the order first traded. */
  readonly contracts: Map<string, number>;
}

const NO_TRADES: DayTally = Object.freeze({
  trades: 0,
  pnl: 0,
  fees: 0,
  wins: 0,
  losses: 0,
  contracts: new Map<string, number>(),
});

/** The daily records of the trading days that had equity points (`days`, changed here) and of the trades' days. */
function dailyRecords(
  days: Set<string>,
  input: Pick<ReportInput, 'trades' | 'startingBalance' | 'contract'>,
  calendar: TradingCalendar,
): DailyStatistics[] {
  const symbolOf = (contractId: string): string =>
    contractId === input.contract.id ? (input.contract.symbolId ?? input.contract.name) : contractId;
  // One pass, each trade counted in its day's tally as it is read: a run's columns make each trade when
  // read, and none is kept.
  const tallies = new Map<string, DayTally>();
  for (const trade of input.trades) {
    const day = calendar.dayOf(trade.exitTime);
    days.add(day);
    let tally = tallies.get(day);
    if (tally === undefined) {
      tally = { trades: 0, pnl: 0, fees: 0, wins: 0, losses: 0, contracts: new Map() };
      tallies.set(day, tally);
    }
    tally.trades++;
    tally.pnl += trade.pnl;
    tally.fees += trade.fees;
    const net = netTradePnl(trade);
    if (net > 0) tally.wins++;
    else if (net < 0) tally.losses++;
    const symbol = symbolOf(trade.contractId);
    tally.contracts.set(symbol, (tally.contracts.get(symbol) ?? 0) + trade.size);
  }

  const records: DailyStatistics[] = [];
  let realised = input.startingBalance;
  for (const day of [...days].sort()) {
    const stamp = `${day}T00:00:00Z`;
    const { trades, pnl, fees, wins, losses, contracts } = tallies.get(day) ?? NO_TRADES;
    realised += pnl - fees;
    records.push({
      tradeDay: stamp,
      balance: cents(realised),
      products: [...contracts.keys()]
        .sort()
        .map((symbolId) => ({ tradeDay: stamp, symbolId, totalTradedContracts: contracts.get(symbolId)! })),
      tradeDate: stamp,
      totalPnL: cents(pnl),
      totalTrades: trades,
      winningTrades: wins,
      losingTrades: losses,
      neutralTrades: trades - wins - losses,
      winRate: trades === 0 ? 0 : ratio(wins / trades)!,
      totalFees: cents(fees),
    });
  }
  return records;
}

/** The spec 2.17 view of the daily records. */
export function dayStatistics(daily: readonly DailyStatistics[]): DayStatistics[] {
  return daily.map((record) => ({
    tradeDate: record.tradeDate,
    totalPnL: record.totalPnL,
    totalTrades: record.totalTrades,
    winningTrades: record.winningTrades,
    losingTrades: record.losingTrades,
    neutralTrades: record.neutralTrades,
    winRate: record.winRate,
    totalFees: record.totalFees,
  }));
}

// ------------------------------------------------------------------ everything

/** The figures a sweep ranks runs by: everything but the per-day tables and the exposure. */
export type RunStatistics = Omit<Statistics, 'exposure' | 'tradingDays' | 'daily' | 'dayStats'>;

/** Every statistic of a run but its per-day tables and exposure (what a sweep's run needs, at less cost). */
export function runStatistics(input: ReportInput, idleLimitMs = DEFAULT_IDLE_LIMIT_MS): RunStatistics {
  validateReportInput(input);
  return runStatisticsOn(input, new TradingCalendar(tradingDayConfig(input)), idleLimitMs);
}

/** The input checked already (its calendar is built from it). */
function runStatisticsOn(input: ReportInput, calendar: TradingCalendar, idleLimitMs: number): RunStatistics {
  const drawdown = drawdownStatistics(input.equity, input.startingBalance, idleLimitMs);
  const equityLength = Math.min(input.equity.time.length, input.equity.equity.length);
  const endingEquity = equityLength > 0 ? (input.equity.equity[equityLength - 1] as number) : input.startingBalance;
  return runStatisticsOf(input, drawdown, endOfDayEquity(input.equity, calendar), endingEquity);
}

/** The run's figures from its trades and what its equity curve gave (whole or streamed). */
function runStatisticsOf(
  input: Pick<ReportInput, 'trades' | 'startingBalance'>,
  drawdown: DrawdownStatistics,
  dayEnds: readonly { equity: number }[],
  endingEquity: number,
): RunStatistics {
  const trades = tradeStatistics(input.trades);
  const returns = dailyReturns(dayEnds, input.startingBalance);
  return {
    startingBalance: cents(input.startingBalance),
    endingEquity: cents(endingEquity),
    netPnl: trades.netPnl,
    grossPnl: trades.grossPnl,
    fees: trades.fees,
    returnPct: input.startingBalance > 0 ? ratio((trades.netPnl / input.startingBalance) * 100) : null,
    trades: trades.trades,
    contracts: trades.contracts,
    winningTrades: trades.winningTrades,
    losingTrades: trades.losingTrades,
    neutralTrades: trades.neutralTrades,
    winRate: trades.winRate,
    profitFactor: trades.profitFactor,
    expectancy: trades.expectancy,
    averageWin: trades.averageWin,
    averageLoss: trades.averageLoss,
    largestWin: trades.largestWin,
    largestLoss: trades.largestLoss,
    ...drawdown,
    sharpe: returns === null ? null : sharpeRatio(returns),
    sortino: returns === null ? null : sortinoRatio(returns),
  };
}

/** Every statistic of a run. Throws a `ReportInputError` naming each problem of a malformed input. */
/** `idleLimitMs`: a step of the equity curve longer than this is time without data (the run's gap limit). */
export function computeStatistics(input: ReportInput, idleLimitMs = DEFAULT_IDLE_LIMIT_MS): Statistics {
  validateReportInput(input);
  const calendar = new TradingCalendar(tradingDayConfig(input));
  const run = runStatisticsOn(input, calendar, idleLimitMs);
  const daily = dailyStatistics(input, calendar);
  return {
    ...run,
    exposure: exposure(input.bars, input.trades),
    tradingDays: daily.length,
    daily,
    dayStats: dayStatistics(daily),
  };
}

/**
 * What a streamed run gathers while its bars pass (src/adapters/backtest/streamed.ts): the drawdown tracker, the
 * end-of-day equity, the last equity point, the bar count and the bars each trade covered.
 */
export interface StreamedFigures {
  readonly drawdown: DrawdownTracker;
  readonly dayEnds: readonly { readonly day: string; readonly equity: number }[];
  /** Undefined without any equity point. */
  readonly endingEquity: number | undefined;
  readonly bars: number;
  /** Bars in the union of the trades' spans (`addTradeSpan`). */
  readonly covered: number;
}

/** Every statistic of a streamed run: the same figures `computeStatistics` gives for its whole input. */
export function streamedStatistics(
  input: Pick<ReportInput, 'trades' | 'startingBalance' | 'contract' | 'tradingDay' | 'tradingDayStartHour'>,
  figures: StreamedFigures,
  calendar = new TradingCalendar(tradingDayConfig(input)),
): Statistics {
  const run = runStatisticsOf(
    input,
    figures.drawdown.result(),
    figures.dayEnds,
    figures.endingEquity ?? input.startingBalance,
  );
  const daily = dailyRecords(new Set(figures.dayEnds.map((d) => d.day)), input, calendar);
  return {
    ...run,
    exposure: exposureOf(figures.bars, figures.covered),
    tradingDays: daily.length,
    daily,
    dayStats: dayStatistics(daily),
  };
}
