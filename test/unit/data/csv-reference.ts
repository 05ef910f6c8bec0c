/**
 * The whole-file CSV reader as it was before the streaming one (kept as the oracle the streaming reader must
 * equal: same columns, same problems, same lines).
 */
import { readFileSync } from 'node:fs';
import type { PriceGrid } from '../../../src/engine/ticks.ts';
import type { BarColumns } from '../../../src/engine/types.ts';
import { allocateColumns, sliceByIndex } from '../../../src/data/columns.ts';

export interface CsvProblem {
  readonly file: string;
  /** 1-based line number in the file. */
  readonly line: number;
  /** Column name from the header, or empty for a whole-line problem. */
  readonly column: string;
  readonly message: string;
}

export class CsvBarsError extends Error {
  override readonly name = 'CsvBarsError';
  readonly code = 'CSV_INVALID';
  constructor(readonly problems: readonly CsvProblem[]) {
    const shown = problems
      .slice(0, 20)
      .map((p) => `${p.file}${p.line > 0 ? `:${p.line}` : ''}${p.column ? ` column ${p.column}` : ''}: ${p.message}`);
    if (problems.length > 20) shown.push(`... and ${problems.length - 20} more`);
    super(shown.join('\n'));
  }
}

/** Where the optional `contract` column changes value (a roll to the next contract month). */
export interface ContractSegment {
  readonly contract: string;
  /** Index of the first bar of the segment. */
  readonly from: number;
}

export interface CsvBars {
  readonly bars: BarColumns;
  readonly segments: readonly ContractSegment[];
}

const REQUIRED = ['t', 'o', 'h', 'l', 'c', 'v'] as const;
const OFFSET = /(?:Z|[+-]\d{2}:\d{2})$/;
const MAX_PROBLEMS = 1000;

export function readCsvBars(file: string, grid: PriceGrid, displayName = file): CsvBars {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new CsvBarsError([
      {
        file: displayName,
        line: 0,
        column: '',
        message: (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'file not found' : (error as Error).message,
      },
    ]);
  }
  return parseCsvBars(text, grid, displayName);
}

export function parseCsvBars(text: string, grid: PriceGrid, file: string): CsvBars {
  const lines = text.split('\n');
  const header = (lines[0] ?? '')
    .replace(/\r$/, '')
    .split(',')
    .map((h) => h.trim().toLowerCase());
  const problems: CsvProblem[] = [];
  const index: Record<string, number> = {};
  for (const name of REQUIRED) {
    index[name] = header.indexOf(name);
    if (index[name] < 0)
      problems.push({
        file,
        line: 1,
        column: name,
        message: `header lacks the column "${name}" (found: ${header.join(',')})`,
      });
  }
  const contractColumn = header.indexOf('contract');
  if (problems.length > 0) throw new CsvBarsError(problems);
  const [ti, oi, hi, li, ci, vi] = REQUIRED.map((n) => index[n]!) as [number, number, number, number, number, number];

  const bars = allocateColumns(lines.length);
  const segments: ContractSegment[] = [];
  let n = 0;
  // The last readable time, so a row after an unreadable one is still checked for going backwards.
  let lastTime = Number.NEGATIVE_INFINITY;
  for (let k = 1; k < lines.length && problems.length < MAX_PROBLEMS; k++) {
    let line = lines[k]!;
    if (line.endsWith('\r')) line = line.slice(0, -1);
    if (line.trim() === '') continue;
    const cells = line.split(',');
    const lineNo = k + 1;
    const problem = (column: string, message: string) => problems.push({ file, line: lineNo, column, message });
    if (cells.length < header.length) {
      problem('', `expected ${header.length} columns, found ${cells.length}`);
      continue;
    }
    const tText = cells[ti]!.trim();
    const t = OFFSET.test(tText) ? Date.parse(tText) : Number.NaN;
    if (Number.isNaN(t)) problem('t', `"${tText}" is not an ISO 8601 time with an offset (Z or +hh:mm)`);
    const price = (column: string, at: number): number => {
      const cell = cells[at]!.trim();
      const value = cell === '' ? Number.NaN : Number(cell);
      if (!Number.isFinite(value)) {
        problem(column, `"${cell}" is not a number`);
        return Number.NaN;
      }
      const ticks = grid.toTicks(value);
      if (!Number.isInteger(ticks)) {
        problem(column, `price ${cell} is not a multiple of the tick size ${grid.tickSize}`);
        return Number.NaN;
      }
      return ticks;
    };
    const o = price('o', oi);
    const h = price('h', hi);
    const l = price('l', li);
    const c = price('c', ci);
    const vText = cells[vi]!.trim();
    const v = vText === '' ? Number.NaN : Number(vText);
    if (!Number.isInteger(v) || v < 0) problem('v', `volume "${vText}" is not a whole number >= 0`);
    if (!Number.isNaN(o + h + l + c) && (h < Math.max(o, c, l) || l > Math.min(o, c))) {
      problem(
        '',
        `high ${grid.toPrice(h)} and low ${grid.toPrice(l)} do not contain open ${grid.toPrice(o)} and close ${grid.toPrice(c)}`,
      );
    }
    if (!Number.isNaN(t)) {
      if (t <= lastTime)
        problem('t', `time ${tText} is not after the previous bar's (bars must be oldest first, one per time)`);
      lastTime = t;
    }
    bars.time[n] = t;
    bars.open[n] = o;
    bars.high[n] = h;
    bars.low[n] = l;
    bars.close[n] = c;
    bars.volume[n] = v;
    if (contractColumn >= 0) {
      const contract = (cells[contractColumn] ?? '').trim();
      if (segments.length === 0 || segments[segments.length - 1]!.contract !== contract)
        segments.push({ contract, from: n });
    }
    n++;
  }
  if (problems.length === 0 && n === 0) problems.push({ file, line: 1, column: '', message: 'no bars' });
  if (problems.length > 0) throw new CsvBarsError(problems);
  return { bars: sliceByIndex(bars, 0, n), segments };
}
