import { describe, expect, it } from 'vitest';
import { Subject } from 'rxjs';
import {
  ContractRoutes,
  expiryInstant,
  followedSymbol,
  FrontMonthFollower,
  routedVenue,
} from '../../../src/adapters/live/month-follower.ts';
import type { OrderCommand, Venue, VenueEvent } from '../../../src/engine/types.ts';

describe('front-month follower', () => {
  it('follows roots and symbol ids the calendar knows, not contract ids', () => {
    expect(followedSymbol('ES')).toBe('F.US.EP');
    expect(followedSymbol('f.us.ep')).toBe('F.US.EP');
    expect(followedSymbol('CON.F.US.EP.Z26')).toBeUndefined();
    expect(followedSymbol('F.US.NOPE')).toBeUndefined();
  });

  it('rolls at the calendar roll date (or the configured days) and warns a pinned month once before expiry', () => {
    const routes = new ContractRoutes([['F.US.EP', 'CON.F.US.EP.Z26']]);
    const follower = new FrontMonthFollower(routes, ['CON.F.US.EP.Z26'], { mode: 'roll', expiryMarginMinutes: 30 });
    expect(follower.due(Date.parse('2026-12-09T23:59:59Z'))).toEqual([]);
    expect(follower.due(Date.parse('2026-12-10T00:00:00Z'))).toEqual([
      { kind: 'roll', symbolId: 'F.US.EP', from: 'CON.F.US.EP.Z26', to: 'CON.F.US.EP.H27' },
    ]);
    const early = new FrontMonthFollower(routes, [], { mode: 'roll', daysBeforeExpiry: 8, expiryMarginMinutes: 30 });
    expect(early.due(Date.parse('2026-12-08T12:00:00Z'))).toHaveLength(1);
    const settles = expiryInstant('CON.F.US.EP.Z26')!;
    expect(new Date(settles).toISOString()).toBe('2026-12-18T14:30:00.000Z');
    routes.move('F.US.EP', 'CON.F.US.EP.H27');
    expect(follower.due(settles - 31 * 60_000)).toEqual([]);
    expect(follower.due(settles - 30 * 60_000)).toEqual([
      { kind: 'expiring', contractId: 'CON.F.US.EP.Z26', expiresAt: settles },
    ]);
    expect(follower.due(settles)).toEqual([]);
  });

  it('routes the symbol’s orders to the current month and labels every month’s events with the symbol', () => {
    const routes = new ContractRoutes([['F.US.EP', 'CON.F.US.EP.Z26']]);
    const events = new Subject<VenueEvent>();
    const placed: OrderCommand[] = [];
    const inner: Venue = {
      traits: { kind: 'live', fillsCanRepeat: true, pnlRounding: 'cents', keepsCommands: true },
      events,
      place: (c) => placed.push(c),
      modify: () => {},
      cancel: () => {},
    };
    const venue = routedVenue(inner, routes);
    const seen: string[] = [];
    venue.events.subscribe((e) => seen.push(e.kind === 'account' ? 'account' : e.contractId));
    const command: OrderCommand = {
      id: 'a-1',
      contractId: 'F.US.EP',
      side: 'buy',
      size: 1,
      order: { type: 'market' },
      decidedAt: 0,
    };
    venue.place(command);
    routes.move('F.US.EP', 'CON.F.US.EP.H27');
    venue.place({ ...command, id: 'a-2' });
    expect(placed.map((c) => c.contractId)).toEqual(['CON.F.US.EP.Z26', 'CON.F.US.EP.H27']);
    const fill = (contractId: string): VenueEvent => ({
      kind: 'fill',
      fillId: contractId,
      orderId: 'a-1',
      contractId,
      side: 'buy',
      size: 1,
      price: 1,
      fees: 0,
      time: 0,
    });
    events.next(fill('CON.F.US.EP.Z26'));
    events.next(fill('CON.F.US.EP.H27'));
    events.next(fill('CON.F.US.NQ.Z26'));
    expect(seen).toEqual(['F.US.EP', 'F.US.EP', 'CON.F.US.NQ.Z26']);
  });
});
