/**
 * The simulator's contract catalogue: real exchange specifications (tick size and tick value) with the
 * gateway's id scheme `CON.F.US.<symbol>.<month><yy>`. Fees are typical per-side exchange-plus-clearing
 * costs in USD per contract; start prices seed the synthetic market near recent levels.
 */
import type { Contract } from '../adapters/gateway/schemas.ts';
import { PriceGrid } from '../engine/ticks.ts';

export interface SimContract extends Contract {
  readonly grid: PriceGrid;
  /** Fees per contract per side (one fill of one lot). */
  readonly feePerSide: number;
  /** Decimal price the synthetic market starts from. */
  readonly startPrice: number;
  /** Contract group for data exports (`contractGroupName`). */
  readonly group: string;
}

function contract(
  symbol: string,
  root: string,
  month: string,
  description: string,
  tickSize: number,
  tickValue: number,
  feePerSide: number,
  startPrice: number,
  group: string,
  activeContract = true,
): SimContract {
  const year = month.slice(1);
  return {
    id: `CON.F.US.${symbol}.${month}`,
    name: `${root}${month[0]}${year.slice(-1)}`,
    description,
    tickSize,
    tickValue,
    activeContract,
    symbolId: `F.US.${symbol}`,
    grid: new PriceGrid(tickSize, tickValue),
    feePerSide,
    startPrice,
    group,
  };
}

export const CONTRACTS: readonly SimContract[] = Object.freeze([
  contract('EP', 'ES', 'Z25', 'E-mini S&P 500: December 2025', 0.25, 12.5, 1.4, 6700, 'Equity Index'),
  contract('MES', 'MES', 'Z25', 'Micro E-mini S&P 500: December 2025', 0.25, 1.25, 0.37, 6700, 'Equity Index'),
  contract('ENQ', 'NQ', 'Z25', 'E-mini NASDAQ-100: December 2025', 0.25, 5, 1.4, 24500, 'Equity Index'),
  contract('MNQ', 'MNQ', 'Z25', 'Micro E-mini NASDAQ-100: December 2025', 0.25, 0.5, 0.37, 24500, 'Equity Index'),
  contract('YM', 'YM', 'Z25', 'E-mini Dow ($5): December 2025', 1, 5, 1.4, 46500, 'Equity Index'),
  contract('MYM', 'MYM', 'Z25', 'Micro E-mini Dow: December 2025', 1, 0.5, 0.37, 46500, 'Equity Index'),
  contract('RTY', 'RTY', 'Z25', 'E-mini Russell 2000: December 2025', 0.1, 5, 1.4, 2450, 'Equity Index'),
  contract('M2K', 'M2K', 'Z25', 'Micro E-mini Russell 2000: December 2025', 0.1, 0.5, 0.37, 2450, 'Equity Index'),
  contract('GCE', 'GC', 'G26', 'Gold: February 2026', 0.1, 10, 1.62, 4000, 'Metals'),
  contract('MGC', 'MGC', 'G26', 'Micro Gold: February 2026', 0.1, 1, 0.52, 4000, 'Metals'),
  contract('SIE', 'SI', 'H26', 'Silver: March 2026', 0.005, 25, 1.62, 48, 'Metals'),
  contract('CLE', 'CL', 'F26', 'Crude Oil: January 2026', 0.01, 10, 1.52, 60, 'Energy'),
  contract('MCLE', 'MCL', 'F26', 'Micro WTI Crude Oil: January 2026', 0.01, 1, 0.52, 60, 'Energy'),
  contract('TYA', 'ZN', 'H26', '10-Year T-Note: March 2026', 0.015625, 15.625, 0.8, 112, 'Interest Rates'),
  contract('EU6', '6E', 'Z25', 'Euro FX: December 2025', 0.00005, 6.25, 1.6, 1.16, 'Currencies'),
  // An expired contract: listed by search, refused for new orders (ContractNotActive).
  contract('EP', 'ES', 'U25', 'E-mini S&P 500: September 2025', 0.25, 12.5, 1.4, 6500, 'Equity Index', false),
]);

/** A contract by gateway id (`CON.F.US.EP.Z25`), short name (`ESZ5`) or symbol id (`F.US.EP`, the active one); case-insensitive. */
export function findContract(idOrSymbol: string): SimContract | undefined {
  const key = idOrSymbol.trim().toUpperCase();
  return (
    CONTRACTS.find((c) => c.id.toUpperCase() === key) ??
    CONTRACTS.find((c) => c.name.toUpperCase() === key && c.activeContract) ??
    CONTRACTS.find((c) => c.symbolId.toUpperCase() === key && c.activeContract)
  );
}

/** The public wire shape of a catalogue contract (the extra simulator fields stripped). */
export function contractRecord(c: SimContract): Contract {
  return {
    id: c.id,
    name: c.name,
    description: c.description,
    tickSize: c.tickSize,
    tickValue: c.tickValue,
    activeContract: c.activeContract,
    symbolId: c.symbolId,
  };
}
