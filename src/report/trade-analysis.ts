/**
 * Trade analysis: each trade's maximum adverse and favourable excursion (MAE/MFE, in ticks and money), its
 * duration and its entry's label, and breakdowns of PnL and win rate by hour of day and weekday of the
 * entry (in the exchange's zone) and by entry label.
 *
 * The excursions come from the bars the trade was open: the high and low of every bar from the one its
 * entry filled in to the one its exit filled in, both included (the simulated venue stamps a fill with the
 * start of the bar it fills in, so that bar is the last one starting at or before the fill's time). The
 * entry and exit prices count as prices the trade saw (slippage can put a fill outside its bar's range), so
 * MAE <= 0 <= MFE and the trade's PnL in ticks lies between them. Ticks are exact: integers for an entry on
 * the grid (an averaged entry between ticks gives a fraction).
 */
import { BLOCK_MASK, BLOCK_SHIFT, ColumnBlocks, type BlockSpill } from '../engine/column-blocks.ts';
import { cents, ratio, tradingDayConfig } from './statistics.ts';
import type { ClosedTrade, ReportBars, ReportInput, TradeList } from './report-types.ts';

export interface TradeExcursion {
  /** Worst open PnL per contract in ticks (<= 0). */
  readonly maeTicks: number;
  /** Best open PnL per contract in ticks (>= 0). */
  readonly mfeTicks: number;
}

/**
 * Every trade's excursions in the trades' order, read by index: a run of millions of trades keeps two
 * numbers a trade, not an object (and a streamed run parks them in its spill file).
 */
export interface TradeExcursions {
  readonly length: number;
  maeTicks(i: number): number;
  mfeTicks(i: number): number;
}

type ExcursionBars = Pick<ReportBars, 'time' | 'high' | 'low'>;

/** Number of elements of the sorted `times` at or before `t`. */
function upperBound(times: ArrayLike<number>, t: number): number {
  let low = 0;
  let high = times.length;
  while (low < high) {
    const middle = (low + high) >> 1;
    if ((times[middle] as number) <= t) low = middle + 1;
    else high = middle;
  }
  return low;
}

function exact(ticks: number): number {
  const value = Number.isInteger(ticks) ? ticks : Number(ticks.toFixed(6));
  return value === 0 ? 0 : value;
}

/** A trade's excursions from the highest high and lowest low of its bars. */
export function excursionOf(
  trade: Pick<ClosedTrade, 'side' | 'entryPrice' | 'exitPrice'>,
  high: number,
  low: number,
): TradeExcursion {
  const direction = trade.side === 'buy' ? 1 : -1;
  const pnl = (trade.exitPrice - trade.entryPrice) * direction;
  const best = direction > 0 ? high - trade.entryPrice : trade.entryPrice - low;
  const worst = direction > 0 ? low - trade.entryPrice : trade.entryPrice - high;
  return {
    maeTicks: exact(Math.min(0, pnl, Number.isFinite(worst) ? worst : 0)),
    mfeTicks: exact(Math.max(0, pnl, Number.isFinite(best) ? best : 0)),
  };
}

/**
 * Excursions of trades while their bars pass, chunk by chunk (a streamed run) or all at once (a whole one),
 * with the same result: `add` takes the next bars, every trade closed by the end of them (the whole list so
 * far; the ones already seen are skipped) and the entry time of the position still open after them (NaN
 * when flat). It keeps only the open position's extremes between calls, not the bars.
 */
export class ExcursionTracker implements TradeExcursions {
  /** Trades whose excursions are known. */
  length = 0;
  /** MAE and MFE of each trade, 2 numbers a trade. */
  private readonly blocks: ColumnBlocks<never>;
  /** Entry time of the open position whose extremes are kept, NaN when none. */
  private since = Number.NaN;
  private high = Number.NEGATIVE_INFINITY;
  private low = Number.POSITIVE_INFINITY;
  /** The last bar added (the entry bar of a position opened after it, before the next bars). */
  private lastHigh = Number.NEGATIVE_INFINITY;
  private lastLow = Number.POSITIVE_INFINITY;

  /** `spill`: where full blocks of the excursions go (a streamed run's); all kept in memory otherwise. */
  constructor(spill?: BlockSpill) {
    this.blocks = new ColumnBlocks(2, 0, spill);
  }

  maeTicks(i: number): number {
    return this.blocks.numbersOf(i >> BLOCK_SHIFT)[(i & BLOCK_MASK) * 2]!;
  }

  mfeTicks(i: number): number {
    return this.blocks.numbersOf(i >> BLOCK_SHIFT)[(i & BLOCK_MASK) * 2 + 1]!;
  }

  add(bars: ExcursionBars, trades: TradeList<ClosedTrade>, openSince: number): void {
    for (let k = this.length; k < trades.length; k++) this.addTrade(bars, trades.at(k)!);
    this.passed(bars, openSince);
  }

  /**
   * The next trade, closed by the end of `bars` (`add`'s first part, for a caller that reads each new trade
   * for more than its excursions: a streamed run makes each trade from its columns once).
   */
  addTrade(bars: ExcursionBars, trade: ClosedTrade): void {
    const { time, high, low } = bars;
    const n = time.length;
    const k = this.length;
    const exitBar = upperBound(time, trade.exitTime) - 1;
    const entryBar = upperBound(time, trade.entryTime) - 1;
    let h = Number.NEGATIVE_INFINITY;
    let l = Number.POSITIVE_INFINITY;
    if (entryBar < 0) {
      // Opened before these bars: what was kept of its position since its entry bar.
      if (this.since === trade.entryTime) {
        h = this.high;
        l = this.low;
      } else {
        h = this.lastHigh;
        l = this.lastLow;
      }
    }
    for (let i = Math.max(0, entryBar); i <= exitBar && i < n; i++) {
      if ((high[i] as number) > h) h = high[i] as number;
      if ((low[i] as number) < l) l = low[i] as number;
    }
    const excursion = excursionOf(trade, h, l);
    const numbers = this.blocks.numbersFor(k);
    numbers[(k & BLOCK_MASK) * 2] = excursion.maeTicks;
    numbers[(k & BLOCK_MASK) * 2 + 1] = excursion.mfeTicks;
    this.length = k + 1;
  }

  /** `bars` have passed, every trade they closed added: the extremes kept of the position still open (NaN: flat). */
  passed(bars: ExcursionBars, openSince: number): void {
    const { time, high, low } = bars;
    const n = time.length;
    if (Number.isNaN(openSince)) {
      this.since = Number.NaN;
    } else {
      let from = 0;
      if (openSince !== this.since) {
        this.since = openSince;
        const entryBar = upperBound(time, openSince) - 1;
        this.high = entryBar < 0 ? this.lastHigh : Number.NEGATIVE_INFINITY;
        this.low = entryBar < 0 ? this.lastLow : Number.POSITIVE_INFINITY;
        from = Math.max(0, entryBar);
      }
      for (let i = from; i < n; i++) {
        if ((high[i] as number) > this.high) this.high = high[i] as number;
        if ((low[i] as number) < this.low) this.low = low[i] as number;
      }
    }
    if (n > 0) {
      this.lastHigh = high[n - 1] as number;
      this.lastLow = low[n - 1] as number;
    }
  }

  result(): TradeExcursions {
    return this;
  }
}

/** Each trade's excursions from the whole run's bars. */
export function tradeExcursions(bars: ExcursionBars, trades: TradeList<ClosedTrade>): TradeExcursions {
  const tracker = new ExcursionTracker();
  tracker.add(bars, trades, Number.NaN);
  return tracker.result();
}

/** The excursions of a report's trades: a streamed run's, gathered while its bars passed, else from its bars. */
export function reportExcursions(input: ReportInput): TradeExcursions {
  return input.streamed?.excursions ?? tradeExcursions(input.bars, input.trades);
}

export interface TradeFacts extends TradeExcursion {
  /** MAE and MFE in money for the trade's size (<= 0 and >= 0). */
  readonly mae: number;
  readonly mfe: number;
  /** PnL per contract in ticks, gross of fees. */
  readonly pnlTicks: number;
  readonly durationMs: number;
  /** The entry's label (`PlaceIntent.label`), null without one. */
  readonly label: string | null;
  /** Hour (0-23) and weekday (`Mon`..`Sun`) of the entry in the exchange's zone. */
  readonly hour: number;
  readonly weekday: string;
}

export interface TradeBreakdown {
  /** The hour (`09`), the weekday (`Mon`) or the label (`-` for trades without one). */
  readonly key: string;
  readonly trades: number;
  readonly won: number;
  /** Won / trades (net of fees, to the cent, as the statistics decide), in [0, 1]. */
  readonly winRate: number;
  /** Sum of net PnL (after fees). */
  readonly netPnl: number;
  readonly averageNet: number;
}

export interface TradeAnalysis {
  /** The zone hours and weekdays are read in: the trading day's (America/Chicago for CME). */
  readonly timeZone: string;
  /** Every trade's facts, made when first read; `fact(i)` makes one trade's without them. */
  readonly trades: readonly TradeFacts[];
  /**
   * The facts of the input's trade `i` (the same as `trades[i]`), made at each call; `trade` is that trade
   * when the caller has it already (a run's columns make it anew at each read).
   */
  fact(i: number, trade?: ClosedTrade): TradeFacts;
  readonly byHour: readonly TradeBreakdown[];
  readonly byWeekday: readonly TradeBreakdown[];
  readonly byLabel: readonly TradeBreakdown[];
}

const WEEKDAYS = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'];

/** Hour and weekday of instants in a zone, one Intl call per UTC hour (zones change offset on the hour). */
function zoneClock(timeZone: string): (t: number) => { hour: number; weekday: string } {
  const format = new Intl.DateTimeFormat('en-US', { timeZone, hour: '2-digit', hourCycle: 'h23', weekday: 'short' });
  const cache = new Map<number, { hour: number; weekday: string }>();
  return (t) => {
    const key = Math.floor(t / 3_600_000);
    let found = cache.get(key);
    if (found === undefined) {
      const parts = format.formatToParts(key * 3_600_000);
      found = {
        hour: Number(parts.find((p) => p.type === 'hour')?.value ?? 0) % 24,
        weekday: parts.find((p) => p.type === 'weekday')?.value ?? '',
      };
      cache.set(key, found);
    }
    return found;
  };
}

type Groups = Map<string, { trades: number; won: number; net: number }>;

/** A trade's net PnL counted in its group of `groups` under `key`. */
function count(groups: Groups, key: string, net: number): void {
  let group = groups.get(key);
  if (group === undefined) {
    group = { trades: 0, won: 0, net: 0 };
    groups.set(key, group);
  }
  group.trades++;
  if (cents(net) > 0) group.won++;
  group.net += net;
}

function breakdown(groups: Groups, order: (a: string, b: string) => number): TradeBreakdown[] {
  return [...groups.entries()]
    .sort(([a], [b]) => order(a, b))
    .map(([key, g]) => ({
      key,
      trades: g.trades,
      won: g.won,
      winRate: ratio(g.won / g.trades)!,
      netPnl: cents(g.net),
      averageNet: cents(g.net / g.trades),
    }));
}

const text = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * The analysis kept as columns: each trade's excursions, entry hour and weekday; the rest of its facts
 * come from the trade itself when read. A 10 M-bar run's 264,460 trades held as fact objects took 45 MB
 * of heap through the outputs.
 */
class TradeFactColumns implements TradeAnalysis {
  private readonly hours: Uint8Array;
  private readonly weekdays: Uint8Array;
  private readonly weekdayNames: string[] = [];
  private made: readonly TradeFacts[] | undefined;
  readonly byHour: readonly TradeBreakdown[];
  readonly byWeekday: readonly TradeBreakdown[];
  readonly byLabel: readonly TradeBreakdown[];

  constructor(
    readonly timeZone: string,
    private readonly input: ReportInput,
    private readonly excursions: TradeExcursions,
  ) {
    const trades = input.trades;
    const n = trades.length;
    this.hours = new Uint8Array(n);
    this.weekdays = new Uint8Array(n);
    const clock = zoneClock(timeZone);
    // One pass over the trades (each is made as it is read from a run's columns): facts and breakdowns.
    const byHour: Groups = new Map();
    const byWeekday: Groups = new Map();
    const byLabel: Groups = new Map();
    let i = 0;
    for (const trade of trades) {
      const { hour, weekday } = clock(trade.entryTime);
      const net = trade.pnl - trade.fees;
      count(byHour, String(hour).padStart(2, '0'), net);
      count(byWeekday, weekday, net);
      count(byLabel, trade.label ?? '-', net);
      this.hours[i] = hour;
      let name = this.weekdayNames.indexOf(weekday);
      if (name < 0) name = this.weekdayNames.push(weekday) - 1;
      this.weekdays[i++] = name;
    }
    this.byHour = breakdown(byHour, text);
    this.byWeekday = breakdown(byWeekday, (a, b) => WEEKDAYS.indexOf(a) - WEEKDAYS.indexOf(b));
    this.byLabel = breakdown(byLabel, text);
  }

  get trades(): readonly TradeFacts[] {
    this.made ??= Array.from({ length: this.input.trades.length }, (_, i) => this.fact(i));
    return this.made;
  }

  fact(i: number, trade: ClosedTrade = this.input.trades.at(i)!): TradeFacts {
    const tickValue = this.input.contract.tickValue;
    // A trade without excursions (none gathered for it) shows none.
    const known = i < this.excursions.length;
    const maeTicks = known ? this.excursions.maeTicks(i) : 0;
    const mfeTicks = known ? this.excursions.mfeTicks(i) : 0;
    const direction = trade.side === 'buy' ? 1 : -1;
    return {
      maeTicks,
      mfeTicks,
      mae: cents(maeTicks * tickValue * trade.size),
      mfe: cents(mfeTicks * tickValue * trade.size),
      pnlTicks: exact((trade.exitPrice - trade.entryPrice) * direction),
      durationMs: trade.exitTime - trade.entryTime,
      label: trade.label ?? null,
      hour: this.hours[i]!,
      weekday: this.weekdayNames[this.weekdays[i]!]!,
    };
  }
}

/** The trade analysis of a report's input. */
export function analyseTrades(
  input: ReportInput,
  excursions: TradeExcursions = reportExcursions(input),
): TradeAnalysis {
  return new TradeFactColumns(tradingDayConfig(input).timeZone, input, excursions);
}
