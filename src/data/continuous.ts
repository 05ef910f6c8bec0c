/**
 * Continuous futures histories: which contract month each bar belongs to, where the history rolls from
 * one month to the next and where it has gaps, and the back-adjusted view of the prices the strategies
 * read (a roll's price difference is not a market move, so it must not be a signal).
 *
 * A history of a root (`contract: ES`) is a list of segments, one per month, each from the time of its
 * first bar; a segment lasts until the next one starts. The engine trades one id for the whole run and
 * the runner (run.ts) breaks the replay at every roll and every long gap, where it rolls or flattens.
 */
import { monthLabel, type ContractCalendar, type ContractMonth, type RootSpec } from '../market/contract-months.ts';
import { bucketStart } from '../engine/timeframe.ts';
import type { BarColumns, Timeframe } from '../engine/types.ts';
import { allocateColumns, lowerBound } from './columns.ts';
import { TicklineError } from '../engine/errors.ts';

/** One contract month of a continuous history, from the time of its first bar on. */
export interface HistorySegment {
  /** Epoch ms of the month's first bar. */
  readonly start: number;
  /** Gateway id, `CON.F.US.EP.H14`. */
  readonly contractId: string;
}

/** How the strategies see prices across rolls: `difference` and `ratio` back-adjust, `none` shows real prices. */
export type AdjustMode = 'difference' | 'ratio' | 'none';

export class ContractLabelError extends TicklineError {
  override readonly name = 'ContractLabelError';
  readonly kind = 'input';
  readonly code = 'CONTRACT_LABEL';
}

/**
 * The month a data file's `contract` cell names: `201403` (YYYYMM, as exports write it), a name with a
 * one- or two-digit year (`ESH4`, `ESH14`, read near `on`), or a gateway id (`CON.F.US.EP.H14`).
 */
export function monthOfLabel(label: string, root: RootSpec, calendar: ContractCalendar, on: number): ContractMonth {
  const text = label.trim().toUpperCase();
  const yyyymm = /^(\d{4})(\d{2})$/.exec(text);
  if (yyyymm) {
    const month = { year: Number(yyyymm[1]), month: Number(yyyymm[2]) };
    if (month.month >= 1 && month.month <= 12 && calendar.inCycle(root, month)) return month;
  } else {
    const found = calendar.resolve(text, on);
    if (found !== undefined && found.spec.root === root.root) return found.month;
  }
  throw new ContractLabelError(
    `contract "${label}" is not a ${root.root} month (cycle ${root.cycle}): write YYYYMM (201403), a name (${root.root}H4) or an id (CON.F.US.${root.symbol}.H14)`,
  );
}

/** Segments from a file's contract column: one per change of label, at the bar where it changes. */
export function segmentsFromLabels(
  bars: BarColumns,
  labels: readonly { readonly contract: string; readonly from: number }[],
  root: RootSpec,
  calendar: ContractCalendar,
): HistorySegment[] {
  const segments: HistorySegment[] = [];
  for (const label of labels) {
    if (label.from >= bars.time.length) continue;
    const start = bars.time[label.from]!;
    const month = monthOfLabel(label.contract, root, calendar, start);
    const contractId = calendar.contract(root, month).id;
    if (segments.at(-1)?.contractId !== contractId) segments.push({ start, contractId });
  }
  return segments;
}

/**
 * Segments by the calendar (a file without a contract column, or gateway history): each bar belongs to
 * the root's front month on its day, the front moving `daysBeforeExpiry` business days before expiry.
 */
export function frontMonthSegments(
  bars: BarColumns,
  root: RootSpec,
  calendar: ContractCalendar,
  daysBeforeExpiry?: number,
): HistorySegment[] {
  const segments: HistorySegment[] = [];
  const days = daysBeforeExpiry ?? root.rollBusinessDays;
  // Bars before the current month's roll date share its month: only the first bar after it asks the calendar.
  let rollDate = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < bars.time.length; i++) {
    const t = bars.time[i]!;
    if (t < rollDate) continue;
    const month = calendar.frontMonth(root, t, days);
    const contract = calendar.contract(root, month);
    rollDate = calendar.rollDate(root, month, days);
    if (segments.at(-1)?.contractId !== contract.id) segments.push({ start: t, contractId: contract.id });
  }
  return segments;
}

/** One contract month's own bars, for a roll by volume. */
export interface MonthBars {
  readonly contractId: string;
  /** Epoch ms of the month's expiry: the months roll in this order. */
  readonly expiry: number;
  readonly bars: BarColumns;
}

/**
 * One history from several months' own bars, rolled by volume: each trading day is taken from the front
 * month, and the front moves to a later month after a trading day on which that month traded more
 * contracts than the front (the most traded of them when several did). A day's volume is known only when
 * the day ends, so the roll takes effect from the next trading day: no bar is chosen by volume still to
 * come. The front never moves back to an earlier month; a front month without bars on a day gives way to
 * the next month that has some. The first day's front is the month nearest expiry that trades on it.
 */
export function volumeRolledHistory(
  months: readonly MonthBars[],
  dayOf: (time: number) => string,
): { bars: BarColumns; segments: HistorySegment[] } {
  const ordered = [...months].sort((a, b) => a.expiry - b.expiry);
  const byDay = ordered.map((m) => tradingDays(m.bars, dayOf));
  const days = [...new Set(byDay.flatMap((d) => [...d.keys()]))].sort();
  const pieces: { month: number; from: number; to: number }[] = [];
  let front = 0;
  for (const day of days) {
    const was = front;
    while (front < ordered.length && !byDay[front]!.has(day)) front++;
    if (front === ordered.length) {
      // Neither the front nor a later month has bars this day (only an earlier one): the day is left out.
      front = was;
      continue;
    }
    const today = byDay[front]!.get(day)!;
    pieces.push({ month: front, from: today.from, to: today.to });
    let most = today.volume;
    let next = front;
    for (let k = front + 1; k < ordered.length; k++) {
      const volume = byDay[k]!.get(day)?.volume ?? 0;
      if (volume > most) {
        most = volume;
        next = k;
      }
    }
    front = next;
  }
  const length = pieces.reduce((n, p) => n + p.to - p.from, 0);
  const bars = allocateColumns(length);
  const segments: HistorySegment[] = [];
  let at = 0;
  for (const piece of pieces) {
    const source = ordered[piece.month]!;
    if (segments.at(-1)?.contractId !== source.contractId)
      segments.push({ start: source.bars.time[piece.from]!, contractId: source.contractId });
    for (const key of ['time', 'open', 'high', 'low', 'close', 'volume'] as const)
      bars[key].set(source.bars[key].subarray(piece.from, piece.to), at);
    at += piece.to - piece.from;
  }
  return { bars, segments };
}

/** A month's bars by trading day: the range of its bars and the contracts they traded. */
function tradingDays(
  bars: BarColumns,
  dayOf: (time: number) => string,
): Map<string, { from: number; to: number; volume: number }> {
  const days = new Map<string, { from: number; to: number; volume: number }>();
  let current: { from: number; to: number; volume: number } | undefined;
  let currentDay = '';
  for (let i = 0; i < bars.time.length; i++) {
    const day = dayOf(bars.time[i]!);
    if (current === undefined || day !== currentDay) {
      current = { from: i, to: i, volume: 0 };
      currentDay = day;
      days.set(day, current);
    }
    current.to = i + 1;
    current.volume += bars.volume[i]!;
  }
  return days;
}

/** The front-month windows of a root over [from, to): what a gateway history fetches month by month. */
export function frontMonthWindows(
  root: RootSpec,
  calendar: ContractCalendar,
  from: number,
  to: number,
  daysBeforeExpiry?: number,
): { contractId: string; name: string; from: number; to: number }[] {
  const windows: { contractId: string; name: string; from: number; to: number }[] = [];
  for (let start = from; start < to; ) {
    const month = calendar.frontMonth(root, start, daysBeforeExpiry);
    const contract = calendar.contract(root, month);
    const end = Math.min(to, calendar.rollDate(root, month, daysBeforeExpiry ?? root.rollBusinessDays));
    windows.push({ contractId: contract.id, name: contract.name, from: start, to: end });
    start = end;
  }
  return windows;
}

/** The `ESH4`-style name of a month id (`CON.F.US.EP.H14`), for messages. */
export function shortName(contractId: string, calendar: ContractCalendar): string {
  const contract = calendar.byId(contractId);
  return contract === undefined ? contractId : `${contract.spec.root}${monthLabel(contract.month)}`;
}

/** Where the replay stops: before bar `index`, for a roll, a gap, or both. */
export interface HistoryBreak {
  /** First bar after the break. */
  readonly index: number;
  /** The month change at this bar, when there is one. */
  readonly roll?: { readonly from: string; readonly to: string };
  /** Time without bars between the last bar's end and this bar's start (ms), when longer than the gap limit. */
  readonly gapMs?: number;
}

export interface ContinuityPlan {
  readonly breaks: readonly HistoryBreak[];
  /** Per segment of `segments`: what the strategies' view adds (difference) or multiplies by (ratio). */
  readonly offsets: Float64Array;
  readonly ratios: Float64Array;
  /** Segment index of each piece between breaks (pieces: [0, b0), [b0, b1), ..., [bk, n)). */
  readonly pieceSegments: Int32Array;
}

/**
 * Time without bars between a bar starting at `previous` and the next starting at `next`: a gap when it is
 * longer than the gap limit (the same rule for a whole history and a streamed one).
 */
export function idleBetween(previous: number, next: number, barMs: number): number {
  return next - (previous + barMs);
}

/**
 * Breaks at every change of month and at every gap longer than `gapLimitMs` (the runner flattens there
 * unless gaps are configured not to), and the back-adjustment of each segment: the latest month is shown as it is, each
 * earlier one
 * moved by the price differences of the rolls after it, measured from the old month's last close to the
 * new month's first open. A roll that falls in a gap is not adjusted: what changed while there was no
 * data cannot be told apart from the market's own move.
 */
export function planContinuity(
  bars: BarColumns,
  segments: readonly HistorySegment[],
  barMs: number,
  gapLimitMs: number,
): ContinuityPlan {
  let made = plans.get(bars.time);
  const same = made?.find(
    (p) => p.barMs === barMs && p.gapLimitMs === gapLimitMs && sameSegments(p.segments, segments),
  );
  if (same !== undefined) return same.plan;
  const plan = makePlan(bars, segments, barMs, gapLimitMs);
  if (made === undefined) {
    made = [];
    plans.set(bars.time, made);
  }
  if (made.length === KEPT_PLANS) made.shift();
  made.push({ segments: [...segments], barMs, gapLimitMs, plan });
  return plan;
}

/**
 * The plans made for a history, by its bars' time column (bars are never written once read): a sweep's 64
 * runs replay the same bars with the same segments, and scanning 1 M bars for them was 4% of each run.
 * A plan is never written either: every run reads the same one.
 */
const plans = new WeakMap<
  Float64Array,
  { segments: readonly HistorySegment[]; barMs: number; gapLimitMs: number; plan: ContinuityPlan }[]
>();
/** Plans kept per history: one a timeframe and gap limit a sweep tries, a few at most. */
const KEPT_PLANS = 4;

function sameSegments(a: readonly HistorySegment[], b: readonly HistorySegment[]): boolean {
  if (a.length !== b.length) return false;
  for (let k = 0; k < a.length; k++)
    if (a[k]!.start !== b[k]!.start || a[k]!.contractId !== b[k]!.contractId) return false;
  return true;
}

function makePlan(
  bars: BarColumns,
  segments: readonly HistorySegment[],
  barMs: number,
  gapLimitMs: number,
): ContinuityPlan {
  const n = bars.time.length;
  const breaks: HistoryBreak[] = [];
  const pieceSegments: number[] = [];
  let segment = segmentIndexAt(segments, bars.time[0] ?? 0);
  pieceSegments.push(segment);
  /** Per segment boundary k (between segment k - 1 and k, both in the data): the adjustment step, or undefined. */
  const steps = new Map<number, { gap: number; ratio: number }>();
  let next = segment + 1;
  for (let i = 1; i < n; i++) {
    const t = bars.time[i]!;
    let roll: HistoryBreak['roll'];
    if (next < segments.length && t >= segments[next]!.start) {
      let to = next;
      while (to + 1 < segments.length && t >= segments[to + 1]!.start) to++;
      roll = { from: segments[segment]!.contractId, to: segments[to]!.contractId };
      segment = to;
      next = to + 1;
    }
    const idle = idleBetween(bars.time[i - 1]!, t, barMs);
    const gap = idle > gapLimitMs;
    if (roll === undefined && !gap) continue;
    breaks.push({ index: i, ...(roll === undefined ? {} : { roll }), ...(gap ? { gapMs: idle } : {}) });
    pieceSegments.push(segment);
    if (roll !== undefined && !gap) {
      steps.set(segment, { gap: bars.open[i]! - bars.close[i - 1]!, ratio: bars.open[i]! / bars.close[i - 1]! });
    }
  }
  const offsets = new Float64Array(Math.max(1, segments.length));
  const ratios = new Float64Array(Math.max(1, segments.length)).fill(1);
  for (let k = segments.length - 2; k >= 0; k--) {
    const step = steps.get(k + 1);
    offsets[k] = offsets[k + 1]! + (step?.gap ?? 0);
    ratios[k] = ratios[k + 1]! * (step?.ratio ?? 1);
  }
  return { breaks, offsets, ratios, pieceSegments: Int32Array.from(pieceSegments) };
}

/** Index of the segment holding time `t` (the first one for times before it). */
export function segmentIndexAt(segments: readonly HistorySegment[], t: number): number {
  let lo = 0;
  let hi = segments.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >>> 1;
    if (segments[mid]!.start <= t) lo = mid;
    else hi = mid - 1;
  }
  return Math.max(0, lo);
}

/**
 * Before aggregating a continuous history to a coarser timeframe: each roll moved back to the start of
 * the bucket it falls in, and the old month's bars in that bucket left out, so no aggregated bar mixes two
 * months (its prices would hold the roll's difference). At most one bucket of the old month is lost at
 * each roll; rolls on a bucket boundary (a day's data switching at its start) lose nothing.
 */
export function alignToBuckets(
  bars: BarColumns,
  segments: readonly HistorySegment[],
  timeframe: Timeframe,
): { bars: BarColumns; segments: HistorySegment[] } {
  const moved = segments.map((s, k) => (k === 0 ? s : { ...s, start: bucketStart(s.start, timeframe) }));
  // A month whose bars all fall in the bucket where the next one starts is left out whole.
  const kept = moved.filter((s, k) => k + 1 === moved.length || moved[k + 1]!.start > s.start);
  /** Old-month bars to leave out, as merged index ranges, oldest first. */
  const drop: Array<[number, number]> = [];
  for (let k = 1; k < segments.length; k++) {
    const from = lowerBound(bars.time, moved[k]!.start);
    const to = lowerBound(bars.time, segments[k]!.start);
    if (to <= from) continue;
    const last = drop.at(-1);
    if (last !== undefined && from <= last[1]) last[1] = Math.max(last[1], to);
    else drop.push([from, to]);
  }
  if (drop.length === 0) return { bars, segments: kept };
  const dropped = drop.reduce((n, [from, to]) => n + to - from, 0);
  const out = allocateColumns(bars.time.length - dropped);
  let at = 0;
  let cursor = 0;
  const copy = (from: number, to: number) => {
    for (const key of ['time', 'open', 'high', 'low', 'close', 'volume'] as const)
      out[key].set(bars[key].subarray(from, to), at);
    at += to - from;
  };
  for (const [from, to] of drop) {
    copy(cursor, from);
    cursor = to;
  }
  copy(cursor, bars.time.length);
  return { bars: out, segments: kept };
}
