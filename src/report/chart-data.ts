/**
 * What the report's chart draws, prepared in Node: candles (merged k bars to a candle above the limit, so a
 * million bars draw from 20,000 candles that keep every high and low), the strategy's overlays, the equity
 * and drawdown on the same time index (so the panes share one time axis: a time without bars takes no
 * room), and the markers (trade entries and exits, the guard's first refusals) placed on the candle that
 * holds their instant. Prices are decimals of the contract's grid; times are epoch seconds (UTC).
 */
import type { PriceGrid } from '../engine/ticks.ts';
import { cents } from './statistics.ts';
import type { ClosedTrade, ReportInput } from './types.ts';

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
  const { time, open, high, low, close } = input.bars;
  const n = time.length;
  const k = Math.max(1, Math.ceil(n / maxCandles));
  const out: Candles = { t: [], o: [], h: [], l: [], c: [], barsPerCandle: k, bars: n };
  for (let start = 0; start < n; start += k) {
    const end = Math.min(n, start + k);
    let h = high[start] as number;
    let l = low[start] as number;
    for (let i = start + 1; i < end; i++) {
      if ((high[i] as number) > h) h = high[i] as number;
      if ((low[i] as number) < l) l = low[i] as number;
    }
    out.t.push((time[start] as number) / 1000);
    out.o.push(grid.toPrice(open[start] as number));
    out.h.push(grid.toPrice(h));
    out.l.push(grid.toPrice(l));
    out.c.push(grid.toPrice(close[end - 1] as number));
  }
  return out;
}

function candleOf(input: ReportInput, k: number, t: number): number {
  return Math.floor(lastAtOrBefore(input.bars.time, t) / k);
}

function equityColumns(input: ReportInput, candleCount: number, k: number): { equity: (number | null)[]; drawdown: (number | null)[] } {
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

function overlays(input: ReportInput, grid: PriceGrid, k: number, candleCount: number): OverlayData[] {
  const n = input.bars.time.length;
  return (input.overlays ?? []).map((overlay) => {
    const pane = overlay.pane ?? 'price';
    const values: (number | null)[] = [];
    for (let candle = 0; candle < candleCount; candle++) {
      const value = overlay.values[Math.min(n, (candle + 1) * k) - 1] as number;
      if (!Number.isFinite(value)) values.push(null);
      else values.push(pane === 'price' ? priceOf(grid, value) : Number(value.toFixed(4)));
    }
    return { name: overlay.name, pane, values };
  });
}

/** Each drawn trade gives two markers: its entry (on the side of the trade) and its exit (the other side). */
function tradeMarkers(input: ReportInput, grid: PriceGrid, k: number, maxMarkers: number): { markers: MarkerData[]; drawn: number } {
  const stride = Math.max(1, Math.ceil((input.trades.length * 2) / maxMarkers));
  const markers: MarkerData[] = [];
  let drawn = 0;
  const candleTime = (t: number) => (input.bars.time[candleOf(input, k, t) * k] as number) / 1000;
  input.trades.forEach((trade: ClosedTrade, index) => {
    if (index % stride !== 0) return;
    drawn++;
    markers.push({ t: candleTime(trade.entryTime), kind: 'entry', side: trade.side, price: priceOf(grid, trade.entryPrice), text: '' });
    markers.push({ t: candleTime(trade.exitTime), kind: 'exit', side: trade.side === 'buy' ? 'sell' : 'buy', price: priceOf(grid, trade.exitPrice), text: '' });
  });
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
  const bars = candles(input, grid, options.maxCandles);
  const k = bars.barsPerCandle;
  const count = bars.t.length;
  const { equity, drawdown } = equityColumns(input, count, k);
  const trades = count === 0 ? { markers: [], drawn: 0 } : tradeMarkers(input, grid, k, options.maxMarkers);
  const decisionMarkers: MarkerData[] =
    count === 0 ? [] : options.decisions.map((d) => ({ t: (input.bars.time[candleOf(input, k, d.time) * k] as number) / 1000, kind: 'decision' as const, text: d.text }));
  const rollMarkers: MarkerData[] =
    count === 0 ? [] : (input.rolls ?? []).map((r) => ({ t: (input.bars.time[candleOf(input, k, r.time) * k] as number) / 1000, kind: 'roll' as const, text: r.contract }));
  const gapMarkers: MarkerData[] =
    count === 0 ? [] : (input.gaps ?? []).map((g) => ({ t: (input.bars.time[candleOf(input, k, g.to) * k] as number) / 1000, kind: 'gap' as const, text: gapText(g) }));
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
