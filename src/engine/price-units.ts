/**
 * Prices in, ticks inside. Strategies write prices as people think of them (`limitOrder('buy', 1,
 * 4501.25)`); the engine works in integer ticks. An intent whose `unit` is `'price'` is converted here,
 * exactly (decimal digits, not float division), where it enters the engine; a price off the contract's
 * grid is refused with the price and the nearest valid ones. Code that already computes in ticks (from
 * bar fields, which are ticks) says `unit: 'ticks'` and skips the conversion.
 */
import type { GuardResult } from './risk.ts';
import type { ContractSpec, ModifyIntent, OrderSpec, PlaceIntent } from './types.ts';

type PriceField = 'limitPrice' | 'stopPrice' | 'trailPrice';

function offGrid(contract: ContractSpec, field: PriceField, price: number): GuardResult {
  const grid = contract.grid;
  const below = Math.floor(grid.toTicks(price));
  return {
    accepted: false,
    code: 'TICK_MISALIGNED',
    message: `${field} ${price} is not on the ${grid.tickSize} grid of ${contract.name}: nearest valid ${grid.toPrice(below)} or ${grid.toPrice(below + 1)}`,
  };
}

function ticksOf(contract: ContractSpec, field: PriceField, price: number): number | GuardResult {
  const ticks = contract.grid.toTicks(price);
  return Number.isInteger(ticks) ? ticks : offGrid(contract, field, price);
}

function specInTicks(contract: ContractSpec, spec: OrderSpec): OrderSpec | GuardResult {
  switch (spec.type) {
    case 'market':
      return spec;
    case 'limit': {
      const limitPrice = ticksOf(contract, 'limitPrice', spec.limitPrice);
      return typeof limitPrice === 'number' ? { type: 'limit', limitPrice } : limitPrice;
    }
    case 'stop': {
      const stopPrice = ticksOf(contract, 'stopPrice', spec.stopPrice);
      return typeof stopPrice === 'number' ? { type: 'stop', stopPrice } : stopPrice;
    }
    case 'stopLimit': {
      const stopPrice = ticksOf(contract, 'stopPrice', spec.stopPrice);
      if (typeof stopPrice !== 'number') return stopPrice;
      const limitPrice = ticksOf(contract, 'limitPrice', spec.limitPrice);
      return typeof limitPrice === 'number' ? { type: 'stopLimit', stopPrice, limitPrice } : limitPrice;
    }
    case 'trailingStop': {
      const trailPrice = ticksOf(contract, 'trailPrice', spec.trailPrice);
      return typeof trailPrice === 'number' ? { type: 'trailingStop', trailPrice } : trailPrice;
    }
  }
}

/** A place intent with its prices in ticks, or the refusal of a price off the grid. */
export function placeInTicks(intent: PlaceIntent, contract: ContractSpec): PlaceIntent | GuardResult {
  const { unit: _unit, ...rest } = intent;
  const order = specInTicks(contract, intent.order);
  if ('accepted' in order) return order;
  return { ...rest, order };
}

/** A modify intent with its prices in ticks, or the refusal of a price off the grid. */
export function modifyInTicks(intent: ModifyIntent, contract: ContractSpec): ModifyIntent | GuardResult {
  const { unit: _unit, ...rest } = intent;
  let out: ModifyIntent = rest;
  for (const field of ['limitPrice', 'stopPrice', 'trailPrice'] as const) {
    const price = intent[field];
    if (price === undefined) continue;
    const ticks = ticksOf(contract, field, price);
    if (typeof ticks !== 'number') return ticks;
    out = { ...out, [field]: ticks };
  }
  return out;
}
