/**
 * One readable line per trading event for the operator of a paper or live session (standard output):
 * what was placed, filled, changed, cancelled or refused and why, with the position and PnL after a fill.
 * The JSON logs carry the same facts for machines; these lines are for the person watching.
 */
import type { Decision } from '../../engine/runner.ts';
import { isoDate } from '../../engine/trading-day.ts';
import type { ContractSpec, Fill, OrderSpec, OrderUpdate } from '../../engine/types.ts';

export interface EventLineContext {
  readonly contracts: ReadonlyMap<string, ContractSpec>;
  /** The gateway's clock, for the time printed on each line. */
  readonly now: () => number;
  /** When set, the first line and every line after a change of UTC date carry the date (a multi-day log). */
  readonly dates?: LineDates;
}

/**
 * Remembers the UTC date last printed, so that a log spanning days is never ambiguous: the first line
 * carries its date, and so does every line whose date differs from the previous line's.
 */
export class LineDates {
  private last: string | undefined;

  /** `HH:MM:SS`, prefixed with `YYYY-MM-DD ` when the date is new. */
  stamp(ms: number): string {
    const iso = new Date(ms).toISOString();
    const date = iso.slice(0, 10);
    const time = iso.slice(11, 19);
    if (date === this.last) return time;
    this.last = date;
    return `${date} ${time}`;
  }

  /** A line that states the date by itself (the trading day's line): the next line needs none. */
  note(ms: number): string {
    const date = isoDate(ms);
    this.last = date;
    return date;
  }
}

const timeOnly = (ms: number): string => new Date(ms).toISOString().slice(11, 19);
const stamp = (ctx: EventLineContext, ms: number): string => ctx.dates?.stamp(ms) ?? timeOnly(ms);
const money = (v: number): string => `${v < 0 ? '-' : ''}$${Math.abs(v).toFixed(2)}`;

function name(ctx: EventLineContext, contractId: string): string {
  return ctx.contracts.get(contractId)?.name ?? contractId;
}

function price(ctx: EventLineContext, contractId: string, ticks: number): string {
  const grid = ctx.contracts.get(contractId)?.grid;
  return grid === undefined || !Number.isInteger(ticks) ? `${ticks} ticks` : String(grid.toPrice(ticks));
}

export function orderText(ctx: EventLineContext, contractId: string, spec: OrderSpec): string {
  switch (spec.type) {
    case 'market':
      return 'market';
    case 'limit':
      return `limit ${price(ctx, contractId, spec.limitPrice)}`;
    case 'stop':
      return `stop ${price(ctx, contractId, spec.stopPrice)}`;
    case 'stopLimit':
      return `stop ${price(ctx, contractId, spec.stopPrice)} limit ${price(ctx, contractId, spec.limitPrice)}`;
    case 'trailingStop':
      return `trailing stop, trailPrice ${price(ctx, contractId, spec.trailPrice)}`;
  }
}

/**
 * A line for an order's new state or terms, or undefined when nothing a person needs changed (pending,
 * a partial fill: the fill has its own line).
 */
export function orderLine(
  ctx: EventLineContext,
  update: OrderUpdate,
  previous: OrderUpdate | undefined,
): string | undefined {
  const what = `${update.orderId} ${update.side} ${update.size} ${name(ctx, update.contractId)} ${orderText(ctx, update.contractId, update.order)}`;
  // Stamped only for a line that is printed (a dated stamp moves the date last printed).
  const at = (): string => stamp(ctx, update.time);
  // An order is placed when it was created, not when its working (or filled) state was first seen: a fill
  // is never printed with an earlier time than its placed line.
  const placedAt = (): string => stamp(ctx, Math.min(update.createdAt ?? update.time, update.time));
  switch (update.state) {
    case 'working':
      if (previous?.state === 'working') {
        const changed =
          previous.size !== update.size || JSON.stringify(previous.order) !== JSON.stringify(update.order);
        return changed ? `${at()} modified  ${what}` : undefined;
      }
      return `${placedAt()} placed    ${what}${update.adopted === true ? ' (adopted: it had been given up)' : ''}`;
    case 'cancelled':
      return `${at()} cancelled ${what}${update.filledSize > 0 ? ` (${update.filledSize} filled before)` : ''}`;
    case 'rejected':
      return `${at()} rejected  ${what}${update.reason === undefined ? '' : `: ${update.reason}`}`;
    case 'expired':
      return `${at()} expired   ${what}`;
    case 'filled':
      // Through the realtime hub a market order is often filled before it was ever seen working.
      return previous === undefined || previous.state === 'pending' ? `${placedAt()} placed    ${what}` : undefined;
    default:
      return undefined;
  }
}

export function fillLine(ctx: EventLineContext, fill: Fill, position: number, dayPnl: number): string {
  const pos = position === 0 ? 'flat' : `${position > 0 ? '+' : ''}${position}`;
  return `${stamp(ctx, fill.time)} filled    ${fill.orderId} ${fill.side} ${fill.size} ${name(ctx, fill.contractId)} @ ${price(ctx, fill.contractId, fill.price)} | position ${pos} | PnL today ${money(dayPnl)}`;
}

/** A line for a refused intent (the risk guard's reason code and message); accepted ones are silent. */
export function decisionLine(ctx: EventLineContext, decision: Decision): string | undefined {
  if (decision.result.accepted) return undefined;
  const intent = decision.intent;
  const subject =
    intent.kind === 'place'
      ? `${intent.side} ${intent.size} ${name(ctx, intent.contractId)} ${orderText(ctx, intent.contractId, intent.order)}`
      : intent.kind === 'target'
        ? `target ${intent.size} ${name(ctx, intent.contractId)}`
        : intent.kind;
  return `${stamp(ctx, decision.time === decision.time ? decision.time : ctx.now())} refused   ${decision.strategyId}: ${subject}: ${decision.result.code} ${decision.result.message}`;
}

/** The guard's limits in force on a trading day (money; floors are equity levels, -Infinity when none). */
export interface DayLimits {
  readonly dailyLossLimit?: number | undefined;
  readonly dailyLossFloor: number;
  readonly maximumLossLimit?: { readonly amount: number; readonly variant: string } | undefined;
  readonly maximumLossFloor: number;
  readonly personalDailyLossLimit?: number | undefined;
  readonly personalDailyProfitTarget?: number | undefined;
}

export interface DayStart {
  /** When the day was seen to start (the gateway's clock). */
  readonly time: number;
  /** The engine's trading day, `YYYY-MM-DD` (the date it ends on). */
  readonly tradingDay: string;
  /** The previous trading day's net PnL (realized, after fees), when the session saw that day. */
  readonly previousDayPnl: number | undefined;
  readonly limits: DayLimits;
}

/** Text of the limits in force, for the trading day's line. */
export function limitsText(l: DayLimits): string {
  const parts: string[] = [];
  const floor = (v: number): string => (Number.isFinite(v) ? ` (floor ${money(v)})` : '');
  if (l.dailyLossLimit !== undefined) parts.push(`daily loss ${money(l.dailyLossLimit)}${floor(l.dailyLossFloor)}`);
  if (l.maximumLossLimit !== undefined)
    parts.push(
      `maximum loss ${money(l.maximumLossLimit.amount)} ${l.maximumLossLimit.variant}${floor(l.maximumLossFloor)}`,
    );
  if (l.personalDailyLossLimit !== undefined) parts.push(`personal daily loss ${money(l.personalDailyLossLimit)}`);
  if (l.personalDailyProfitTarget !== undefined)
    parts.push(`personal profit target ${money(l.personalDailyProfitTarget)}`);
  return parts.length === 0 ? 'none checked by the guard' : parts.join(', ');
}

/**
 * The line that opens a trading day: its UTC date (which also dates the lines after it), the trading
 * day, the previous day's PnL and the limits in force.
 */
export function dayLine(ctx: EventLineContext, day: DayStart): string {
  const date = ctx.dates?.note(day.time) ?? isoDate(day.time);
  const previous =
    day.previousDayPnl === undefined
      ? 'no previous day in this session'
      : `previous day PnL ${money(day.previousDayPnl)}`;
  return `--- ${date} (trading day ${day.tradingDay}) ${previous}, limits: ${limitsText(day.limits)}`;
}

/**
 * Whether every order the session sent was rejected (a gateway that refuses them all: an account
 * without permission, a contract it does not trade, margin): counted from the orders' updates, in
 * bounded memory (the rejected ids are kept only while no order has been accepted).
 */
export class RejectionTally {
  private readonly rejected = new Set<string>();
  private accepted = false;
  private firstReason: string | undefined;

  /**
   * `since`: the session's start on the gateway's clock. An order created before it is an earlier
   * session's, resolved now (a lost place found rejected after a restart): it says nothing of this one.
   */
  constructor(private readonly since = Number.NEGATIVE_INFINITY) {}

  note(update: OrderUpdate): void {
    if (this.accepted || update.state === 'pending') return;
    if (update.createdAt !== undefined && update.createdAt < this.since) return;
    if (update.state !== 'rejected') {
      this.accepted = true;
      this.rejected.clear();
      return;
    }
    if (this.rejected.size === 0) this.firstReason = update.reason ?? 'no reason given';
    this.rejected.add(update.orderId);
  }

  /** The end-of-session line when at least one order was sent and every one was rejected, else undefined. */
  summary(): string | undefined {
    if (this.accepted || this.rejected.size === 0) return undefined;
    return `every order of the session was rejected (${this.rejected.size}); the first: ${this.firstReason}`;
  }
}

/** Orders whose last update is kept (to tell a change of terms from a repeat); finished ones go first. */
export const ORDER_LINE_MEMORY = 1_024;

/**
 * The readable line of each order update, given the order's previous update: memory stays bounded over
 * a run of weeks (finished orders are forgotten first, oldest first, beyond ORDER_LINE_MEMORY).
 */
export class OrderLines {
  private readonly last = new Map<string, OrderUpdate>();

  constructor(private readonly limit = ORDER_LINE_MEMORY) {}

  line(ctx: EventLineContext, update: OrderUpdate): string | undefined {
    const text = orderLine(ctx, update, this.last.get(update.orderId));
    this.last.delete(update.orderId);
    this.last.set(update.orderId, update);
    if (this.last.size > this.limit) this.trim();
    return text;
  }

  /** Whether the order was sent and no line has said it was placed yet (its last update is pending). */
  awaitsPlaced(orderId: string): boolean {
    return this.last.get(orderId)?.state === 'pending';
  }

  /** Orders remembered now. */
  get size(): number {
    return this.last.size;
  }

  private trim(): void {
    const finished = (u: OrderUpdate): boolean => u.state !== 'pending' && u.state !== 'working';
    for (const [id, u] of this.last) {
      if (this.last.size <= this.limit) return;
      if (finished(u)) this.last.delete(id);
    }
    // Only live orders left and still too many (not a real account): the oldest go.
    for (const id of this.last.keys()) {
      if (this.last.size <= this.limit) return;
      this.last.delete(id);
    }
  }
}

/**
 * The order and fill lines in the order things happened. A venue may report an order's fill before its
 * new state (the executor emits the fill, then the order's update, and through the realtime hub a market
 * order is filled before it was ever seen working): a fill of an order whose placed line has not been
 * printed waits for that line, so `placed` is never printed below the `filled` it caused. The wait ends
 * with the order's next update, or at the latest once the current event has been handled (a microtask).
 */
export class EventLinePrinter {
  private readonly held = new Map<string, (() => string)[]>();

  constructor(
    private readonly ctx: EventLineContext,
    private readonly write: (line: string | undefined) => void,
    private readonly orders = new OrderLines(),
  ) {}

  order(update: OrderUpdate): void {
    this.write(this.orders.line(this.ctx, update));
    this.flush(update.orderId);
  }

  /** A fill, with the position and the day's PnL right after it (read now, printed maybe a little later). */
  fill(fill: Fill, position: number, dayPnl: number): void {
    const line = (): string => fillLine(this.ctx, fill, position, dayPnl);
    const held = this.held.get(fill.orderId);
    if (held !== undefined) held.push(line);
    else if (this.orders.awaitsPlaced(fill.orderId)) {
      this.held.set(fill.orderId, [line]);
      queueMicrotask(() => this.flush(fill.orderId));
    } else this.write(line());
  }

  private flush(orderId: string): void {
    const held = this.held.get(orderId);
    if (held === undefined) return;
    this.held.delete(orderId);
    for (const line of held) this.write(line());
  }
}
