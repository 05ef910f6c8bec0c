/**
 * The simulator's contracts: the contract calendar (src/market/contract-months.ts) read at the simulator's clock.
 * On any date the listed months of each root are searchable and available, the front one is the
 * `activeContract`; an expired month is still found by id (its history and positions remain) but refused
 * for orders; a month not listed yet is unknown. Also the market-data requests: Contract/search,
 * Contract/available, Contract/searchById and History/retrieveBars.
 */
import { ContractByIdErrorCode, RetrieveBarsErrorCode } from '../protocol/codes.ts';
import { Limits, type ResponseOf } from '../protocol/endpoints.ts';
import { parseDateTime, type Contract, type RetrieveBarsRequest, type TradingEnvelope } from '../protocol/schemas.ts';
import { barUnitFromCode, timeframe } from '../engine/timeframe.ts';
import {
  pricePathOf,
  type ContractCalendar,
  type ContractStatus,
  type FuturesContract,
  type RootSpec,
} from '../market/contract-months.ts';
import { EXCHANGE_CALENDAR, ExchangeCalendar, type HoursFamily } from '../market/exchange-hours.ts';
import type { SimClock } from './clock.ts';
import type { ContractMarket } from './market/market.ts';
import { fail, ok } from './wire.ts';

/** The family of hours of a root the exchange calendar does not know (a config's own root), from its group. */
const FAMILY_OF_GROUP: Readonly<Record<string, HoursFamily>> = {
  'Equity Index': 'equityIndex',
  Metals: 'energyMetals',
  Energy: 'energyMetals',
  'Interest Rates': 'interestRate',
  Currencies: 'fx',
};

/**
 * The simulator's exchange calendar: the built-in one's hours and holidays, and beyond its holiday data
 * (2025-2027) the regular week without holidays (`beyondCoverage: 'weeklyHours'`), so a simulator started
 * in 2013 or 2030 still runs. A root of the config's own trades its mini's hours, else its group's
 * (equity index hours when the group is none of the known ones).
 */
export function simExchangeCalendar(roots: readonly RootSpec[]): ExchangeCalendar {
  const known = new Set(EXCHANGE_CALENDAR.roots());
  const extra: Record<string, HoursFamily> = {};
  for (const spec of roots) {
    if (known.has(spec.root)) continue;
    const underlying = pricePathOf(spec.root);
    extra[spec.root] = known.has(underlying)
      ? EXCHANGE_CALENDAR.familyOf(underlying)
      : (FAMILY_OF_GROUP[spec.group] ?? 'equityIndex');
  }
  return new ExchangeCalendar({ roots: extra, beyondCoverage: 'weeklyHours' });
}

export class SimContracts {
  constructor(
    readonly calendar: ContractCalendar,
    private readonly clock: SimClock,
    /** The exchange hours of the roots (final settlement times): the simulator's, by default. */
    private readonly exchange: ExchangeCalendar = simExchangeCalendar(calendar.roots()),
  ) {}

  private readonly expiries = new Map<string, number>();

  /** Any month of a known root by gateway id, whatever its status. */
  byId(contractId: string): FuturesContract | undefined {
    return this.calendar.byId(contractId);
  }

  /** The instant a month stops trading and expires: its final settlement on its last trading day. */
  expiresAt(contract: FuturesContract): number {
    let at = this.expiries.get(contract.id);
    if (at === undefined) {
      at = this.exchange.monthExpiry(contract);
      this.expiries.set(contract.id, at);
    }
    return at;
  }

  status(contract: FuturesContract, t = this.clock.now()): ContractStatus {
    // The contract calendar works in whole days; a month expires at its final settlement on its last day.
    if (t >= this.expiresAt(contract)) return 'expired';
    return this.calendar.status(contract, t);
  }

  /** A contract the gateway knows at `t`: listed now or listed before (expired). */
  known(contractId: string, t = this.clock.now()): FuturesContract | undefined {
    const contract = this.byId(contractId);
    return contract && this.status(contract, t) !== 'unlisted' ? contract : undefined;
  }

  record(contract: FuturesContract, t = this.clock.now()): Contract {
    return {
      id: contract.id,
      name: contract.name,
      description: contract.description,
      tickSize: contract.tickSize,
      tickValue: contract.tickValue,
      activeContract: this.status(contract, t) === 'front',
      symbolId: contract.symbolId,
    };
  }
}

/** The market-data requests, answered from the contracts and the markets. */
export class MarketDesk {
  constructor(
    private readonly contracts: SimContracts,
    private readonly markets: ReadonlyMap<string, ContractMarket>,
    private readonly clock: SimClock,
  ) {}

  contractSearch(searchText: string): ResponseOf<'contractSearch'> {
    const now = this.clock.now();
    const text = searchText.trim().toUpperCase();
    const matches = this.listed(now).filter(
      (c) => text === '' || [c.id, c.name, c.symbolId, c.description].some((f) => f.toUpperCase().includes(text)),
    );
    return {
      ...ok(),
      contracts: matches.slice(0, Limits.contractsPerSearch).map((c) => this.contracts.record(c, now)),
    };
  }

  contractAvailable(): ResponseOf<'contractAvailable'> {
    const now = this.clock.now();
    return { ...ok(), contracts: this.listed(now).map((c) => this.contracts.record(c, now)) };
  }

  /** The months listed at `now`, less one past its final settlement on its last day. */
  private listed(now: number): FuturesContract[] {
    return this.contracts.calendar.listedOn(now).filter((c) => this.contracts.status(c, now) !== 'expired');
  }

  contractById(contractId: string): ResponseOf<'contractById'> | TradingEnvelope {
    const contract = this.contracts.known(contractId);
    if (!contract) return fail(ContractByIdErrorCode.ContractNotFound, `No contract with id ${clip(contractId)}`);
    return { ...ok(), contract: this.contracts.record(contract) };
  }

  retrieveBars(req: RetrieveBarsRequest): ResponseOf<'retrieveBars'> | TradingEnvelope {
    const contract = typeof req.contractId === 'string' ? this.contracts.known(req.contractId) : undefined;
    const market = contract && this.markets.get(contract.spec.root);
    if (!contract || !market)
      return fail(RetrieveBarsErrorCode.ContractNotFound, `No contract with id ${clip(String(req.contractId))}`);
    const unit = barUnitFromCode(req.unit);
    if (!unit) return fail(RetrieveBarsErrorCode.UnitInvalid, `unit must be 1 (Second) to 6 (Month), got ${req.unit}`);
    if (req.unitNumber < 1)
      return fail(RetrieveBarsErrorCode.UnitNumberInvalid, `unitNumber must be at least 1, got ${req.unitNumber}`);
    if (req.limit < 1 || req.limit > Limits.barsPerRequest) {
      return fail(
        RetrieveBarsErrorCode.LimitInvalid,
        `limit must be between 1 and ${Limits.barsPerRequest}, got ${req.limit}`,
      );
    }
    const bars = market.bars(
      timeframe(unit, req.unitNumber),
      parseDateTime(req.startTime),
      parseDateTime(req.endTime),
      this.clock.now(),
      req.limit,
      req.includePartialBar,
    );
    const g = contract.grid;
    return {
      ...ok(),
      bars: bars.map((b) => ({
        t: new Date(b.t).toISOString(),
        o: g.toPrice(b.o),
        h: g.toPrice(b.h),
        l: g.toPrice(b.l),
        c: g.toPrice(b.c),
        v: b.v,
      })),
    };
  }
}

/** A received value as an error message may quote it: never more than 64 characters. */
export function clip(text: string): string {
  return text.length <= 64 ? text : `${text.slice(0, 61)}...`;
}
