/**
 * The evaluation's two pictures as inline SVG, drawn in Node: the fan of equity paths (quantile bands,
 * the median, a few single paths, the starting floor and the target) and the histogram of days to pass.
 * No script and no library: they are static, and the same input gives the same bytes.
 */
import type { EquityFan } from './evaluation-report.ts';
import { formatMoney } from './format.ts';

const WIDTH = 820;
const HEIGHT = 280;
const LEFT = 78;
const RIGHT = 16;
const TOP = 14;
const BOTTOM = 34;

function scale(domain: [number, number], range: [number, number]): (value: number) => number {
  const [d0, d1] = domain;
  const [r0, r1] = range;
  const span = d1 - d0 || 1;
  return (value) => Number((r0 + ((value - d0) / span) * (r1 - r0)).toFixed(1));
}

/** About `count` round steps covering [low, high]. */
function ticks(low: number, high: number, count: number): number[] {
  const span = high - low || 1;
  const raw = span / count;
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * magnitude).find((s) => s >= raw) ?? magnitude * 10;
  const out: number[] = [];
  for (let v = Math.ceil(low / step) * step; v <= high + step * 1e-9; v += step) out.push(Number(v.toFixed(6)));
  return out;
}

function axes(
  x: (v: number) => number,
  y: (v: number) => number,
  xTicks: number[],
  yTicks: number[],
  yLabel: (v: number) => string,
  xTitle: string,
): string {
  const parts: string[] = [];
  for (const v of yTicks) {
    parts.push(`<line x1="${LEFT}" x2="${WIDTH - RIGHT}" y1="${y(v)}" y2="${y(v)}" class="grid"/>`);
    parts.push(`<text x="${LEFT - 6}" y="${y(v) + 4}" text-anchor="end">${yLabel(v)}</text>`);
  }
  for (const v of xTicks) parts.push(`<text x="${x(v)}" y="${HEIGHT - BOTTOM + 16}" text-anchor="middle">${v}</text>`);
  parts.push(`<text x="${(LEFT + WIDTH - RIGHT) / 2}" y="${HEIGHT - 4}" text-anchor="middle">${xTitle}</text>`);
  return parts.join('');
}

function polyline(
  xs: readonly number[],
  ys: readonly number[],
  x: (v: number) => number,
  y: (v: number) => number,
): string {
  return xs.map((v, i) => `${x(v)},${y(ys[i]!)}`).join(' ');
}

/** Fan chart of the Monte Carlo's equity by trading day, with the starting floor and the target level. */
export function fanChart(fan: EquityFan, levels: { floor: number; target: number }): string {
  const days = fan.p50.map((_, k) => k);
  const values = [...fan.p05, ...fan.p95, levels.floor, levels.target, ...fan.samples.flat()];
  const low = Math.min(...values);
  const high = Math.max(...values);
  const pad = (high - low) * 0.05 || 1;
  const x = scale([0, Math.max(1, days.length - 1)], [LEFT, WIDTH - RIGHT]);
  const y = scale([low - pad, high + pad], [HEIGHT - BOTTOM, TOP]);
  const band = (upper: readonly number[], lower: readonly number[], cls: string) =>
    `<polygon class="${cls}" points="${polyline(days, upper, x, y)} ${polyline([...days].reverse(), [...lower].reverse(), x, y)}"/>`;
  const samples = fan.samples
    .map((path) => `<polyline class="sample" points="${polyline(days, path, x, y)}"/>`)
    .join('');
  const level = (value: number, cls: string, label: string) =>
    `<line class="${cls}" x1="${LEFT}" x2="${WIDTH - RIGHT}" y1="${y(value)}" y2="${y(value)}"/><text class="${cls}-label" x="${WIDTH - RIGHT - 4}" y="${y(value) - 4}" text-anchor="end">${label} ${formatMoney(value)}</text>`;
  return `<svg id="evaluation-fan" class="plot" viewBox="0 0 ${WIDTH} ${HEIGHT}" width="${WIDTH}" height="${HEIGHT}" role="img" aria-label="Equity paths of the Monte Carlo by trading day">
${axes(x, y, ticks(0, days.length - 1, 10).filter(Number.isInteger), ticks(low - pad, high + pad, 6), (v) => formatMoney(v), 'trading day')}
${band(fan.p95, fan.p05, 'band-outer')}${band(fan.p75, fan.p25, 'band-inner')}${samples}
<polyline class="median" points="${polyline(days, fan.p50, x, y)}"/>
${level(levels.floor, 'floor', 'starting floor')}${level(levels.target, 'target', 'target')}
</svg>`;
}

/** Histogram of the trading day on which the passing paths passed, with the median marked. */
export function daysToPassHistogram(counts: readonly number[], median: number): string {
  const last = Math.max(
    1,
    counts.reduce((at, count, k) => (count > 0 ? k + 1 : at), 1),
  );
  const shown = counts.slice(0, last);
  const top = Math.max(1, ...shown);
  const x = scale([0.5, last + 0.5], [LEFT, WIDTH - RIGHT]);
  const y = scale([0, top * 1.08], [HEIGHT - BOTTOM, TOP]);
  const width = Math.max(1, Number(((x(1.5) - x(0.5)) * 0.8).toFixed(1)));
  const bars = shown
    .map((count, k) =>
      count === 0
        ? ''
        : `<rect class="bar" x="${(x(k + 1) - width / 2).toFixed(1)}" y="${y(count)}" width="${width}" height="${(y(0) - y(count)).toFixed(1)}"><title>day ${k + 1}: ${count} paths</title></rect>`,
    )
    .join('');
  return `<svg id="evaluation-histogram" class="plot" viewBox="0 0 ${WIDTH} ${HEIGHT}" width="${WIDTH}" height="${HEIGHT}" role="img" aria-label="Trading days to pass">
${axes(x, y, ticks(1, last, 12).filter(Number.isInteger), ticks(0, top, 5).filter(Number.isInteger), (v) => String(v), 'trading day of the pass')}
${bars}<line class="median" x1="${x(median)}" x2="${x(median)}" y1="${TOP}" y2="${HEIGHT - BOTTOM}"/><text class="median-label" x="${x(median) + 4}" y="${TOP + 10}">median ${median}</text>
</svg>`;
}
