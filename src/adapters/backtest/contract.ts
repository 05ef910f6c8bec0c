/**
 * The contract a backtest trades: a month of the contract calendar (src/market/contract-months.ts: real tick
 * sizes, values and fees) by id, name or symbol, or one written out in the config.
 */
import { CALENDAR, type ContractCalendar, type RootSpec } from '../../market/contract-months.ts';
import { PriceGrid } from '../../engine/ticks.ts';
import type { ContractSpec } from '../../engine/types.ts';
import { TicklineError } from '../../engine/errors.ts';

export interface BacktestContract extends ContractSpec {
  /** Typical fee per contract per side from the calendar (0 for a contract written out in the config). */
  readonly feePerSide: number;
  /** A sensible start price for the synthetic market. */
  readonly startPrice: number | undefined;
  /**
   * Set when the config names a root (`ES`): the run trades the front month at each date, stitched from
   * the months of the history (src/data/continuous.ts). The engine then trades one id, the
   * root's symbol (`F.US.EP`), and every trade is labelled with the month it was made in.
   */
  readonly continuous?: { readonly root: RootSpec; readonly calendar: ContractCalendar };
}

export class UnknownContractError extends TicklineError {
  override readonly name = 'UnknownContractError';
  readonly kind = 'config';
  readonly code = 'UNKNOWN_CONTRACT';
}

export type ContractInput =
  | string
  | { id: string; name: string; symbolId?: string | undefined; tickSize: number; tickValue: number };

/**
 * `on` is the date a one-digit year (`ESZ5`) and a symbol (`F.US.EP`, the front month) are read at: the
 * backtest passes the start of its data when the config gives one, so a run does not depend on the day
 * it is made.
 */
export function resolveContract(
  input: ContractInput,
  on: number = Date.now(),
  calendar: ContractCalendar = CALENDAR,
): BacktestContract {
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
  const root = calendar.root(input.trim());
  if (root !== undefined) return continuousContract(root, calendar);
  const found = calendar.resolve(input, on);
  if (found === undefined) {
    const roots = calendar
      .roots()
      .map((r) => `${r.root} (${r.cycle})`)
      .join(', ');
    throw new UnknownContractError(
      `unknown contract "${input}": write a root (ES: the front month at each date), a gateway id (CON.F.US.EP.Z25), a name (ESZ5 or ESZ25) or a symbol (F.US.EP) of a known root and one of its months: ${roots} (or write out id, name, tickSize and tickValue)`,
    );
  }
  return {
    id: found.id,
    name: found.name,
    symbolId: found.symbolId,
    description: found.description,
    grid: found.grid,
    feePerSide: found.feePerSide,
    startPrice: found.startPrice,
  };
}

/** The front month of `root` at each date, as one engine contract (the root's gateway symbol id). */
function continuousContract(root: RootSpec, calendar: ContractCalendar): BacktestContract {
  return {
    id: `F.US.${root.symbol}`,
    name: root.root,
    symbolId: `F.US.${root.symbol}`,
    description: `${root.title}: front month`,
    grid: calendar.grid(root),
    feePerSide: root.feePerSide,
    startPrice: root.startPrice,
    continuous: { root, calendar },
  };
}
