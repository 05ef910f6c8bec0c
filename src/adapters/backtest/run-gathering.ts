/**
 * What the results need of every bar, gathered while the bars pass (the drawdown, the end-of-day equity,
 * where trade times fall among the bars, each trade's excursions, the chart's candles, the chosen rows of
 * equity.csv), so that no per-bar column outlives its chunk: a streamed run's chunks from the bar cache,
 * or a whole run's pieces of its history (definition-run.ts). The figures are those the whole curve gives.
 */
import path from 'node:path';
import { addDayEnds, addTradeSpan, DrawdownTracker, SpanUnion, type StreamedFigures } from '../../report/statistics.ts';
import { CandleBuilder } from '../../report/chart-data.ts';
import { ExcursionTracker } from '../../report/trade-analysis.ts';
import type { ClosedTrade, EquityCurve } from '../../report/report-types.ts';
import { TradingCalendar } from '../../engine/trading-day.ts';
import type { BarColumns } from '../../engine/types.ts';
import { TicklineError } from '../../engine/errors.ts';
import type { BlockSpill } from '../../engine/column-blocks.ts';
import { SAMPLE_STEPS } from '../../data/data-checks.ts';
import { lowerBound, upperBound } from '../../data/columns.ts';
import { EquityCsvRows, EquityRowPicker } from './outputs.ts';
import type { RunRecordsSoFar } from './run.ts';
import type { BacktestConfig } from './backtest-config.ts';

/** A streamed run's own bookkeeping found itself inconsistent: a bug, never the data's fault. */
export class StreamedRunError extends TicklineError {
  override readonly name = 'StreamedRunError';
  readonly kind = 'runtime';
  readonly code = 'STREAMED_RUN_INTERNAL';
}

/**
 * The bars each trade covers (`addTradeSpan`), found while the bars pass: each fill's time is looked up
 * when the fill is recorded and resolved by the bars that follow (how many start at or before it, and
 * strictly before it); a closed trade becomes its span once both its times are resolved. Only the times a
 * later trade can still need are kept (from the open position's entry on), a few entries, not one a fill.
 */
class TradeSpans {
  readonly union = new SpanUnion();
  private count = 0;
  private lastTime = Number.NEGATIVE_INFINITY;
  /** Time -> bars starting at or before it, and strictly before it, so far (`resolved`: final). */
  private readonly pending = new Map<number, { atOrBefore: number; before: number }>();
  private readonly resolved = new Map<number, { atOrBefore: number; before: number }>();
  /** Closed trades waiting for their exit time to be resolved. */
  private readonly waiting: Pick<ClosedTrade, 'entryTime' | 'exitTime'>[] = [];

  get bars(): number {
    return this.count;
  }

  /** A fill's time, when it is recorded (before the bars after it pass). */
  fillAt(t: number): void {
    if (this.resolved.has(t) || this.pending.has(t)) return;
    // Every bar so far starts at or before a fill's time: a fill happens in the bar being replayed or after it.
    if (t < this.lastTime) throw new StreamedRunError(`a fill at ${t} came after a bar starting at ${this.lastTime}`);
    this.pending.set(t, { atOrBefore: this.count, before: t === this.lastTime ? this.count - 1 : this.count });
  }

  closed(trade: Pick<ClosedTrade, 'entryTime' | 'exitTime'>): void {
    // Its two times, not the trade: a trade made from the run's columns lives only while it is read. Kept,
    // such trades would teach V8 to allocate every trade the columns make in the old generation.
    this.waiting.push({ entryTime: trade.entryTime, exitTime: trade.exitTime });
  }

  /** The next bars; then spans for the trades whose times they resolved, and times no trade needs are dropped. */
  add(time: Float64Array, openSince: number): void {
    const n = time.length;
    if (n === 0) return;
    for (const [t, counts] of this.pending) {
      counts.atOrBefore += upperBound(time, t);
      counts.before += lowerBound(time, t);
      if (time[n - 1]! > t) {
        this.pending.delete(t);
        this.resolved.set(t, counts);
      }
    }
    this.count += n;
    this.lastTime = time[n - 1]!;
    this.settle(false);
    let keepFrom = Number.isNaN(openSince) ? this.lastTime : openSince;
    for (const trade of this.waiting) keepFrom = Math.min(keepFrom, trade.entryTime);
    for (const key of this.resolved.keys()) {
      if (key >= keepFrom) break;
      this.resolved.delete(key);
    }
  }

  /** After the last bar: every time looked up is final. */
  finish(): number {
    this.settle(true);
    return this.union.covered;
  }

  private settle(all: boolean): void {
    let kept = 0;
    for (const trade of this.waiting) {
      if (!all && !this.resolved.has(trade.exitTime)) {
        this.waiting[kept++] = trade;
        continue;
      }
      addTradeSpan(
        this.union,
        trade,
        (t) => this.lookup(t).atOrBefore - 1,
        (t) => this.lookup(t).before - 1,
      );
    }
    this.waiting.length = kept;
  }

  private lookup(t: number): { atOrBefore: number; before: number } {
    const found = this.resolved.get(t) ?? this.pending.get(t);
    if (found === undefined) throw new StreamedRunError(`no bar position kept for ${t}`);
    return found;
  }
}

/** Everything gathered from the bars as they pass. */
export class RunGathering {
  readonly drawdown: DrawdownTracker;
  readonly dayEnds: { day: string; equity: number }[] = [];
  endingEquity: number | undefined;
  readonly spans = new TradeSpans();
  /**
   * Each trade's MAE and MFE, from the bars as they pass (the whole run reads them from its bars: the
   * same); none when the report keeps the bars and reads them there (a whole run's 264,460 excursions
   * were 13 MB of objects held from the run on).
   */
  readonly excursions: ExcursionTracker | undefined;
  readonly candles: CandleBuilder;
  readonly rows: EquityRowPicker | EquityCsvRows;
  first = Number.NaN;
  last = Number.NaN;
  /** The first bar times, for the spacing check of the whole path (which samples them too). */
  readonly sample: number[] = [];
  /** The first bars' closes (ticks), for the price level check. */
  readonly closes: number[] = [];
  private fillsSeen = 0;
  private tradesSeen = 0;

  /**
   * The gathering of a definition's run of `total` bars, with the equity.csv rows its outputs ask for:
   * picked as the bars pass, or written per bar into `outputDir` (`equityFile`).
   */
  static of(
    config: BacktestConfig,
    total: number,
    outputDir: string | undefined,
    maxCandles: number,
    excursions = true,
    spill?: BlockSpill,
  ): RunGathering {
    const tradingDay = config.risk.tradingDay;
    const equity = config.outputs.equity;
    let rows: EquityRowPicker | EquityCsvRows;
    if (equity !== 'per-bar') rows = new EquityRowPicker(equity, tradingDay);
    else if (outputDir === undefined)
      throw new StreamedRunError('a per-bar equity.csv is gathered into an output folder');
    else rows = new EquityCsvRows(path.join(outputDir, 'equity.csv'));
    return new RunGathering(
      total,
      config.account.startingBalance,
      config.gaps.longerThanHours * 3_600_000,
      new TradingCalendar(tradingDay),
      rows,
      maxCandles,
      excursions,
      spill,
    );
  }

  constructor(
    total: number,
    startingBalance: number,
    idleLimitMs: number,
    readonly calendar: TradingCalendar,
    rows: EquityRowPicker | EquityCsvRows,
    maxCandles: number,
    excursions: boolean,
    /** Where full blocks of the trades' excursions go (a streamed run's). */
    spill?: BlockSpill,
  ) {
    this.excursions = excursions ? new ExcursionTracker(spill) : undefined;
    this.drawdown = new DrawdownTracker(startingBalance, idleLimitMs);
    this.candles = new CandleBuilder(total, maxCandles, startingBalance);
    this.rows = rows;
  }

  /** The equity.csv written per bar while the bars passed, or undefined when its rows are picked. */
  get equityFile(): string | undefined {
    return this.rows instanceof EquityCsvRows ? this.rows.file : undefined;
  }

  /** What the statistics need of the bars once the last one has passed (`streamedStatistics`). */
  figures(): StreamedFigures {
    return {
      drawdown: this.drawdown,
      dayEnds: this.dayEnds,
      endingEquity: this.endingEquity,
      bars: this.spans.bars,
      covered: this.spans.finish(),
    };
  }

  /** The data's own bars as they are read, before any aggregation. */
  sampleSpacing(bars: BarColumns): void {
    for (let i = 0; i < bars.time.length && this.sample.length <= SAMPLE_STEPS; i++) {
      this.sample.push(bars.time[i]!);
      this.closes.push(bars.close[i]!);
    }
  }

  add(bars: BarColumns, equity: EquityCurve, records: RunRecordsSoFar): void {
    for (; this.fillsSeen < records.fills.length; this.fillsSeen++)
      this.spans.fillAt(records.fills.timeAt(this.fillsSeen));
    // Each new trade is made from the columns once, for all three.
    const excursions = this.excursions;
    for (; this.tradesSeen < records.trades.length; this.tradesSeen++) {
      const trade = records.trades.at(this.tradesSeen)!;
      this.rows.addExit(trade.exitTime);
      this.spans.closed(trade);
      excursions?.addTrade(bars, trade);
    }
    excursions?.passed(bars, records.openSince);
    const n = bars.time.length;
    if (n === 0) return;
    if (Number.isNaN(this.first)) this.first = bars.time[0]!;
    this.last = bars.time[n - 1]!;
    this.spans.add(bars.time, records.openSince);
    this.drawdown.add(equity);
    addDayEnds(this.dayEnds, equity, this.calendar);
    if (equity.equity.length > 0) this.endingEquity = equity.equity[equity.equity.length - 1]!;
    this.candles.add(bars, equity.equity);
    this.rows.add(equity);
  }
}
