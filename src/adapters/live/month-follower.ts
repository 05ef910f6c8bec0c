/**
 * Following the front month. A session configured with a root or a symbol id (`ES`, `F.US.EP`) runs its
 * strategy on one stable logical contract, the symbol id, as a continuous backtest does: the engine's
 * positions, orders and bars are the symbol's. This module maps the symbol to the month traded now
 * (`ContractRoutes`: orders, bars and quotes go to that month; fills and order updates of any month of the
 * root come back under the symbol), decides when the front month moves (the contract calendar's roll date,
 * `roll.daysBeforeExpiry` business days before expiry, the root's own rule by default: the rule the
 * simulator's and the gateway's `activeContract` follow), and when a pinned month must be flattened before
 * its last session ends. The roll itself (close, move, warm up, reopen) is the session's.
 *
 * It also holds the executor's last guard: no order is sent to a month at or after its final settlement.
 */
import { BehaviorSubject, map, type Observable } from 'rxjs';
import { CALENDAR, type FuturesContract } from '../../market/contract-months.ts';
import { EXCHANGE_CALENDAR } from '../../market/exchange-hours.ts';
import type { ModifyCommand, OrderCommand, Venue, VenueEvent } from '../../engine/types.ts';

const SYMBOL_ID = /^F\.US\.([A-Z0-9]+)$/;

/** The roll settings of a session (the config's `roll`): the backtest's keys and meanings. */
export interface RollSettings {
  /** `roll`: close in the old month and reopen the same position in the new; `flatten`: only close. */
  readonly mode: 'roll' | 'flatten';
  /** Business days before expiry the front month moves; the root's own rule when absent. */
  readonly daysBeforeExpiry?: number | undefined;
  /** A pinned month is flattened this many minutes before its final settlement. */
  readonly expiryMarginMinutes: number;
}

/**
 * The symbol id a config entry follows (`ES` or `F.US.EP` → `F.US.EP`), or undefined for a contract id
 * (a pinned month) or a symbol the contract calendar does not know (resolved once, at start, by the CLI).
 */
export function followedSymbol(entry: string): string | undefined {
  const key = entry.trim().toUpperCase();
  if (key.startsWith('CON.')) return undefined;
  const symbol = SYMBOL_ID.exec(key)?.[1];
  const spec =
    symbol === undefined ? CALENDAR.root(key) : CALENDAR.roots().find((r) => r.symbol.toUpperCase() === symbol);
  return spec === undefined ? undefined : `F.US.${spec.symbol}`;
}

/** The front month of a followed symbol at `t` (the calendar's, with the configured days). */
export function frontMonthOf(symbolId: string, t: number, daysBeforeExpiry?: number): FuturesContract {
  const spec = CALENDAR.roots().find((r) => `F.US.${r.symbol}` === symbolId);
  if (spec === undefined) throw new RangeError(`no contract calendar for ${symbolId}`);
  return CALENDAR.contract(spec, CALENDAR.frontMonth(spec, t, daysBeforeExpiry));
}

/**
 * The instant a month stops trading (its final settlement, at the exchange's hour of its family), or
 * undefined for an id the contract calendar cannot read.
 */
export function expiryInstant(contractId: string): number | undefined {
  const contract = CALENDAR.byId(contractId);
  if (contract === undefined) return undefined;
  // A root without exchange hours: the end of its last trading day.
  if (!EXCHANGE_CALENDAR.knows(contract.spec.root)) return contract.expiry + 86_400_000;
  return EXCHANGE_CALENDAR.monthExpiry(contract);
}

/** The month each followed symbol trades now, and the way back from any month of its root to the symbol. */
export class ContractRoutes {
  private readonly current = new Map<string, BehaviorSubject<string>>();

  constructor(initial: Iterable<readonly [symbolId: string, contractId: string]>) {
    for (const [symbolId, contractId] of initial) this.current.set(symbolId, new BehaviorSubject(contractId));
  }

  /** The followed symbols. */
  symbols(): string[] {
    return [...this.current.keys()];
  }

  /** The month an id stands for now: a followed symbol's current month, any other id itself. */
  route(id: string): string {
    return this.current.get(id)?.value ?? id;
  }

  /** The id the engine knows a gateway contract by: the followed symbol of its root, else the id itself. */
  logical(contractId: string): string {
    if (this.current.size === 0 || this.current.has(contractId)) return contractId;
    const symbolId = CALENDAR.byId(contractId)?.symbolId;
    return symbolId !== undefined && this.current.has(symbolId) ? symbolId : contractId;
  }

  /** The current month of a followed symbol, now and at every roll (an id that is not followed: itself). */
  changes(id: string): Observable<string> {
    return this.current.get(id)?.asObservable() ?? new BehaviorSubject(id).asObservable();
  }

  move(symbolId: string, contractId: string): void {
    const subject = this.current.get(symbolId);
    if (subject === undefined) throw new RangeError(`${symbolId} is not followed`);
    subject.next(contractId);
  }

  get following(): boolean {
    return this.current.size > 0;
  }
}

/**
 * The engine's venue for a session that follows the front month: commands on a followed symbol go to its
 * current month, and every event of a month of its root comes back under the symbol. Synchronous, like
 * the venue it wraps.
 */
export function routedVenue(venue: Venue, routes: ContractRoutes): Venue {
  if (!routes.following) return venue;
  const relabel = (event: VenueEvent): VenueEvent => {
    if (event.kind === 'account') return event;
    const logical = routes.logical(event.contractId);
    return logical === event.contractId ? event : { ...event, contractId: logical };
  };
  return {
    traits: venue.traits,
    events: venue.events.pipe(map(relabel)),
    place: (command: OrderCommand) => venue.place({ ...command, contractId: routes.route(command.contractId) }),
    modify: (command: ModifyCommand) => venue.modify(command),
    cancel: (orderId: string) => venue.cancel(orderId),
  };
}

/** What the follower found due at an instant. */
export type MonthEvent =
  | { readonly kind: 'roll'; readonly symbolId: string; readonly from: string; readonly to: string }
  | { readonly kind: 'expiring'; readonly contractId: string; readonly expiresAt: number };

/**
 * Decides, at each look (every poll round), whether a followed symbol's front month moved or a pinned
 * month is about to expire. Each event is reported once.
 */
export class FrontMonthFollower {
  private readonly expiring = new Set<string>();

  constructor(
    private readonly routes: ContractRoutes,
    private readonly pinned: readonly string[],
    private readonly settings: RollSettings,
  ) {}

  due(now: number): MonthEvent[] {
    const events: MonthEvent[] = [];
    for (const symbolId of this.routes.symbols()) {
      const from = this.routes.route(symbolId);
      const to = frontMonthOf(symbolId, now, this.settings.daysBeforeExpiry).id;
      if (to !== from) events.push({ kind: 'roll', symbolId, from, to });
    }
    for (const contractId of this.pinned) {
      if (this.expiring.has(contractId)) continue;
      const expiresAt = expiryInstant(contractId);
      if (expiresAt === undefined || now < expiresAt - this.settings.expiryMarginMinutes * 60_000) continue;
      this.expiring.add(contractId);
      events.push({ kind: 'expiring', contractId, expiresAt });
    }
    return events;
  }
}
