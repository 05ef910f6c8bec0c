/**
 * Constructors for intents, so a strategy reads like what it wants. Prices are prices as quoted
 * (`limitOrder('buy', 1, 4501.25)`), converted exactly to ticks where the intent enters the engine; code
 * that computes in ticks (bar fields are ticks) passes `{ unit: 'ticks' }`. A contract id left out (the
 * empty string) means the strategy's primary contract: the runner fills it in.
 */
import type {
  BracketSpec,
  CancelIntent,
  FlattenIntent,
  Intent,
  ModifyIntent,
  OrderSpec,
  PlaceIntent,
  PriceUnit,
  Side,
  TargetIntent,
} from './types.ts';

/** The contract id that stands for "the strategy's primary contract"; resolved by the runner. */
export const PRIMARY_CONTRACT = '';

export interface PlaceOptions {
  contractId?: string;
  bracket?: BracketSpec;
  /** Client id (becomes the customTag); stamped by the runner when left out. */
  id?: string;
  /** What the price arguments are: `'price'` (default) or `'ticks'`. */
  unit?: PriceUnit;
  /** Why the strategy enters: the label of the trade this order opens (trade analysis, trades.csv). */
  label?: string;
}

export interface TargetOptions {
  contractId?: string;
  /** Why the strategy enters: the label of the trade the resulting order opens. */
  label?: string;
}

function place(side: Side, size: number, order: PlaceIntent['order'], options: PlaceOptions): PlaceIntent {
  // Ticks are the engine's own unit, so an intent in ticks carries no marker.
  const priced = order.type !== 'market' && (options.unit ?? 'price') === 'price';
  return {
    kind: 'place',
    contractId: options.contractId ?? PRIMARY_CONTRACT,
    side,
    size,
    order,
    ...(options.bracket === undefined ? {} : { bracket: options.bracket }),
    ...(options.id === undefined ? {} : { id: options.id }),
    ...(priced ? { unit: 'price' as const } : {}),
    ...(options.label === undefined ? {} : { label: options.label }),
  };
}

/**
 * Desired signed position: +2 long two, -1 short one, 0 flat. The second argument is the contract id, or
 * options with it and the entry's label: `target(1, { label: 'breakout' })`.
 */
export function target(size: number, where: string | TargetOptions = PRIMARY_CONTRACT): TargetIntent {
  if (typeof where === 'string') return { kind: 'target', contractId: where, size };
  const contractId = where.contractId ?? PRIMARY_CONTRACT;
  return where.label === undefined
    ? { kind: 'target', contractId, size }
    : { kind: 'target', contractId, size, label: where.label };
}

/**
 * A market order's terms, as `marketOrder` and the engine (a target's order, a flatten's) give them: one
 * frozen object, so a run's columns keep it as a flag rather than a reference an order.
 */
export const MARKET_ORDER: OrderSpec = Object.freeze({ type: 'market' });

export function marketOrder(side: Side, size: number, options: PlaceOptions = {}): PlaceIntent {
  return place(side, size, MARKET_ORDER, options);
}

export function limitOrder(side: Side, size: number, limitPrice: number, options: PlaceOptions = {}): PlaceIntent {
  return place(side, size, { type: 'limit', limitPrice }, options);
}

export function stopOrder(side: Side, size: number, stopPrice: number, options: PlaceOptions = {}): PlaceIntent {
  return place(side, size, { type: 'stop', stopPrice }, options);
}

export function stopLimitOrder(
  side: Side,
  size: number,
  stopPrice: number,
  limitPrice: number,
  options: PlaceOptions = {},
): PlaceIntent {
  return place(side, size, { type: 'stopLimit', stopPrice, limitPrice }, options);
}

/** `trailPrice` is an ABSOLUTE price (spec 4.1), not a distance: the trail distance is |last - trailPrice|. */
export function trailingStopOrder(
  side: Side,
  size: number,
  trailPrice: number,
  options: PlaceOptions = {},
): PlaceIntent {
  return place(side, size, { type: 'trailingStop', trailPrice }, options);
}

/** New size and prices of a working order; prices as quoted unless `unit: 'ticks'`. */
export function modifyOrder(
  orderId: string,
  changes: Omit<ModifyIntent, 'kind' | 'orderId' | 'id' | 'at'>,
): ModifyIntent {
  const { unit, ...rest } = changes;
  const priced =
    (unit ?? 'price') === 'price' &&
    (rest.limitPrice !== undefined || rest.stopPrice !== undefined || rest.trailPrice !== undefined);
  return priced ? { kind: 'modify', orderId, ...rest, unit: 'price' } : { kind: 'modify', orderId, ...rest };
}

export function cancelOrder(orderId: string): CancelIntent {
  return { kind: 'cancel', orderId };
}

/** Cancel working orders and close the position of one contract, or of every contract when left out. */
export function flatten(contractId?: string): FlattenIntent {
  return contractId === undefined ? { kind: 'flatten' } : { kind: 'flatten', contractId };
}

export function opposite(side: Side): Side {
  return side === 'buy' ? 'sell' : 'buy';
}

/** +1 for buy, -1 for sell. */
export function sideSign(side: Side): 1 | -1 {
  return side === 'buy' ? 1 : -1;
}

/**
 * An intent of one's own, for whoever keeps it (a decision published, a log line): the engine passes an
 * intent on its way through objects it fills again for the next order. Fields left undefined are left out.
 */
export function copyIntent(intent: Intent): Intent {
  // A strategy written in plain JavaScript can emit anything: what is not an object is reported as it is.
  if (typeof intent !== 'object' || intent === null) return intent;
  const copy: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(intent)) if (value !== undefined) copy[key] = value;
  return copy as unknown as Intent;
}
