/**
 * The life of one live order as an explicit transition table. The executor never changes an order's
 * state any other way, so every race the gateway can produce (an answer lost after the order was
 * accepted, a fill that lands after a cancel was sent, a cancel that fails because the order filled
 * first, a fill reported twice) is a row here, and the fast-check model test drives all of them.
 *
 * States:
 * - `submitting`: journaled before sending; the place call is in flight (or the process died during it).
 * - `unknown`: the place call's outcome is unknown; the only allowed next step is a lookup by customTag.
 * - `working`: the gateway holds the order (its venue id is known).
 * - `cancelling`: a cancel was sent and not yet confirmed by Order/search.
 * - `filled`, `cancelled`, `rejected`, `expired`: final as the gateway reports them.
 * - `lost`: lookups by customTag found nothing for the whole unknown-outcome window, so the order is
 *   taken as never placed. It is not re-sent; should the gateway show it later anyway, it is adopted
 *   again (and reported as an anomaly). One missing lookup proves nothing: a request held by the network
 *   can reach the gateway seconds after the client gave up on it, so until the window has passed a
 *   missing lookup leaves the order `unknown` (its exposure still counted).
 */
import { OrderStatus } from '../../protocol/codes.ts';

export type LiveOrderState =
  | 'submitting'
  | 'unknown'
  | 'working'
  | 'cancelling'
  | 'filled'
  | 'cancelled'
  | 'rejected'
  | 'expired'
  | 'lost';

export const FINAL_STATES: ReadonlySet<LiveOrderState> = new Set([
  'filled',
  'cancelled',
  'rejected',
  'expired',
  'lost',
]);

/** What Order/search says about an order, reduced to what decides a transition. */
export type VenueStatus = 'open' | 'filled' | 'cancelled' | 'expired' | 'rejected';

export function venueStatusOf(status: number): VenueStatus {
  switch (status) {
    case OrderStatus.Filled:
      return 'filled';
    case OrderStatus.Cancelled:
      return 'cancelled';
    case OrderStatus.Expired:
      return 'expired';
    case OrderStatus.Rejected:
      return 'rejected';
    // None, Open, Pending, PendingCancellation, Suspended and any newer code: the order may still fill,
    // so it is treated as live until the gateway says otherwise.
    default:
      return 'open';
  }
}

export interface LiveOrder {
  readonly tag: string;
  readonly state: LiveOrderState;
  readonly size: number;
  readonly filledSize: number;
  readonly venueOrderId?: number;
  /** Fill (trade) ids already applied; a fill seen again changes nothing. */
  readonly fillIds: readonly string[];
  /** A cancel was asked for while it could not be sent yet (place unresolved, or a cancel's outcome unknown). */
  readonly cancelWanted: boolean;
}

export type OrderEvent =
  | { readonly type: 'placeAccepted'; readonly venueOrderId: number }
  | { readonly type: 'placeRejected'; readonly reason: string }
  | { readonly type: 'placeUnknown' }
  | { readonly type: 'lookupFound'; readonly venueOrderId: number; readonly status: VenueStatus }
  /** `expired`: the unknown-outcome window has passed since the place was sent. */
  | { readonly type: 'lookupMissing'; readonly expired: boolean }
  | { readonly type: 'cancelRequested' }
  | { readonly type: 'cancelAccepted' }
  | { readonly type: 'cancelRejected'; readonly reason: string }
  | { readonly type: 'cancelUnknown' }
  | { readonly type: 'venueStatus'; readonly status: VenueStatus }
  | { readonly type: 'fill'; readonly fillId: string; readonly size: number };

/** Side effects the executor must perform after a transition. */
export type OrderEffect = 'lookupByTag' | 'sendCancel';

export interface Transition {
  readonly order: LiveOrder;
  readonly effects: readonly OrderEffect[];
  /** Something the gateway did that should not happen; logged and journaled, never hidden. */
  readonly anomaly?: string;
  /** True when the event changed nothing (a duplicate fill, a stale status). */
  readonly ignored: boolean;
}

export function newOrder(tag: string, size: number): LiveOrder {
  return { tag, state: 'submitting', size, filledSize: 0, fillIds: [], cancelWanted: false };
}

export function isFinal(state: LiveOrderState): boolean {
  return FINAL_STATES.has(state);
}

const same = (order: LiveOrder, anomaly?: string): Transition =>
  anomaly === undefined ? { order, effects: [], ignored: true } : { order, effects: [], ignored: true, anomaly };

/** An order the gateway holds as open: working, or straight to a cancel if one is waiting. */
function becomeOpen(order: LiveOrder, venueOrderId: number | undefined, anomaly?: string): Transition {
  const base = { ...order, ...(venueOrderId === undefined ? {} : { venueOrderId }) };
  const next: Transition = order.cancelWanted
    ? { order: { ...base, state: 'cancelling', cancelWanted: false }, effects: ['sendCancel'], ignored: false }
    : { order: { ...base, state: 'working' }, effects: [], ignored: false };
  return anomaly === undefined ? next : { ...next, anomaly };
}

function settle(
  order: LiveOrder,
  status: Exclude<VenueStatus, 'open'> | 'lost',
  venueOrderId?: number,
  anomaly?: string,
): Transition {
  const next: LiveOrder = {
    ...order,
    ...(venueOrderId === undefined ? {} : { venueOrderId }),
    state: status,
    cancelWanted: false,
  };
  return anomaly === undefined
    ? { order: next, effects: [], ignored: false }
    : { order: next, effects: [], ignored: false, anomaly };
}

/** The transition table. Pure: the same order and event always give the same result. */
export function transition(order: LiveOrder, event: OrderEvent): Transition {
  const s = order.state;
  switch (event.type) {
    case 'placeAccepted':
      if (s === 'submitting') return becomeOpen(order, event.venueOrderId);
      // A realtime event (or a lookup) can name the order before its place answer arrives.
      if (order.venueOrderId === event.venueOrderId) return same(order);
      return same(order, `place answer in state ${s}`);

    case 'placeRejected':
      if (s === 'submitting') return settle(order, 'rejected');
      return same(order, `place rejection in state ${s}`);

    case 'placeUnknown':
      if (s === 'submitting')
        return { order: { ...order, state: 'unknown' }, effects: ['lookupByTag'], ignored: false };
      // Already named by a realtime event or a lookup: the lost answer no longer matters.
      if (order.venueOrderId !== undefined) return same(order);
      return same(order, `unknown place outcome in state ${s}`);

    case 'lookupFound': {
      if (s === 'submitting' || s === 'unknown' || s === 'lost') {
        const anomaly = s === 'lost' ? `order ${order.tag} reappeared after a lookup had not found it` : undefined;
        if (event.status === 'open') return becomeOpen(order, event.venueOrderId, anomaly);
        return settle(order, event.status, event.venueOrderId, anomaly);
      }
      // Already resolved: a lookup result is just another status report.
      return transition(order, { type: 'venueStatus', status: event.status });
    }

    case 'lookupMissing':
      if ((s === 'submitting' || s === 'unknown') && event.expired) return settle(order, 'lost');
      // Not found yet: stays unresolved (a submitting order of a previous process becomes unknown).
      if (s === 'submitting') return { order: { ...order, state: 'unknown' }, effects: [], ignored: false };
      return same(order);

    case 'cancelRequested':
      if (s === 'submitting' || s === 'unknown') {
        return order.cancelWanted
          ? same(order)
          : { order: { ...order, cancelWanted: true }, effects: [], ignored: false };
      }
      if (s === 'working')
        return {
          order: { ...order, state: 'cancelling', cancelWanted: false },
          effects: ['sendCancel'],
          ignored: false,
        };
      // Cancelling already, or nothing left to cancel.
      return same(order);

    case 'cancelAccepted':
      // Accepted is not done: the order stays cancelling until Order/search shows it cancelled (or filled).
      return same(order);

    case 'cancelRejected':
      // The gateway refused (for example the order filled first); it still holds the order as it was,
      // and the next status report settles it. No automatic retry.
      if (s === 'cancelling') return { order: { ...order, state: 'working' }, effects: [], ignored: false };
      return same(order);

    case 'cancelUnknown':
      // Whether the cancel took effect is unknown: wait for a status report; if the order is still open
      // then, the cancel is sent again (it was looked up first, so this is not a blind retry).
      if (s === 'cancelling')
        return { order: { ...order, state: 'working', cancelWanted: true }, effects: [], ignored: false };
      return same(order);

    case 'venueStatus': {
      const v = event.status;
      if (s === 'submitting' || s === 'unknown') {
        // Status reports are matched by venue id, which these states do not have yet.
        return same(order, `status ${v} for unresolved order ${order.tag}`);
      }
      if (v === 'open') {
        if (s === 'working') return order.cancelWanted ? becomeOpen(order, undefined) : same(order);
        if (s === 'cancelling') return same(order);
        if (s === 'lost')
          return becomeOpen(order, undefined, `order ${order.tag} reappeared after a lookup had not found it`);
        return same(order, `gateway reports ${order.tag} open, already ${s}`);
      }
      if (s === v) return same(order);
      if (s === 'filled') return same(order, `gateway reports filled order ${order.tag} as ${v}`);
      if (isFinal(s) && s !== 'lost' && v !== 'filled')
        return same(order, `gateway reports ${order.tag} as ${v}, already ${s}`);
      // A cancelled order that turns out filled is the fill-after-cancel race: the gateway's word wins.
      return settle(
        order,
        v,
        undefined,
        s === 'lost' ? `order ${order.tag} reappeared after a lookup had not found it` : undefined,
      );
    }

    case 'fill': {
      if (order.fillIds.includes(event.fillId)) return same(order);
      const filledSize = order.filledSize + event.size;
      const fillIds = [...order.fillIds, event.fillId];
      let anomaly: string | undefined;
      if (filledSize > order.size) anomaly = `order ${order.tag} filled ${filledSize} of ${order.size}`;
      else if (s === 'submitting' || s === 'unknown' || s === 'lost')
        anomaly = `fill ${event.fillId} for unresolved order ${order.tag}`;
      const full = filledSize >= order.size;
      const state: LiveOrderState = full ? 'filled' : s === 'lost' ? 'working' : s;
      const next: LiveOrder = { ...order, filledSize, fillIds, state, ...(full ? { cancelWanted: false } : {}) };
      return anomaly === undefined
        ? { order: next, effects: [], ignored: false }
        : { order: next, effects: [], ignored: false, anomaly };
    }
  }
}
