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
    const found = contracts.resolve(text, Date.UTC(2026, 0, 1));
    if (found !== undefined) return found.spec.root;
  }
  return undefined;
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
  const known = new Set(calendar.roots());
  const out: Record<string, MarketHours> = {};
  for (const contract of contracts) {
    const root = contractRoot(contract, options.roots);
    if (root !== undefined && known.has(root.toUpperCase())) out[contract.id] = rootMarketHours(root, calendar);
  }
  return out;
}
