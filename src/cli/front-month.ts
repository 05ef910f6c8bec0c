/**
 * `contracts: [F.US.EP]` in a paper or live config: a symbol id stands for the gateway's front month of
 * that symbol (the contract it marks `activeContract`) when the session starts. The gateway decides, not
 * a calendar of ours, so a real gateway's roll day is the one that counts; contract ids pass unchanged.
 */
import { TradingClient } from '../adapters/gateway/trading.ts';
import type { Credentials } from '../adapters/live/live-config.ts';
import type { Logger } from '../engine/log.ts';
import { UsageError } from './exit.ts';

const SYMBOL_ID = /^F\.US\.[A-Z0-9]+$/i;

export function namesSymbols(contracts: readonly string[]): boolean {
  return contracts.some((c) => SYMBOL_ID.test(c));
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
      if (!SYMBOL_ID.test(entry)) return entry;
      const front = available.find((c) => c.activeContract && c.symbolId.toUpperCase() === entry.toUpperCase());
      if (!front) throw new UsageError(`contracts: the gateway lists no front month of ${entry}`);
      gateway.logger.info({ symbolId: entry, contractId: front.id }, 'front month');
      return front.id;
    });
  } finally {
    await client.close();
  }
}
