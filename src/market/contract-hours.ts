/**
 * The engine's `MarketHours` of a contract, from the exchange calendar of its root (exchange-hours.ts):
 * what the backtest, paper and live adapters give `createEngine`. The root is found from the contract's
 * gateway id (`CON.F.US.EP.Z26`) or its symbol (`F.US.EP`) in the contract calendar.
 */
import type { MarketHours } from '../engine/market-hours.ts';
import type { ContractSpec } from '../engine/types.ts';
import { CALENDAR, type ContractCalendar } from './contract-months.ts';
import { EXCHANGE_CALENDAR, ExchangeCalendar } from './exchange-hours.ts';

/**
 * Outside the years the holiday data covers: `weeklyHours` answers from the regular week of today's hours
 * (no holidays); `throw` fails (OUTSIDE_HOLIDAY_COVERAGE) when a time outside them is asked.
 */
export type BeyondCoverage = 'weeklyHours' | 'throw';

let weekly: ExchangeCalendar | undefined;

/** The built-in roots' calendar for a choice beyond the covered years (one per process). */
export function exchangeCalendarFor(beyondCoverage: BeyondCoverage): ExchangeCalendar {
  if (beyondCoverage === 'throw') return EXCHANGE_CALENDAR;
  weekly ??= new ExchangeCalendar({ beyondCoverage: 'weeklyHours' });
  return weekly;
}

/** A root's hours as the engine reads them. */
export function rootMarketHours(root: string, calendar: ExchangeCalendar): MarketHours {
  // Resolve the root now: an unknown one fails here, not at the first bar.
  calendar.familyOf(root);
  return {
    isOpen: (t) => calendar.isOpen(root, t),
    nextClose: (t) => calendar.nextClose(root, t),
    nextOpen: (t) => calendar.nextOpen(root, t),
    tradingDay: (t) => calendar.tradingDay(root, t),
  };
}

/** The root of a contract (`ES` for `CON.F.US.EP.Z26` or `F.US.EP`), or undefined when it is not a known root's. */
export function contractRoot(
  contract: Pick<ContractSpec, 'id' | 'symbolId'>,
  contracts: ContractCalendar = CALENDAR,
): string | undefined {
  const byId = contracts.byId(contract.id.toUpperCase());
  if (byId !== undefined) return byId.spec.root;
  for (const text of [contract.symbolId, contract.id]) {
    if (text === undefined || text === '') continue;
    // Only the root is read: any instant names the same root, so the epoch serves (no date to age).
    const found = contracts.resolve(text, 0);
    if (found !== undefined) return found.spec.root;
  }
  return undefined;
}

/**
 * Whether a gateway contract's market is open at an instant, by its root's hours (the root found once per
 * contract id); a contract of no known root counts as open. What the live executor and the market feed's
 * watchdog ask before sending an order or taking silence for a fault.
 */
export function contractMarketOpen(
  beyondCoverage: BeyondCoverage = 'weeklyHours',
): (contractId: string, time: number) => boolean {
  const calendar = exchangeCalendarFor(beyondCoverage);
  const roots = new Map<string, string | undefined>();
  return (contractId, time) => {
    if (!roots.has(contractId)) {
      const root = contractRoot({ id: contractId, symbolId: '' });
      roots.set(contractId, root !== undefined && calendar.knows(root) ? root : undefined);
    }
    const root = roots.get(contractId);
    return root === undefined || calendar.isOpen(root, time);
  };
}

/**
 * The market hours of each contract whose root the exchange calendar knows, by contract id (for
 * `EngineOptions.marketHours`); the others are left out (the engine counts them always open).
 */
export function contractMarketHours(
  contracts: readonly Pick<ContractSpec, 'id' | 'symbolId'>[],
  options: { beyondCoverage?: BeyondCoverage; roots?: ContractCalendar; calendar?: ExchangeCalendar } = {},
): Record<string, MarketHours> {
  const calendar = options.calendar ?? exchangeCalendarFor(options.beyondCoverage ?? 'weeklyHours');
  const out: Record<string, MarketHours> = {};
  for (const contract of contracts) {
    const root = contractRoot(contract, options.roots);
    if (root !== undefined && calendar.knows(root)) out[contract.id] = rootMarketHours(root, calendar);
  }
  return out;
}
