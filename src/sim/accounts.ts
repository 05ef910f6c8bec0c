/**
 * Accounts and what they hold: ownership, balance and day figures from the trades, unrealized P&L at the
 * last price, open positions, the violation that locks an account, the buying-power check, and the
 * account and position searches.
 */
import { AccountSearchErrorCode, OrderSide, PositionType } from '../protocol/codes.ts';
import type { ResponseOf } from '../protocol/endpoints.ts';
import type { TradingEnvelope } from '../protocol/schemas.ts';
import type { FuturesContract } from '../market/contract-months.ts';
import type { SimContext } from './context.ts';
import { averagePrice } from './records.ts';
import type { AccountRow, PositionRow, UserRow } from './store.ts';
import { fail, iso, ok } from './wire.ts';
import { gatewayCents } from '../engine/money.ts';

export interface AccountFigures {
  balance: number;
  realizedDayPnl: number;
  unrealized: number;
}

export class AccountBook {
  constructor(private readonly ctx: SimContext) {}

  ownedAccount(user: UserRow, accountId: number): AccountRow | undefined {
    return this.ctx.db.prepare('SELECT * FROM accounts WHERE id = ? AND user_id = ?').get(accountId, user.id) as
      | AccountRow
      | undefined;
  }

  account(accountId: number): AccountRow {
    return this.ctx.remember(
      `account:${accountId}`,
      () => this.ctx.db.prepare('SELECT * FROM accounts WHERE id = ?').get(accountId) as AccountRow,
    );
  }

  figures(account: AccountRow, t = this.ctx.clock.now()): AccountFigures {
    type Sums = { pnl: number; fees: number };
    const { db } = this.ctx;
    const all = this.ctx.remember(
      `sums:${account.id}`,
      () =>
        db
          .prepare(
            'SELECT COALESCE(SUM(pnl), 0) AS pnl, COALESCE(SUM(fees), 0) AS fees FROM trades WHERE account_id = ? AND voided = 0',
          )
          .get(account.id) as Sums,
    );
    const dayStart = this.ctx.tradingDay.dayStart(t);
    const day = this.ctx.remember(
      `day:${account.id}:${dayStart}`,
      () =>
        db
          .prepare(
            'SELECT COALESCE(SUM(pnl), 0) AS pnl, COALESCE(SUM(fees), 0) AS fees FROM trades WHERE account_id = ? AND voided = 0 AND created_at >= ?',
          )
          .get(account.id, dayStart) as Sums,
    );
    return {
      balance: gatewayCents(account.starting_balance + all.pnl - all.fees),
      realizedDayPnl: gatewayCents(day.pnl - day.fees),
      unrealized: gatewayCents(this.unrealized(account.id, t)),
    };
  }

  unrealized(accountId: number, t = this.ctx.clock.now()): number {
    let total = 0;
    for (const p of this.openPositions(accountId)) {
      const contract = this.ctx.contract(p.contract_id);
      const last = this.ctx.lastPrice(p.contract_id, t);
      if (!contract || last === undefined) continue;
      total += (last - p.average_ticks) * p.size * contract.tickValue;
    }
    return total;
  }

  openPositions(accountId: number): PositionRow[] {
    return this.ctx.remember(
      `positions:${accountId}`,
      () =>
        this.ctx.db
          .prepare('SELECT * FROM positions WHERE account_id = ? AND size != 0 ORDER BY id')
          .all(accountId) as PositionRow[],
    );
  }

  /** The violation that stops the account trading now, if any (the permanent one first). */
  activeViolation(accountId: number, t = this.ctx.clock.now()): { duration: number; expires_at: number } | undefined {
    return this.ctx.db
      .prepare(
        'SELECT duration, expires_at FROM violations WHERE account_id = ? AND voided = 0 AND expires_at > ? ORDER BY expires_at DESC LIMIT 1',
      )
      .get(accountId, t) as { duration: number; expires_at: number } | undefined;
  }

  /** Why an order that adds exposure cannot be afforded, or undefined. */
  marginShortfall(
    account: AccountRow,
    contract: FuturesContract,
    side: number,
    size: number,
    t: number,
  ): string | undefined {
    const positions = this.openPositions(account.id);
    const current = positions.find((p) => p.contract_id === contract.id)?.size ?? 0;
    const signed = side === OrderSide.Bid ? size : -size;
    if (Math.abs(current + signed) <= Math.abs(current)) return undefined;
    let used = 0;
    for (const p of positions) {
      const c = this.ctx.contract(p.contract_id);
      if (c && c.id !== contract.id) used += c.dayMargin * Math.abs(p.size);
    }
    const needed = used + contract.dayMargin * Math.abs(current + signed);
    const { balance } = this.figures(account, t);
    if (balance <= 0) return `Balance ${balance} leaves no buying power`;
    if (needed > account.margin)
      return `Margin needed ${needed} exceeds the account's maximum margin ${account.margin}`;
    return undefined;
  }

  accountSearch(user: UserRow, onlyActive: boolean): ResponseOf<'accountSearch'> {
    const rows = this.ctx.db
      .prepare(`SELECT * FROM accounts WHERE user_id = ? ${onlyActive ? 'AND active = 1' : ''} ORDER BY id`)
      .all(user.id) as AccountRow[];
    const now = this.ctx.clock.now();
    return {
      ...ok(),
      accounts: rows.map((a) => ({
        id: a.id,
        name: a.name,
        balance: this.figures(a, now).balance,
        canTrade: a.active === 1 && this.activeViolation(a.id, now) === undefined,
        isVisible: true,
        simulated: a.simulated === 1,
      })),
    };
  }

  positionSearchOpen(user: UserRow, accountId: number): ResponseOf<'positionSearchOpen'> | TradingEnvelope {
    if (!this.ownedAccount(user, accountId))
      return fail(AccountSearchErrorCode.AccountNotFound, `No account ${accountId}`);
    return {
      ...ok(),
      positions: this.openPositions(accountId).map((p) => ({
        id: p.id,
        accountId: p.account_id,
        contractId: p.contract_id,
        creationTimestamp: iso(p.opened_at),
        type: p.size > 0 ? PositionType.Long : PositionType.Short,
        size: Math.abs(p.size),
        averagePrice: averagePrice(this.ctx.contract(p.contract_id), p),
      })),
    };
  }
}
