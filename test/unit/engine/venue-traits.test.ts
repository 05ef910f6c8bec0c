/**
 * A venue tells the engine what it is (`Venue.traits`): the backtest's venue and the gateway's declare
 * what the engine options `live`, `uniqueFills` and `tradePnlInCents` used to say, and each trait changes
 * the engine as the option did.
 */
import fc from 'fast-check';
import { NEVER, Observable, Subject, map } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { SimulatedVenue } from '../../../src/adapters/backtest/simulated-venue.ts';
import { LiveExecutor, type ExecutionClient } from '../../../src/adapters/live/executor.ts';
import type { Journal } from '../../../src/adapters/live/journal.ts';
import { EngineError } from '../../../src/engine/errors.ts';
import { target } from '../../../src/engine/intents.ts';
import { silentLogger } from '../../../src/engine/log.ts';
import { createEngine, type Decision } from '../../../src/engine/runner.ts';
import { defineStrategy } from '../../../src/engine/strategy.ts';
import { PriceGrid } from '../../../src/engine/ticks.ts';
import type {
  ContractSpec,
  Fill,
  Intent,
  ModifyCommand,
  OrderCommand,
  OrderUpdate,
  Venue,
  VenueEvent,
  VenueTraits,
} from '../../../src/engine/types.ts';
import { DEFAULT_BOOK } from '../../../src/market/quotes.ts';
import { chunk, ES, T0, TinyVenue } from './helpers.ts';

/** A venue whose fills the test reports by hand. */
class ReportingVenue implements Venue {
  readonly subject = new Subject<VenueEvent>();
  readonly events = this.subject.asObservable();
  constructor(readonly traits: VenueTraits) {}
  place(_command: OrderCommand): void {}
  modify(_command: ModifyCommand): void {}
  cancel(_orderId: string): void {}
}

const idle = defineStrategy({ name: 'idle', params: z.object({}), run: () => NEVER });

function engineOn(venue: Venue, contract: ContractSpec = ES) {
  const engine = createEngine({
    strategies: [{ strategy: idle }],
    contracts: [contract],
    venue,
    account: { startingBalance: 10_000 },
    clock: () => T0,
  });
  const fills: Fill[] = [];
  engine.fills$.subscribe((f) => fills.push(f));
  return { engine, fills };
}

const traits = (over: Partial<VenueTraits>): VenueTraits => ({
  kind: 'simulated',
  fillsCanRepeat: true,
  pnlRounding: 'none',
  keepsCommands: true,
  ...over,
});

let seq = 0;
const fill = (side: 'buy' | 'sell', size: number, price: number, fees = 0, contractId = ES.id): Fill => ({
  kind: 'fill',
  fillId: `f${++seq}`,
  orderId: 'o',
  contractId,
  side,
  size,
  price,
  fees,
  time: T0 + seq,
});

describe('the venues declare what the engine needs to know', () => {
  it("the backtest's venue is simulated, never repeats a fill and books PnL exactly, with either fill rules", () => {
    const expected: VenueTraits = {
      kind: 'simulated',
      fillsCanRepeat: false,
      pnlRounding: 'none',
      keepsCommands: false,
    };
    expect(new SimulatedVenue({ slippageTicks: 0, feePerContractPerSide: 0 }).traits).toEqual(expected);
    const touch = { spread: { type: 'fixed', ticks: 1 } as const, book: DEFAULT_BOOK, partialFills: true, queue: true };
    expect(new SimulatedVenue({ slippageTicks: 1, feePerContractPerSide: 2, touch }).traits).toEqual(expected);
  });

  it("the gateway's venue (paper and live trading) is live, may repeat a fill and books PnL in cents", () => {
    const executor = new LiveExecutor({
      client: {} as ExecutionClient,
      journal: {} as Journal,
      accountId: 1,
      contracts: new Map(),
      logger: silentLogger,
    });
    expect(executor.traits).toEqual({ kind: 'live', fillsCanRepeat: true, pnlRounding: 'cents', keepsCommands: true });
  });

  it('createEngine refuses a venue that declares none (a venue written in plain JavaScript)', () => {
    const bare = { events: new Subject<VenueEvent>(), place() {}, modify() {}, cancel() {} } as unknown as Venue;
    expect(() => engineOn(bare)).toThrow(EngineError);
    expect(() => engineOn(bare)).toThrow(/traits/);
    const wrong = { ...bare, traits: { kind: 'paper', fillsCanRepeat: true, pnlRounding: 'none' } } as unknown as Venue;
    expect(() => engineOn(wrong)).toThrow(expect.objectContaining({ code: 'INVALID_VENUE' }));
  });
});

describe("a venue that passes its order updates and fills to a listener (the backtest's)", () => {
  /** Every order update a strategy and the engine's `orders$` saw, with a subscriber of the venue's own or not. */
  function updatesSeen(subscribeVenue: boolean) {
    const venue = new SimulatedVenue({ slippageTicks: 0, feePerContractPerSide: 0 });
    if (subscribeVenue) venue.events.subscribe(() => {});
    const strategySaw: OrderUpdate[] = [];
    const strategyFills: Fill[] = [];
    const flipper = defineStrategy({
      name: 'flipper',
      params: z.object({}),
      run: (ctx) => {
        ctx.orders.subscribe((u) => strategySaw.push(u));
        ctx.fills.subscribe((f) => strategyFills.push(f));
        let n = 0;
        return ctx.barRecords().pipe(map(() => target(n++ % 4 < 2 ? 1 : -1)));
      },
    });
    const engine = createEngine({
      strategies: [{ strategy: flipper }],
      contracts: [ES],
      venue,
      account: { startingBalance: 10_000 },
      clock: () => T0,
    });
    const engineSaw: OrderUpdate[] = [];
    engine.orders$.subscribe((u) => engineSaw.push(u));
    // A listener of fills$ reads each in the call: what it copies then is what a subscriber keeps.
    const listenedFills: Fill[] = [];
    engine.fills$.listen((f) => listenedFills.push({ ...f }));
    engine.push(chunk([4000, 4001, 4002, 4001, 4000, 3999, 4000, 4002, 4003, 4001]));
    return { strategySaw, engineSaw, strategyFills, listenedFills };
  }

  it('reach ctx.orders, ctx.fills and orders$ as objects of their own, the same as a kept stream gives them', () => {
    const listened = updatesSeen(false);
    const kept = updatesSeen(true);
    expect(listened.engineSaw.length).toBeGreaterThan(4);
    expect(new Set(listened.engineSaw).size).toBe(listened.engineSaw.length);
    expect(new Set(listened.strategySaw).size).toBe(listened.strategySaw.length);
    expect(listened.engineSaw.map((u) => u.state)).toContain('filled');
    expect(listened.engineSaw).toEqual(kept.engineSaw);
    expect(listened.strategySaw).toEqual(kept.strategySaw);
    for (const u of listened.engineSaw) expect(Object.keys(u)).not.toContain('reason');
    expect(listened.strategyFills.length).toBeGreaterThan(2);
    expect(new Set(listened.strategyFills).size).toBe(listened.strategyFills.length);
    expect(listened.strategyFills).toEqual(kept.strategyFills);
    expect(listened.listenedFills).toEqual(listened.strategyFills);
  });
});

describe('fillsCanRepeat (was the engine option uniqueFills: true for false)', () => {
  it('a venue whose fills can repeat: a fill reported twice is booked once', () => {
    const venue = new ReportingVenue(traits({ fillsCanRepeat: true }));
    const { engine, fills } = engineOn(venue);
    const f = fill('buy', 1, 100);
    venue.subject.next(f);
    venue.subject.next(f);
    expect(engine.accounting.position(ES.id)).toBe(1);
    expect(fills).toHaveLength(1);
  });

  it('a venue whose fills never repeat: the engine keeps no fill memory (a fill reported twice would count twice)', () => {
    const venue = new ReportingVenue(traits({ fillsCanRepeat: false }));
    const { engine, fills } = engineOn(venue);
    const f = fill('buy', 1, 100);
    venue.subject.next(f);
    venue.subject.next(f);
    expect(engine.accounting.position(ES.id)).toBe(2);
    expect(fills).toHaveLength(2);
  });

  it('either way the same books for distinct fills', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.tuple(fc.boolean(), fc.integer({ min: 1, max: 3 }), fc.integer({ min: 90, max: 110 }), fc.nat({ max: 3 })),
          { maxLength: 40 },
        ),
        (steps) => {
          const remembering = new ReportingVenue(traits({ fillsCanRepeat: true }));
          const trusting = new ReportingVenue(traits({ fillsCanRepeat: false }));
          const a = engineOn(remembering);
          const b = engineOn(trusting);
          for (const [buy, size, price, fees] of steps) {
            const f = fill(buy ? 'buy' : 'sell', size, price, fees);
            remembering.subject.next(f);
            trusting.subject.next(f);
          }
          expect(b.engine.snapshot()).toEqual(a.engine.snapshot());
          expect(b.engine.accounting.trades).toEqual(a.engine.accounting.trades);
          expect(b.fills).toEqual(a.fills);
        },
      ),
    );
  });
});

describe('pnlRounding (was the engine option tradePnlInCents)', () => {
  // MES-like: $1.25 a tick, so an average entry between ticks gives PnL in fractions of a cent.
  const MES: ContractSpec = { ...ES, id: 'CON.F.US.MES.Z26', grid: new PriceGrid(0.25, 1.25) };

  function closedPnl(rounding: VenueTraits['pnlRounding']): number {
    const venue = new ReportingVenue(traits({ pnlRounding: rounding }));
    const { engine } = engineOn(venue, MES);
    venue.subject.next(fill('buy', 1, 100, 0, MES.id));
    venue.subject.next(fill('buy', 2, 101, 0, MES.id));
    venue.subject.next(fill('sell', 1, 102, 0, MES.id));
    expect(engine.accounting.trades).toHaveLength(1);
    return engine.accounting.trades[0]!.pnl;
  }

  it('cents: each closed trade rounded as the gateway books it; none: exact', () => {
    // Entry averages 100 2/3 ticks: 1 1/3 ticks x $1.25 = $1.6666...
    expect(closedPnl('none')).toBeCloseTo(5 / 3, 12);
    expect(closedPnl('cents')).toBe(1.67);
  });
});

describe('kind (was the engine option live)', () => {
  const perBar = defineStrategy({
    name: 'per-bar',
    params: z.object({}),
    run: (ctx) =>
      new Observable<Intent>((sub) =>
        ctx.barRecords().subscribe((bar) => sub.next(target(bar.close % 2 === 0 ? 1 : -1))),
      ),
  });

  function superseded(kind: VenueTraits['kind']): number {
    const venue = new TinyVenue(0, traits({ kind }));
    const engine = createEngine({
      strategies: [{ strategy: perBar }],
      contracts: [ES],
      venue,
      account: { startingBalance: 50_000 },
    });
    const decisions: Decision[] = [];
    engine.decisions$.subscribe((d) => decisions.push(d));
    engine.push(chunk([10, 11, 12, 13]));
    return decisions.filter((d) => !d.result.accepted && d.result.code === 'SUPERSEDED').length;
  }

  it('live: several bars pushed at once send only the last target; simulated: every bar decides', () => {
    expect(superseded('live')).toBe(3);
    expect(superseded('simulated')).toBe(0);
  });
});
