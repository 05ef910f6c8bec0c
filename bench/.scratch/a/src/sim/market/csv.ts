/**
 * Reads a bar file to replay (`t,o,h,l,c,v[,...]` with an ISO time of the bar start, like
 * ../shared/data/es-minute-lean.csv). Prices must lie on the contract's grid; every bad line is reported
 * with the file name and line number at once.
 */
import { readFileSync } from 'node:fs';
import type { PriceGrid } from '../../engine/ticks.ts';
import type { GeneratedBars } from './synthetic.ts';

export class BarFileError extends Error {
  override readonly name = 'BarFileError';
  readonly code = 'BAR_FILE_INVALID';
  constructor(
    readonly file: string,
    readonly problems: readonly string[],
  ) {
    super(`${file}: ${problems.length} problem(s):\n  ${problems.slice(0, 20).join('\n  ')}`);
  }
}

export interface BarFile {
  bars: GeneratedBars;
  /** The smallest spacing between consecutive bars: the bar length. */
  stepMs: number;
}

export function readBarFile(file: string, grid: PriceGrid): BarFile {
  const lines = readFileSync(file, 'utf8').split(/\r?\n/);
  const header = (lines[0] ?? '').split(',').map((h) => h.trim().toLowerCase());
  const column = (name: string): number => header.indexOf(name);
  const columns = { t: column('t'), o: column('o'), h: column('h'), l: column('l'), c: column('c'), v: column('v') };
  const missing = Object.entries(columns).filter(([, index]) => index < 0).map(([name]) => name);
  if (missing.length > 0) throw new BarFileError(file, [`line 1: header lacks column(s) ${missing.join(', ')}`]);

  const rows = lines.length - 1;
  const time = new Float64Array(rows);
  const open = new Float64Array(rows);
  const high = new Float64Array(rows);
  const low = new Float64Array(rows);
  const close = new Float64Array(rows);
  const volume = new Float64Array(rows);
  const problems: string[] = [];
  let n = 0;
  for (let k = 1; k < lines.length; k++) {
    const line = lines[k] as string;
    if (line.trim() === '') continue;
    const cells = line.split(',');
    const where = `line ${k + 1}`;
    const t = Date.parse(cells[columns.t] ?? '');
    if (Number.isNaN(t)) {
      problems.push(`${where}: bad time ${JSON.stringify(cells[columns.t])}`);
      continue;
    }
    const ticks: number[] = [];
    for (const name of ['o', 'h', 'l', 'c'] as const) {
      const value = Number(cells[columns[name]]);
      const tick = Number.isFinite(value) ? grid.toTicks(value) : Number.NaN;
      if (!Number.isInteger(tick)) problems.push(`${where}: ${name} ${JSON.stringify(cells[columns[name]])} is not a price on the ${grid.tickSize} grid`);
      ticks.push(tick);
    }
    const v = Number(cells[columns.v]);
    if (!Number.isFinite(v) || v < 0) problems.push(`${where}: bad volume ${JSON.stringify(cells[columns.v])}`);
    const [o, h, l, c] = ticks as [number, number, number, number];
    if (h < Math.max(o, c) || l > Math.min(o, c)) problems.push(`${where}: high/low do not contain open and close`);
    if (n > 0 && t <= (time[n - 1] as number)) problems.push(`${where}: time does not increase`);
    time[n] = t;
    open[n] = o;
    high[n] = h;
    low[n] = l;
    close[n] = c;
    volume[n] = Math.round(v);
    n++;
  }
  if (n === 0) problems.push('no bars');
  if (problems.length > 0) throw new BarFileError(file, problems);
  let stepMs = Number.POSITIVE_INFINITY;
  for (let i = 1; i < n; i++) stepMs = Math.min(stepMs, (time[i] as number) - (time[i - 1] as number));
  if (!Number.isFinite(stepMs)) stepMs = 60_000;
  return {
    bars: {
      time: time.slice(0, n),
      open: open.slice(0, n),
      high: high.slice(0, n),
      low: low.slice(0, n),
      close: close.slice(0, n),
      volume: volume.slice(0, n),
    },
    stepMs,
  };
}
