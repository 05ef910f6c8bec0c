/**
 * decisions.csv: every intent's fate, one row per risk-guard decision in the order it was made. Prices
 * are decimals (the contract's grid), the guard's message carries the numbers behind a refusal (the
 * position and the cap, the room and the risk), and the position and equity columns say what it saw.
 */
import type { PriceGrid } from '../../engine/ticks.ts';
import type { Intent } from '../../engine/types.ts';
import { codeOf, describeIntent, intentPrice, outcomeOf } from '../../report/decisions.ts';
import { cents } from '../../report/statistics.ts';
import type { DecisionRecord } from '../../report/types.ts';
import { IsoTimeFormatter } from './outputs.ts';

export const DECISIONS_CSV_HEADER =
  'time,strategy,intent,kind,side,size,orderType,limitPrice,stopPrice,trailPrice,origin,result,code,acceptedSize,position,equity,message';

/** A CSV field: quoted when it holds a comma, a quote or a line break. */
export function csvField(value: string | number | null | undefined): string {
  if (value === null || value === undefined) return '';
  const text = String(value);
  return /[",\n\r]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

function prices(intent: Intent, grid: PriceGrid): [string, string, string] {
  const show = (value: number | undefined) => (value === undefined ? '' : intentPrice(intent, value, grid));
  if (intent.kind === 'place') {
    const order = intent.order;
    return [
      show('limitPrice' in order ? order.limitPrice : undefined),
      show('stopPrice' in order ? order.stopPrice : undefined),
      show(order.type === 'trailingStop' ? order.trailPrice : undefined),
    ];
  }
  if (intent.kind === 'modify') return [show(intent.limitPrice), show(intent.stopPrice), show(intent.trailPrice)];
  return ['', '', ''];
}

function sizeOf(intent: Intent): number | undefined {
  return intent.kind === 'place' || intent.kind === 'target' || intent.kind === 'modify' ? intent.size : undefined;
}

export function decisionRow(record: DecisionRecord, grid: PriceGrid, iso: IsoTimeFormatter): string {
  const { intent, result } = record;
  const [limit, stop, trail] = prices(intent, grid);
  const acceptedSize = result.accepted ? (result.size ?? sizeOf(intent)) : undefined;
  return [
    iso.format(record.time),
    record.strategyId,
    describeIntent(intent, grid),
    intent.kind,
    intent.kind === 'place' ? intent.side : '',
    sizeOf(intent),
    intent.kind === 'place' ? intent.order.type : '',
    limit,
    stop,
    trail,
    record.origin === undefined ? '' : describeIntent(record.origin, grid),
    outcomeOf(record),
    codeOf(record),
    acceptedSize,
    record.position,
    record.equity === undefined ? undefined : cents(record.equity),
    result.message,
  ]
    .map(csvField)
    .join(',');
}

/** The rows of decisions.csv, header first, each with its line break. */
export function* decisionsCsvLines(records: readonly DecisionRecord[], grid: PriceGrid): Generator<string> {
  yield `${DECISIONS_CSV_HEADER}\n`;
  const iso = new IsoTimeFormatter();
  for (const record of records) yield `${decisionRow(record, grid, iso)}\n`;
}
