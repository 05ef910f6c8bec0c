import { describe, expect, it } from 'vitest';
import { Subject } from 'rxjs';
import { z } from 'zod';
import { cancelOrder, flatten, limitOrder, marketOrder, target } from '../../../src/engine/intents.ts';
import {
  createEngine,
  UNATTRIBUTED,
  type Decision,
  type EngineOptions,
  type StrategyStateChange,
} from '../../../src/engine/runner.ts';
import { defineStrategy } from '../../../src/engine/strategy.ts';
import type { Intent, OrderCommand, OrderUpdate, Venue, VenueEvent } from '../../../src/engine/types.ts';
import { ES, LIVE_VENUE, T0, TinyVenue, chunk, scripted } from './helpers.ts';

function twoOnOne(a: Record<number, Intent>, b: Record<number, Intent>, extra: Partial<EngineOptions> = {}) {
  const venue = new TinyVenue();
  const seenA: number[] = [];
  const engine = createEngine({
    strategies: [{ strategy: scripted('a', a, seenA) }, { strategy: scripted('b', b) }],
    contracts: [ES],
    venue,
    account: { startingBalance: 50_000 },
    ...extra,
  });
  const decisions: Decision[] = [];
  engine.decisions$.subscribe((d) => decisions.push(d));
  const placed = () => venue.placed.map((o) => `${o.id} ${o.side} ${o.size}`);
  const sizes = () => Object.fromEntries(engine.strategyPositions().map((p) => [p.strategyId, p.size]));
  return { engine, venue, decisions, placed, sizes, seenA };
}

describe('targets of strategies sharing a contract', () => {
  it("a flip of one strategy while the other holds the other side sends one order of the strategy's own difference", () => {
    const { engine, placed, sizes, seenA } = twoOnOne({ 0: target(1), 2: target(-1), 4: target(0) }, { 0: target(-1) });
    // bar opens (= closes): 100, 100, 100, 104, 104, 102, 102
    engine.push(chunk([100, 100, 100, 104, 104, 102, 102]));
    expect(placed()).toEqual(['a-1 buy 1', 'b-1 sell 1', 'a-2 sell 2', 'a-3 buy 1']);
    expect(sizes()).toEqual({ a: 0, b: -1 });
    expect(engine.accounting.position(ES.id)).toBe(-1);
    // a's own position, not the account's (0 after bar 1, -2 after bar 3)
    expect(seenA).toEqual([0, 1, 1, -1, -1, 0, 0]);
    // a: long 1 at 100 closed at 104 (+50), short 1 at 104 closed at 102 (+25)
    expect(engine.strategySnapshot('a').realizedPnl).toBe(75);
    // b: short 1 at 100, marked at 102: -25
    expect(engine.strategySnapshot('b')).toMatchObject({ realizedPnl: 0, unrealizedPnl: -25 });
    // the account: 0 closing 100/100, short 2 at 104, 1 bought back at 102 (+25), the other marked at 102 (+25)
    expect(engine.accounting.realizedPnl).toBe(25);
    expect(engine.accounting.unrealizedPnl()).toBe(25);
  });

  it("the same target twice is harmless, and another strategy's position does not count", () => {
    const { engine, placed, decisions } = twoOnOne({ 0: target(2), 2: target(2) }, { 0: target(-3), 2: target(-3) });
    engine.push(chunk([100, 100, 100, 100]));
    expect(placed()).toEqual(['a-1 buy 2', 'b-1 sell 3']);
    expect(decisions.filter((d) => d.result.accepted && d.result.message === 'already at target')).toHaveLength(2);
    expect(engine.accounting.position(ES.id)).toBe(-1);
  });

  it("the account's guard checks the netted exposure: a flip that nets beyond the maximum position is refused", () => {
    const { engine, placed, decisions } = twoOnOne(
      { 0: target(1), 2: target(-1) },
      { 0: target(-1) },
      {
        risk: { maxPositionSize: 1 },
      },
    );
    engine.push(chunk([100, 100, 100, 104, 104]));
    // a's sell 2 would take the account from 0 to -2: nothing of it closes the account's position
    expect(placed()).toEqual(['a-1 buy 1', 'b-1 sell 1']);
    const refused = decisions.find((d) => d.intent.id === 'a-2')!;
    expect(refused.result).toMatchObject({ accepted: false, code: 'MAX_POSITION_SIZE' });
    expect(engine.strategySnapshot('a').positions[0]!.size).toBe(1);
  });

  it("a strategy's flatten on a shared contract cancels its own orders and closes its own line only", () => {
    const { engine, placed, sizes, venue } = twoOnOne(
      { 0: marketOrder('buy', 2), 1: limitOrder('buy', 1, 95, { id: 'a-lim', unit: 'ticks' }), 3: flatten() },
      { 0: marketOrder('sell', 1) },
    );
    engine.push(chunk([100, 100]));
    expect(sizes()).toEqual({ a: 2, b: -1 });
    expect(venue.working.has('a-lim')).toBe(true);
    engine.push(chunk([100, 100, 100], Date.UTC(2026, 10, 16, 15, 2)));
    expect(sizes()).toEqual({ a: 0, b: -1 });
    expect(venue.cancelled).toEqual(['a-lim']);
    expect(placed()).toEqual(['a-1 buy 2', 'b-1 sell 1', 'a-lim buy 1', 'a-2 sell 2']);
  });

  it('one strategy per contract: the engine routes exactly as before (the account is the strategy)', () => {
    const venue = new TinyVenue();
    const engine = createEngine({
      strategies: [{ strategy: scripted('a', { 0: target(1), 2: target(-1) }) }],
      contracts: [ES],
      venue,
      account: { startingBalance: 50_000 },
    });
    engine.push(chunk([100, 100, 100, 104, 104]));
    expect(venue.placed.map((o) => `${o.id} ${o.side} ${o.size}`)).toEqual(['a-1 buy 1', 'a-2 sell 2']);
  });
});

describe('pausing one strategy instance', () => {
  it('refuses what opens or adds to its risk, keeps its stream running, lets reductions and cancels through', () => {
    const { engine, placed, decisions, seenA } = twoOnOne(
      {
        0: target(1),
        2: target(2),
        3: limitOrder('buy', 1, 95, { id: 'a-lim', unit: 'ticks' }),
        4: cancelOrder('a-lim'),
        5: target(-1),
        8: target(1),
      },
      { 0: target(-1), 2: target(-2) },
    );
    const states: StrategyStateChange[] = [];
    engine.strategyStates$.subscribe((s) => states.push(s));
    engine.push(chunk([100, 100]));
    engine.setStrategyPaused('a', true, 'operator: drawdown review');
    expect(states).toMatchObject([{ strategyId: 'a', paused: true, reason: 'operator: drawdown review' }]);
    expect(engine.pausedStrategies().map((s) => s.strategyId)).toEqual(['a']);
    engine.push(chunk([100, 100, 100, 100, 100, 100], Date.UTC(2026, 10, 16, 15, 2)));
    const of = (id: string) => decisions.find((d) => d.intent.id === id)!.result;
    expect(of('a-2')).toEqual({
      accepted: false,
      code: 'STRATEGY_PAUSED',
      message: "strategy 'a' is paused (operator: drawdown review): no new risk",
    });
    expect(of('a-lim')).toMatchObject({ accepted: false, code: 'STRATEGY_PAUSED' });
    // b is not paused; a's flip to -1 keeps only the part that closes its own long
    expect(of('b-2')).toEqual({ accepted: true });
    expect(of('a-4')).toMatchObject({ accepted: true, size: 1, adjusted: 'STRATEGY_PAUSED' });
    expect(placed()).toEqual(['a-1 buy 1', 'b-1 sell 1', 'b-2 sell 1', 'a-4 sell 1']);
    // its stream kept running through the pause
    expect(seenA).toHaveLength(8);
    engine.setStrategyPaused('a', false, 'operator: resumed');
    expect(states.at(-1)).toMatchObject({ strategyId: 'a', paused: false });
    engine.push(chunk([100, 100], Date.UTC(2026, 10, 16, 15, 8)));
    expect(placed().at(-1)).toBe('a-5 buy 1');
  });

  it('a cancel of a paused strategy passes; an unknown id throws', () => {
    const { engine, venue, decisions } = twoOnOne(
      { 0: limitOrder('buy', 1, 95, { id: 'a-lim', unit: 'ticks' }), 2: cancelOrder('a-lim') },
      {},
    );
    engine.push(chunk([100, 100]));
    engine.setStrategyPaused('a', true, 'test');
    engine.push(chunk([100], Date.UTC(2026, 10, 16, 15, 2)));
    expect(venue.cancelled).toEqual(['a-lim']);
    expect(decisions.map((d) => d.result.accepted)).toEqual([true, true]);
    expect(() => engine.setStrategyPaused('zz', true, 'x')).toThrow(
      expect.objectContaining({ code: 'UNKNOWN_STRATEGY' }),
    );
  });
});

/** A live venue that answers only when the test says so. */
class ManualVenue implements Venue {
  readonly traits = LIVE_VENUE;
  readonly subject = new Subject<VenueEvent>();
  readonly events = this.subject.asObservable();
  readonly placed: OrderCommand[] = [];
  place(command: OrderCommand): void {
    this.placed.push(command);
    this.order(command, 'pending');
  }
  modify(): void {}
  cancel(): void {}
  order(command: OrderCommand, state: OrderUpdate['state'], filledSize = 0): void {
    this.subject.next({
      kind: 'order',
      orderId: command.id,
      state,
      time: T0,
      contractId: command.contractId,
      side: command.side,
      size: command.size,
      filledSize,
      order: command.order,
    });
  }
  fill(orderId: string, side: 'buy' | 'sell', size: number, price: number, fillId: string): void {
    this.subject.next({ kind: 'fill', fillId, orderId, contractId: ES.id, side, size, price, fees: 0, time: T0 });
  }
}

describe('shared contract, live venue', () => {
  it("a target counts the strategy's own pending orders only; a manual trade stays unattributed", () => {
    const venue = new ManualVenue();
    const a = new Subject<Intent>();
    const b = new Subject<Intent>();
    const manual = (name: string, subject: Subject<Intent>) =>
      defineStrategy({ name, params: z.object({}), run: () => subject.asObservable() });
    const engine = createEngine({
      strategies: [{ strategy: manual('a', a) }, { strategy: manual('b', b) }],
      contracts: [ES],
      venue,
      account: { startingBalance: 50_000 },
      clock: () => T0,
    });
    const placed = () => venue.placed.map((o) => `${o.id} ${o.side} ${o.size}`);
    a.next(target(1));
    b.next(target(-1));
    a.next(target(1));
    // a's pending buy counts for a; b does not see it
    expect(placed()).toEqual(['a-1 buy 1', 'b-1 sell 1']);
    venue.order(venue.placed[0]!, 'filled', 1);
    venue.fill('a-1', 'buy', 1, 100, 'f1');
    venue.order(venue.placed[1]!, 'filled', 1);
    venue.fill('b-1', 'sell', 1, 100, 'f2');
    venue.fill('venue-77', 'buy', 2, 101, 'f3');
    const sizes = () => Object.fromEntries(engine.strategyPositions().map((p) => [p.strategyId, p.size]));
    expect(sizes()).toEqual({ a: 1, b: -1, [UNATTRIBUTED]: 2 });
    a.next(target(-1));
    expect(placed().at(-1)).toBe('a-3 sell 2');
    expect(engine.accounting.position(ES.id)).toBe(2);
  });

  it('a restart: restored positions are unattributed until assigned, then targets move each line', () => {
    const venue = new ManualVenue();
    const a = new Subject<Intent>();
    const manual = (name: string, subject: Subject<Intent>) =>
      defineStrategy({ name, params: z.object({}), run: () => subject.asObservable() });
    const engine = createEngine({
      strategies: [{ strategy: manual('a', a) }, { strategy: manual('b', new Subject<Intent>()) }],
      contracts: [ES],
      venue,
      account: { startingBalance: 50_000 },
      clock: () => T0,
    });
    engine.restore({ balance: 50_000, positions: [{ contractId: ES.id, size: 3, averagePrice: 100 }] });
    engine.assignPosition('a', ES.id, 2);
    engine.assignPosition('b', ES.id, 1);
    const sizes = () => Object.fromEntries(engine.strategyPositions().map((p) => [p.strategyId, p.size]));
    expect(sizes()).toEqual({ a: 2, b: 1 });
    a.next(target(-1));
    expect(venue.placed.map((o) => `${o.id} ${o.side} ${o.size}`)).toEqual(['a-1 sell 3']);
    expect(() => engine.assignPosition('a', ES.id, 1)).toThrow(expect.objectContaining({ code: 'INVALID_RESTORE' }));
  });
});
