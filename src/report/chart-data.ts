/**
 * What the report's chart draws, prepared in Node: candles (merged k bars to a candle above the limit, so a
 * million bars draw from 20,000 candles that keep every high and low), the strategy's overlays, the equity
 * and drawdown on the same time index (so the panes share one time axis: a time without bars takes no
 * room), and the markers (trade entries and exits, the guard's first refusals) placed on the candle that
 * holds their instant. Prices are decimals of the contract's grid; times are epoch seconds (UTC).
 */
import type { PriceGrid } from '../engine/ticks.ts';
import { cents } from './statistics.ts';
import type { ClosedTrade, ReportInput } from './report-types.ts';
import { ReportInputError } from './validate.ts';

export interface Candles {
  /** Epoch seconds of each candle's first bar. */
  readonly t: number[];
  readonly o: number[];
  readonly h: number[];
  readonly l: number[];
  readonly c: number[];
  /** Bars merged into each candle (1 unless downsampled). */
  readonly barsPerCandle: number;
  readonly bars: number;
}

/** The candles with the equity and drawdown per candle, and each candle's first bar time (ms). */
export interface PreparedChart {
  readonly candles: Candles;
  readonly equity: (number | null)[];
  readonly drawdown: (number | null)[];
  readonly starts: readonly number[];
}

export interface OverlayData {
  readonly name: string;
  readonly pane: 'price' | 'own';
  /** One value per candle (its last bar's), null where undefined. */
  readonly values: (number | null)[];
}

export interface MarkerData {
  /** Epoch seconds of the candle it sits on. */
  readonly t: number;
  readonly kind: 'entry' | 'exit' | 'decision' | 'roll' | 'gap';
  readonly side?: 'buy' | 'sell';
  /** Price it points at (entries and exits). */
  readonly price?: number;
  readonly text: string;
}

export interface ChartData {
  readonly decimals: number;
  readonly candles: Candles;
  readonly overlays: OverlayData[];
  /** Equity and drawdown per candle (the last equity point in it; the deepest drawdown in it), null without a point. */
  readonly equity: (number | null)[];
  readonly drawdown: (number | null)[];
  readonly markers: MarkerData[];
  /** Trades whose markers are drawn (every n-th above the limit), of all trades. */
  readonly drawnTrades: number;
  readonly trades: number;
}

/** Index of the last element of the sorted `times` at or before `t` (0 when `t` is before the first). */
function lastAtOrBefore(times: ArrayLike<number>, t: number): number {
  let low = 0;
  let high = times.length - 1;
  let found = 0;
  while (low <= high) {
    const middle = (low + high) >> 1;
    if ((times[middle] as number) <= t) {
      found = middle;
      low = middle + 1;
    } else {
      high = middle - 1;
    }
  }
  return found;
}

function priceOf(grid: PriceGrid, ticks: number): number {
  // Averaged entries can sit between ticks: two more decimals than the grid.
  return Number.isInteger(ticks) ? grid.toPrice(ticks) : Number((ticks * grid.tickSize).toFixed(grid.decimals + 2));
}

function candles(input: ReportInput, grid: PriceGrid, maxCandles: number): Candles {
  const builder = new CandleBuilder(input.bars.time.length, maxCandles, input.startingBalance);
  builder.add(input.bars, NO_EQUITY);
  return builder.candles(grid);
}

const NO_EQUITY = new Float64Array(0);

function candleOf(input: ReportInput, k: number, t: number): number {
  return Math.floor(lastAtOrBefore(input.bars.time, t) / k);
}

function equityColumns(
  input: ReportInput,
  candleCount: number,
  k: number,
): { equity: (number | null)[]; drawdown: (number | null)[] } {
  const equity: (number | null)[] = new Array(candleCount).fill(null);
  const drawdown: (number | null)[] = new Array(candleCount).fill(null);
  if (candleCount === 0) return { equity, drawdown };
  const { time, equity: values } = input.equity;
  const barTimes = input.bars.time;
  // Both columns are sorted: one walk finds each point's bar (the last at or before it) where a search
  // per point cost a million binary searches. A candle keeps its last equity and its deepest drawdown
  // (cents is monotonic, so rounding once at the end equals rounding every point).
  const last = new Float64Array(candleCount);
  const deepest = new Float64Array(candleCount);
  const seen = new Uint8Array(candleCount);
  let peak = input.startingBalance;
  let bar = 0;
  const points = Math.min(time.length, values.length);
  for (let i = 0; i < points; i++) {
    const value = values[i] as number;
    if (value > peak) peak = value;
    const t = time[i] as number;
    while (bar + 1 < barTimes.length && (barTimes[bar + 1] as number) <= t) bar++;
    const candle = Math.floor(bar / k);
    const down = Math.min(0, value - peak);
    last[candle] = value;
    if (seen[candle] === 0 || down < deepest[candle]!) deepest[candle] = down;
    seen[candle] = 1;
  }
  for (let candle = 0; candle < candleCount; candle++) {
    if (seen[candle] === 0) continue;
    equity[candle] = cents(last[candle]!);
    drawdown[candle] = cents(deepest[candle]!);
  }
  return { equity, drawdown };
}

/**
 * The candles where the data breaks: the first candle after each gap longer than the run's limit and the
 * one holding each change of contract month. An overlay draws nothing there (a whitespace point), so its
 * line is not drawn straight across years without data or a roll's jump in price.
 */
export function breakCandles(input: ReportInput, k: number): Set<number> {
  const times = input.bars.time;
  const breaks = new Set<number>();
  if (times.length === 0) return breaks;
  const first = times[0] as number;
  const at = (t: number) => {
    if (t > first) breaks.add(candleOf(input, k, t));
  };
  for (const gap of input.gaps ?? []) at(gap.to);
  for (const roll of input.rolls ?? []) at(roll.time);
  return breaks;
}

/** Bars merged into one candle when `bars` bars are drawn as at most `maxCandles` candles. */
export function barsPerCandle(bars: number, maxCandles: number): number {
  return Math.max(1, Math.ceil(bars / maxCandles));
}

/**
 * A plot's values kept only where a chart of `k` bars a candle reads them: each candle's last bar (a
 * `ReportOverlay` with `barsPerValue: k`). A 10 M-bar run's plot is then 4,000 values, not 10 M.
 */
export function candleValues(values: ArrayLike<number>, k: number): Float64Array {
  const n = values.length;
  const kept = new Float64Array(Math.ceil(n / k));
  for (let candle = 0; candle < kept.length; candle++) kept[candle] = values[Math.min(n, (candle + 1) * k) - 1]!;
  return kept;
}

function overlays(input: ReportInput, grid: PriceGrid, k: number, candleCount: number): OverlayData[] {
  const n = input.bars.time.length;
  const breaks = (input.overlays ?? []).length === 0 ? new Set<number>() : breakCandles(input, k);
  return (input.overlays ?? []).map((overlay) => {
    const pane = overlay.pane ?? 'price';
    const every = overlay.barsPerValue ?? 1;
    // A candle's last bar is a kept one only when a candle spans whole groups of kept bars.
    if (k % every !== 0)
      throw new ReportInputError([
        `overlay ${overlay.name} keeps a value every ${every} bars: a chart of ${k} bars a candle cannot draw it`,
      ]);
    const values: (number | null)[] = [];
    for (let candle = 0; candle < candleCount; candle++) {
      const value = overlay.values[Math.floor((Math.min(n, (candle + 1) * k) - 1) / every)] as number;
      if (!Number.isFinite(value) || breaks.has(candle)) values.push(null);
      else values.push(pane === 'price' ? priceOf(grid, value) : Number(value.toFixed(4)));
    }
    return { name: overlay.name, pane, values };
  });
}

/** Each drawn trade gives two markers: its entry (on the side of the trade) and its exit (the other side). */
function tradeMarkers(
  input: ReportInput,
  grid: PriceGrid,
  candleTime: (t: number) => number,
  maxMarkers: number,
): { markers: MarkerData[]; drawn: number } {
  const stride = Math.max(1, Math.ceil((input.trades.length * 2) / maxMarkers));
  const markers: MarkerData[] = [];
  let drawn = 0;
  const trades = input.trades;
  for (let index = 0; index < trades.length; index += stride) {
    const trade: ClosedTrade = trades.at(index)!;
    drawn++;
    markers.push({
      t: candleTime(trade.entryTime),
      kind: 'entry',
      side: trade.side,
      price: priceOf(grid, trade.entryPrice),
      text: '',
    });
    markers.push({
      t: candleTime(trade.exitTime),
      kind: 'exit',
      side: trade.side === 'buy' ? 'sell' : 'buy',
      price: priceOf(grid, trade.exitPrice),
      text: '',
    });
  }
  return { markers, drawn };
}

export interface DecisionMark {
  readonly time: number;
  readonly text: string;
}

/** `gap 14d 0h` and, when a position was closed before it, `(flattened 1)`. */
function gapText(gap: { from: number; to: number; flattened: number }): string {
  const hours = Math.round((gap.to - gap.from) / 3_600_000);
  const span = hours >= 48 ? `${Math.floor(hours / 24)}d ${hours % 24}h` : `${hours}h`;
  return `gap ${span}${gap.flattened === 0 ? '' : ` (flattened ${gap.flattened})`}`;
}

export function chartData(
  input: ReportInput,
  grid: PriceGrid,
  options: { maxCandles: number; maxMarkers: number; decisions: readonly DecisionMark[] },
): ChartData {
  const prepared = input.streamed?.chart;
  const bars = prepared?.candles ?? candles(input, grid, options.maxCandles);
  const k = bars.barsPerCandle;
  const count = bars.t.length;
  const { equity, drawdown } = prepared ?? equityColumns(input, count, k);
  // Seconds of the start of the candle holding instant t (the first candle for earlier instants): a
  // candle's first bar is the last candle start at or before t, so the starts alone place a marker.
  const candleTime =
    prepared === undefined
      ? (t: number) => (input.bars.time[candleOf(input, k, t) * k] as number) / 1000
      : (t: number) => (prepared.starts[lastAtOrBefore(prepared.starts, t)] as number) / 1000;
  const trades = count === 0 ? { markers: [], drawn: 0 } : tradeMarkers(input, grid, candleTime, options.maxMarkers);
  const decisionMarkers: MarkerData[] =
    count === 0
      ? []
      : options.decisions.map((d) => ({ t: candleTime(d.time), kind: 'decision' as const, text: d.text }));
  const rollMarkers: MarkerData[] =
    count === 0
      ? []
      : (input.rolls ?? []).map((r) => ({ t: candleTime(r.time), kind: 'roll' as const, text: r.contract }));
  const gapMarkers: MarkerData[] =
    count === 0 ? [] : (input.gaps ?? []).map((g) => ({ t: candleTime(g.to), kind: 'gap' as const, text: gapText(g) }));
  // The chart wants its markers in time order; a stable sort keeps an entry before its exit at one time.
  const markers = [...trades.markers, ...decisionMarkers, ...rollMarkers, ...gapMarkers].sort((a, b) => a.t - b.t);
  return {
    decimals: grid.decimals,
    candles: bars,
    overlays: overlays(input, grid, k, count),
    equity,
    drawdown,
    markers,
    drawnTrades: trades.drawn,
    trades: input.trades.length,
  };
}

/**
 * The chart's candles (k bars a candle, k from the run's bar count, known before the first bar), built bar
 * by bar: from the whole columns for a report, or while a streamed run's bars pass, with its equity and
 * drawdown per candle as `equityColumns` computes them from the whole curve (each point at its own bar: a
 * backtest records one per bar, at the bar's time).
 */
export class CandleBuilder {
  readonly k: number;
  private readonly starts: number[] = [];
  private readonly o: number[] = [];
  private readonly h: number[] = [];
  private readonly l: number[] = [];
  private readonly c: number[] = [];
  private readonly last: number[] = [];
  private readonly deepest: number[] = [];
  private readonly seen: boolean[] = [];
  private bars = 0;
  private points = 0;
  private peak: number;

  constructor(expectedBars: number, maxCandles: number, startingBalance: number) {
    this.k = barsPerCandle(expectedBars, maxCandles);
    this.peak = startingBalance;
  }

  /** The next bars and the equity points of the first of them (fewer points than bars after a failure). */
  add(bars: Pick<ReportInput['bars'], 'time' | 'open' | 'high' | 'low' | 'close'>, equity: ArrayLike<number>): void {
    const k = this.k;
    const n = bars.time.length;
    for (let i = 0; i < n; i++) {
      const index = this.bars + i;
      const high = bars.high[i] as number;
      const low = bars.low[i] as number;
      if (index % k === 0) {
        this.starts.push(bars.time[i] as number);
        this.o.push(bars.open[i] as number);
        this.h.push(high);
        this.l.push(low);
        this.c.push(bars.close[i] as number);
        this.last.push(0);
        this.deepest.push(0);
        this.seen.push(false);
      } else {
        const candle = this.c.length - 1;
        if (high > this.h[candle]!) this.h[candle] = high;
        if (low < this.l[candle]!) this.l[candle] = low;
        this.c[candle] = bars.close[i] as number;
      }
    }
    // Points belong to the bars in order; a run that failed records none after its failure.
    for (let j = 0; j < equity.length; j++) {
      const candle = Math.floor((this.points + j) / k);
      const value = equity[j] as number;
      if (value > this.peak) this.peak = value;
      const down = Math.min(0, value - this.peak);
      this.last[candle] = value;
      if (!this.seen[candle] || down < this.deepest[candle]!) this.deepest[candle] = down;
      this.seen[candle] = true;
    }
    this.bars += n;
    this.points += equity.length;
  }

  /** The candles so far, prices on the grid and times in seconds. */
  candles(grid: PriceGrid): Candles {
    return {
      t: this.starts.map((t) => t / 1000),
      o: this.o.map((p) => grid.toPrice(p)),
      h: this.h.map((p) => grid.toPrice(p)),
      l: this.l.map((p) => grid.toPrice(p)),
      c: this.c.map((p) => grid.toPrice(p)),
      barsPerCandle: this.k,
      bars: this.bars,
    };
  }

  result(grid: PriceGrid): PreparedChart {
    const candles = this.candles(grid);
    const equity = this.seen.map((seen, candle) => (seen ? cents(this.last[candle]!) : null));
    const drawdown = this.seen.map((seen, candle) => (seen ? cents(this.deepest[candle]!) : null));
    return { candles, equity, drawdown, starts: this.starts };
  }
}
