/**
 * A strategy's own exposure on a contract it shares with other strategies: its line of the ledger, the
 * fills of its orders reported but not delivered yet, and its own working and pending orders. A target on
 * a shared contract moves this, not the account's, so one strategy's target never trades against another's
 * position; the guard still checks the order against the account's netted exposure.
 */
import type { Exposure, OrderBook } from './order-book.ts';
import { ownerOf, type StrategyLedger } from './strategy-ledger.ts';

/** The strategy's line plus its orders' fills reported before their trades (live). */
export function ownPosition(book: OrderBook, ledger: StrategyLedger, strategyId: string, contractId: string): number {
  let position = ledger.size(strategyId, contractId);
  if (book.provisionalPosition(contractId) === 0) return position;
  for (const p of book.provisionalOrders()) {
    if (p.contractId === contractId && ownerOf(p.orderId) === strategyId)
      position += p.side === 'buy' ? p.size : -p.size;
  }
  return position;
}

/** `OrderBook.exposure` of one strategy: its own position and its own market and limit orders. */
export function ownExposure(book: OrderBook, ledger: StrategyLedger, strategyId: string, contractId: string): Exposure {
  return book.exposureOf(contractId, ownPosition(book, ledger, strategyId, contractId), strategyId);
}
