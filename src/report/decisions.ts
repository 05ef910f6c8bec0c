/**
 * What the risk guard decided, in words a person reads without opening a JSON file: counts by reason
 * code, the first occurrence of each code, the terminal's one-line tally (`Rejected 446: TICK_MISALIGNED
 * 2, DAILY_LOSS_LIMIT 444`) and a warning when a strategy stopped trading because every intent it sent
 * from some day on was refused. Pure functions of the decision records; nothing reads the clock.
 */
import { isoDate, TradingCalendar } from '../engine/trading-day.ts';
import type { ReasonCode } from '../engine/risk.ts';
import { PriceGrid } from '../engine/ticks.ts';
import type { Intent } from '../engine/types.ts';
import { tradingDayConfig } from './statistics.ts';
import type { DecisionRecord, DecisionSequence, ReportInput, Statistics } from './report-types.ts';

export type DecisionOutcome = 'accepted' | 'adjusted' | 'rejected';

export interface CodeCount {
  readonly code: ReasonCode;
  readonly count: number;
}

/** The first decision of one reason code (rejected or adjusted). */
export interface FirstDecision {
  readonly code: ReasonCode;
  readonly outcome: 'adjusted' | 'rejected';
  readonly time: number;
  readonly strategyId: string;
  /** The intent in words, prices as decimals. */
  readonly intent: string;
  readonly message: string;
  /** How many decisions had this code and outcome over the run. */
  readonly count: number;
}

/** A strategy whose intents were all refused from some point on, past the trading day it last got one through. */
export interface StoppedTrading {
  readonly strategyId: string;
  /** Time of the first refused intent of the final run of refusals. */
  readonly since: number;
  /** Its trading day (`YYYY-MM-DD`), and which day of the run that is (1-based; null when unknown). */
  readonly day: string;
  readonly dayNumber: number | null;
  readonly days: number;
  /** Time of the strategy's last accepted decision; null when none ever passed. */
  readonly lastAccepted: number | null;
  /** Intents refused from `since` to the end, by code (most frequent first). */
  readonly rejected: number;
  readonly codes: readonly CodeCount[];
  /** The guard's message of the first of them. */
  readonly message: string;
}

export interface DecisionSummary {
  readonly total: number;
  readonly accepted: number;
  readonly adjustedTotal: number;
  /** Codes in the order they first occurred. */
  readonly adjusted: readonly CodeCount[];
  readonly rejectedTotal: number;
  readonly rejected: readonly CodeCount[];
  readonly firsts: readonly FirstDecision[];
  readonly stopped: readonly StoppedTrading[];
}

export function outcomeOf(record: Pick<DecisionRecord, 'result'>): DecisionOutcome {
  if (!record.result.accepted) return 'rejected';
  return record.result.adjusted === undefined ? 'accepted' : 'adjusted';
}

/** The reason code of a refusal or adjustment; undefined for a plain acceptance. */
export function codeOf(record: Pick<DecisionRecord, 'result'>): ReasonCode | undefined {
  return record.result.accepted ? record.result.adjusted : record.result.code;
}

/** A price of an intent as a decimal: ticks converted with the grid, or as written when the intent is in prices. */
export function intentPrice(intent: Intent, value: number, grid: PriceGrid | undefined): string {
  const inPrices = (intent.kind === 'place' || intent.kind === 'modify') && intent.unit === 'price';
  if (inPrices || grid === undefined) return String(value);
  if (Number.isInteger(value)) return grid.toPrice(value).toFixed(grid.decimals);
  // A misaligned tick count: show the decimal it stands for, with room for the stray digits.
  return String(Number((value * grid.tickSize).toFixed(grid.decimals + 4)));
}

/** `place buy 1 limit 1670.13`, `place sell 1 stop-limit stop 4499.50 limit 4499.00`, `target -1`, `modify o-3 stop 4499.50`, `cancel o-3`, `flatten`. */
export function describeIntent(intent: Intent, grid?: PriceGrid): string {
  const price = (value: number) => intentPrice(intent, value, grid);
  switch (intent.kind) {
    case 'place': {
      const order = intent.order;
      let text = `place ${intent.side} ${intent.size}`;
      if (order.type === 'market') text += ' market';
      if (order.type === 'stopLimit') text += ' stop-limit';
      if (order.type === 'stop' || order.type === 'stopLimit') text += ` stop ${price(order.stopPrice)}`;
      if (order.type === 'limit' || order.type === 'stopLimit') text += ` limit ${price(order.limitPrice)}`;
      if (order.type === 'trailingStop') text += ` trailing stop ${price(order.trailPrice)}`;
      const bracket = intent.bracket;
      if (bracket?.stopLossTicks !== undefined) text += ` SL ${bracket.stopLossTicks}t`;
      if (bracket?.takeProfitTicks !== undefined) text += ` TP ${bracket.takeProfitTicks}t`;
      return text;
    }
    case 'modify': {
      const parts = [`modify ${intent.orderId}`];
      if (intent.size !== undefined) parts.push(`size ${intent.size}`);
      if (intent.limitPrice !== undefined) parts.push(`limit ${price(intent.limitPrice)}`);
      if (intent.stopPrice !== undefined) parts.push(`stop ${price(intent.stopPrice)}`);
      if (intent.trailPrice !== undefined) parts.push(`trail ${price(intent.trailPrice)}`);
      return parts.join(' ');
    }
    case 'cancel':
      return `cancel ${intent.orderId}`;
    case 'target':
      return `target ${intent.size}`;
    case 'flatten':
      return 'flatten';
  }
}

function countsInOrder(counts: Map<ReasonCode, number>): CodeCount[] {
  return [...counts].map(([code, count]) => ({ code, count }));
}

function byFrequency(counts: Map<ReasonCode, number>): CodeCount[] {
  // Stable: ties keep the order of first occurrence.
  return countsInOrder(counts).sort((a, b) => b.count - a.count);
}

export interface SummaryOptions {
  readonly grid?: PriceGrid;
  /** The trading day of an instant (`YYYY-MM-DD`); the stop warning names the day. */
  readonly dayOf?: (time: number) => string;
  /** The run's trading days, oldest first: the warning says "day k of n". */
  readonly days?: readonly string[];
}

interface StrategyTrack {
  lastAccepted: number | null;
  tailStart: number;
  tail: Map<ReasonCode, number>;
  tailCount: number;
  tailMessage: string;
  lastRejected: number;
}

/**
 * A run's decisions counted as they come, one at a time, keeping only the first record of each code and
 * outcome: what `summarizeDecisions` reports of them, without the records (a run that writes decisions.csv
 * as it goes keeps none).
 */
export class DecisionTally {
  private readonly adjusted = new Map<ReasonCode, number>();
  private readonly rejected = new Map<ReasonCode, number>();
  /** The first record of each `outcome:code`, in the order they came. */
  private readonly firsts = new Map<string, DecisionRecord>();
  private readonly tracks = new Map<string, StrategyTrack>();
  private total = 0;
  private accepted = 0;
  private adjustedTotal = 0;
  private rejectedTotal = 0;

  add(record: DecisionRecord): void {
    this.total++;
    const outcome = outcomeOf(record);
    let track = this.tracks.get(record.strategyId);
    if (track === undefined) {
      track = { lastAccepted: null, tailStart: 0, tail: new Map(), tailCount: 0, tailMessage: '', lastRejected: 0 };
      this.tracks.set(record.strategyId, track);
    }
    if (outcome === 'accepted') {
      this.accepted++;
    } else {
      const code = codeOf(record)!;
      const counts = outcome === 'adjusted' ? this.adjusted : this.rejected;
      counts.set(code, (counts.get(code) ?? 0) + 1);
      if (outcome === 'adjusted') this.adjustedTotal++;
      else this.rejectedTotal++;
      const key = `${outcome}:${code}`;
      if (!this.firsts.has(key)) this.firsts.set(key, record);
    }
    if (outcome === 'rejected') {
      if (track.tailCount === 0) {
        track.tailStart = record.time;
        track.tailMessage = record.result.accepted ? '' : record.result.message;
      }
      const code = codeOf(record)!;
      track.tail.set(code, (track.tail.get(code) ?? 0) + 1);
      track.tailCount++;
      track.lastRejected = record.time;
    } else {
      track.lastAccepted = record.time;
      // An acceptance ends a run of refusals; most have none to end (no new map per accepted intent).
      if (track.tailCount > 0) {
        track.tail = new Map();
        track.tailCount = 0;
      }
    }
  }

  /** The summary of the decisions so far; the days are only read here (the last ones of each strategy). */
  summary(options: SummaryOptions = {}): DecisionSummary {
    const dayOf = options.dayOf ?? isoDate;
    const firsts: FirstDecision[] = [...this.firsts].map(([key, record]) => {
      const outcome = key.startsWith('adjusted:') ? 'adjusted' : 'rejected';
      const code = codeOf(record)!;
      return {
        code,
        outcome,
        time: record.time,
        strategyId: record.strategyId,
        intent: describeIntent(record.intent, options.grid),
        message: record.result.message ?? '',
        count: (outcome === 'adjusted' ? this.adjusted : this.rejected).get(code)!,
      };
    });

    const days = options.days ?? [];
    const stopped: StoppedTrading[] = [];
    for (const [strategyId, track] of this.tracks) {
      if (track.tailCount === 0) continue;
      // Refusals on the day of the last accepted intent may be the day's end (flat-by, a daily limit):
      // only refusals that carry on into a later trading day mean the strategy stopped trading.
      if (track.lastAccepted !== null && dayOf(track.lastRejected) <= dayOf(track.lastAccepted)) continue;
      const day = dayOf(track.tailStart);
      const position = days.indexOf(day);
      stopped.push({
        strategyId,
        since: track.tailStart,
        day,
        dayNumber: position < 0 ? null : position + 1,
        days: days.length,
        lastAccepted: track.lastAccepted,
        rejected: track.tailCount,
        codes: byFrequency(track.tail),
        message: track.tailMessage,
      });
    }
    return {
      total: this.total,
      accepted: this.accepted,
      adjustedTotal: this.adjustedTotal,
      adjusted: countsInOrder(this.adjusted),
      rejectedTotal: this.rejectedTotal,
      rejected: countsInOrder(this.rejected),
      firsts,
      stopped,
    };
  }
}

/** Counts, first occurrences and stop warnings of a run's decisions (in the order they were made). */
export function summarizeDecisions(records: DecisionSequence, options: SummaryOptions = {}): DecisionSummary {
  const tally = new DecisionTally();
  for (const record of records) tally.add(record);
  return tally.summary(options);
}

function tally(total: number, counts: readonly CodeCount[]): string {
  return `${total}: ${counts.map((c) => `${c.code} ${c.count}`).join(', ')}`;
}

/** `Rejected 446: TICK_MISALIGNED 2, DAILY_LOSS_LIMIT 444` (codes in the order they first occurred); null when nothing was refused. */
export function rejectionLine(summary: DecisionSummary): string | null {
  return summary.rejectedTotal === 0 ? null : `Rejected ${tally(summary.rejectedTotal, summary.rejected)}`;
}

/** `Reduced 3: RISK_EXCEEDS_ROOM 3`; null when no intent was reduced. */
export function adjustmentLine(summary: DecisionSummary): string | null {
  return summary.adjustedTotal === 0 ? null : `Reduced ${tally(summary.adjustedTotal, summary.adjusted)}`;
}

function utc(time: number): string {
  return `${new Date(time).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/** One sentence per strategy that stopped trading because of the guard. */
export function stoppedWarning(stop: StoppedTrading): string {
  const when =
    stop.dayNumber === null ? `on ${stop.day}` : `on ${stop.day} (trading day ${stop.dayNumber} of ${stop.days})`;
  const codes = stop.codes.map((c) => `${c.code} ${c.count}`).join(', ');
  const before =
    stop.lastAccepted === null
      ? 'no intent of it ever passed the risk guard'
      : `its last accepted intent was at ${utc(stop.lastAccepted)}`;
  return `strategy ${stop.strategyId} stopped trading ${when}: all ${stop.rejected} of its intents from ${utc(stop.since)} on were rejected (${codes}); ${before}. First refusal: ${stop.message}`;
}

/** The decisions of a report's run, with its trading calendar and days (from the statistics). */
export function summarizeRunDecisions(
  input: Pick<ReportInput, 'decisions' | 'decisionTally' | 'contract' | 'tradingDay' | 'tradingDayStartHour'>,
  stats: Pick<Statistics, 'daily'>,
): DecisionSummary {
  // The terminal's lines and the report both summarize a run: its decisions are walked once.
  const known = SUMMARIES.get(input);
  if (known !== undefined && known.stats === stats) return known.summary;
  const calendar = new TradingCalendar(tradingDayConfig(input));
  const options: SummaryOptions = {
    grid: new PriceGrid(input.contract.tickSize, input.contract.tickValue),
    dayOf: (time) => calendar.dayOf(time),
    days: stats.daily.map((d) => d.tradeDay.slice(0, 10)),
  };
  const summary = input.decisionTally?.summary(options) ?? summarizeDecisions(input.decisions ?? [], options);
  SUMMARIES.set(input, { stats, summary });
  return summary;
}

const SUMMARIES = new WeakMap<object, { readonly stats: object; readonly summary: DecisionSummary }>();

/** The terminal's lines: the rejection tally, the reduction tally and one warning per stopped strategy. */
export function decisionLines(summary: DecisionSummary): string[] {
  const lines: string[] = [];
  const rejectedText = rejectionLine(summary);
  if (rejectedText !== null) lines.push(rejectedText);
  const adjustedText = adjustmentLine(summary);
  if (adjustedText !== null) lines.push(adjustedText);
  for (const stop of summary.stopped) lines.push(`Warning: ${stoppedWarning(stop)}`);
  return lines;
}
