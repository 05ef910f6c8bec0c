/**
 * The market hub's events (gateway extras, Realtime hubs), shared by the simulator that sends them and the
 * client that parses them. Each event carries `(contractId, data)`. A trade or depth event's data is a
 * batch (an array) when the simulator sends it; the client also accepts a single record.
 */
import { z } from 'zod';
import { DateTime, Decimal, Int } from './schemas.ts';

export const GatewayQuote = z.object({
  /** The symbol id, `F.US.EP`. */
  symbol: z.string(),
  symbolName: z.string(),
  lastPrice: Decimal,
  bestBid: Decimal,
  bestAsk: Decimal,
  /** Last price minus the previous trading day's last price. */
  change: Decimal,
  /** `change` as a percentage of the previous trading day's last price. */
  changePercent: Decimal,
  open: Decimal,
  high: Decimal,
  low: Decimal,
  /** Contracts traded this trading day. */
  volume: Int,
  lastUpdated: DateTime,
  timestamp: DateTime,
});
export type GatewayQuote = z.infer<typeof GatewayQuote>;

export const GatewayTrade = z.object({
  symbolId: z.string(),
  price: Decimal,
  timestamp: DateTime,
  /** The aggressor: 0 Buy (lifted the offer), 1 Sell (hit the bid). */
  type: z.union([z.literal(0), z.literal(1)]),
  volume: Int.nonnegative(),
});
export type GatewayTrade = z.infer<typeof GatewayTrade>;

export const GatewayDepth = z.object({
  timestamp: DateTime,
  /** A DomType code (codes.ts). */
  type: Int,
  price: Decimal,
  /** Size at the level now; 0 when the level is gone. */
  volume: Int.nonnegative(),
  currentVolume: Int.nonnegative(),
});
export type GatewayDepth = z.infer<typeof GatewayDepth>;

/** A batch of records or a single one, read as a batch (a single record's problems name its fields, not a union). */
export function batchOf<T extends z.ZodType>(record: T) {
  return z.preprocess((value) => (Array.isArray(value) ? value : [value]), z.array(record));
}
