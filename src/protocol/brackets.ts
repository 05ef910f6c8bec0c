/**
 * Bracket ticks on the wire are signed offsets from the entry's fill price (gateway extras): positive above
 * the entry, negative below. A buy's stop loss is below it (negative) and its take profit above
 * (positive); a sell's the reverse. The engine speaks in distances (always positive), so the sign is
 * decided here, once, from the side; and the same rule tells which signs the gateway accepts.
 */
import { OrderType } from './codes.ts';
import type { Bracket } from './schemas.ts';

export interface BracketDistances {
  readonly stopLossTicks?: number;
  readonly takeProfitTicks?: number;
}

/** The place request's bracket fields for an entry on `side`, with distances turned into signed offsets. */
export function signedBrackets(
  side: 'buy' | 'sell',
  distances: BracketDistances | undefined,
): { stopLossBracket?: Bracket; takeProfitBracket?: Bracket } {
  if (distances === undefined) return {};
  const below = side === 'buy' ? -1 : 1;
  const { stopLossTicks, takeProfitTicks } = distances;
  return {
    ...(stopLossTicks ? { stopLossBracket: { ticks: below * Math.abs(stopLossTicks), type: OrderType.Stop } } : {}),
    ...(takeProfitTicks
      ? { takeProfitBracket: { ticks: -below * Math.abs(takeProfitTicks), type: OrderType.Limit } }
      : {}),
  };
}

const TYPE_NAMES: Readonly<Record<number, string>> = Object.fromEntries(
  Object.entries(OrderType).map(([name, code]) => [code, name]),
);

/**
 * Why the gateway refuses a bracket, in its own words, or undefined when the bracket is acceptable:
 * the stop leg must be Stop or TrailingStop and on the losing side of the entry, the target leg a Limit
 * on the winning side.
 */
export function bracketRefusal(
  side: 'buy' | 'sell',
  stopLoss: Bracket | null | undefined,
  takeProfit: Bracket | null | undefined,
): string | undefined {
  const longing = side === 'buy';
  const direction = longing ? 'longing' : 'shorting';
  if (stopLoss) {
    if (stopLoss.type !== OrderType.Stop && stopLoss.type !== OrderType.TrailingStop)
      return `Invalid stop loss type (${TYPE_NAMES[stopLoss.type] ?? stopLoss.type}).`;
    if (longing ? stopLoss.ticks >= 0 : stopLoss.ticks <= 0) {
      return `Invalid stop loss ticks (${stopLoss.ticks}). Ticks should be ${longing ? 'less' : 'greater'} than zero when ${direction}.`;
    }
  }
  if (takeProfit) {
    if (takeProfit.type !== OrderType.Limit)
      return `Invalid take profit type (${TYPE_NAMES[takeProfit.type] ?? takeProfit.type}).`;
    if (longing ? takeProfit.ticks <= 0 : takeProfit.ticks >= 0) {
      return `Invalid take profit ticks (${takeProfit.ticks}). Ticks should be ${longing ? 'greater' : 'less'} than zero when ${direction}.`;
    }
  }
  return undefined;
}
