/**
 * One readable line per trading event for the operator of a paper or live session (standard output):
 * what was placed, filled, changed, cancelled or refused and why, with the position and PnL after a fill.
 * The JSON logs carry the same facts for machines; these lines are for the person watching.
 */
import type { Decision } from '../../engine/runner.ts';
import type { ContractSpec, Fill, OrderSpec, OrderUpdate } from '../../engine/types.ts';

export interface EventLineContext {
  readonly contracts: ReadonlyMap<string, ContractSpec>;
  /** The gateway's clock, for the time printed on each line. */
  readonly now: () => number;
}

const clock = (ms: number): string => new Date(ms).toISOString().slice(11, 19);
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
  const at = clock(update.time);
  switch (update.state) {
    case 'working':
      if (previous?.state === 'working') {
        const changed =
          previous.size !== update.size || JSON.stringify(previous.order) !== JSON.stringify(update.order);
        return changed ? `${at} modified  ${what}` : undefined;
      }
      return `${at} placed    ${what}${update.adopted === true ? ' (adopted: it had been given up)' : ''}`;
    case 'cancelled':
      return `${at} cancelled ${what}${update.filledSize > 0 ? ` (${update.filledSize} filled before)` : ''}`;
    case 'rejected':
      return `${at} rejected  ${what}${update.reason === undefined ? '' : `: ${update.reason}`}`;
    case 'expired':
      return `${at} expired   ${what}`;
    case 'filled':
      // Through the realtime hub a market order is often filled before it was ever seen working.
      return previous === undefined || previous.state === 'pending' ? `${at} placed    ${what}` : undefined;
    default:
      return undefined;
  }
}

export function fillLine(ctx: EventLineContext, fill: Fill, position: number, dayPnl: number): string {
  const pos = position === 0 ? 'flat' : `${position > 0 ? '+' : ''}${position}`;
  return `${clock(fill.time)} filled    ${fill.orderId} ${fill.side} ${fill.size} ${name(ctx, fill.contractId)} @ ${price(ctx, fill.contractId, fill.price)} | position ${pos} | PnL today ${money(dayPnl)}`;
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
  return `${clock(decision.time === decision.time ? decision.time : ctx.now())} refused   ${decision.strategyId}: ${subject}: ${decision.result.code} ${decision.result.message}`;
}
