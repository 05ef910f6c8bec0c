import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  newOrder,
  transition,
  isFinal,
  venueStatusOf,
  type LiveOrder,
  type OrderEvent,
  type VenueStatus,
} from '../../../src/adapters/live/order-state.ts';
import { OrderStatus } from '../../../src/protocol/codes.ts';

/**
 * A deliberately simple model of what must hold whatever the interleaving: fills counted once by id,
 * one cancel in flight at most, a filled order stays filled, a lookup only after an unknown outcome,
 * and a cancel asked for early goes out exactly once when the order turns up open.
 */
interface Model {
  fills: Map<string, number>;
  cancelInFlight: boolean;
  everFilled: boolean;
  resolved: boolean;
  cancelAskedWhileUnresolved: boolean;
  unknownSeen: boolean;
  sendCancels: number;
}

interface Real {
  order: LiveOrder;
}

const SIZE = 3;

class EventCommand implements fc.Command<Model, Real> {
  constructor(readonly event: OrderEvent) {}
  check(): boolean {
    return true;
  }
  run(m: Model, r: Real): void {
    const before = r.order;
    const t = transition(before, this.event);
    const after = t.order;
    // sendCancel only when no cancel is in flight, and it puts one in flight.
    if (t.effects.includes('sendCancel')) {
      expect(m.cancelInFlight).toBe(false);
      expect(after.state).toBe('cancelling');
      m.sendCancels++;
    }
    if (t.effects.includes('lookupByTag')) {
      expect(this.event.type).toBe('placeUnknown');
      m.unknownSeen = true;
    }
    if (this.event.type === 'fill' && !m.fills.has(this.event.fillId)) m.fills.set(this.event.fillId, this.event.size);
    const total = [...m.fills.values()].reduce((a, b) => a + b, 0);
    expect(after.filledSize).toBe(total);
    expect(new Set(after.fillIds).size).toBe(after.fillIds.length);
    if (m.everFilled) expect(after.state).toBe('filled');
    if (after.state === 'filled') m.everFilled = true;
    if (total >= SIZE) expect(after.state).toBe('filled');
    // Final states never go back to working, except a lost order the gateway turns out to hold.
    if (isFinal(before.state) && before.state !== 'lost')
      expect(['working', 'cancelling', 'submitting', 'unknown']).not.toContain(after.state);
    // Nothing but a lookup or a fill resolves an unknown place.
    if (before.state === 'unknown' && !['lookupFound', 'lookupMissing', 'fill'].includes(this.event.type)) {
      expect(after.state).toBe('unknown');
    }
    // One missing lookup proves nothing: only one past the unknown-outcome window gives an order up.
    if (this.event.type === 'lookupMissing' && !this.event.expired && before.state !== 'lost')
      expect(after.state).not.toBe('lost');
    if (
      this.event.type === 'lookupMissing' &&
      this.event.expired &&
      (before.state === 'submitting' || before.state === 'unknown')
    )
      expect(after.state).toBe('lost');
    if ((before.state === 'submitting' || before.state === 'unknown') && this.event.type === 'cancelRequested')
      m.cancelAskedWhileUnresolved = true;
    const wasResolved = m.resolved;
    if (!(after.state === 'submitting' || after.state === 'unknown')) m.resolved = true;
    if (!wasResolved && m.resolved && m.cancelAskedWhileUnresolved && after.state === 'cancelling') {
      expect(t.effects).toContain('sendCancel');
    }
    m.cancelInFlight = after.state === 'cancelling';
    r.order = after;
  }
  toString(): string {
    return JSON.stringify(this.event);
  }
}

const venueStatus = fc.constantFrom<VenueStatus>('open', 'filled', 'cancelled', 'expired', 'rejected');
const fillId = fc.constantFrom('t1', 't2', 't3', 't4');
const eventArb: fc.Arbitrary<OrderEvent> = fc.oneof(
  fc.constant<OrderEvent>({ type: 'placeAccepted', venueOrderId: 7 }),
  fc.constant<OrderEvent>({ type: 'placeRejected', reason: 'OrderRejected' }),
  fc.constant<OrderEvent>({ type: 'placeUnknown' }),
  venueStatus.map<OrderEvent>((status) => ({ type: 'lookupFound', venueOrderId: 7, status })),
  fc.boolean().map<OrderEvent>((expired) => ({ type: 'lookupMissing', expired })),
  fc.constant<OrderEvent>({ type: 'cancelRequested' }),
  fc.constant<OrderEvent>({ type: 'cancelAccepted' }),
  fc.constant<OrderEvent>({ type: 'cancelRejected', reason: 'Rejected' }),
  fc.constant<OrderEvent>({ type: 'cancelUnknown' }),
  venueStatus.map<OrderEvent>((status) => ({ type: 'venueStatus', status })),
  fc
    .tuple(fillId, fc.integer({ min: 1, max: 2 }))
    .map<OrderEvent>(([id, size]) => ({ type: 'fill', fillId: id, size })),
);

describe('order transition table', () => {
  it('holds its invariants under random interleavings of answers, statuses, cancels and fills', () => {
    fc.assert(
      fc.property(fc.commands([eventArb.map((e) => new EventCommand(e))], { size: '+1' }), (cmds) => {
        const model: Model = {
          fills: new Map(),
          cancelInFlight: false,
          everFilled: false,
          resolved: false,
          cancelAskedWhileUnresolved: false,
          unknownSeen: false,
          sendCancels: 0,
        };
        fc.modelRun(() => ({ model, real: { order: newOrder('s-1', SIZE) } }), cmds);
      }),
      { numRuns: 400 },
    );
  });

  it('asks for a lookup by tag, and nothing else, when a place outcome is unknown', () => {
    const t = transition(newOrder('s-1', 1), { type: 'placeUnknown' });
    expect(t.order.state).toBe('unknown');
    expect(t.effects).toEqual(['lookupByTag']);
  });

  it('takes a realtime event that named the order before its place answer: the answer, or its loss, is no anomaly', () => {
    const named = transition(newOrder('s-1', 1), { type: 'lookupFound', venueOrderId: 7, status: 'filled' }).order;
    expect(named.state).toBe('filled');
    for (const late of [{ type: 'placeAccepted', venueOrderId: 7 }, { type: 'placeUnknown' }] as const) {
      const t = transition(named, late);
      expect(t).toMatchObject({ order: named, effects: [], ignored: true });
      expect(t.anomaly).toBeUndefined();
    }
    // An answer that names another order is still one.
    expect(transition(named, { type: 'placeAccepted', venueOrderId: 8 }).anomaly).toBeDefined();
  });

  it('settles the fill-after-cancel race as filled', () => {
    let o = transition(newOrder('s-1', 1), { type: 'placeAccepted', venueOrderId: 1 }).order;
    const c = transition(o, { type: 'cancelRequested' });
    expect(c.effects).toEqual(['sendCancel']);
    o = transition(c.order, { type: 'fill', fillId: 'x', size: 1 }).order;
    expect(o.state).toBe('filled');
    const late = transition(o, { type: 'venueStatus', status: 'cancelled' });
    expect(late.order.state).toBe('filled');
    expect(late.anomaly).toBeDefined();
  });

  it('returns a refused cancel to working and sends a cancel again only after an unknown cancel is looked up open', () => {
    let o = transition(newOrder('s-1', 1), { type: 'placeAccepted', venueOrderId: 1 }).order;
    o = transition(o, { type: 'cancelRequested' }).order;
    expect(transition(o, { type: 'cancelRejected', reason: 'Rejected' }).order.state).toBe('working');
    const unknown = transition(o, { type: 'cancelUnknown' });
    expect(unknown.effects).toEqual([]);
    const seenOpen = transition(unknown.order, { type: 'venueStatus', status: 'open' });
    expect(seenOpen.effects).toEqual(['sendCancel']);
  });

  it('sends a cancel asked for during an unknown place once the lookup finds the order open', () => {
    let o = transition(newOrder('s-1', 1), { type: 'placeUnknown' }).order;
    o = transition(o, { type: 'cancelRequested' }).order;
    const found = transition(o, { type: 'lookupFound', venueOrderId: 9, status: 'open' });
    expect(found.effects).toEqual(['sendCancel']);
    expect(found.order.venueOrderId).toBe(9);
  });

  it('ignores a fill it has already seen', () => {
    let o = transition(newOrder('s-1', 2), { type: 'placeAccepted', venueOrderId: 1 }).order;
    o = transition(o, { type: 'fill', fillId: 'a', size: 1 }).order;
    const again = transition(o, { type: 'fill', fillId: 'a', size: 1 });
    expect(again.ignored).toBe(true);
    expect(again.order.filledSize).toBe(1);
  });

  it('maps every gateway order status', () => {
    expect(venueStatusOf(OrderStatus.Open)).toBe('open');
    expect(venueStatusOf(OrderStatus.Pending)).toBe('open');
    expect(venueStatusOf(OrderStatus.PendingCancellation)).toBe('open');
    expect(venueStatusOf(OrderStatus.Filled)).toBe('filled');
    expect(venueStatusOf(OrderStatus.Cancelled)).toBe('cancelled');
    expect(venueStatusOf(OrderStatus.Expired)).toBe('expired');
    expect(venueStatusOf(OrderStatus.Rejected)).toBe('rejected');
  });
});
