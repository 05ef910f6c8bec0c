/**
 * The contract a backtest trades: a catalogue contract by id, short name or symbol (real tick sizes and
 * values from src/sim/catalogue.ts), or one written out in the config.
 */
import { findContract, CONTRACTS } from '../../sim/catalogue.ts';
import { PriceGrid } from '../../engine/ticks.ts';
import type { ContractSpec } from '../../engine/types.ts';

export interface BacktestContract extends ContractSpec {
  /** Typical fee per contract per side from the catalogue (0 for a contract written out in the config). */
  readonly feePerSide: number;
  /** A sensible start price for the synthetic market. */
  readonly startPrice: number | undefined;
}

export class UnknownContractError extends Error {
  override readonly name = 'UnknownContractError';
  readonly code = 'UNKNOWN_CONTRACT';
}

export type ContractInput = string | { id: string; name: string; symbolId?: string | undefined; tickSize: number; tickValue: number };

export function resolveContract(input: ContractInput): BacktestContract {
  if (typeof input !== 'string') {
    return {
      id: input.id,
      name: input.name,
      symbolId: input.symbolId ?? input.name,
      description: input.name,
      grid: new PriceGrid(input.tickSize, input.tickValue),
      feePerSide: 0,
      startPrice: undefined,
    };
  }
  const found = findContract(input);
  if (found === undefined) {
    throw new UnknownContractError(`unknown contract "${input}"; known: ${CONTRACTS.filter((c) => c.activeContract).map((c) => c.name).join(', ')} (or write out id, name, tickSize and tickValue)`);
  }
  return { id: found.id, name: found.name, symbolId: found.symbolId, description: found.description, grid: found.grid, feePerSide: found.feePerSide, startPrice: found.startPrice };
}
