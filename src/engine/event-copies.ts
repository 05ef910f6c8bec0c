/**
 * A venue's events as objects of their own. A venue may hand its listener one object it rewrites for the
 * next event (`Venue.listen`); whatever keeps one past the call keeps a copy made here: a stream's
 * subscribers (`Multicast` given one of these) and accounting's memory of fills.
 */
import type { Fill, OrderUpdate, VenueEvent, Writable } from './types.ts';

/** An order update of its own, with the optional fields it has and no others. */
export function ownUpdate(u: OrderUpdate): OrderUpdate {
  const own: Writable<OrderUpdate> = {
    kind: 'order',
    orderId: u.orderId,
    state: u.state,
    time: u.time,
    contractId: u.contractId,
    side: u.side,
    size: u.size,
    filledSize: u.filledSize,
    order: u.order,
  };
  if (u.reportedFilledSize !== undefined) own.reportedFilledSize = u.reportedFilledSize;
  if (u.createdAt !== undefined) own.createdAt = u.createdAt;
  if (u.venueOrderId !== undefined) own.venueOrderId = u.venueOrderId;
  if (u.reason !== undefined) own.reason = u.reason;
  if (u.adopted !== undefined) own.adopted = u.adopted;
  return own;
}

export function ownFill(f: Fill): Fill {
  return {
    kind: 'fill',
    fillId: f.fillId,
    orderId: f.orderId,
    contractId: f.contractId,
    side: f.side,
    size: f.size,
    price: f.price,
    fees: f.fees,
    time: f.time,
  };
}

/** Order updates and fills copied; an account update is the venue's own already. */
export function ownVenueEvent(e: VenueEvent): VenueEvent {
  switch (e.kind) {
    case 'order':
      return ownUpdate(e);
    case 'fill':
      return ownFill(e);
    case 'account':
      return e;
  }
}
