/**
 * The administration interface's answers (spec 4.2), computed from the same database the trading engine
 * writes: templates, rule configurations, users, registration, trading accounts, exports and statistics.
 */
import { randomBytes } from 'node:crypto';
import { OrderSide, RegisterResult, ViolationDuration } from '../protocol/codes.ts';
import { Limits, type ResponseOf } from '../protocol/endpoints.ts';
import { parseDateTime } from '../protocol/schemas.ts';
import type * as S from '../protocol/schemas.ts';
import type { SimEngine } from './sim-core.ts';
import { averagePrice } from './records.ts';
import type { AccountRow, PositionRow, RuleRow, TemplateRow, TradeRow, UserRow, ViolationRow } from './store.ts';
import { NO_DATE, iso } from './wire.ts';
import { gatewayCents } from '../engine/money.ts';
import { TicklineError } from '../engine/errors.ts';

/** A failure the server turns into an HTTP status with a message (404 for a missing record). */
export class AdminNotFound extends TicklineError {
  override readonly name = 'AdminNotFound';
  readonly kind = 'input';
  readonly code = 'NOT_FOUND';
}

/**
 * Account `status` values of this simulator (the spec leaves their meaning open): 0 active, 1 locked by
 * a temporary or personal violation until `lockoutExpiration`, 2 stopped by a permanent violation, 3 inactive.
 */
export const AccountStatus = { Active: 0, Locked: 1, Stopped: 2, Inactive: 3 } as const;

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export class SimAdmin {
  constructor(private readonly engine: SimEngine) {}

  private get db() {
    return this.engine.db;
  }

  /** 00:00 UTC of the date naming the exchange trading day of `t` (the date the day ends on). */
  private tradeDayLabel(t: number): number {
    return Date.parse(this.engine.calendar.dayOf(t));
  }

  // ---------------------------------------------------------------- templates and rules

  templateList(): ResponseOf<'templateList'> {
    return (this.db.prepare('SELECT * FROM templates ORDER BY id').all() as TemplateRow[]).map(templateRecord);
  }

  templateById(id: number): ResponseOf<'templateById'> {
    const row = this.db.prepare('SELECT * FROM templates WHERE id = ?').get(id) as TemplateRow | undefined;
    if (!row) throw new AdminNotFound(`No account template ${id}`);
    return templateRecord(row);
  }

  templateCreate(req: S.TemplateCreateRequest): ResponseOf<'templateCreate'> | S.ExportEnvelope {
    if (req.name.trim() === '' || req.title.trim() === '')
      return { success: false, errorMessage: 'name and title must not be empty' };
    if (req.tag !== 0 && req.tag !== 1)
      return { success: false, errorMessage: `tag must be 0 (Regular) or 1 (Practice), got ${req.tag}` };
    if (req.titleColor && !/^#[0-9a-fA-F]{6}$/.test(req.titleColor))
      return { success: false, errorMessage: `titleColor must look like #rrggbb, got ${req.titleColor}` };
    if (this.db.prepare('SELECT 1 FROM templates WHERE name = ?').get(req.name))
      return { success: false, errorMessage: `A template named ${req.name} exists` };
    const info = this.db
      .prepare(
        'INSERT INTO templates (name, title, title_color, description, notes, starting_balance, margin, tag) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
      )
      .run(
        req.name,
        req.title,
        req.titleColor ?? null,
        req.description,
        req.notes ?? null,
        req.startingBalance ?? 50_000,
        req.margin ?? 50_000,
        req.tag,
      );
    return { success: true, errorMessage: null, template: this.templateById(Number(info.lastInsertRowid)) };
  }

  ruleConfiguration(templateId: number, ruleId: number): ResponseOf<'ruleConfiguration'> {
    const rule = this.db.prepare('SELECT * FROM rules WHERE id = ? AND template_id = ?').get(ruleId, templateId) as
      | RuleRow
      | undefined;
    if (!rule) throw new AdminNotFound(`No rule ${ruleId} on account template ${templateId}`);
    return ruleRecord(rule);
  }

  // ---------------------------------------------------------------- users

  findUserByName(userName: string): ResponseOf<'userFindByName'> {
    const row = this.db.prepare('SELECT * FROM users WHERE user_name = ?').get(userName) as UserRow | undefined;
    if (!row) throw new AdminNotFound(`No user named ${userName}`);
    return userRecord(row);
  }

  findUserByEmail(email: string): ResponseOf<'userFindByEmail'> {
    const row = this.db.prepare('SELECT * FROM users WHERE email = ? ORDER BY id LIMIT 1').get(email) as
      | UserRow
      | undefined;
    if (!row) throw new AdminNotFound(`No user with email ${email}`);
    return userRecord(row);
  }

  /** Result 0 success; 3 invalid email (spec); 1 user name missing or taken and 2 password missing (this simulator's choice). */
  register(req: S.RegisterRequest): ResponseOf<'register'> {
    const failed = (result: number, errorMessage: string) => ({ userId: null, loginToken: null, errorMessage, result });
    if (!req.email || !EMAIL.test(req.email))
      return failed(RegisterResult.InvalidEmail, `Invalid email address format: ${JSON.stringify(req.email)}`);
    if (!req.userName || req.userName.trim() === '') return failed(1, 'userName is required');
    if (this.db.prepare('SELECT 1 FROM users WHERE user_name = ?').get(req.userName))
      return failed(1, `User name ${req.userName} is taken`);
    if (!req.password) return failed(2, 'password is required');
    const info = this.db
      .prepare(
        `INSERT INTO users (user_name, email, first_name, last_name, screen_name, password, internal_tag, agreements_signed, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, 0, ?)`,
      )
      .run(
        req.userName,
        req.email,
        req.firstName ?? '',
        req.lastName ?? '',
        req.screenName,
        `unused:${randomBytes(8).toString('hex')}`,
        req.internalTag ?? 0,
        this.engine.clock.now(),
      );
    const userId = Number(info.lastInsertRowid);
    return { userId, loginToken: this.engine.issueToken(userId), errorMessage: null, result: RegisterResult.Success };
  }

  // ---------------------------------------------------------------- trading accounts

  findTradingAccount(accountName: string): ResponseOf<'tradingAccountFind'> {
    const account = this.db.prepare('SELECT * FROM accounts WHERE name = ?').get(accountName) as AccountRow | undefined;
    if (!account) throw new AdminNotFound(`No trading account named ${accountName}`);
    const now = this.engine.clock.now();
    const f = this.engine.floors(account, now);
    const template = this.db.prepare('SELECT * FROM templates WHERE id = ?').get(account.template_id) as TemplateRow;
    const rules = this.engine.rules(account.template_id);
    const daily = rules.find((r) => r.kind === 'dailyLossLimit')?.amount ?? 0;
    const maximum = rules.find((r) => r.kind === 'maximumLossLimit')?.amount ?? 0;
    const trades = this.trades(account.id);
    const closed = trades.filter((t) => t.pnl !== null);
    const wins = closed.filter((t) => (t.pnl as number) > 0);
    const dayStart = this.engine.calendar.dayStart(now);
    const dayTrades = trades.filter((t) => t.created_at >= dayStart);
    const startOfDay = gatewayCents(f.balance - f.realizedDayPnl);
    const stoppedAt = (
      this.db
        .prepare(
          'SELECT created_at FROM violations WHERE account_id = ? AND duration = ? AND voided = 0 ORDER BY id LIMIT 1',
        )
        .get(account.id, ViolationDuration.Permanent) as { created_at: number } | undefined
    )?.created_at;
    return {
      accountName: account.name,
      userId: account.user_id,
      startingBalance: account.starting_balance,
      balance: f.balance,
      status: this.status(account, now),
      marketDataLevel: 1,
      accountId: account.id,
      winRate: closed.length === 0 ? 0 : gatewayCents((100 * wins.length) / closed.length),
      profitAndLoss: gatewayCents(f.balance - account.starting_balance),
      startDate: iso(account.created_at),
      closedDate: iso(stoppedAt ?? NO_DATE),
      dailyLoss: daily,
      maximumLoss: maximum,
      drawDownLimit: Number.isFinite(f.maximumLossFloor) ? gatewayCents(f.maximumLossFloor) : 0,
      maxPositions: Math.floor(account.margin / 500),
      type: account.simulated ? 0 : 1,
      startOfDayBalance: startOfDay,
      combineName: template.title,
      platformId: 1,
      platformAccountId: String(account.id),
      maxMargin: account.margin,
      realizedDayPnl: f.realizedDayPnl,
      updatedAt: iso(Math.max(account.updated_at, trades.at(-1)?.created_at ?? 0)),
      personalDailyLossLimit: account.personal_daily_loss_limit ?? 0,
      personalDailyLossLimitAction: account.personal_daily_loss_limit ? 1 : 0,
      personalDailyProfitTarget: account.personal_daily_profit_target ?? 0,
      personalDailyProfitTargetAction: account.personal_daily_profit_target ? 1 : 0,
      totalProfit: gatewayCents(wins.reduce((s, t) => s + (t.pnl as number), 0)),
      totalLoss: gatewayCents(closed.filter((t) => (t.pnl as number) < 0).reduce((s, t) => s + (t.pnl as number), 0)),
      totalTrades: closed.length,
      dailyTrades: dayTrades.length,
      isFollower: account.is_follower === 1,
      isLeader: account.is_leader === 1,
      openPnl: f.unrealized,
    };
  }

  private status(account: AccountRow, now: number): number {
    if (!account.active) return AccountStatus.Inactive;
    const v = this.engine.activeViolation(account.id, now);
    if (!v) return AccountStatus.Active;
    return v.duration === ViolationDuration.Permanent ? AccountStatus.Stopped : AccountStatus.Locked;
  }

  private trades(accountId: number): TradeRow[] {
    return this.db
      .prepare('SELECT * FROM trades WHERE account_id = ? AND voided = 0 ORDER BY id')
      .all(accountId) as TradeRow[];
  }

  // ---------------------------------------------------------------- exports

  violationsExport(req: S.ViolationsExportRequest): ResponseOf<'violationsExport'> {
    const start = req.startTime ? parseDateTime(req.startTime) : 0;
    const end = req.endTime ? parseDateTime(req.endTime) : Number.MAX_SAFE_INTEGER;
    const rows = this.db
      .prepare(
        'SELECT violations.*, accounts.name AS account_name, accounts.simulated AS simulated FROM violations JOIN accounts ON accounts.id = violations.account_id WHERE violations.created_at >= ? AND violations.created_at <= ? ORDER BY violations.id',
      )
      .all(start, end) as (ViolationRow & { account_name: string; simulated: number })[];
    return {
      success: true,
      errorMessage: null,
      violations: rows.map((v) => ({
        id: v.id,
        accountId: v.account_id,
        type: v.type,
        duration: v.duration,
        createdAt: iso(v.created_at),
        triggeredAt: iso(v.created_at),
        expiresAt: iso(v.expires_at),
        balance: v.balance,
        realizedPnl: v.realized_pnl,
        unrealizedPnl: v.unrealized_pnl,
        violationBalance: gatewayCents(v.balance + v.unrealized_pnl),
        violationTotalDayPnl: gatewayCents(v.realized_pnl + v.unrealized_pnl),
        minimumBalance: v.minimum_balance,
        dailyLossLimit: v.daily_loss_limit,
        personalDailyLossLimit: v.personal_daily_loss_limit,
        personalDailyProfitTarget: v.personal_daily_profit_target,
        voided: v.voided === 1,
        accountName: v.account_name,
        accountType: v.simulated ? 0 : 1,
        ruleId: v.rule_id,
        customViolation: null,
      })),
    };
  }

  tradesExport(req: S.TradesExportRequest): ResponseOf<'tradesExport'> | S.ExportEnvelope {
    const from = parseDateTime(req.from);
    const to = parseDateTime(req.to);
    if (to < from) return { success: false, errorMessage: '`to` is before `from`' };
    if (to - from > Limits.tradesExportRangeMs)
      return { success: false, errorMessage: 'The requested range exceeds 30 days' };
    const rows = this.db
      .prepare('SELECT * FROM trades WHERE created_at >= ? AND created_at <= ? ORDER BY id')
      .all(from, to) as TradeRow[];
    return {
      success: true,
      errorMessage: null,
      data: rows.map((t) => {
        const contract = this.engine.contracts.byId(t.contract_id);
        const price = (ticks: number) =>
          contract ? Number((ticks * contract.tickSize).toFixed(contract.grid.decimals + 4)) : ticks;
        const closing = t.pnl !== null;
        return {
          id: t.id,
          contractGroupId: contract?.symbolId ?? '',
          contractGroupName: contract?.group ?? '',
          contractId: t.contract_id,
          contractName: contract?.name ?? t.contract_id,
          tradeDay: iso(this.tradeDayLabel(t.created_at)),
          createdAt: iso(t.created_at),
          tradeDuration: closing && t.entered_at !== null ? t.created_at - t.entered_at : null,
          price: price(t.price_ticks),
          fees: t.fees,
          action: t.side === OrderSide.Bid ? 0 : 1,
          lots: t.size,
          status: 0,
          pairedTradeId: null,
          pnl: t.pnl ?? 0,
          tradingAccountId: t.account_id,
          orderId: t.order_id,
          enteredAt: iso(t.entered_at ?? t.created_at),
          exitedAt: closing ? iso(t.created_at) : null,
          entryPrice: price(closing && t.entry_ticks !== null ? t.entry_ticks : t.price_ticks),
          exitPrice: closing ? price(t.price_ticks) : null,
          voided: t.voided === 1,
          orderCreationDisposition: 0,
        };
      }),
    };
  }

  accountsExport(req: S.AfterExportRequest): ResponseOf<'accountsExport'> {
    const after = req.after ? parseDateTime(req.after) : Number.NEGATIVE_INFINITY;
    const now = this.engine.clock.now();
    const accounts = this.db.prepare('SELECT * FROM accounts ORDER BY id').all() as AccountRow[];
    const data: S.ExportedAccount[] = [];
    for (const account of accounts) {
      const trades = this.trades(account.id);
      const updatedAt = Math.max(account.updated_at, trades.at(-1)?.created_at ?? 0);
      if (!(updatedAt > after)) continue;
      const f = this.engine.figures(account, now);
      let running = account.starting_balance;
      let highest = running;
      for (const t of trades) {
        running += (t.pnl ?? 0) - t.fees;
        highest = Math.max(highest, running);
      }
      const rules = this.engine.rules(account.template_id);
      const lock = this.engine.activeViolation(account.id, now);
      data.push({
        id: account.id,
        accountName: account.name,
        nickname: null,
        balance: f.balance,
        unrealizedPnl: f.unrealized,
        highestUnrealizedBalance: gatewayCents(Math.max(highest, f.balance + f.unrealized)),
        highestRealizedBalance: gatewayCents(highest),
        realizedDayPnl: f.realizedDayPnl,
        status: this.status(account, now),
        lockoutExpiration: lock ? iso(lock.expires_at) : null,
        tradeLimitExpiration: null,
        dailyTradeLimit: 0,
        weeklyTradeLimit: 0,
        latestTradeDateTime: iso(trades.at(-1)?.created_at ?? account.created_at),
        ineligible: lock?.duration === ViolationDuration.Permanent,
        maximumLossLimit: rules.find((r) => r.kind === 'maximumLossLimit')?.amount ?? 0,
        dailyLossLimit: rules.find((r) => r.kind === 'dailyLossLimit')?.amount ?? 0,
        updatedAt: iso(updatedAt),
      });
    }
    return { success: true, errorMessage: null, data };
  }

  positionsExport(req: S.AfterExportRequest): ResponseOf<'positionsExport'> {
    const after = req.after ? parseDateTime(req.after) : Number.NEGATIVE_INFINITY;
    const now = this.engine.clock.now();
    const rows = this.db
      .prepare('SELECT * FROM positions WHERE size != 0 AND updated_at > ? ORDER BY id')
      .all(Number.isFinite(after) ? after : -1) as PositionRow[];
    return {
      success: true,
      errorMessage: null,
      data: rows.map((p) => {
        const contract = this.engine.contracts.byId(p.contract_id);
        const last = this.engine.lastPrice(p.contract_id, now);
        return {
          id: p.id,
          symbolId: contract?.symbolId ?? '',
          openPnl:
            contract && last !== undefined ? gatewayCents((last - p.average_ticks) * p.size * contract.tickValue) : 0,
          positionSize: p.size,
          averagePrice: averagePrice(contract, p),
          contract: contract?.name ?? p.contract_id,
          contractGroup: contract?.group ?? '',
          timestamp: iso(p.updated_at),
        };
      }),
    };
  }

  // ---------------------------------------------------------------- statistics

  /**
   * Per trade day: `totalTrades` counts closing trades (those with a profit and loss); `totalPnL` is their
   * gross profit and loss; `totalFees` all fees of the day; `winRate` a percentage; `balance` the balance
   * at the day's end.
   */
  dailyStatistics(req: S.StatisticsRequest): ResponseOf<'dailyStatistics'> {
    const account = this.db.prepare('SELECT * FROM accounts WHERE id = ?').get(req.tradingAccountId) as
      | AccountRow
      | undefined;
    if (!account) throw new AdminNotFound(`No trading account ${req.tradingAccountId}`);
    // Trade days are labelled by the date they end on, at 00:00 UTC; the request's datetimes name such dates.
    const startLabel = req.startTradeDay
      ? Math.floor(parseDateTime(req.startTradeDay) / 86_400_000) * 86_400_000
      : Number.NEGATIVE_INFINITY;
    const endLabel = req.endTradeDay
      ? Math.floor(parseDateTime(req.endTradeDay) / 86_400_000) * 86_400_000
      : Number.POSITIVE_INFINITY;
    const days = new Map<number, TradeRow[]>();
    let balance = account.starting_balance;
    const out: S.DailyStatistics[] = [];
    for (const t of this.trades(account.id)) {
      const label = this.tradeDayLabel(t.created_at);
      const list = days.get(label) ?? [];
      list.push(t);
      days.set(label, list);
    }
    for (const [label, trades] of [...days.entries()].sort((a, b) => a[0] - b[0])) {
      const closed = trades.filter((t) => t.pnl !== null);
      const pnl = closed.reduce((s, t) => s + (t.pnl as number), 0);
      const fees = trades.reduce((s, t) => s + t.fees, 0);
      balance += pnl - fees;
      if (label < startLabel || label > endLabel) continue;
      const products = new Map<string, number>();
      for (const t of trades) {
        const symbolId = this.engine.contracts.byId(t.contract_id)?.symbolId ?? t.contract_id;
        products.set(symbolId, (products.get(symbolId) ?? 0) + t.size);
      }
      const winning = closed.filter((t) => (t.pnl as number) > 0).length;
      const losing = closed.filter((t) => (t.pnl as number) < 0).length;
      out.push({
        tradeDay: iso(label),
        balance: gatewayCents(balance),
        products: [...products.entries()].map(([symbolId, totalTradedContracts]) => ({
          tradeDay: iso(label),
          symbolId,
          totalTradedContracts,
        })),
        tradeDate: iso(label),
        totalPnL: gatewayCents(pnl),
        totalTrades: closed.length,
        winningTrades: winning,
        losingTrades: losing,
        neutralTrades: closed.length - winning - losing,
        winRate: closed.length === 0 ? 0 : gatewayCents((100 * winning) / closed.length),
        totalFees: gatewayCents(fees),
      });
    }
    return out;
  }

  dayStatistics(req: S.StatisticsRequest): ResponseOf<'dayStatistics'> {
    return this.dailyStatistics(req).map(
      ({ tradeDate, totalPnL, totalTrades, winningTrades, losingTrades, neutralTrades, winRate, totalFees }) => ({
        tradeDate,
        totalPnL,
        totalTrades,
        winningTrades,
        losingTrades,
        neutralTrades,
        winRate,
        totalFees,
      }),
    );
  }
}

export function templateRecord(t: TemplateRow): S.AccountTemplate {
  return {
    id: t.id,
    name: t.name,
    title: t.title,
    titleColor: t.title_color,
    description: t.description,
    notes: t.notes,
    startingBalance: t.starting_balance,
    margin: t.margin,
    isActive: t.is_active === 1,
    tag: t.tag,
  };
}

/**
 * `violationStatus` 1 here means "the account is locked while the violation lasts". Loss limit `source` is 0
 * (a fixed amount); the maximum loss limit's `maximumSource` and `minimumSource` choose its variant
 * (rule-templates.ts).
 */
export function ruleRecord(r: RuleRow): S.RuleConfiguration {
  return {
    accountTemplateId: r.template_id,
    ruleId: r.id,
    configuration: {
      violationStatus: 1,
      violationDuration: r.violation_duration,
      liquidateFollowers: null,
      dailyLossLimit:
        r.kind === 'dailyLossLimit'
          ? {
              source: 0,
              percentage: null,
              limit: r.amount,
              disableBalanceSource: null,
              disableCheckSource: null,
              disablePercentage: null,
              disableLimit: null,
              disableMinimumBalanceSource: null,
              disableMaximumBalanceSource: null,
            }
          : null,
      maximumLossLimit:
        r.kind === 'maximumLossLimit'
          ? {
              source: 0,
              percentage: null,
              limit: r.amount,
              minimumSource: r.minimum_source,
              maximumSource: r.maximum_source,
              maximumSourceSpecifiedBalance: null,
            }
          : null,
      marginScale: null,
    },
  };
}

export function userRecord(u: UserRow): S.User {
  return {
    userName: u.user_name,
    email: u.email,
    userId: u.id,
    firstName: u.first_name,
    lastName: u.last_name,
    hasSignedAgreements: u.agreements_signed === 1,
    createdAt: iso(u.created_at),
    roles: [],
  };
}
