/**
 * The shape of an intent, checked where it enters the engine. TypeScript's types stop a typo only in a
 * strategy that is type-checked; one written in plain JavaScript (or run without a check) can emit
 * `side: 'long'` or a price of NaN, and nothing downstream may guess what was meant. Each problem names
 * its field. Value checks that need the market (tick grid, size limits) stay in the risk guard.
 */
import type { Intent } from './types.ts';

export interface IntentShapeProblem {
  readonly field: string;
  readonly message: string;
}

const KINDS = new Set(['place', 'modify', 'cancel', 'flatten', 'target']);
const SIDES = new Set(['buy', 'sell']);
const PRICE_FIELDS: Readonly<Record<string, readonly string[]>> = {
  market: [],
  limit: ['limitPrice'],
  stop: ['stopPrice'],
  stopLimit: ['stopPrice', 'limitPrice'],
  trailingStop: ['trailPrice'],
};

const describe = (value: unknown): string =>
  typeof value === 'string' ? `'${value.slice(0, 40)}'` : typeof value === 'number' ? String(value) : typeof value;

function finiteNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}

/** The first problem of an intent's shape, or undefined when it is well formed. */
export function intentShapeProblem(raw: Intent): IntentShapeProblem | undefined {
  const intent = raw as unknown as Record<string, unknown>;
  if (typeof intent !== 'object' || intent === null)
    return { field: 'intent', message: `an intent must be an object, got ${describe(intent)}` };
  const kind = intent.kind;
  if (typeof kind !== 'string' || !KINDS.has(kind))
    return { field: 'kind', message: `kind ${describe(kind)} is not one of place, modify, cancel, flatten, target` };
  if (intent.id !== undefined && typeof intent.id !== 'string')
    return { field: 'id', message: `id must be a string, got ${describe(intent.id)}` };
  if (intent.at !== undefined && !Number.isInteger(intent.at))
    return { field: 'at', message: `at must be a bar index, got ${describe(intent.at)}` };
  if (intent.label !== undefined && typeof intent.label !== 'string')
    return { field: 'label', message: `label must be a string, got ${describe(intent.label)}` };
  if (intent.unit !== undefined && intent.unit !== 'price' && intent.unit !== 'ticks')
    return { field: 'unit', message: `unit ${describe(intent.unit)} is not 'price' or 'ticks'` };
  switch (kind) {
    case 'target':
      if (typeof intent.contractId !== 'string')
        return { field: 'contractId', message: `contractId must be a string, got ${describe(intent.contractId)}` };
      if (!finiteNumber(intent.size))
        return { field: 'size', message: `target size must be a finite number, got ${describe(intent.size)}` };
      return undefined;
    case 'flatten':
      if (intent.contractId !== undefined && typeof intent.contractId !== 'string')
        return { field: 'contractId', message: `contractId must be a string, got ${describe(intent.contractId)}` };
      return undefined;
    case 'cancel':
      if (typeof intent.orderId !== 'string')
        return { field: 'orderId', message: `orderId must be a string, got ${describe(intent.orderId)}` };
      return undefined;
    case 'modify':
      if (typeof intent.orderId !== 'string')
        return { field: 'orderId', message: `orderId must be a string, got ${describe(intent.orderId)}` };
      for (const field of ['size', 'limitPrice', 'stopPrice', 'trailPrice']) {
        if (intent[field] !== undefined && !finiteNumber(intent[field]))
          return { field, message: `${field} must be a finite number, got ${describe(intent[field])}` };
      }
      return undefined;
    default:
      return placeShapeProblem(intent);
  }
}

function placeShapeProblem(intent: Record<string, unknown>): IntentShapeProblem | undefined {
  if (typeof intent.contractId !== 'string')
    return { field: 'contractId', message: `contractId must be a string, got ${describe(intent.contractId)}` };
  if (typeof intent.side !== 'string' || !SIDES.has(intent.side))
    return { field: 'side', message: `side ${describe(intent.side)} is not 'buy' or 'sell'` };
  if (!finiteNumber(intent.size))
    return { field: 'size', message: `size must be a finite number, got ${describe(intent.size)}` };
  const order = intent.order as Record<string, unknown> | undefined;
  if (typeof order !== 'object' || order === null)
    return { field: 'order', message: `order must be an object, got ${describe(order)}` };
  const prices = typeof order.type === 'string' ? PRICE_FIELDS[order.type] : undefined;
  if (prices === undefined)
    return {
      field: 'order.type',
      message: `order type ${describe(order.type)} is not one of ${Object.keys(PRICE_FIELDS).join(', ')}`,
    };
  for (const field of prices) {
    if (!finiteNumber(order[field]))
      return {
        field: `order.${field}`,
        message: `${field} must be a finite number of ticks, got ${describe(order[field])}`,
      };
  }
  const bracket = intent.bracket as Record<string, unknown> | undefined;
  if (bracket !== undefined) {
    if (typeof bracket !== 'object' || bracket === null)
      return { field: 'bracket', message: `bracket must be an object, got ${describe(bracket)}` };
    for (const field of ['stopLossTicks', 'takeProfitTicks']) {
      if (bracket[field] !== undefined && !finiteNumber(bracket[field]))
        return {
          field: `bracket.${field}`,
          message: `${field} must be a finite number, got ${describe(bracket[field])}`,
        };
    }
  }
  return undefined;
}
