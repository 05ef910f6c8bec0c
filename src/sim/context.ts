/**
 * What every part of the simulator's engine shares: the store, the clock, the contracts and markets, the
 * exchange trading day, the logger, and a memo of reads for one market step. The parts (sessions,
 * accounts, orders, matching, ledger, rule checks, pending answers) each get this context and reach each
 * other through it, so each stays one job.
 */
import type { TradingCalendar } from '../engine/trading-day.ts';
import type { Logger } from '../engine/log.ts';
import type { FuturesContract } from '../market/contract-months.ts';
import type { SimClock } from './clock.ts';
import type { SimContracts } from './contracts.ts';
import type { Ledger } from './ledger.ts';
import type { ContractMarket } from './market/market.ts';
import type { Matcher } from './matching.ts';
import type { AccountBook } from './accounts.ts';
import type { RuleChecker } from './rule-check.ts';
import type { Db, OrderRow } from './store.ts';

export class SimContext {
  /**
   * Reads remembered during a market step, where the same open orders, positions and sums are read at
   * every price point; cleared by every change (a fill, a liquidation), and absent outside a step.
   */
  private memo: Map<string, unknown> | undefined;
  /** Counts changes during a step, so a loop over remembered orders knows to re-read them. */
  generation = 0;

  // The parts, wired once by SimEngine's constructor.
  accounts!: AccountBook;
  ledger!: Ledger;
  matcher!: Matcher;
  rules!: RuleChecker;

  constructor(
    readonly db: Db,
    readonly clock: SimClock,
    readonly contracts: SimContracts,
    /** One market per root: every month of a root trades the same prices. */
    readonly markets: ReadonlyMap<string, ContractMarket>,
    readonly logger: Logger,
    /** The exchange trading day: daily P&L, daily limits, lockouts and the statistics' days. */
    readonly tradingDay: TradingCalendar,
  ) {}

  /** Runs `body` with reads remembered (one market step). */
  withMemo<T>(body: () => T): T {
    this.memo = new Map();
    try {
      return body();
    } finally {
      this.memo = undefined;
    }
  }

  remember<T>(key: string, load: () => T): T {
    if (!this.memo) return load();
    if (this.memo.has(key)) return this.memo.get(key) as T;
    const value = load();
    this.memo.set(key, value);
    return value;
  }

  changed(): void {
    this.generation++;
    this.memo?.clear();
  }

  contract(contractId: string): FuturesContract | undefined {
    return this.contracts.byId(contractId);
  }

  market(contractId: string): ContractMarket | undefined {
    const contract = this.contract(contractId);
    return contract && this.markets.get(contract.spec.root);
  }

  lastPrice(contractId: string, t = this.clock.now()): number | undefined {
    return this.market(contractId)?.lastPrice(t);
  }

  order(id: number): OrderRow {
    return this.db.prepare('SELECT * FROM orders WHERE id = ?').get(id) as OrderRow;
  }
}
