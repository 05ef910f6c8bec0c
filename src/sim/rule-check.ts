/**
 * The rule engine: after every fill and at every market point while a position is open, an account's
 * template rules (daily and maximum loss limits, floors from the engine's RuleBook) and personal limits
 * are checked; a break records a violation (spec 2.10), cancels the account's working orders and closes
 * its positions at the market.
 */
import { OrderSide, OrderStatus, ViolationDuration, ViolationType } from '../protocol/codes.ts';
import type { RuleBook } from '../engine/account-rules.ts';
import type { AccountFigures } from './accounts.ts';
import type { SimContext } from './context.ts';
import { accountRuleBook } from './rule-templates.ts';
import type { AccountRow, RuleRow } from './store.ts';
import { NEVER } from './wire.ts';
import { gatewayCents } from '../engine/money.ts';

/** An account's figures with the equity levels of its template's rules (-Infinity where it has no such rule). */
export interface AccountFloors extends AccountFigures {
  dailyLossFloor: number;
  maximumLossFloor: number;
}

export class RuleChecker {
  private liquidating = false;
  /** The engine's rule book per account; its high-water marks are restored from the database at each check. */
  private readonly books = new Map<number, RuleBook>();

  constructor(private readonly ctx: SimContext) {}

  rules(templateId: number): RuleRow[] {
    return this.ctx.remember(
      `rules:${templateId}`,
      () => this.ctx.db.prepare('SELECT * FROM rules WHERE template_id = ? ORDER BY id').all(templateId) as RuleRow[],
    );
  }

  /** The rules of every account holding a position in the contract, at a market point. */
  checkHoldersOf(contractId: string, t: number): void {
    const accounts = this.ctx.remember(
      `holders:${contractId}`,
      () =>
        this.ctx.db
          .prepare('SELECT DISTINCT account_id FROM positions WHERE contract_id = ? AND size != 0')
          .all(contractId) as { account_id: number }[],
    );
    for (const { account_id } of accounts) this.evaluate(account_id, t);
  }

  evaluate(accountId: number, t: number): void {
    if (this.liquidating) return;
    const { db } = this.ctx;
    const account = this.ctx.accounts.account(accountId);
    const f = this.floors(account, t);
    const dayPnl = f.realizedDayPnl + f.unrealized;
    const equity = f.balance + f.unrealized;
    const day = this.ctx.tradingDay.dayStart(t);
    const rules = this.rules(account.template_id);
    const dailyRule = rules.find((r) => r.kind === 'dailyLossLimit');
    const maximumRule = rules.find((r) => r.kind === 'maximumLossLimit');
    const minimumBalance = maximumRule ? gatewayCents(f.maximumLossFloor) : 0;
    const exists = (type: number, ruleId: number | null, sameDay: boolean): boolean =>
      db
        .prepare(
          `SELECT 1 FROM violations WHERE account_id = ? AND type = ? AND rule_id IS ? AND voided = 0 ${sameDay ? 'AND trade_day = ?' : ''}`,
        )
        .get(...[accountId, type, ruleId, ...(sameDay ? [day] : [])]) !== undefined;
    const broken: { type: number; duration: number; ruleId: number | null }[] = [];
    if (dailyRule && equity <= f.dailyLossFloor && !exists(ViolationType.RuleBreak, dailyRule.id, true)) {
      broken.push({ type: ViolationType.RuleBreak, duration: dailyRule.violation_duration, ruleId: dailyRule.id });
    }
    if (
      maximumRule &&
      equity <= f.maximumLossFloor &&
      !exists(ViolationType.RuleBreak, maximumRule.id, maximumRule.violation_duration !== ViolationDuration.Permanent)
    ) {
      broken.push({ type: ViolationType.RuleBreak, duration: maximumRule.violation_duration, ruleId: maximumRule.id });
    }
    const personalLoss = account.personal_daily_loss_limit;
    if (
      personalLoss !== null &&
      personalLoss > 0 &&
      dayPnl <= -personalLoss &&
      !exists(ViolationType.PersonalDailyLossLimit, null, true)
    ) {
      broken.push({ type: ViolationType.PersonalDailyLossLimit, duration: ViolationDuration.Personal, ruleId: null });
    }
    const target = account.personal_daily_profit_target;
    if (
      target !== null &&
      target > 0 &&
      dayPnl >= target &&
      !exists(ViolationType.PersonalDailyProfitTarget, null, true)
    ) {
      broken.push({
        type: ViolationType.PersonalDailyProfitTarget,
        duration: ViolationDuration.Personal,
        ruleId: null,
      });
    }
    if (broken.length === 0) return;
    const insert = db.prepare(
      `INSERT INTO violations (account_id, type, duration, rule_id, trade_day, created_at, expires_at, balance, realized_pnl, unrealized_pnl,
         minimum_balance, daily_loss_limit, personal_daily_loss_limit, personal_daily_profit_target) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    for (const b of broken) {
      const expires = b.duration === ViolationDuration.Permanent ? NEVER : this.ctx.tradingDay.nextDayStart(t);
      insert.run(
        accountId,
        b.type,
        b.duration,
        b.ruleId,
        day,
        t,
        expires,
        f.balance,
        f.realizedDayPnl,
        f.unrealized,
        minimumBalance,
        dailyRule?.amount ?? 0,
        personalLoss,
        target,
      );
      this.ctx.logger.info({ accountId, type: b.type, duration: b.duration, ruleId: b.ruleId }, 'violation');
    }
    this.liquidate(accountId, t);
  }

  /**
   * The account's figures and the floors of its template's rules at `t`, from the engine's rule book
   * (src/engine/account-rules.ts, variants mapped in rule-templates.ts) fed with the account's high-water marks, which
   * are
   * brought up to `t` first.
   */
  floors(account: AccountRow, t = this.ctx.clock.now()): AccountFloors {
    const f = this.ctx.accounts.figures(account, t);
    let book = this.books.get(account.id);
    if (!book) {
      book = accountRuleBook(account.starting_balance, this.rules(account.template_id));
      this.books.set(account.id, book);
    }
    const variant = book.config.maximumLossLimit?.variant;
    if (variant === 'trailingIntraday') this.raiseHighEquity(account, f.balance + f.unrealized);
    if (variant === 'trailingEndOfDay' || variant === 'trailingUntilLocked')
      this.rollHighBalance(account, this.ctx.tradingDay.dayStart(t));
    book.restore({
      startOfDayBalance: gatewayCents(f.balance - f.realizedDayPnl),
      highBalance: account.high_balance ?? account.starting_balance,
      highEquity: account.high_equity ?? account.starting_balance,
    });
    return { ...f, dailyLossFloor: book.dailyLossFloor(), maximumLossFloor: book.maximumLossFloor() };
  }

  private raiseHighEquity(account: AccountRow, equity: number): void {
    if (equity <= (account.high_equity ?? account.starting_balance)) return;
    this.ctx.db.prepare('UPDATE accounts SET high_equity = ? WHERE id = ?').run(equity, account.id);
    account.high_equity = equity;
  }

  /**
   * Brings the highest end-of-day balance up to the trading day starting at `dayStart`: the balance at the
   * end of each day that had trades since the last roll (days without trades end where the previous did).
   */
  private rollHighBalance(account: AccountRow, dayStart: number): void {
    const { db, tradingDay } = this.ctx;
    const through = account.high_balance_through;
    if (dayStart <= through) return;
    const before = db
      .prepare(
        'SELECT COALESCE(SUM(COALESCE(pnl, 0) - fees), 0) AS net FROM trades WHERE account_id = ? AND voided = 0 AND created_at < ?',
      )
      .get(account.id, through) as { net: number };
    const trades = db
      .prepare(
        'SELECT COALESCE(pnl, 0) - fees AS net, created_at FROM trades WHERE account_id = ? AND voided = 0 AND created_at >= ? AND created_at < ? ORDER BY created_at, id',
      )
      .all(account.id, through, dayStart) as { net: number; created_at: number }[];
    let high = account.high_balance ?? account.starting_balance;
    let balance = account.starting_balance + before.net;
    trades.forEach((trade, i) => {
      balance += trade.net;
      const next = trades[i + 1];
      if (next === undefined || tradingDay.dayStart(next.created_at) !== tradingDay.dayStart(trade.created_at))
        high = Math.max(high, gatewayCents(balance));
    });
    db.prepare('UPDATE accounts SET high_balance = ?, high_balance_through = ? WHERE id = ?').run(
      high,
      dayStart,
      account.id,
    );
    account.high_balance = high;
    account.high_balance_through = dayStart;
  }

  private liquidate(accountId: number, t: number): void {
    const { ctx } = this;
    ctx.changed();
    this.liquidating = true;
    try {
      ctx.db
        .prepare('UPDATE orders SET status = ?, updated_at = ? WHERE account_id = ? AND status IN (?, ?)')
        .run(OrderStatus.Cancelled, t, accountId, OrderStatus.Open, OrderStatus.Pending);
      for (const p of ctx.accounts.openPositions(accountId)) {
        ctx.matcher.marketOrder(
          accountId,
          p.contract_id,
          p.size > 0 ? OrderSide.Ask : OrderSide.Bid,
          Math.abs(p.size),
          t,
        );
      }
      ctx.db.prepare('UPDATE accounts SET updated_at = ? WHERE id = ?').run(t, accountId);
    } finally {
      this.liquidating = false;
      ctx.changed();
    }
  }
}
