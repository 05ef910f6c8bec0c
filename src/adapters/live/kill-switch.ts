/**
 * The kill switch as a standalone operation (the `flatten` command, usable while a bot runs or after it
 * died): cancel every open order and close every position of an account at the gateway, then read back
 * until the account shows flat or the deadline passes. Writes are sent once each; a write whose outcome
 * is unknown is judged by the read-back, never re-sent blindly within one round.
 */
import type { Logger } from '../../engine/log.ts';
import type { TradingClient } from '../gateway/trading.ts';
import { GatewayError } from '../gateway/gateway-errors.ts';

export function describe(error: unknown): string {
  if (error instanceof GatewayError)
    return `${error.code}${error.errorName ? ` ${error.errorName}` : ''}: ${error.message}`;
  return error instanceof Error ? error.message : String(error);
}

/**
 * Who pulled the kill switch, journaled with it: an operator's page (`dashboard`), a signal to the process
 * (`signal`), a command (`command`), or the session itself (`session`: its end, a failed strategy, an
 * expiring month). Records written before the source was kept have none.
 */
export type KillSource = 'dashboard' | 'signal' | 'command' | 'session';

export interface FlattenResult {
  readonly rounds: number;
  readonly cancelled: number[];
  readonly closed: string[];
  readonly failures: string[];
  readonly flat: boolean;
  readonly remaining: { readonly orders: number; readonly positions: number };
}

export async function flattenAccount(
  client: Pick<TradingClient, 'searchOpenOrders' | 'searchOpenPositions' | 'cancelOrder' | 'closePosition'>,
  accountId: number,
  logger: Logger,
  options: { contractId?: string; rounds?: number; pauseMs?: number } = {},
): Promise<FlattenResult> {
  const cancelled: number[] = [];
  const closed: string[] = [];
  const failures: string[] = [];
  const rounds = options.rounds ?? 5;
  const match = (contractId: string): boolean => options.contractId === undefined || contractId === options.contractId;
  let remaining = { orders: 0, positions: 0 };
  for (let round = 1; round <= rounds; round++) {
    // Read back first: a round only acts on what the gateway still shows after the previous one.
    const open = (await client.searchOpenOrders(accountId)).filter((o) => match(o.contractId));
    const positions = (await client.searchOpenPositions(accountId)).filter((p) => match(p.contractId));
    remaining = { orders: open.length, positions: positions.length };
    if (open.length === 0 && positions.length === 0)
      return { rounds: round, cancelled, closed, failures, flat: true, remaining };
    for (const o of open) {
      try {
        await client.cancelOrder({ accountId, orderId: o.id });
        cancelled.push(o.id);
      } catch (error) {
        failures.push(`cancel ${o.id}: ${describe(error)}`);
        logger.warn({ endpoint: 'Order/cancel', orderId: o.id, err: error }, 'flatten: cancel failed');
      }
    }
    for (const p of positions) {
      try {
        await client.closePosition({ accountId, contractId: p.contractId });
        closed.push(p.contractId);
      } catch (error) {
        failures.push(`close ${p.contractId}: ${describe(error)}`);
        logger.warn(
          { endpoint: 'Position/closeContract', contractId: p.contractId, err: error },
          'flatten: close failed',
        );
      }
    }
    await new Promise((resolve) => setTimeout(resolve, options.pauseMs ?? 250));
  }
  return { rounds, cancelled, closed, failures, flat: false, remaining };
}

/** What a flatten did, in words: for the operator (the kill switch, `tickline flatten`). */
export function flattenText(account: string, result: FlattenResult): string {
  const parts = [
    result.cancelled.length === 0
      ? 'no open order to cancel'
      : `cancelled ${result.cancelled.length} order${result.cancelled.length === 1 ? '' : 's'} (${result.cancelled.join(', ')})`,
    result.closed.length === 0 ? 'no position to close' : `closed ${result.closed.join(', ')}`,
  ];
  const outcome = result.flat
    ? `account ${account} is flat`
    : `account ${account} is NOT flat: ${result.remaining.orders} open order(s), ${result.remaining.positions} position(s) remain`;
  const failures = result.failures.length === 0 ? '' : `; failures: ${result.failures.join('; ')}`;
  return `${outcome} (${parts.join(', ')}; ${result.rounds} round${result.rounds === 1 ? '' : 's'})${failures}`;
}
