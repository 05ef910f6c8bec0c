/** Stored rows as the wire records of the spec: orders, trades and position prices in decimals. */
import { OrderType } from '../protocol/codes.ts';
import type * as S from '../protocol/schemas.ts';
import { trailStopPrice, type TrailState } from '../engine/trailing.ts';
import type { FuturesContract } from '../market/contract-months.ts';
import type { OrderRow, PositionRow, TradeRow } from './store.ts';
import { iso } from './wire.ts';

/** A price in ticks as a decimal: exact on the grid, with four more places for an average between ticks. */
export function priceOf(contract: FuturesContract | undefined, ticks: number): number {
  if (!contract) return ticks;
  if (Number.isInteger(ticks)) return contract.grid.toPrice(ticks);
  return Number((ticks * contract.tickSize).toFixed(contract.grid.decimals + 4));
}

export function averagePrice(contract: FuturesContract | undefined, p: PositionRow): number {
  return priceOf(contract, p.average_ticks);
}

export function trailState(o: OrderRow): TrailState {
  return {
    side: o.side === 0 ? 'buy' : 'sell',
    distance: o.trail_distance as number,
    extreme: o.trail_extreme as number,
  };
}

export function openOrderRecord(contract: FuturesContract | undefined, o: OrderRow): S.OpenOrder {
  const price = (ticks: number | null): number | null => (ticks === null ? null : priceOf(contract, ticks));
  const stop =
    o.type === OrderType.TrailingStop && o.trail_distance !== null && o.trail_extreme !== null
      ? trailStopPrice(trailState(o))
      : o.stop_ticks;
  return {
    id: o.id,
    accountId: o.account_id,
    contractId: o.contract_id,
    creationTimestamp: iso(o.created_at),
    updateTimestamp: iso(o.updated_at),
    status: o.status,
    type: o.type,
    side: o.side,
    size: o.size,
    limitPrice: price(o.limit_ticks),
    stopPrice: price(stop),
    filledPrice: o.fill_volume > 0 ? price(o.filled_value / o.fill_volume) : null,
  };
}

export function orderRecord(contract: FuturesContract | undefined, o: OrderRow): S.Order {
  return {
    ...openOrderRecord(contract, o),
    symbolId: contract?.symbolId ?? '',
    fillVolume: o.fill_volume,
    customTag: o.custom_tag,
  };
}

export function tradeRecord(contract: FuturesContract | undefined, t: TradeRow): S.Trade {
  return {
    id: t.id,
    accountId: t.account_id,
    contractId: t.contract_id,
    creationTimestamp: iso(t.created_at),
    price: priceOf(contract, t.price_ticks),
    profitAndLoss: t.pnl,
    fees: t.fees,
    side: t.side,
    size: t.size,
    voided: t.voided === 1,
    orderId: t.order_id,
  };
}
