/**
 * Start-up reconciliation: before the bot sends anything, the journal is compared with what the gateway
 * holds (orders by customTag and venue id, open orders, trades since the journal's cursor, positions),
 * every unresolved place is settled by a lookup, and every difference is reported. Nothing is re-sent:
 * an order the journal wrote but the gateway never got is marked lost; an order the gateway has under
 * one of our tags but the journal never wrote (a lost or replaced journal) moves the tag sequence past it.
 */
import type * as S from '../../protocol/schemas.ts';
import type { Logger } from '../../engine/log.ts';
import type { ExecutionClient, LiveExecutor } from './executor.ts';
import { parseTag, type Journal } from './journal.ts';

export interface PositionDifference {
  readonly contractId: string;
  /** Signed, from the journal's fills. */
  readonly journal: number;
  /** Signed, from Position/searchOpen. */
  readonly gateway: number;
}

export interface ReconcileReport {
  /** Orders whose place was unresolved in the journal, and what they turned out to be. */
  readonly resolved: ReadonlyArray<{ readonly tag: string; readonly state: string }>;
  /** Tags with one of our strategy prefixes at the gateway that the journal does not know. */
  readonly unjournaledTags: readonly string[];
  /** Open orders at the gateway that are not the bot's (placed by hand, bracket children, another bot). */
  readonly foreignOpenOrders: ReadonlyArray<{
    readonly id: number;
    readonly contractId: string;
    readonly size: number;
    readonly side: number;
  }>;
  readonly positionDifferences: readonly PositionDifference[];
  readonly positions: readonly S.Position[];
  /** Next tag sequence per strategy, past everything journaled or found at the gateway. */
  readonly sequenceStart: Readonly<Record<string, number>>;
  readonly clean: boolean;
}

export interface ReconcileOptions {
  readonly client: ExecutionClient;
  readonly journal: Journal;
  readonly executor: LiveExecutor;
  readonly accountId: number;
  readonly strategyIds: readonly string[];
  readonly now: () => number;
  readonly logger: Logger;
  /** How far back Order/search and Trade/search look when the journal has nothing older (default 24 h). */
  readonly lookbackMs?: number;
}

export function signedSize(p: S.Position): number {
  return p.type === 2 ? -p.size : p.size;
}

export async function reconcileOnStart(o: ReconcileOptions): Promise<ReconcileReport> {
  const now = o.now();
  const lookback = o.lookbackMs ?? 24 * 3_600_000;
  const unresolvedBefore = o.journal.orders({ states: ['submitting', 'unknown'] }).map((x) => x.tag);
  const live = o.journal.orders({ states: ['submitting', 'unknown', 'working', 'cancelling', 'lost'] });
  const from = Math.min(now - lookback, ...live.map((x) => x.createdAt - 120_000));
  o.journal.record('reconcile', 'before', null, { from: new Date(from).toISOString(), unresolved: unresolvedBefore });

  const orders = await o.client.searchOrders({ accountId: o.accountId, startTimestamp: new Date(from).toISOString() });
  o.executor.applyOrderSearch(orders, from);

  const prefixes = new Set(o.strategyIds);
  const unjournaledTags: string[] = [];
  for (const order of orders) {
    if (!order.customTag) continue;
    const parsed = parseTag(order.customTag);
    if (!parsed || !prefixes.has(parsed.strategyId)) continue;
    o.journal.noteSequence(parsed.strategyId, parsed.sequence);
    if (!o.journal.order(order.customTag)) unjournaledTags.push(order.customTag);
  }

  const open = await o.client.searchOpenOrders(o.accountId);
  o.executor.applyOpenOrders(open);
  const foreignOpenOrders = open
    .filter((x) => !o.journal.orderByVenueId(x.id))
    .map((x) => ({ id: x.id, contractId: x.contractId, size: x.size, side: x.side }));

  const cursor = o.journal.getMeta('tradeCursor');
  const tradesFrom = cursor === undefined ? from : Math.min(Number(cursor) - 60_000, from);
  const trades = await o.client.searchTrades({
    accountId: o.accountId,
    startTimestamp: new Date(tradesFrom).toISOString(),
  });
  const applied = o.executor.applyTrades(trades);
  if (applied.newest !== undefined && applied.heldBack === undefined)
    o.journal.setMeta('tradeCursor', String(applied.newest));

  const positions = await o.client.searchOpenPositions(o.accountId);
  o.executor.setPositions(positions);
  const journalPositions = o.journal.positionsFromFills();
  const gatewayPositions = new Map(positions.map((p) => [p.contractId, signedSize(p)]));
  const positionDifferences: PositionDifference[] = [];
  for (const contractId of new Set([...journalPositions.keys(), ...gatewayPositions.keys()])) {
    const j = journalPositions.get(contractId) ?? 0;
    const g = gatewayPositions.get(contractId) ?? 0;
    if (j !== g) positionDifferences.push({ contractId, journal: j, gateway: g });
  }

  const resolved = unresolvedBefore.map((tag) => ({ tag, state: o.journal.order(tag)?.state ?? 'missing' }));
  const sequenceStart = Object.fromEntries(o.strategyIds.map((id) => [id, o.journal.nextSequence(id)]));
  const report: ReconcileReport = {
    resolved,
    unjournaledTags,
    foreignOpenOrders,
    positionDifferences,
    positions,
    sequenceStart,
    clean: unjournaledTags.length === 0 && foreignOpenOrders.length === 0 && positionDifferences.length === 0,
  };
  o.journal.record('reconcile', 'after', null, report);
  if (report.clean) o.logger.info({ resolved, sequenceStart }, 'reconciled journal with the gateway: no differences');
  else
    o.logger.warn(
      { resolved, unjournaledTags, foreignOpenOrders, positionDifferences, sequenceStart },
      'reconciled journal with the gateway: differences found',
    );
  return report;
}
