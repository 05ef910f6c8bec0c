/**
 * `contracts: [F.US.XX]` in a paper or live config, for a symbol the contract calendar does not know: it
 * stands for the gateway's front month of that symbol (the contract it marks `activeContract`) when the
 * session starts, and stays on it. A root or symbol the calendar knows (`ES`, `F.US.EP`) is not resolved
 * here: the session follows its front month and rolls (src/adapters/live/month-follower.ts). Contract ids
 * pass unchanged.
 */
import { TradingClient } from '../adapters/gateway/trading.ts';
import type { Credentials } from '../adapters/live/live-config.ts';
import { followedSymbol } from '../adapters/live/month-follower.ts';
import type { Logger } from '../engine/log.ts';
import { UsageError } from './exit.ts';

const SYMBOL_ID = /^F\.US\.[A-Z0-9]+$/i;

/** A symbol id the session cannot follow (its root is not in the contract calendar). */
function pinnedAtStart(entry: string): boolean {
  return SYMBOL_ID.test(entry) && followedSymbol(entry) === undefined;
}

export function namesSymbols(contracts: readonly string[]): boolean {
  return contracts.some(pinnedAtStart);
}

/** The config's contracts with every symbol id replaced by its front month at the gateway. */
export async function resolveFrontMonths(
  contracts: readonly string[],
  gateway: { tradingUrl: string; credentials: Credentials; logger: Logger; now?: () => number },
): Promise<string[]> {
  if (!namesSymbols(contracts)) return [...contracts];
  const client = new TradingClient({
    baseUrl: gateway.tradingUrl,
    ...gateway.credentials,
    logger: gateway.logger,
    ...(gateway.now ? { now: gateway.now } : {}),
  });
  try {
    const available = await client.availableContracts(false);
    return contracts.map((entry) => {
      if (!pinnedAtStart(entry)) return entry;
      const front = available.find((c) => c.activeContract && c.symbolId.toUpperCase() === entry.toUpperCase());
      if (!front) throw new UsageError(`contracts: the gateway lists no front month of ${entry}`);
      gateway.logger.warn(
        { symbolId: entry, contractId: front.id },
        'front month at start; no contract calendar for this symbol, so the session stays on this month (no roll)',
      );
      return front.id;
    });
  } finally {
    await client.close();
  }
}
