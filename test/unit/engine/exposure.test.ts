/**
 * Exposure, not just position: what a live engine does with orders whose fate is not known yet, fills
 * reported before their trades, orders adopted after they were given up, several bars at once, intents
 * of the wrong shape and strategies that throw.
 */
import fc from 'fast-check';
import { map, Subject } from 'rxjs';
import { Observable } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { orderTowards } from '../../../src/engine/order-book.ts';
import { createEngine, type Decision, type StrategyFailure } from '../../../src/engine/runner.ts';
import { defineStrategy, StrategyError } from '../../../src/engine/strategy.ts';
import { target } from '../../../src/engine/intents.ts';
import type {
  Fill,
  Intent,
  ModifyCommand,
  OrderCommand,
  OrderUpdate,
  Venue,
  VenueEvent,
} from '../../../src/engine/types.ts';
import { chunk, ES, LIVE_VENUE, T0, TinyVenue } from './helpers.ts';

/** A venue that answers only when the test says so, as a live gateway does. */
class ManualVenue implements Venue {
  readonly traits = LIVE_VENUE;
  readonly subject = new Subject<VenueEvent>();
  readonly events = this.subject.asObservable();
  readonly placed: OrderCommand[] = [];
  readonly cancelled: string[] = [];
  place(command: OrderCommand): void {
    this.placed.push(command);
    this.emit(command, 'pending');
  }
  modify(_command: ModifyCommand): void {}
  cancel(orderId: string): void {
    this.cancelled.push(orderId);
  }
  emit(command: OrderCommand, state: OrderUpdate['state'], extra: Partial<OrderUpdate> = {}): void {
    this.subject.next({
      kind: 'order',
      orderId: command.id,
      state,
      time: T0,
      contractId: command.contractId,
      side: command.side,
      size: command.size,
      filledSize: 0,
      order: command.order,
      ...extra,
    });
  }
  fill(command: OrderCommand, fillId: string, price = 100): void {
    const fill: Fill = {
      kind: 'fill',
      fillId,
      orderId: command.id,
      contractId: command.contractId,
      side: command.side,
      size: command.size,
      price,
      fees: 0,
      time: T0,
    };
    this.subject.next(fill);
  }
}

/** A strategy whose targets the test pushes by hand. */
function manualTargets(): { strategy: ReturnType<typeof defineStrategy>; targets: Subject<Intent> } {
  const targets = new Subject<Intent>();
  const strategy = defineStrategy({ name: 'manual', params: z.object({}), run: () => targets.asObservable() });
  return { strategy, targets };
}

const settle = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 0));

function liveEngine(
  venue: Venue,
  strategy: ReturnType<typeof defineStrategy>,
  extra: { maxPositionSize?: number } = {},
) {
  const decisions: Decision[] = [];
  const engine = createEngine({
    strategies: [{ strategy, id: 's' }],
    contracts: [ES],
    venue,
    account: { startingBalance: 50_000 },
    onStrategyError: 'log',
    clock: () => T0,
    ...(extra.maxPositionSize === undefined ? {} : { risk: { maxPositionSize: extra.maxPositionSize } }),
  });
  engine.decisions$.subscribe((d) => decisions.push(d));
  return { engine, decisions };
}

describe('orderTowards: the one order that moves exposure to a target', () => {
  it('never lets any resolution of the pending orders end beyond the target', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: -5, max: 5 }),
        fc.integer({ min: -5, max: 5 }),
        fc.nat(4),
        fc.nat(4),
        (targetSize, definite, pendingBuys, pendingSells) => {
          const order = orderTowards(targetSize, { definite, pendingBuys, pendingSells });
          for (let buys = 0; buys <= pendingBuys; buys++) {
            for (let sells = 0; sells <= pendingSells; sells++) {
              const final = definite + buys - sells + order;
              // Moving up never overshoots above the target, moving down never below it.
              if (order > 0) expect(final).toBeLessThanOrEqual(targetSize);
              if (order < 0) expect(final).toBeGreaterThanOrEqual(targetSize);
            }
          }
          // With nothing pending it reaches the target exactly.
          if (pendingBuys === 0 && pendingSells === 0) expect(definite + order).toBe(targetSize);
        },
      ),
    );
  });
});

describe('a live engine counts exposure', () => {
  it('a pending buy (place outcome unknown) is not offset by a larger sell: the flip sells one, then one more once the buy proves real', async () => {
    const venue = new ManualVenue();
    const { strategy, targets } = manualTargets();
    liveEngine(venue, strategy);
    targets.next(target(1));
    expect(venue.placed.map((o) => `${o.side} ${o.size}`)).toEqual(['buy 1']);
    targets.next(target(-1));
    // If the buy never executes, selling 2 would leave -2: beyond the target.
    expect(venue.placed.map((o) => `${o.side} ${o.size}`)).toEqual(['buy 1', 'sell 1']);
    // The buy turns out to be at the gateway and fills: the target is re-asserted with one more sell.
    venue.emit(venue.placed[0]!, 'working');
    venue.fill(venue.placed[0]!, 'f1');
    venue.emit(venue.placed[0]!, 'filled', { filledSize: 1 });
    await settle();
    expect(venue.placed.map((o) => `${o.side} ${o.size}`)).toEqual(['buy 1', 'sell 1', 'sell 1']);
    // Nothing more: exposure is at the target whatever the pending sells do.
    venue.emit(venue.placed[1]!, 'working');
    await settle();
    expect(venue.placed).toHaveLength(3);
  });

  it('a fill reported on the order before its trade counts at once, and the trade does not count it twice', async () => {
    const venue = new ManualVenue();
    const { strategy, targets } = manualTargets();
    const { engine } = liveEngine(venue, strategy);
    targets.next(target(1));
    const buy = venue.placed[0]!;
    venue.emit(buy, 'working');
    venue.emit(buy, 'filled', { filledSize: 0, reportedFilledSize: 1 });
    targets.next(target(1));
    expect(venue.placed).toHaveLength(1);
    expect(engine.accounting.position(ES.id)).toBe(0);
    venue.fill(buy, 'f1');
    expect(engine.accounting.position(ES.id)).toBe(1);
    targets.next(target(1));
    targets.next(target(-1));
    expect(venue.placed.map((o) => `${o.side} ${o.size}`)).toEqual(['buy 1', 'sell 2']);
  });

  it('an adopted order still working is cancelled; an adopted fill is brought back to the target with one reducing order', async () => {
    const venue = new ManualVenue();
    const { strategy, targets } = manualTargets();
    liveEngine(venue, strategy);
    targets.next(target(1));
    const given = venue.placed[0]!;
    venue.emit(given, 'rejected', { reason: 'lost' });
    targets.next(target(1));
    const replacement = venue.placed[1]!;
    venue.emit(replacement, 'working');
    venue.fill(replacement, 'f1');
    venue.emit(replacement, 'filled', { filledSize: 1 });
    // The given-up order shows up working: cancelled, nothing else sent.
    venue.emit(given, 'working', { adopted: true });
    await settle();
    expect(venue.cancelled).toEqual([given.id]);
    expect(venue.placed).toHaveLength(2);
    // It filled before the cancel landed: exactly one reducing sell, not compounded by later events.
    venue.fill(given, 'f2');
    venue.emit(given, 'filled', { filledSize: 1, adopted: true });
    await settle();
    await settle();
    expect(venue.placed.map((o) => `${o.side} ${o.size}`)).toEqual(['buy 1', 'buy 1', 'sell 1']);
  });

  it('the position cap counts pending same-side orders', () => {
    const venue = new ManualVenue();
    const { strategy, targets } = manualTargets();
    const { decisions } = liveEngine(venue, strategy, { maxPositionSize: 1 });
    targets.next({ kind: 'place', contractId: '', side: 'buy', size: 1, order: { type: 'market' } });
    targets.next({ kind: 'place', contractId: '', side: 'buy', size: 1, order: { type: 'market' } });
    expect(venue.placed).toHaveLength(1);
    expect(decisions.at(-1)?.result).toMatchObject({ accepted: false, code: 'MAX_POSITION_SIZE' });
  });

  it('several bars at once send only the last target per strategy and contract', () => {
    const venue = new TinyVenue(0, LIVE_VENUE);
    const flipper = defineStrategy({
      name: 'flipper',
      params: z.object({}),
      run: ({ bars }) =>
        bars().pipe(map((c) => ({ ...target(c.length % 2 === 0 ? 1 : -1), at: c.length - 1 }) as Intent)),
    });
    const perBar = defineStrategy({
      name: 'per-bar',
      params: z.object({}),
      run: (ctx) =>
        new Observable<Intent>((sub) =>
          ctx.barRecords().subscribe((bar) => sub.next(target(bar.close % 2 === 0 ? 1 : -1))),
        ),
    });
    const decisions: Decision[] = [];
    const engine = createEngine({
      strategies: [{ strategy: flipper }, { strategy: perBar }],
      contracts: [ES],
      venue,
      account: { startingBalance: 50_000 },
    });
    engine.decisions$.subscribe((d) => decisions.push(d));
    engine.push(chunk([10, 11, 12, 13, 15]));
    const superseded = decisions.filter((d) => !d.result.accepted && d.result.code === 'SUPERSEDED');
    expect(superseded.map((d) => d.strategyId)).toEqual(['per-bar', 'per-bar', 'per-bar', 'per-bar']);
    // flipper: one target for the whole chunk; per-bar: only the last bar's (close 15: -1).
    expect(venue.placed.length).toBeLessThanOrEqual(2);
    expect(decisions.filter((d) => d.strategyId === 'per-bar' && d.result.accepted)).toHaveLength(1);
  });

  it('a backtest engine (not live) decides every bar as before', () => {
    const venue = new TinyVenue();
    const perBar = defineStrategy({
      name: 'per-bar',
      params: z.object({}),
      run: (ctx) =>
        new Observable<Intent>((sub) =>
          ctx.barRecords().subscribe((bar) => sub.next(target(bar.close % 2 === 0 ? 1 : -1))),
        ),
    });
    const engine = createEngine({
      strategies: [{ strategy: perBar }],
      contracts: [ES],
      venue,
      account: { startingBalance: 50_000 },
    });
    engine.push(chunk([10, 11, 12, 13]));
    expect(venue.placed.map((o) => `${o.side} ${o.size}`)).toEqual(['buy 1', 'sell 2', 'buy 2', 'sell 2']);
  });
});

describe('intents are checked at the boundary', () => {
  it("marketOrder('long', 1) from plain JavaScript is INVALID_INTENT naming the side, and nothing is sent", () => {
    const venue = new ManualVenue();
    const { strategy, targets } = manualTargets();
    const { decisions } = liveEngine(venue, strategy);
    targets.next({
      kind: 'place',
      contractId: '',
      side: 'long',
      size: 1,
      order: { type: 'market' },
    } as unknown as Intent);
    expect(venue.placed).toEqual([]);
    expect(decisions[0]?.result).toMatchObject({ accepted: false, code: 'INVALID_INTENT' });
    expect(decisions[0]?.result.accepted === false && decisions[0].result.message).toMatch(/^side: /);
  });

  it('no malformed intent ever reaches the venue', () => {
    const junk = fc.record(
      {
        kind: fc.constantFrom('place', 'target', 'modify', 'cancel', 'flatten', 'buy', 42),
        contractId: fc.constantFrom('', ES.id, 7, undefined),
        side: fc.constantFrom('buy', 'sell', 'long', 'Ask', undefined, 0),
        size: fc.constantFrom(1, 0, -1, 1.5, Number.NaN, Infinity, '1', undefined),
        order: fc.constantFrom(
          { type: 'market' },
          { type: 'limit', limitPrice: Number.NaN },
          { type: 'limit', limitPrice: 100 },
          { type: 'iceberg' },
          null,
          undefined,
        ),
        orderId: fc.constantFrom('x-1', 3, undefined),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(fc.array(junk, { maxLength: 6 }), (intents) => {
        const venue = new ManualVenue();
        const { strategy, targets } = manualTargets();
        liveEngine(venue, strategy);
        for (const intent of intents) targets.next(intent as unknown as Intent);
        for (const sent of venue.placed) {
          expect(['buy', 'sell']).toContain(sent.side);
          expect(Number.isInteger(sent.size) && sent.size > 0).toBe(true);
          expect(['market', 'limit']).toContain(sent.order.type);
          if (sent.order.type === 'limit') expect(Number.isInteger(sent.order.limitPrice)).toBe(true);
        }
      }),
    );
  });
});

describe('a strategy that throws is contained', () => {
  const throwing = defineStrategy({
    name: 'throwing',
    params: z.object({}),
    run: (ctx) =>
      new Observable<Intent>(() =>
        ctx.barRecords().subscribe((bar) => {
          if (bar.close === 12) throw new Error('bad bar');
        }),
      ),
  });

  it('in a backtest: push throws STRATEGY_FAILED with the strategy id and the bar', () => {
    const engine = createEngine({
      strategies: [{ strategy: throwing }],
      contracts: [ES],
      venue: new TinyVenue(),
      account: { startingBalance: 1 },
    });
    let error: unknown;
    try {
      engine.push(chunk([10, 11, 12, 13]));
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(StrategyError);
    expect((error as StrategyError).code).toBe('STRATEGY_FAILED');
    expect((error as StrategyError).strategyId).toBe('throwing');
    expect((error as StrategyError).barTime).toBe(T0 + 2 * 60_000);
  });

  it('live: reported on errors$, its later intents ignored, the other strategies go on', () => {
    const venue = new TinyVenue(0, LIVE_VENUE);
    const steady = defineStrategy({
      name: 'steady',
      params: z.object({}),
      run: (ctx) => new Observable<Intent>((sub) => ctx.barRecords().subscribe(() => sub.next(target(1)))),
    });
    const failures: StrategyFailure[] = [];
    const engine = createEngine({
      strategies: [{ strategy: throwing }, { strategy: steady }],
      contracts: [ES],
      venue,
      account: { startingBalance: 1 },
      onStrategyError: 'log',
    });
    engine.errors$.subscribe((f) => failures.push(f));
    for (const close of [10, 11, 12, 13])
      engine.push(chunk([{ close, open: close, high: close, low: close }], T0 + (close - 10) * 60_000));
    expect(failures.map((f) => [f.strategyId, f.barTime])).toEqual([['throwing', T0 + 2 * 60_000]]);
    expect(venue.placed.map((o) => o.id.split('-')[0])).toEqual(['steady']);
  });
});
