/**
 * A one-account `DashboardFeed` of plain data for the server's tests: the interface implemented as a
 * trading node would (the snapshot is data, the journal a stream), with what the actions were asked kept.
 */
import { Subject } from 'rxjs';
import type {
  AccountSnapshot,
  ActionSource,
  DashboardAccount,
  DashboardAction,
  DashboardFeed,
  JournalEntryView,
} from '../../../src/ops/dashboard/dashboard-feed.ts';

export const SECRET_BALANCE = 48_765.43;

export function snapshotOf(id: string, over: Partial<AccountSnapshot> = {}): AccountSnapshot {
  return {
    id,
    name: `ACCOUNT-${id}`,
    mode: 'paper',
    strategy: 'sma-cross (smacross)',
    time: Date.UTC(2025, 0, 6, 15),
    tradingDay: '2025-01-06',
    balance: SECRET_BALANCE,
    equity: SECRET_BALANCE,
    dayPnl: -12.5,
    openPnl: 0,
    state: { state: 'ACTIVE', reason: '', since: null, paused: false },
    passLock: null,
    bots: [{ id: 'fixture', paused: false, reason: null, netPnl: 0, trades: 0, positions: [] }],
    positions: [],
    orders: [],
    headroom: [
      { limit: 'dailyLossLimit', label: 'Daily loss limit', amount: 1000, floor: 47_777.93, room: 987.5, used: 0.0125 },
    ],
    evaluation: null,
    health: { visible: true, blindReason: null, userHub: 'none', marketHub: 'none', polls: [], bars: [] },
    calendar: [],
    decisions: [],
    anomalies: [],
    ...over,
  };
}

export class FixtureAccount implements DashboardAccount {
  readonly journal = new Subject<JournalEntryView>();
  readonly recorded = this.journal.asObservable();
  readonly asked: { action: DashboardAction; source: ActionSource }[] = [];
  seq = 0;
  current: AccountSnapshot;

  constructor(readonly id: string) {
    this.current = snapshotOf(id);
  }

  snapshot(): AccountSnapshot {
    return this.current;
  }

  equity() {
    return [{ time: this.current.time, equity: this.current.equity, tradingDay: this.current.tradingDay }];
  }

  async act(action: DashboardAction, source: ActionSource) {
    this.asked.push({ action, source });
    return { account: this.id, action, ok: true, message: `${action} done` };
  }

  write(kind: string, payload: unknown = {}): JournalEntryView {
    const entry: JournalEntryView = { seq: ++this.seq, time: Date.now(), kind, phase: 'event', tag: null, payload };
    this.journal.next(entry);
    return entry;
  }
}

export function fixtureFeed(...ids: string[]): DashboardFeed & { accountsById: Map<string, FixtureAccount> } {
  const accounts = ids.map((id) => new FixtureAccount(id));
  return { accounts: () => accounts, accountsById: new Map(accounts.map((a) => [a.id, a])) };
}
