/**
 * One paper or live session (`LiveSession`) as a `DashboardFeed` of one account. The figures are the
 * session's own: the balance the status line shows (the gateway's last account poll), the engine's
 * positions, open orders, equity and the guard's floors, the executor's anomalies, the journal's
 * decisions. Nothing here decides anything: the actions are the session's kill switch and the engine's
 * trading state, journaled with who asked.
 */
import { filter, type Subscription } from 'rxjs';
import type { EvaluationRules } from '../../engine/evaluation-rules.ts';
import type { Logger } from '../../engine/log.ts';
import type { Intent, OrderSpec } from '../../engine/types.ts';
import { bucketEnd } from '../../engine/timeframe.ts';
import { contractMarketHours } from '../../market/contract-hours.ts';
import { CALENDAR } from '../../market/contract-months.ts';
import { expiryInstant, frontMonthOf } from '../../adapters/live/month-follower.ts';
import { flattenText } from '../../adapters/live/kill-switch.ts';
import type { LiveSession } from '../../adapters/live/trading-session.ts';
import type {
  AccountSnapshot,
  ActionResult,
  ActionSource,
  CalendarView,
  DashboardAccount,
  DashboardAction,
  DashboardFeed,
  DecisionView,
  EquityPoint,
  EvaluationView,
  Headroom,
  HealthView,
  JournalEntryView,
} from './dashboard-feed.ts';

export interface SessionFeedOptions {
  /** The evaluation the session's account is in (the config's `evaluation`), for its progress. */
  readonly evaluation?: EvaluationRules;
  /** Equity points kept for the session's curve; beyond it the older half is thinned. Default 20,000. */
  readonly maxEquityPoints?: number;
  /** Decisions and anomalies kept for the page. Default 50. */
  readonly keep?: number;
  readonly logger?: Logger;
}

/** The reason a pause sets: `resume` lifts only this one, never a state the guard or a kill switch chose. */
export const PAUSE_REASON = 'paused by an operator';

const DAY_MS = 86_400_000;

const LIMIT_LABELS = {
  dailyLossLimit: 'Daily loss limit',
  maximumLossLimit: 'Maximum loss limit',
  personalDailyLossLimit: 'Personal daily loss limit',
  personalDailyProfitTarget: 'Personal daily profit target',
} as const;

export class SessionAccount implements DashboardAccount {
  readonly id: string;
  readonly recorded: DashboardAccount['recorded'];
  private readonly points: EquityPoint[] = [];
  private readonly decisions: DecisionView[] = [];
  private readonly lastBarEnd = new Map<string, number>();
  private readonly subscriptions: Subscription[] = [];
  private readonly maxPoints: number;
  private readonly keep: number;
  private readonly now: () => number;

  constructor(
    readonly session: LiveSession,
    private readonly options: SessionFeedOptions = {},
  ) {
    this.id = String(session.account.id);
    this.now = session.options.now ?? Date.now;
    this.maxPoints = Math.max(100, options.maxEquityPoints ?? 20_000);
    this.keep = options.keep ?? 50;
    this.recorded = session.journal.recorded;
    const { engine, journal, poller } = session;
    const config = session.options.config;
    this.subscriptions.push(
      // Stamped when seen (the gateway's clock), as the page stamps the snapshots it adds: the engine's own
      // time is the bar's start, which would put a fill before the point the session began with.
      engine.account$.subscribe((a) => this.addPoint(this.now(), a.equity, a.tradingDay)),
      journal.recorded
        .pipe(filter((e) => e.kind === 'risk-accepted' || e.kind === 'risk-rejected'))
        .subscribe((e) => this.addDecision(e)),
    );
    for (const contractId of config.contracts) {
      this.subscriptions.push(
        poller.bars(contractId, config.timeframe).subscribe((chunk) => {
          if (chunk.partial || chunk.length === 0) return;
          this.lastBarEnd.set(contractId, bucketEnd(chunk.time[chunk.length - 1]!, config.timeframe));
          // The engine marks its positions at each bar without telling account$ (only fills and days do):
          // the session subscribed first, so the bar is in the engine's figures by now.
          const snap = engine.snapshot();
          this.addPoint(this.now(), snap.equity, snap.tradingDay);
        }),
      );
    }
    this.addPoint(this.now(), engine.snapshot().equity, engine.rules.tradingDay);
  }

  close(): void {
    for (const s of this.subscriptions) s.unsubscribe();
  }

  equity(): readonly EquityPoint[] {
    return this.points;
  }

  private addPoint(time: number, equity: number, tradingDay: string): void {
    const last = this.points.at(-1);
    // One point per instant: a bar's marks and its fills come at one time, the last is the one that stands.
    if (last !== undefined && last.time >= time) {
      this.points[this.points.length - 1] = { time: last.time, equity, tradingDay };
      return;
    }
    this.points.push({ time, equity, tradingDay });
    if (this.points.length > this.maxPoints) {
      // A weeks-long session keeps its whole curve at a coarser grain in its older half.
      const half = this.points.length >> 1;
      const older = this.points.slice(0, half).filter((_, k) => k % 2 === 1);
      this.points.splice(0, half, ...older);
    }
  }

  private addDecision(entry: JournalEntryView): void {
    const d = entry.payload as {
      strategyId?: string;
      intent?: Intent;
      result?: { accepted: boolean; code?: string; adjusted?: string; message?: string };
      time?: number | null;
    };
    if (d.intent === undefined || d.result === undefined) return;
    this.decisions.push({
      time: typeof d.time === 'number' && Number.isFinite(d.time) ? d.time : entry.time,
      strategyId: d.strategyId ?? '',
      accepted: d.result.accepted,
      code: d.result.code ?? d.result.adjusted ?? null,
      subject: this.intentText(d.intent),
      message: d.result.message ?? null,
    });
    if (this.decisions.length > 4 * this.keep) this.decisions.splice(0, this.decisions.length - 2 * this.keep);
  }

  private name(contractId: string): string {
    const session = this.session;
    return session.contracts.get(session.routes.route(contractId))?.name ?? contractId;
  }

  private price(contractId: string, ticks: number | undefined): number | null {
    if (ticks === undefined || !Number.isFinite(ticks)) return null;
    const grid = this.session.contracts.get(contractId)?.grid;
    return grid === undefined ? ticks : grid.toPrice(ticks);
  }

  private orderPrice(contractId: string, spec: OrderSpec): number | null {
    switch (spec.type) {
      case 'market':
        return null;
      case 'limit':
        return this.price(contractId, spec.limitPrice);
      case 'stop':
      case 'stopLimit':
        return this.price(contractId, spec.stopPrice);
      case 'trailingStop':
        return this.price(contractId, spec.trailPrice);
    }
  }

  private intentText(intent: Intent): string {
    switch (intent.kind) {
      case 'place': {
        const at = this.orderPrice(intent.contractId, intent.order);
        return `${intent.side} ${intent.size} ${this.name(intent.contractId)} ${intent.order.type}${at === null ? '' : ` @ ${at}`}`;
      }
      case 'target':
        return `target ${intent.size} ${this.name(intent.contractId)}`;
      case 'flatten':
        return `flatten${intent.contractId === undefined ? '' : ` ${this.name(intent.contractId)}`}`;
      case 'modify':
        return `modify ${intent.orderId}`;
      case 'cancel':
        return `cancel ${intent.orderId}`;
      default:
        return (intent as { kind: string }).kind;
    }
  }

  snapshot(): AccountSnapshot {
    const session = this.session;
    const { engine, executor } = session;
    const config = session.options.config;
    const now = this.now();
    const snap = engine.snapshot();
    const status = session.statusInput();
    const state = engine.tradingState();
    const positions = snap.positions
      .filter((p) => p.size !== 0)
      .map((p) => ({
        contractId: p.contractId,
        name: this.name(p.contractId),
        size: p.size,
        averagePrice: this.price(p.contractId, p.averagePrice),
        lastPrice: this.price(p.contractId, p.lastPrice),
        openPnl: p.unrealizedPnl,
      }));
    const orders = engine.openOrders().map((o) => ({
      id: o.id,
      contractId: o.contractId,
      name: this.name(o.contractId),
      side: o.side,
      size: o.size,
      filledSize: o.filledSize,
      type: o.order.type,
      price: this.orderPrice(o.contractId, o.order),
      state: o.state,
    }));
    const refusals = this.decisions.filter((d) => !d.accepted).reverse();
    const accepted = this.decisions.filter((d) => d.accepted).reverse();
    return {
      id: this.id,
      name: session.account.name,
      mode: session.options.mode,
      strategy: `${config.strategy.name} (${config.strategy.id})`,
      time: now,
      tradingDay: engine.rules.tradingDay,
      balance: status.balance,
      equity: snap.equity,
      dayPnl: snap.dayPnl,
      openPnl: snap.unrealizedPnl,
      state: {
        state: state.state,
        reason: state.reason,
        since: Number.isFinite(state.time) ? state.time : null,
        paused: state.state === 'REDUCING' && state.reason === PAUSE_REASON,
      },
      passLock: this.passLock(),
      bots: this.bots(),
      positions,
      orders,
      headroom: this.headroom(snap.equity, snap.dayPnl),
      evaluation: this.evaluation(snap.balance),
      health: this.health(now),
      calendar: this.calendar(now),
      decisions: [...refusals.slice(0, this.keep), ...accepted.slice(0, Math.max(0, this.keep - refusals.length))],
      anomalies: executor.anomalies
        .slice(-this.keep)
        .reverse()
        .map((a) => ({ time: a.time, tag: a.tag, message: a.message })),
    };
  }

  private headroom(equity: number, dayPnl: number): Headroom[] {
    const rules = this.session.engine.rules;
    const c = rules.config;
    const out: Headroom[] = [];
    const share = (used: number): number => Math.min(1, Math.max(0, used));
    const loss = (limit: 'dailyLossLimit' | 'maximumLossLimit', amount: number | undefined, floor: number) => {
      if (amount === undefined || !Number.isFinite(floor)) return;
      const room = equity - floor;
      out.push({ limit, label: LIMIT_LABELS[limit], amount, floor, room, used: share(1 - room / amount) });
    };
    loss('dailyLossLimit', c.dailyLossLimit, rules.dailyLossFloor());
    loss('maximumLossLimit', c.maximumLossLimit?.amount, rules.maximumLossFloor());
    if (c.personalDailyLossLimit !== undefined) {
      const amount = c.personalDailyLossLimit;
      const room = amount + dayPnl;
      out.push({
        limit: 'personalDailyLossLimit',
        label: LIMIT_LABELS.personalDailyLossLimit,
        amount,
        floor: null,
        room,
        used: share(1 - room / amount),
      });
    }
    if (c.personalDailyProfitTarget !== undefined) {
      const amount = c.personalDailyProfitTarget;
      out.push({
        limit: 'personalDailyProfitTarget',
        label: LIMIT_LABELS.personalDailyProfitTarget,
        amount,
        floor: null,
        room: amount - dayPnl,
        used: share(dayPnl / amount),
      });
    }
    return out;
  }

  /** The evaluation's progress from the engine's days, measured as the evaluation replay does: realized balance. */
  private evaluation(balance: number): EvaluationView | null {
    const rules = this.options.evaluation;
    if (rules === undefined) return null;
    const days = this.session.engine.accounting.days;
    const profit = balance - rules.startingBalance;
    const tradingDays = days.filter((d) => d.trades > 0).length;
    const dayProfits = days.map((d) => d.endBalance - d.startBalance);
    const bestDay = dayProfits.length === 0 ? null : Math.max(...dayProfits);
    const share = rules.consistency?.bestDayShare ?? null;
    // The consistency rule measures a profit: without one it neither holds nor fails yet.
    let consistent: boolean | null = null;
    if (share !== null && profit > 0) consistent = bestDay === null || bestDay < share * profit;
    const minimum = rules.minimumTradingDays ?? null;
    const targetsMet =
      profit >= rules.profitTarget && (minimum === null || tradingDays >= minimum) && consistent !== false;
    return {
      name: rules.name,
      profitTarget: rules.profitTarget,
      profit,
      targetReached: profit / rules.profitTarget,
      tradingDays,
      minimumTradingDays: minimum,
      daysLeft: minimum === null ? 0 : Math.max(0, minimum - tradingDays),
      bestDay,
      consistencyShare: share,
      consistent,
      targetsMet,
    };
  }

  private health(now: number): HealthView {
    const session = this.session;
    const blind = session.poller.visibility;
    return {
      visible: blind === undefined,
      blindReason: blind ?? null,
      userHub: session.realtime?.state ?? 'none',
      marketHub: session.market?.state ?? 'none',
      polls: session.poller
        .health()
        .map((p) => ({ name: p.name, lastOkAt: p.lastOkAt ?? null, error: p.error ?? null })),
      bars: session.options.config.contracts.map((contractId) => {
        const end = this.lastBarEnd.get(contractId);
        return { contractId, lastBarAt: end ?? null, ageMs: end === undefined ? null : Math.max(0, now - end) };
      }),
    };
  }

  private calendar(now: number): CalendarView[] {
    const session = this.session;
    const config = session.options.config;
    const followed = new Set(session.routes.symbols());
    return config.contracts.map((contractId) => {
      const month = session.routes.route(contractId);
      const spec = session.contracts.get(month);
      const hours =
        config.market.hours === 'exchange' && spec !== undefined ? contractMarketHours([spec])[spec.id] : undefined;
      const open = hours === undefined ? true : hours.isOpen(now);
      let nextRoll: CalendarView['nextRoll'] = null;
      const contract = CALENDAR.byId(month);
      if (followed.has(contractId) && contract !== undefined) {
        const at = CALENDAR.rollDate(contract.spec, contract.month, config.roll.daysBeforeExpiry);
        let to: string | null = null;
        try {
          to = frontMonthOf(contractId, at + DAY_MS, config.roll.daysBeforeExpiry).id;
        } catch (error) {
          this.options.logger?.debug({ err: error, contractId }, 'dashboard: no next month in the contract calendar');
        }
        nextRoll = { at, to, kind: 'roll' };
      } else {
        const expiresAt = expiryInstant(month);
        if (expiresAt !== undefined)
          nextRoll = { at: expiresAt - config.roll.expiryMarginMinutes * 60_000, to: null, kind: 'expiry' };
      }
      return {
        contractId,
        month: spec?.name ?? month,
        open,
        nextClose: hours === undefined ? null : hours.nextClose(now),
        nextOpen: hours === undefined || open ? null : hours.nextOpen(now),
        nextRoll,
      };
    });
  }

  /** The evaluation's pass-lock once it engaged: the account opens no new risk (docs/live.md, Pass-lock). */
  private passLock(): AccountSnapshot['passLock'] {
    const engaged = this.session.engine.passLocked();
    return engaged === undefined ? null : { locked: true, mode: engaged.mode, reason: engaged.message };
  }

  private bots(): AccountSnapshot['bots'] {
    const engine = this.session.engine;
    const paused = new Map(engine.pausedStrategies().map((p) => [p.strategyId, p.reason]));
    return this.session.botIds.map((id) => {
      const own = engine.strategySnapshot(id);
      return {
        id,
        paused: paused.has(id),
        reason: paused.get(id) ?? null,
        netPnl: own.netPnl,
        trades: own.trades,
        positions: own.positions.filter((p) => p.size !== 0).map((p) => ({ contractId: p.contractId, size: p.size })),
      };
    });
  }

  async act(action: DashboardAction, source: ActionSource, bot?: string): Promise<ActionResult> {
    const session = this.session;
    const engine = session.engine;
    const name = session.account.name;
    if (bot !== undefined && action !== 'kill') {
      if (!session.botIds.includes(bot))
        return {
          account: this.id,
          action,
          ok: false,
          message: `${name} runs no bot ${bot} (${session.botIds.join(', ')})`,
        };
      const paused = action === 'pause';
      session.setBotPaused(bot, paused, source);
      return {
        account: this.id,
        action,
        ok: true,
        message: paused
          ? `${bot} paused on ${name}: it opens no new risk (its reductions, cancels and flattens pass)`
          : `${bot} resumed on ${name}`,
      };
    }
    switch (action) {
      case 'kill': {
        const result = await session.killSwitch(`kill switch from the ${source}`, source);
        return { account: this.id, action, ok: result.flat, message: `kill switch: ${flattenText(name, result)}` };
      }
      case 'pause': {
        const current = engine.tradingState();
        session.journal.record('operator', 'event', null, { action, source, from: current.state });
        if (current.state !== 'ACTIVE')
          return {
            account: this.id,
            action,
            ok: false,
            message: `${name} is ${current.state} (${current.reason}): nothing to pause`,
          };
        engine.setTradingState('REDUCING', PAUSE_REASON);
        return {
          account: this.id,
          action,
          ok: true,
          message: `${name} paused: only orders that reduce a position pass`,
        };
      }
      case 'resume': {
        const current = engine.tradingState();
        session.journal.record('operator', 'event', null, { action, source, from: current.state });
        // A state the guard, a blind poll or the kill switch chose is not the operator's to lift from a page.
        if (current.state !== 'REDUCING' || current.reason !== PAUSE_REASON)
          return {
            account: this.id,
            action,
            ok: false,
            message: `${name} is ${current.state} (${current.reason}): only a pause is resumed from here`,
          };
        engine.setTradingState('ACTIVE', `resumed from the ${source}`);
        return { account: this.id, action, ok: true, message: `${name} resumed` };
      }
    }
  }
}

/** A one-session feed; `close` stops its subscriptions (the session keeps running). */
export function sessionFeed(session: LiveSession, options: SessionFeedOptions = {}): DashboardFeed & { close(): void } {
  const account = new SessionAccount(session, options);
  return { accounts: () => [account], close: () => account.close() };
}
