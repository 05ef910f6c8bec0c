/**
 * Would this run pass a prop-firm evaluation, and how likely is it to pass one?
 *
 * A run becomes a list of trading days, each the path of equity through the day (the turning points of the
 * worst and best equity of every bar, so intraday drawdowns survive the compression) plus what the day did
 * against the contract cap and the trading hours. `replayEvaluation` plays the days in order against the
 * rules; `monteCarloEvaluation` plays many paths of days drawn by a seeded circular block bootstrap, so
 * every sampled day replays its own intraday path and the trailing floor follows it.
 *
 * The floors are the engine's: each replay drives a `RuleBook` (src/engine/account-rules.ts), the one the backtest
 * and the risk guard use. What the replay cannot know: a day's path is measured from its opening equity,
 * so a position held overnight carries its gap into the next day, and the end-of-day trailing floor
 * follows the closing equity (the balance, when the day ends flat).
 */
import { SessionClock, TradingCalendar, type TradingDayConfig } from '../engine/trading-day.ts';
import {
  EVALUATION_FAILURE_LABELS,
  EVALUATION_FAILURES,
  evaluationAccount,
  passConditionsMet,
  type EvaluationFailure,
  type EvaluationRules,
  type PassLockMode,
  type EvaluationSource,
} from '../engine/evaluation-rules.ts';
import { RuleBook, type Breach } from '../engine/account-rules.ts';
import type { PassLockEvent } from '../engine/pass-lock.ts';
import type { Side } from '../engine/types.ts';
import { cents, ratio } from './statistics.ts';
import type { EquityCurve, ReportBars } from './report-types.ts';
import { seededRandom } from '../engine/random.ts';

// ------------------------------------------------------------------ days of a run

export interface EvaluationDay {
  /** Trading day, `YYYY-MM-DD`. */
  readonly day: string;
  /**
   * Equity minus the day's opening equity (the previous close) at the turning points of the day's path;
   * the last is the close.
   */
  readonly offsets: Float64Array;
  /** Epoch ms of each point (the bar it came from). */
  readonly times: Float64Array;
  /** The lowest and the highest offset of the day. */
  readonly low: number;
  readonly high: number;
  /** The realized balance at the day's close minus the day's opening equity (the close when flat). */
  readonly closeBalance: number;
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
  /** The realized balance after each change (each fill); without it the closing equity stands in. */
  readonly balance?: { readonly time: ArrayLike<number>; readonly balance: ArrayLike<number> };
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
export function compressPath(
  values: ArrayLike<number>,
  times: ArrayLike<number>,
): { values: number[]; times: number[] } {
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
export function evaluationDays(
  run: EvaluationRunInput,
  rules: Pick<EvaluationRules, 'maximumContracts' | 'tradingHours'>,
): EvaluationDay[] {
  const calendar = new TradingCalendar(run.tradingDay);
  const sessions =
    rules.tradingHours === undefined
      ? undefined
      : new SessionClock(rules.tradingHours, run.tradingDay?.timeZone ?? 'America/Chicago');
  const cap = rules.maximumContracts ?? Number.POSITIVE_INFINITY;
  const { time: barTime, high, low, close } = run.bars;
  const days: EvaluationDay[] = [];
  let opening = run.startingBalance;
  let lastEquity = run.startingBalance;
  let current:
    | {
        day: string;
        path: { values: number[]; times: number[] };
        traded: boolean;
        largest: number;
        contracts: number;
        hours: number;
      }
    | undefined;
  let position = 0;
  let fill = 0;
  let bar = 0;
  let balance = run.startingBalance;
  let balanceAt = 0;
  const balances = run.balance;

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
      closeBalance: balances === undefined ? lastEquity - opening : balance - opening,
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
      current = {
        day,
        path: { values: [0], times: [t] },
        traded: false,
        largest: 0,
        contracts: Number.NaN,
        hours: Number.NaN,
      };
    }
    while (fill < run.fills.length && run.fills[fill]!.time <= t) {
      const f = run.fills[fill++]!;
      position += f.side === 'buy' ? f.size : -f.size;
      if (calendar.dayOf(f.time) === day) current.traded = true;
    }
    while (balances !== undefined && balanceAt < balances.time.length && (balances.time[balanceAt] as number) <= t) {
      balance = balances.balance[balanceAt++] as number;
    }
    while (bar < barTime.length && (barTime[bar] as number) < t) bar++;
    const size = Math.abs(position);
    if (size > current.largest) current.largest = size;
    if (size > cap && Number.isNaN(current.contracts)) current.contracts = t;
    if (size > 0 && sessions !== undefined && Number.isNaN(current.hours) && sessions.phase(t) !== 'open')
      current.hours = t;
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
  /** Equity (balance + open PnL) and realized balance at the last day's close. */
  equity: number;
  balance: number;
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
    this.balance = rules.startingBalance;
  }

  /** A fresh account under the same rules. */
  reset(): void {
    this.book.reset();
    this.equity = this.rules.startingBalance;
    this.balance = this.rules.startingBalance;
    this.tradingDays = 0;
    this.dayNumber = 0;
    this.bestDay = Number.NEGATIVE_INFINITY;
    this.finished = undefined;
    this.broken.length = 0;
  }

  /** Realized profit: what the target and the consistency rule measure. */
  get profit(): number {
    return this.balance - this.rules.startingBalance;
  }

  /** Whether the targets are met now: profit, trading days and consistency. */
  targetsMet(): boolean {
    return passConditionsMet(this.rules, this);
  }

  /**
   * One trading day. The day's path is the run's own, with what the engine did in it (a daily loss limit
   * flattens and pauses the day, and the path shows it), so it is replayed as it is; only a broken
   * maximum loss limit (or a daily one that fails the evaluation) ends it, at the floor reached.
   */
  playDay(day: EvaluationDay): EvaluationStep {
    if (this.finished !== undefined) throw new Error('the evaluation is already finished');
    this.dayNumber++;
    const open = this.equity;
    const startBalance = this.balance;
    // The engine's day starts from the balance: the daily floor and the end-of-day high are balances.
    this.book.startDay(day.day, startBalance);
    const { offsets, times } = day;
    const hardDaily = this.rules.dailyLossLimit?.breach === 'failsEvaluation';
    let failure: { rule: EvaluationFailure; time: number; equity: number } | undefined;
    const quiet = !this.exact && !this.book.couldBreach(open + day.low, open + day.high);
    if (quiet) this.book.evaluate(times[0]!, startBalance, open + day.low, open + day.high, this.onBreach);
    for (let k = 0; k < offsets.length && !quiet; k++) {
      const value = open + offsets[k]!;
      this.book.evaluate(times[k]!, startBalance, value, value, this.onBreach);
      if (this.broken.length === 0) continue;
      const maximum = this.broken.some((b) => b.rule === 'maximumLossLimit');
      const daily = hardDaily && this.broken.some((b) => b.rule === 'dailyLossLimit');
      this.broken.length = 0;
      if (!maximum && !daily) continue;
      // Both at one point: a fall reaches the higher floor first (and a compressed path keeps only its low).
      const dailyFloor = this.book.dailyLossFloor();
      const maximumFloor = this.book.maximumLossFloor();
      const dailyFirst = daily && (!maximum || dailyFloor > maximumFloor);
      failure = dailyFirst
        ? { rule: 'dailyLossLimit', time: times[k]!, equity: dailyFloor }
        : { rule: 'maximumLossLimit', time: times[k]!, equity: maximumFloor };
      break;
    }
    // The cap and the hours break at their own instants: the earliest broken rule is the one that failed.
    if (day.contractsBreach < (failure?.time ?? Number.POSITIVE_INFINITY)) {
      failure = { rule: 'maximumContracts', time: day.contractsBreach, equity: Number.NaN };
    }
    if (day.hoursBreach < (failure?.time ?? Number.POSITIVE_INFINITY)) {
      failure = { rule: 'tradingHours', time: day.hoursBreach, equity: Number.NaN };
    }
    if (day.traded) this.tradingDays++;
    if (failure !== undefined) {
      // The account closes at the floor it reached (where the firm liquidates), the same for a whole
      // path and its compressed one; a cap or hours breach leaves it where the day closed.
      this.equity = Number.isNaN(failure.equity) ? open + offsets[offsets.length - 1]! : failure.equity;
      this.balance = this.equity;
      this.finished = 'failed';
      return { status: 'failed', rule: failure.rule, time: failure.time };
    }
    this.equity = open + offsets[offsets.length - 1]!;
    this.balance = open + day.closeBalance;
    if (this.balance - startBalance > this.bestDay) this.bestDay = this.balance - startBalance;
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
    gaps.push(
      `best day ${money(account.bestDay)} is ${Math.round((account.bestDay / profit) * 100)}% of the profit (must be below ${Math.round(rules.consistency.bestDayShare * 100)}%)`,
    );
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
    closest.push(
      Number.isFinite(approach.headroom)
        ? { rule, minRoom: cents(approach.headroom), time: approach.time }
        : { rule, minRoom: 0, time: null },
    );
  };
  limit('maximumLossLimit');
  if (rules.dailyLossLimit !== undefined) limit('dailyLossLimit');
  closest.push({
    rule: 'profitTarget',
    minRoom: cents(Math.max(0, rules.profitTarget - (days.length === 0 ? 0 : maxProfit))),
    time: maxProfitTime,
  });

  const status = step.status ?? 'open';
  const when = last === undefined ? '' : ` on trading day ${account.dayNumber} (${last.day})`;
  const summary =
    status === 'passed'
      ? `passed${when}: profit ${money(account.profit)} of ${money(rules.profitTarget)}, ${account.tradingDays} trading days`
      : status === 'failed'
        ? `failed${when}: ${EVALUATION_FAILURE_LABELS[step.rule!]} broken at ${new Date(step.time!).toISOString()}`
        : days.length === 0
          ? 'had no trading day'
          : `did not pass in ${account.dayNumber} days: ${missing(account)}`;
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
  const spread = (1.959963984540054 * Math.sqrt(passed)) / 2;
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
export function monteCarloEvaluation(
  rules: EvaluationRules,
  days: readonly EvaluationDay[],
  options: MonteCarloOptions = {},
): MonteCarloResult {
  const paths = options.paths ?? 10_000;
  const seed = options.seed ?? 1;
  const horizon = options.horizonDays ?? 60;
  const block = options.blockDays ?? 1;
  for (const [name, value] of [
    ['paths', paths],
    ['horizonDays', horizon],
    ['blockDays', block],
  ] as const) {
    if (!Number.isInteger(value) || value < 1)
      throw new RangeError(`${name} must be a positive whole number, got ${value}`);
  }
  const failed: Record<EvaluationFailure, number> = {
    maximumLossLimit: 0,
    dailyLossLimit: 0,
    maximumContracts: 0,
    tradingHours: 0,
  };
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
  const fan: { p05: number[]; p25: number[]; p50: number[]; p75: number[]; p95: number[] } = {
    p05: [],
    p25: [],
    p50: [],
    p75: [],
    p95: [],
  };
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

// ------------------------------------------------------------------ both, for a report

export interface RunEvaluation {
  /** The rules, with their source, reading date and note when they came from a preset. */
  readonly rules: EvaluationSource;
  readonly outcome: EvaluationOutcome;
  /** Null when the run has no trading day to draw from. */
  readonly monteCarlo: MonteCarloResult | null;
  /** The pass-lock the run traded under (evaluation.passLock) and when it engaged; absent: none asked. */
  readonly passLock?: RunPassLock;
}

export interface RunPassLock {
  readonly mode: PassLockMode;
  /** The engine's event when the lock engaged; null when the run never met the pass conditions. */
  readonly engaged: PassLockEvent | null;
}

/** The pass-lock in one line: engaged when and why, or not. */
export function passLockLine(lock: RunPassLock): string {
  if (lock.mode === 'off') return 'Pass-lock: off (the account trades on after passing)';
  if (lock.engaged === null) return `Pass-lock (${lock.mode}): not engaged, the pass conditions were never met`;
  return `Pass-lock (${lock.mode}): engaged at ${new Date(lock.engaged.time).toISOString()} (trading day ${lock.engaged.tradingDay}): ${lock.engaged.message}`;
}

/** The run's own evaluation and its Monte Carlo pass probability. */
export function evaluateRun(
  rules: EvaluationSource,
  run: EvaluationRunInput,
  options: MonteCarloOptions = {},
  passLock?: RunPassLock,
): RunEvaluation {
  const days = evaluationDays(run, rules);
  const outcome = replayEvaluation(rules, days);
  // After its maximum loss limit broke the run's account traded no more: those days say nothing of the strategy.
  const trading = outcome.rule === 'maximumLossLimit' ? days.slice(0, outcome.dayNumber!) : days;
  return {
    rules,
    outcome,
    monteCarlo: trading.length === 0 ? null : monteCarloEvaluation(rules, trading, options),
    ...(passLock === undefined ? {} : { passLock }),
  };
}

/** A probability in percent: one decimal, two below 1% (so 0.04% does not read as 0). */
function percent(fraction: number): string {
  const value = fraction * 100;
  return `${value.toFixed(value > 0 && value < 1 ? 2 : 1)}%`;
}

/** The Monte Carlo in one line: pass probability with its interval, failures by rule, days to pass. */
export function monteCarloLine(mc: MonteCarloResult): string {
  const fails = EVALUATION_FAILURES.filter((rule) => mc.failed[rule] > 0).map(
    (rule) => `${EVALUATION_FAILURE_LABELS[rule]} ${percent(mc.failProbability[rule])}`,
  );
  const parts = [
    `pass probability ${percent(mc.passProbability)} (95% CI ${percent(mc.passInterval[0])} to ${percent(mc.passInterval[1])})`,
    `${mc.paths} paths of up to ${mc.horizonDays} days drawn from ${mc.sampleDays} (seed ${mc.seed}, blocks of ${mc.blockDays})`,
    fails.length === 0 ? 'no failure' : `failed by ${fails.join(', ')}`,
  ];
  if (mc.open > 0) parts.push(`still open after ${mc.horizonDays} days ${percent(mc.openProbability)}`);
  if (mc.daysToPass !== null) {
    const d = mc.daysToPass;
    parts.push(
      `days to pass: median ${d.median} (95% CI ${d.medianInterval[0]} to ${d.medianInterval[1]}), 10% to 90% ${d.p10} to ${d.p90}`,
    );
  }
  return parts.join('; ');
}

/** The terminal's lines of an evaluation. */
export function evaluationLines(evaluation: RunEvaluation): string[] {
  const lines = [`Evaluation: ${evaluation.rules.name}: ${evaluation.outcome.summary}`];
  if (evaluation.monteCarlo !== null) lines.push(`  Monte Carlo: ${monteCarloLine(evaluation.monteCarlo)}`);
  if (evaluation.passLock !== undefined) lines.push(`  ${passLockLine(evaluation.passLock)}`);
  if (evaluation.rules.readOn !== undefined) {
    lines.push(
      `  Rules as read on ${evaluation.rules.readOn} (the preset names its sources): check the firm's current rules.`,
    );
  }
  return lines;
}

/** evaluation.json: the rules, the run's outcome (times in ISO 8601) and the Monte Carlo. */
export function evaluationJson(evaluation: RunEvaluation): unknown {
  const iso = (time: number | null) => (time === null || Number.isNaN(time) ? null : new Date(time).toISOString());
  const { outcome } = evaluation;
  return {
    rules: evaluation.rules,
    outcome: {
      ...outcome,
      time: iso(outcome.time),
      closest: outcome.closest.map((a) => ({ ...a, time: iso(a.time) })),
    },
    monteCarlo: evaluation.monteCarlo,
    ...(evaluation.passLock === undefined
      ? {}
      : {
          passLock: {
            mode: evaluation.passLock.mode,
            engaged:
              evaluation.passLock.engaged === null
                ? null
                : { ...evaluation.passLock.engaged, time: iso(evaluation.passLock.engaged.time) },
          },
        }),
  };
}
