/**
 * What the simulated venue asks of its fill rules, and the rule both families share. The venue
 * (simulated-venue.ts) picks one family when it is made, from its options: the bar rules
 * (bar-fill-rules.ts: an order against the bar's open, high, low and close) or, with `touch`, the touch
 * rules (touch-fill-rules.ts: an order against the quoted book, its levels and queue). The rules match the
 * book's working orders against each bar and tell the book (venue-book.ts) what filled where.
 */
import { lowFirst } from '../../market/path.ts';
import type { BarChunk } from '../../engine/types.ts';
import type { VenueOrder } from './venue-book.ts';

/**
 * Which of a stop and a target that the same bar touches fills (the other is cancelled). `path`: the one
 * the simulator's intrabar path reaches first (the low first on an up bar, the high first on a down bar).
 */
export type SameBarRule = 'stop-first' | 'target-first' | 'nearest-to-open' | 'path';

/** The venue's settings the fill rules price with. */
export interface FillRuleSettings {
  /** Ticks against the order on market fills (>= 0). */
  readonly slippage: number;
  /** Ticks against the order on stop and trailing-stop fills (>= 0). */
  readonly stopSlippage: number;
  readonly sameBar: SameBarRule;
}

export interface FillRules {
  /**
   * The rules follow every bar, even when no order is working (the touch rules' quotes are made from the
   * bars as they pass); false: the venue calls `onBar` only while orders are working.
   */
  readonly followsEveryBar: boolean;
  /** Bar `index` of `chunk` opens before the strategies see it: the working orders of its contract meet it. */
  onBar(chunk: BarChunk, index: number): void;
  /** The working orders of `contractId` meet one price, now (a bar whose four prices are `price`). */
  settleAt(contractId: string, time: number, price: number): void;
}

/** For a bracket pair both touched inside one bar: true when `otherPrice`'s leg fills instead of `order` at `price`. */
export function otherLegFirst(
  rule: SameBarRule,
  order: VenueOrder,
  price: number,
  otherPrice: number,
  open: number,
  close: number,
): boolean {
  const orderIsStop = order.role === 'stopLoss';
  switch (rule) {
    case 'stop-first':
      return !orderIsStop;
    case 'target-first':
      return orderIsStop;
    case 'nearest-to-open': {
      const mine = Math.abs(price - open);
      const theirs = Math.abs(otherPrice - open);
      return theirs < mine || (theirs === mine && !orderIsStop);
    }
    case 'path':
      // The legs sit on either side of the entry: the one on the side the path visits first goes first.
      return lowFirst(open, close) ? otherPrice < price : otherPrice > price;
  }
}
