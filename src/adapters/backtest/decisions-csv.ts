/**
 * decisions.csv: every intent's fate, one row per risk-guard decision in the order it was made. Prices
 * are decimals (the contract's grid), the guard's message carries the numbers behind a refusal (the
 * position and the cap, the room and the risk), and the position and equity columns say what it saw.
 */
import type { PriceGrid } from '../../engine/ticks.ts';
import type { Intent } from '../../engine/types.ts';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { codeOf, DecisionTally, describeIntent, intentPrice, outcomeOf } from '../../report/decisions.ts';
import { cents } from '../../report/statistics.ts';
import type { DecisionRecord, DecisionSequence } from '../../report/report-types.ts';
import { IsoTimeFormatter, StreamedTextFile } from './outputs.ts';

export const DECISIONS_CSV_HEADER =
  'time,strategy,intent,kind,side,size,orderType,limitPrice,stopPrice,trailPrice,origin,result,code,acceptedSize,position,equity,message';

const NEEDS_QUOTES = /[",\n\r]/;

/** A CSV field: quoted when it holds a comma, a quote or a line break. */
export function csvField(value: string | number | null | undefined): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'number') return String(value);
  return NEEDS_QUOTES.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
}

const NO_PRICES: [string, string, string] = ['', '', ''];

function prices(intent: Intent, grid: PriceGrid): [string, string, string] {
  const show = (value: number | undefined) => (value === undefined ? '' : intentPrice(intent, value, grid));
  if (intent.kind === 'place') {
    const order = intent.order;
    if (order.type === 'market') return NO_PRICES;
    return [
      show('limitPrice' in order ? order.limitPrice : undefined),
      show('stopPrice' in order ? order.stopPrice : undefined),
      show(order.type === 'trailingStop' ? order.trailPrice : undefined),
    ];
  }
  if (intent.kind === 'modify') return [show(intent.limitPrice), show(intent.stopPrice), show(intent.trailPrice)];
  return NO_PRICES;
}

function sizeOf(intent: Intent): number | undefined {
  return intent.kind === 'place' || intent.kind === 'target' || intent.kind === 'modify' ? intent.size : undefined;
}

/** Formats rows one after another; an origin shared by consecutive rows (a target's orders) is described once. */
export class DecisionRowFormatter {
  private readonly iso = new IsoTimeFormatter();
  private lastOrigin: Intent | undefined;
  private lastOriginText = '';

  constructor(private readonly grid: PriceGrid) {}

  row(record: DecisionRecord): string {
    const { intent, result } = record;
    const grid = this.grid;
    const [limit, stop, trail] = prices(intent, grid);
    const acceptedSize = result.accepted ? (result.size ?? sizeOf(intent)) : undefined;
    const place = intent.kind === 'place';
    return (
      `${this.iso.format(record.time)},${csvField(record.strategyId)},${csvField(describeIntent(intent, grid))},${intent.kind},` +
      `${place ? intent.side : ''},${csvField(sizeOf(intent))},${place ? intent.order.type : ''},${csvField(limit)},${csvField(stop)},${csvField(trail)},` +
      `${csvField(this.originText(record.origin))},${outcomeOf(record)},${csvField(codeOf(record))},${csvField(acceptedSize)},` +
      `${csvField(record.position)},${csvField(record.equity === undefined ? undefined : cents(record.equity))},${csvField(result.message)}`
    );
  }

  private originText(origin: Intent | undefined): string {
    if (origin === undefined) return '';
    if (origin !== this.lastOrigin) {
      this.lastOrigin = origin;
      this.lastOriginText = describeIntent(origin, this.grid);
    }
    return this.lastOriginText;
  }
}

/** The rows of decisions.csv, header first, each with its line break. */
export function* decisionsCsvLines(records: DecisionSequence, grid: PriceGrid): Generator<string> {
  yield `${DECISIONS_CSV_HEADER}\n`;
  const rows = new DecisionRowFormatter(grid);
  for (const record of records) yield `${rows.row(record)}\n`;
}

/**
 * The decisions.csv a run told its output folder writes as its decisions come (whole or streamed), when it
 * records them; undefined otherwise (the run then keeps its decisions for the outputs).
 */
export function decisionsCsvRowsIn(
  outputDir: string | undefined,
  recorded: boolean,
  grid: PriceGrid,
): DecisionsCsvRows | undefined {
  return outputDir !== undefined && recorded
    ? new DecisionsCsvRows(path.join(outputDir, 'decisions.csv'), grid)
    : undefined;
}

/**
 * decisions.csv written while the run makes its decisions, each row as `decisionsCsvLines` writes it, and
 * the decisions counted for the report (`tally`): a long run keeps none of its records (a 10 M-bar run's
 * 386,710 were 120 MB of heap until the outputs). The file takes its name at `finish`.
 */
export class DecisionsCsvRows {
  readonly tally = new DecisionTally();
  private readonly out: StreamedTextFile;
  private readonly rows: DecisionRowFormatter;

  constructor(
    readonly file: string,
    grid: PriceGrid,
  ) {
    mkdirSync(path.dirname(file), { recursive: true });
    this.out = new StreamedTextFile(file);
    this.out.write(`${DECISIONS_CSV_HEADER}\n`);
    this.rows = new DecisionRowFormatter(grid);
  }

  add(record: DecisionRecord): void {
    this.out.write(`${this.rows.row(record)}\n`);
    this.tally.add(record);
  }

  finish(): void {
    this.out.close();
  }

  discard(): void {
    this.out.discard();
  }
}
