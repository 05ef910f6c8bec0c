/**
 * Would this run pass a prop-firm evaluation, and how likely is it to pass one?
 *
 * A run becomes a list of trading days, each the path of equity through the day (the turning points of the
 * worst and best equity of every bar, so intraday drawdowns survive the compression) plus what the day did
 * against the contract cap and the trading hours. `replayEvaluation` plays the days in order against the
 * rules; `monteCarloEvaluation` plays many paths of days drawn by a seeded circular block bootstrap, so
 * every sampled day replays its own intraday path and the trailing floor follows it.
 *
 * The floors are the engine's: each replay drives a `RuleBook` (src/engine/rules.ts), the one the backtest
 * and the risk guard use. What the replay cannot know: a day's path is measured from its opening equity,
 * so a position held overnight carries its gap into the next day, and the end-of-day trailing floor
 * follows the closing equity (the balance, when the day ends flat).
 */
import { SessionClock, TradingCalendar, type TradingDayConfig } from '../engine/calendar.ts';
import {
  EVALUATION_FAILURE_LABELS,
  evaluationAccount,
  type EvaluationFailure,
  type EvaluationRules,
} from '../engine/evaluation.ts';
import { RuleBook, type Breach } from '../engine/rules.ts';
import type { Side } from '../engine/types.ts';
import { cents, ratio } from './statistics.ts';
import type { EquityCurve, ReportBars } from './types.ts';

// ------------------------------------------------------------------ days of a run

export interface EvaluationDay {
  /** Trading day, `YYYY-MM-DD`. */
  readonly day: string;
  /** Equity minus the day's opening equity at the turning points of the day's path; the last is the close. */
  readonly offsets: Float64Array;
  /** Epoch ms of each point (the bar it came from). */
  readonly times: Float64Array;
  /** The lowest and the highest offset of the day. */
  readonly low: number;
  readonly high: number;
  /** A fill happened this day (it counts as a trading day). */
  readonly traded: boolean;
  /** Largest absolute position held. */
  readonly largestPosition: number;
  /** First time a position above the maximum contracts was held; NaN when never. */
  readonly contractsBreach: number;
  /** First time a position was held outside the trading hours (or past flatBy); NaN when never. */
  readonly hoursBreach: number;
}

export interface EvaluationRunInput {
  /** Bars in ticks (only time, high, low, close are read). */
  readonly bars: Pick<ReportBars, 'time' | 'high' | 'low' | 'close'>;
  /** Equity after each bar, at the bar's time (the backtest records one point per bar). */
  readonly equity: EquityCurve;
  /** The run's fills, in order: the position during each bar. */
  readonly fills: readonly { readonly time: number; readonly side: Side; readonly size: number }[];
  readonly tickValue: number;
  readonly startingBalance: number;
  readonly tradingDay?: TradingDayConfig;
}

/** Keeps only the turning points of a path: a run of moves in one direction becomes its last point. */
class TurningPoints {
  values: number[] = [];
  times: number[] = [];

  push(value: number, time: number): void {
    const n = this.values.length;
    if (n >= 1 && value === this.values[n - 1]) return;
    if (n >= 2) {
      const a = this.values[n - 2]!;
      const b = this.values[n - 1]!;
      if ((b > a && value > b) || (b < a && value < b)) {
        this.values[n - 1] = value;
        this.times[n - 1] = time;
        return;
      }
    }
    this.values.push(value);
    this.times.push(time);
  }
}

/** The turning points of a path (values and their times), as the evaluation days keep them. */
export function compressPath(values: ArrayLike<number>, times: ArrayLike<number>): { values: number[]; times: number[] } {
  const path = new TurningPoints();
  for (let i = 0; i < values.length; i++) path.push(values[i] as number, times[i] as number);
  return { values: path.values, times: path.times };
}

/**
 * The days with only the turning points of their paths: what a Monte Carlo replays. The outcome of a
 * replay (status, rule, day, equity) is the same as with the whole paths, because the floors move only
 * with the running high and a floor can first be reached only at a low; only the instant a rule broke
 * can differ (the low of a fall instead of the first point past the floor), and with it, when the cap or the
 * hours broke inside that same fall, which of the two rules counts as the first.
 */
export function compressDays(days: readonly EvaluationDay[]): EvaluationDay[] {
  return days.map((day) => {
    const path = compressPath(day.offsets, day.times);
    return { ...day, offsets: Float64Array.from(path.values), times: Float64Array.from(path.times) };
  });
}

/**
 * The run as evaluation days, with the cap and the hours of `rules` checked bar by bar. Each day's path has
 * a point for the day's opening (0), the equity at the high and then the low of every bar with a position
 * (the equity at the close of a bar without one), and the day's closing equity.
 */
export function evaluationDays(run: EvaluationRunInput, rules: Pick<EvaluationRules, 'maximumContracts' | 'tradingHours'>): EvaluationDay[] {
  const calendar = new TradingCalendar(run.tradingDay);
  const sessions = rules.tradingHours === undefined ? undefined : new SessionClock(rules.tradingHours, run.tradingDay?.timeZone ?? 'America/Chicago');
  const cap = rules.maximumContracts ?? Number.POSITIVE_INFINITY;
  const { time: barTime, high, low, close } = run.bars;
  const days: EvaluationDay[] = [];
  let opening = run.startingBalance;
  let lastEquity = run.startingBalance;
  let current: { day: string; path: { values: number[]; times: number[] }; traded: boolean; largest: number; contracts: number; hours: number } | undefined;
  let position = 0;
  let fill = 0;
  let bar = 0;

  const finish = () => {
    if (current === undefined) return;
    const { values, times } = current.path;
    if (values[values.length - 1] !== lastEquity - opening) {
      values.push(lastEquity - opening);
      times.push(times[times.length - 1]!);
    }
    const offsets = Float64Array.from(current.path.values);
    let lowest = 0;
    let highest = 0;
    for (const value of offsets) {
      if (value < lowest) lowest = value;
      if (value > highest) highest = value;
    }
    days.push({
      day: current.day,
      offsets,
      low: lowest,
      high: highest,
      times: Float64Array.from(current.path.times),
      traded: current.traded,
      largestPosition: current.largest,
      contractsBreach: current.contracts,
      hoursBreach: current.hours,
    });
    opening = lastEquity;
  };

  const points = Math.min(run.equity.time.length, run.equity.equity.length);
  for (let i = 0; i < points; i++) {
    const t = run.equity.time[i] as number;
    const equity = run.equity.equity[i] as number;
    const day = calendar.dayOf(t);
    if (current === undefined || current.day !== day) {
      finish();
      current = { day, path: { values: [0], times: [t] }, traded: false, largest: 0, contracts: Number.NaN, hours: Number.NaN };
    }
    while (fill < run.fills.length && run.fills[fill]!.time <= t) {
      const f = run.fills[fill++]!;
      position += f.side === 'buy' ? f.size : -f.size;
      if (calendar.dayOf(f.time) === day) current.traded = true;
    }
    while (bar < barTime.length && (barTime[bar] as number) < t) bar++;
    const size = Math.abs(position);
    if (size > current.largest) current.largest = size;
    if (size > cap && Number.isNaN(current.contracts)) current.contracts = t;
    if (size > 0 && sessions !== undefined && Number.isNaN(current.hours) && sessions.phase(t) !== 'open') current.hours = t;
    if (position !== 0 && bar < barTime.length && (barTime[bar] as number) === t) {
      // Equity at the bar's extremes with the position held through it; the high first, as the engine's
      // rule check assumes (the high-water mark moves before the low is tested).
      const c = close[bar] as number;
      const up = position * (((high[bar] as number) - c) * run.tickValue);
      const down = position * (((low[bar] as number) - c) * run.tickValue);
      current.path.values.push(equity + Math.max(up, down) - opening, equity + Math.min(up, down) - opening);
      current.path.times.push(t, t);
    } else {
      current.path.values.push(equity - opening);
      current.path.times.push(t);
    }
    lastEquity = equity;
  }
  finish();
  return days;
}

// ------------------------------------------------------------------ one evaluation, day by day

export interface EvaluationStep {
  readonly status: 'passed' | 'failed' | undefined;
  readonly rule?: EvaluationFailure;
  readonly time?: number;
}

/**
 * The state of one evaluation account: play days in order with `playDay`, which says when it passed
 * (at a day's end) or failed (at the instant the first rule broke).
 */
export class EvaluationAccount {
  readonly book: RuleBook;
  equity: number;
  tradingDays = 0;
  dayNumber = 0;
  bestDay = Number.NEGATIVE_INFINITY;
  finished: 'passed' | 'failed' | undefined;
  private readonly broken: Breach[] = [];
  private readonly onBreach = (breach: Breach) => this.broken.push(breach);

  /**
   * @param exact evaluate every point of every day, so the closest approach to each floor is exact; a
   *   Monte Carlo passes false: a day that cannot break a floor is then evaluated once, as its low and high.
   */
  constructor(
    readonly rules: EvaluationRules,
    private readonly exact = true,
  ) {
    this.book = new RuleBook(evaluationAccount(rules));
    this.equity = rules.startingBalance;
  }

  /** A fresh account under the same rules. */
  reset(): void {
    this.book.reset();
    this.equity = this.rules.startingBalance;
    this.tradingDays = 0;
    this.dayNumber = 0;
    this.bestDay = Number.NEGATIVE_INFINITY;
    this.finished = undefined;
    this.broken.length = 0;
  }

  get profit(): number {
    return this.equity - this.rules.startingBalance;
  }

  /** Whether the targets are met now: profit, trading days and consistency. */
  targetsMet(): boolean {
    const rules = this.rules;
    const profit = this.profit;
    if (profit < rules.profitTarget) return false;
    if (rules.minimumTradingDays !== undefined && this.tradingDays < rules.minimumTradingDays) return false;
    if (rules.consistency !== undefined && this.bestDay >= rules.consistency.bestDayShare * profit) return false;
    return true;
  }

  playDay(day: EvaluationDay): EvaluationStep {
    if (this.finished !== undefined) throw new Error('the evaluation is already finished');
    this.dayNumber++;
    const start = this.equity;
    this.book.startDay(day.day, start);
    const { offsets, times } = day;
    // The day's other failures, cut at the instant a soft daily breach flattens the account.
    let cutoff = Number.POSITIVE_INFINITY;
    let end = start + offsets[offsets.length - 1]!;
    let failure: { rule: EvaluationFailure; time: number } | undefined;
    const quiet = !this.exact && !this.book.couldBreach(start + day.low, start + day.high);
    if (quiet) this.book.evaluate(times[0]!, start + day.low, start + day.low, start + day.high, this.onBreach);
    const daily = this.rules.dailyLossLimit !== undefined;
    for (let k = 0; k < offsets.length && !quiet; k++) {
      let value = start + offsets[k]!;
      // A fall reaches the higher floor first: when the daily one is above the maximum loss floor, the
      // account is flattened there, so a deeper low of the same fall (what a compressed path keeps)
      // never reaches the maximum loss floor. The floors do not move during a fall.
      if (daily) {
        const dailyFloor = this.book.dailyLossFloor();
        if (value <= dailyFloor && dailyFloor > this.book.maximumLossFloor()) value = dailyFloor;
      }
      this.book.evaluate(times[k]!, value, value, value, this.onBreach);
      if (this.broken.length === 0) continue;
      const mllBroken = this.broken.some((b) => b.rule === 'maximumLossLimit');
      this.broken.length = 0;
      // The account ends at the floor it reached (the firm liquidates there), whatever the path's low:
      // the same equity whether a fall is replayed point by point or as its low.
      if (mllBroken) {
        failure = { rule: 'maximumLossLimit', time: times[k]! };
        end = this.book.maximumLossFloor();
        break;
      }
      end = this.book.dailyLossFloor();
      if (this.rules.dailyLossLimit?.breach === 'failsEvaluation') {
        failure = { rule: 'dailyLossLimit', time: times[k]! };
        break;
      }
      // A soft breach: flattened at the daily floor, nothing more that day.
      cutoff = times[k]!;
      break;
    }
    // The cap and the hours break at their own instants: the earliest broken rule is the one that failed.
    if (day.contractsBreach <= cutoff && !(failure !== undefined && failure.time <= day.contractsBreach)) {
      failure = { rule: 'maximumContracts', time: day.contractsBreach };
    }
    if (day.hoursBreach <= cutoff && !(failure !== undefined && failure.time <= day.hoursBreach)) {
      failure = { rule: 'tradingHours', time: day.hoursBreach };
    }
    this.equity = end;
    if (day.traded) this.tradingDays++;
    if (end - start > this.bestDay) this.bestDay = end - start;
    if (failure !== undefined) {
      this.finished = 'failed';
      return { status: 'failed', rule: failure.rule, time: failure.time };
    }
    if (this.targetsMet()) {
      this.finished = 'passed';
      return { status: 'passed', time: times[times.length - 1]! };
    }
    return { status: undefined };
  }
}

// ------------------------------------------------------------------ the run's own evaluation

export interface EvaluationApproach {
  readonly rule: 'maximumLossLimit' | 'dailyLossLimit' | 'profitTarget';
  /** Least money left above the floor (negative once crossed); for the target, the least still missing. */
  readonly minRoom: number;
  readonly time: number | null;
}

export interface EvaluationOutcome {
  readonly status: 'passed' | 'failed' | 'open';
  /** The evaluation's trading day (1-based) it passed or failed on; null while open. */
  readonly dayNumber: number | null;
  readonly day: string | null;
  /** The instant the rule broke, or the last point of the passing day. */
  readonly time: number | null;
  /** The rule that failed first. */
  readonly rule: EvaluationFailure | null;
  /** One line: what happened, or what is still missing. */
  readonly summary: string;
  readonly daysPlayed: number;
  readonly tradingDays: number;
  readonly profit: number;
  readonly bestDay: number | null;
  readonly closest: readonly EvaluationApproach[];
}

function money(value: number): string {
  return value.toFixed(2);
}

function missing(account: EvaluationAccount): string {
  const rules = account.rules;
  const gaps: string[] = [];
  const profit = account.profit;
  if (profit < rules.profitTarget) gaps.push(`profit ${money(profit)} of the ${money(rules.profitTarget)} target`);
  if (rules.minimumTradingDays !== undefined && account.tradingDays < rules.minimumTradingDays) {
    gaps.push(`${account.tradingDays} of ${rules.minimumTradingDays} trading days`);
  }
  if (rules.consistency !== undefined && profit > 0 && account.bestDay >= rules.consistency.bestDayShare * profit) {
    gaps.push(`best day ${money(account.bestDay)} is ${Math.round((account.bestDay / profit) * 100)}% of the profit (must be below ${Math.round(rules.consistency.bestDayShare * 100)}%)`);
  }
  return gaps.join('; ');
}

/** The run's days against the rules, in order: did it pass, on which day, which rule failed first and when. */
export function replayEvaluation(rules: EvaluationRules, days: readonly EvaluationDay[]): EvaluationOutcome {
  const account = new EvaluationAccount(rules);
  let step: EvaluationStep = { status: undefined };
  let last: EvaluationDay | undefined;
  let maxProfit = Number.NEGATIVE_INFINITY;
  let maxProfitTime: number | null = null;
  for (const day of days) {
    step = account.playDay(day);
    last = day;
    const profit = account.equity - rules.startingBalance;
    if (profit > maxProfit) {
      maxProfit = profit;
      maxProfitTime = day.times[day.times.length - 1]!;
    }
    if (step.status !== undefined) break;
  }
  const closest: EvaluationApproach[] = [];
  const limit = (rule: 'maximumLossLimit' | 'dailyLossLimit') => {
    const approach = account.book.closest[rule];
    closest.push(Number.isFinite(approach.headroom) ? { rule, minRoom: cents(approach.headroom), time: approach.time } : { rule, minRoom: 0, time: null });
  };
  limit('maximumLossLimit');
  if (rules.dailyLossLimit !== undefined) limit('dailyLossLimit');
  closest.push({ rule: 'profitTarget', minRoom: cents(Math.max(0, rules.profitTarget - (days.length === 0 ? 0 : maxProfit))), time: maxProfitTime });

  const status = step.status ?? 'open';
  const when = last === undefined ? '' : ` on trading day ${account.dayNumber} (${last.day})`;
  const summary =
    status === 'passed'
      ? `passed${when}: profit ${money(account.profit)} of ${money(rules.profitTarget)}, ${account.tradingDays} trading days`
      : status === 'failed'
        ? `failed${when}: ${EVALUATION_FAILURE_LABELS[step.rule!]} broken at ${new Date(step.time!).toISOString()}`
        : days.length === 0
          ? 'not started: no trading day'
          : `not passed after ${account.dayNumber} days: ${missing(account)}`;
  return {
    status,
    dayNumber: status === 'open' ? null : account.dayNumber,
    day: status === 'open' ? null : (last?.day ?? null),
    time: step.time ?? null,
    rule: step.rule ?? null,
    summary,
    daysPlayed: account.dayNumber,
    tradingDays: account.tradingDays,
    profit: cents(account.profit),
    bestDay: Number.isFinite(account.bestDay) ? cents(account.bestDay) : null,
    closest,
  };
}

// ------------------------------------------------------------------ Monte Carlo

export interface MonteCarloOptions {
  /** Paths to play. Default 10,000. */
  readonly paths?: number;
  /** Seed of the generator: the same seed gives the same result. Default 1. */
  readonly seed?: number;
  /** Trading days a path may last before it counts as still open. Default 60. */
  readonly horizonDays?: number;
  /** Consecutive days drawn together (streaks survive within a block). Default 1. */
  readonly blockDays?: number;
}

export interface DaysToPass {
  /** `counts[k]`: paths that passed on day k + 1. */
  readonly counts: readonly number[];
  readonly mean: number;
  readonly median: number;
  /** 95% confidence interval of the median (binomial order statistics). */
  readonly medianInterval: readonly [number, number];
  readonly p10: number;
  readonly p90: number;
}

export interface EquityFan {
  /** Day 0 is the start; day k the equity after k trading days (a finished path keeps its last equity). */
  readonly p05: readonly number[];
  readonly p25: readonly number[];
  readonly p50: readonly number[];
  readonly p75: readonly number[];
  readonly p95: readonly number[];
  /** A few whole paths (the first ones drawn), to show what single accounts look like. */
  readonly samples: readonly (readonly number[])[];
}

export interface MonteCarloResult {
  readonly paths: number;
  readonly seed: number;
  readonly horizonDays: number;
  readonly blockDays: number;
  /** Trading days of the run the paths are drawn from. */
  readonly sampleDays: number;
  readonly passed: number;
  readonly open: number;
  readonly failed: Readonly<Record<EvaluationFailure, number>>;
  readonly passProbability: number;
  /** 95% Wilson score interval of the pass probability. */
  readonly passInterval: readonly [number, number];
  readonly failProbability: Readonly<Record<EvaluationFailure, number>>;
  readonly openProbability: number;
  readonly daysToPass: DaysToPass | null;
  readonly fan: EquityFan;
}

/** mulberry32: small, fast and good enough to draw days; seeded, so a run can be repeated exactly. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** 95% Wilson score interval of a proportion `k / n`. */
export function wilsonInterval(k: number, n: number): [number, number] {
  if (n === 0) return [0, 1];
  const z = 1.959963984540054;
  const p = k / n;
  const z2 = z * z;
  const centre = (p + z2 / (2 * n)) / (1 + z2 / n);
  const half = (z * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n))) / (1 + z2 / n);
  return [Math.max(0, centre - half), Math.min(1, centre + half)];
}

/** The value at fraction q of sorted values (nearest rank). */
function quantile(sorted: ArrayLike<number>, q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[index] as number;
}

function daysToPass(counts: number[], passed: number): DaysToPass | null {
  if (passed === 0) return null;
  const sorted = new Float64Array(passed);
  let at = 0;
  let sum = 0;
  counts.forEach((count, index) => {
    sorted.fill(index + 1, at, at + count);
    at += count;
    sum += count * (index + 1);
  });
  // Ranks of the median's 95% interval: n/2 -+ 1.96 sqrt(n)/2 (normal approximation to the binomial).
  const spread = 1.959963984540054 * Math.sqrt(passed) / 2;
  const lower = Math.max(1, Math.floor(passed / 2 - spread));
  const upper = Math.min(passed, Math.ceil(passed / 2 + 1 + spread));
  return {
    counts,
    mean: ratio(sum / passed)!,
    median: quantile(sorted, 0.5),
    medianInterval: [sorted[lower - 1]!, sorted[upper - 1]!],
    p10: quantile(sorted, 0.1),
    p90: quantile(sorted, 0.9),
  };
}

const FAN_SAMPLES = 20;

/**
 * Pass probability of the rules over paths of the run's days, drawn by a circular block bootstrap:
 * each block starts at a uniformly drawn day and takes `blockDays` consecutive days (wrapping at the end).
 */
export function monteCarloEvaluation(rules: EvaluationRules, days: readonly EvaluationDay[], options: MonteCarloOptions = {}): MonteCarloResult {
  const paths = options.paths ?? 10_000;
  const seed = options.seed ?? 1;
  const horizon = options.horizonDays ?? 60;
  const block = options.blockDays ?? 1;
  for (const [name, value] of [['paths', paths], ['horizonDays', horizon], ['blockDays', block]] as const) {
    if (!Number.isInteger(value) || value < 1) throw new RangeError(`${name} must be a positive whole number, got ${value}`);
  }
  const failed: Record<EvaluationFailure, number> = { maximumLossLimit: 0, dailyLossLimit: 0, maximumContracts: 0, tradingHours: 0 };
  const passCounts = new Array<number>(horizon).fill(0);
  const equityByDay = Array.from({ length: horizon + 1 }, () => new Float64Array(paths));
  const samples: number[][] = [];
  let passed = 0;
  let open = 0;
  const random = seededRandom(seed);
  const sampled = compressDays(days);
  const n = sampled.length;
  const account = new EvaluationAccount(rules, false);
  for (let p = 0; p < paths; p++) {
    account.reset();
    const sample = p < FAN_SAMPLES ? [rules.startingBalance] : undefined;
    equityByDay[0]![p] = rules.startingBalance;
    let cursor = 0;
    let left = 0;
    let status: EvaluationStep['status'];
    let filled = 0;
    for (let k = 1; k <= horizon && n > 0; k++) {
      if (left === 0) {
        cursor = Math.floor(random() * n);
        left = block;
      }
      const step = account.playDay(sampled[cursor]!);
      cursor = (cursor + 1) % n;
      left--;
      equityByDay[k]![p] = account.equity;
      sample?.push(account.equity);
      filled = k;
      if (step.status === 'passed') {
        passed++;
        passCounts[k - 1]!++;
        status = 'passed';
        break;
      }
      if (step.status === 'failed') {
        failed[step.rule!]++;
        status = 'failed';
        break;
      }
    }
    if (status === undefined) open++;
    for (let rest = filled + 1; rest <= horizon; rest++) {
      equityByDay[rest]![p] = account.equity;
      sample?.push(account.equity);
    }
    if (sample !== undefined) samples.push(sample.map(cents));
  }
  const fan: { p05: number[]; p25: number[]; p50: number[]; p75: number[]; p95: number[] } = { p05: [], p25: [], p50: [], p75: [], p95: [] };
  for (const values of equityByDay) {
    values.sort();
    fan.p05.push(cents(quantile(values, 0.05)));
    fan.p25.push(cents(quantile(values, 0.25)));
    fan.p50.push(cents(quantile(values, 0.5)));
    fan.p75.push(cents(quantile(values, 0.75)));
    fan.p95.push(cents(quantile(values, 0.95)));
  }
  const share = (count: number) => ratio(count / paths)!;
  const [low, high] = wilsonInterval(passed, paths);
  return {
    paths,
    seed,
    horizonDays: horizon,
    blockDays: block,
    sampleDays: n,
    passed,
    open,
    failed,
    passProbability: share(passed),
    passInterval: [ratio(low)!, ratio(high)!],
    failProbability: {
      maximumLossLimit: share(failed.maximumLossLimit),
      dailyLossLimit: share(failed.dailyLossLimit),
      maximumContracts: share(failed.maximumContracts),
      tradingHours: share(failed.tradingHours),
    },
    openProbability: share(open),
    daysToPass: daysToPass(passCounts, passed),
    fan: { ...fan, samples },
  };
}
