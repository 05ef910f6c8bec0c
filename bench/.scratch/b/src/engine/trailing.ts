/**
 * Trailing-stop arithmetic shared by the simulator's matching engine and the backtest's fill model, so the
 * two cannot drift apart. Semantics of spec 4.1: `trailPrice` is an absolute price; at acceptance the
 * gap between the last traded price and it becomes a whole number of ticks, and from then on the stop
 * trails the best price seen by that many ticks. There is deliberately no maximum-distance check here:
 * that is the risk guard's job, as the server has none.
 */
import type { Side } from './types.ts';

export interface TrailState {
  /** Side of the stop order: `sell` protects a long (stop below), `buy` protects a short (stop above). */
  readonly side: Side;
  /** Whole ticks between the best price seen and the stop. */
  readonly distance: number;
  /** Best price seen since acceptance, in ticks: the highest for a sell stop, the lowest for a buy stop. */
  readonly extreme: number;
}

/** Start (or restart, on a modify) a trail from the last traded price and an absolute `trailPrice`, both in ticks. */
export function startTrail(side: Side, lastPrice: number, trailPrice: number): TrailState {
  if (!Number.isInteger(lastPrice) || !Number.isInteger(trailPrice)) {
    throw new RangeError(`trail prices must be whole ticks, got last ${lastPrice} and trail ${trailPrice}`);
  }
  return { side, distance: Math.abs(lastPrice - trailPrice), extreme: lastPrice };
}

/** The stop level now, in ticks. */
export function trailStopPrice(state: TrailState): number {
  return state.side === 'sell' ? state.extreme - state.distance : state.extreme + state.distance;
}

/** Move the extreme with a new traded price (only in the position's favour). */
export function advanceTrail(state: TrailState, price: number): TrailState {
  const better = state.side === 'sell' ? price > state.extreme : price < state.extreme;
  return better ? { ...state, extreme: price } : state;
}

/** True when a traded price reaches the stop. */
export function trailTriggered(state: TrailState, price: number): boolean {
  const stop = trailStopPrice(state);
  return state.side === 'sell' ? price <= stop : price >= stop;
}
