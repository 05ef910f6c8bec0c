/**
 * Checks a `ReportInput` before anything is computed from it, so a malformed run fails with every problem
 * named instead of producing plausible-looking numbers (a shorter equity column would silently cut the
 * drawdown; an unsorted time column would split trading days wrongly).
 */
import { TradingCalendar } from '../engine/trading-day.ts';
import { tradeReader } from '../engine/trade-columns.ts';
import type { ReportInput } from './report-types.ts';
import { TicklineError } from '../engine/errors.ts';

export class ReportInputError extends TicklineError {
  override readonly name = 'ReportInputError';
  // The commands build a report's input themselves: an invalid one is a bug of the run, not the user's.
  readonly kind = 'runtime';
  readonly code = 'REPORT_INPUT_INVALID';
  constructor(readonly problems: readonly string[]) {
    super(`invalid report input:\n- ${problems.join('\n- ')}`);
  }
}

const MAX_PROBLEMS = 20;
/** The fields of a trade that must be finite numbers. */
const TRADE_NUMBERS = ['entryTime', 'exitTime', 'entryPrice', 'exitPrice', 'pnl', 'fees'] as const;
const VALID = new WeakSet<ReportInput>();
const VALID_BARS = new WeakSet<ReportInput['bars']>();
/** Time columns of checked bars: increasing, and never written after they are made, as bars are. */
const ORDERED_TIMES = new WeakSet<ArrayLike<number>>();

/**
 * Whether `time` is the time column of bars this process checked: its times only go forward, so a search
 * may skip over them (the statistics' day ends of a sweep's runs, whose curves are timed by their bars).
 */
export function isCheckedBarTimes(time: ArrayLike<number>): boolean {
  return ORDERED_TIMES.has(time);
}

function checkColumn(
  problems: string[],
  name: string,
  column: ArrayLike<number>,
  length: number,
  order: 'increasing' | 'non-decreasing' | 'none',
): void {
  if (column.length !== length) {
    problems.push(`${name} has ${column.length} values, expected ${length}`);
    return;
  }
  const values = column instanceof Float64Array ? column : Float64Array.from(column);
  const bad = firstBadValue(values, length, order === 'increasing', order !== 'none');
  if (bad < 0) return;
  const value = values[bad]!;
  if (!(value > Number.NEGATIVE_INFINITY && value < Number.POSITIVE_INFINITY))
    problems.push(`${name}[${bad}] is not a finite number (${value})`);
  else
    problems.push(
      `${name}[${bad}] = ${value} is not after ${name}[${bad - 1}] = ${values[bad - 1]} (oldest first, ${order})`,
    );
}

/**
 * The index of the first value that is not finite or out of order, or -1. The walk is alone in its
 * function, over one column type: with the problem messages inside it, V8 threw away its optimized code
 * on the next column and checked a 10 M-bar run's columns mostly in the interpreter (half a second).
 */
function firstBadValue(values: Float64Array, length: number, strict: boolean, ordered: boolean): number {
  let previous = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < length; i++) {
    const value = values[i]!;
    // NaN fails both comparisons, so one test covers NaN and both infinities.
    if (!(value > Number.NEGATIVE_INFINITY && value < Number.POSITIVE_INFINITY)) return i;
    if (ordered && i > 0 && (strict ? value <= previous : value < previous)) return i;
    previous = value;
  }
  return -1;
}

/** Throws a `ReportInputError` listing every problem found (up to 20). */
export function validateReportInput(input: ReportInput): void {
  // The statistics and the report each check the run they are given, usually the same one: a 10 M-bar
  // run is checked once, not twice (its object and columns are never written after the run).
  if (VALID.has(input)) return;
  const problems: string[] = [];
  if (!Number.isFinite(input.startingBalance))
    problems.push(`startingBalance is not a finite number (${input.startingBalance})`);
  if (!(input.contract.tickSize > 0)) problems.push(`contract.tickSize must be positive (${input.contract.tickSize})`);
  if (!(input.contract.tickValue > 0))
    problems.push(`contract.tickValue must be positive (${input.contract.tickValue})`);
  const startHour = input.tradingDayStartHour;
  if (startHour !== undefined && !(Number.isInteger(startHour) && startHour >= 0 && startHour <= 23)) {
    problems.push(`tradingDayStartHour must be an integer from 0 to 23 (${startHour})`);
  }
  if (input.tradingDay !== undefined) {
    try {
      new TradingCalendar(input.tradingDay);
    } catch (error) {
      problems.push(`tradingDay: ${(error as Error).message}`);
    }
  }

  const bars = input.bars.time.length;
  // A sweep's runs share one history: its columns are checked once, not once a run.
  if (!VALID_BARS.has(input.bars)) {
    const before = problems.length;
    checkColumn(problems, 'bars.time', input.bars.time, bars, 'increasing');
    for (const column of ['open', 'high', 'low', 'close'] as const) {
      checkColumn(problems, `bars.${column}`, input.bars[column], bars, 'none');
    }
    if (problems.length === before) {
      VALID_BARS.add(input.bars);
      ORDERED_TIMES.add(input.bars.time);
    }
  }
  const points = input.equity.time.length;
  // Checked bars' own time column (a backtest's curve shares it) was checked already, and more strictly.
  if (!ORDERED_TIMES.has(input.equity.time))
    checkColumn(problems, 'equity.time', input.equity.time, points, 'non-decreasing');
  checkColumn(problems, 'equity.equity', input.equity.equity, points, 'none');

  let i = 0;
  for (const reader = tradeReader(input.trades); reader.next(); ) {
    const trade = reader.row;
    // Each field read by its name first: a field read by a key held in a variable made a heap object of
    // its number, six a trade.
    const finite =
      Number.isFinite(trade.entryTime) &&
      Number.isFinite(trade.exitTime) &&
      Number.isFinite(trade.entryPrice) &&
      Number.isFinite(trade.exitPrice) &&
      Number.isFinite(trade.pnl) &&
      Number.isFinite(trade.fees);
    if (!finite)
      for (const field of TRADE_NUMBERS) {
        if (!Number.isFinite(trade[field]))
          problems.push(`trades[${i}].${field} is not a finite number (${trade[field]})`);
      }
    if (!(Number.isInteger(trade.size) && trade.size > 0))
      problems.push(`trades[${i}].size must be a positive integer (${trade.size})`);
    if (trade.exitTime < trade.entryTime)
      problems.push(`trades[${i}] exits (${trade.exitTime}) before it enters (${trade.entryTime})`);
    if (trade.side !== 'buy' && trade.side !== 'sell')
      problems.push(`trades[${i}].side must be 'buy' or 'sell' (${String(trade.side)})`);
    i++;
  }
  (input.overlays ?? []).forEach((overlay, i) => {
    const every = overlay.barsPerValue ?? 1;
    if (!(Number.isInteger(every) && every >= 1))
      problems.push(`overlays[${i}] (${overlay.name}).barsPerValue must be a positive integer (${every})`);
    else if (overlay.values.length !== Math.ceil(bars / every))
      problems.push(
        `overlays[${i}] (${overlay.name}) has ${overlay.values.length} values, expected ${every === 1 ? `one per bar (${bars})` : `one per ${every} bars (${Math.ceil(bars / every)})`}`,
      );
  });
  input.violations.forEach((violation, i) => {
    if (!Number.isFinite(violation.time))
      problems.push(`violations[${i}].time is not a finite number (${violation.time})`);
    if (![3, 5, 6].includes(violation.type))
      problems.push(`violations[${i}].type must be 3, 5 or 6 (${violation.type})`);
  });

  if (problems.length > 0) {
    const shown = problems.slice(0, MAX_PROBLEMS);
    if (problems.length > MAX_PROBLEMS) shown.push(`... and ${problems.length - MAX_PROBLEMS} more`);
    throw new ReportInputError(shown);
  }
  VALID.add(input);
}
