import { describe, expect, it } from 'vitest';
import { EMPTY, map, of } from 'rxjs';
import { z } from 'zod';
import { connectMarketData, createEngine, type Decision } from '../../../src/engine/runner.ts';
import { defineStrategy } from '../../../src/engine/strategy.ts';
import { flatten, limitOrder, marketOrder, target } from '../../../src/engine/intents.ts';
import smaCross from '../../../src/strategies/sma-cross.ts';
import type { Breach } from '../../../src/engine/account-rules.ts';
import { ES, TinyVenue, chunk, recordingEngine, split, scripted } from './helpers.ts';

describe('runner', () => {
  it('usage example: sma-cross in a synchronous backtest replay', () => {
    const venue = new TinyVenue(2);
    const { engine, decisions } = recordingEngine(venue, { strategy: smaCross, params: { fast: 2, slow: 3 } });
    // closes: falling, then rising (cross up), then falling (cross down)
    engine.push(chunk([10, 9, 8, 7, 6, 8, 10, 12, 14, 12, 10, 8, 6]));
    const placed = venue.placed.map((o) => `${o.id} ${o.side} ${o.size}`);
    expect(placed).toEqual(['sma-cross-1 buy 1', 'sma-cross-2 sell 2']);
    expect(decisions.every((d) => d.result.accepted)).toBe(true);
    expect(decisions[0]!.origin).toMatchObject({ kind: 'target', size: 1 });
    expect(engine.accounting.position(ES.id)).toBe(-1);
    const snapshot = engine.snapshot();
    expect(snapshot.fees).toBe(2 * 3);
    engine.close();
  });

  it('gives the same orders whatever the chunking', () => {
    const closes = Array.from({ length: 400 }, (_, i) => 100 + Math.round(20 * Math.sin(i / 7) + 5 * Math.cos(i / 3)));
    const run = (sizes: number[]) => {
      const venue = new TinyVenue();
      const engine = createEngine({
        strategies: [{ strategy: smaCross, params: { fast: 3, slow: 8 } }],
        contracts: [ES],
        venue,
        account: { startingBalance: 50_000 },
      });
      for (const piece of split(chunk(closes), sizes)) engine.push(piece);
      return {
        orders: venue.placed.map((o) => `${o.id}@${o.decidedAt} ${o.side} ${o.size}`),
        pnl: engine.accounting.realizedPnl,
      };
    };
    const whole = run([400]);
    expect(whole.orders.length).toBeGreaterThan(5);
    expect(run([1])).toEqual(whole);
    expect(run([7, 3, 50, 1])).toEqual(whole);
  });

  it('a target sent twice orders only once; a flatten closes', () => {
    const venue = new TinyVenue();
    const strategy = scripted('scripted', { 0: target(2), 1: target(2), 3: target(2), 4: flatten() });
    const engine = createEngine({
      strategies: [{ strategy }],
      contracts: [ES],
      venue,
      account: { startingBalance: 50_000 },
    });
    engine.push(chunk([100, 101, 102, 103, 104, 105, 106]));
    expect(venue.placed.map((o) => `${o.side} ${o.size}`)).toEqual(['buy 2', 'sell 2']);
    expect(engine.accounting.position(ES.id)).toBe(0);
    // bought at 101 (bar 1 open), sold at 105 (bar 5 open): 4 ticks x 2 x 12.5
    expect(engine.accounting.realizedPnl).toBe(100);
  });

  it('stamps ids from a restorable sequence and rejects through the guard with a code', () => {
    const venue = new TinyVenue();
    const strategy = scripted('scripted', {
      0: limitOrder('buy', 1, 100.5, { unit: 'ticks' }),
      1: marketOrder('buy', 1),
    });
    const engine = createEngine({
      strategies: [{ strategy, id: 'q' }],
      contracts: [ES],
      venue,
      account: { startingBalance: 50_000 },
      sequenceStart: 41,
    });
    const decisions: Decision[] = [];
    engine.decisions$.subscribe((d) => decisions.push(d));
    engine.push(chunk([100, 101, 102]));
    expect(decisions.map((d) => [d.intent.id, d.result.accepted ? 'ok' : d.result.code])).toEqual([
      ['q-41', 'TICK_MISALIGNED'],
      ['q-42', 'ok'],
    ]);
    expect(engine.nextSequence('q')).toBe(43);
    expect(!decisions[0]!.result.accepted && decisions[0]!.result.message).toContain('25.125');
  });

  it('checks the daily loss limit at the worst price inside the bar and halts until the next day', () => {
    const venue = new TinyVenue();
    const strategy = scripted('scripted', { 0: target(1), 3: target(2) });
    const engine = createEngine({
      strategies: [{ strategy }],
      contracts: [ES],
      venue,
      account: { startingBalance: 50_000, dailyLossLimit: 1_000 },
    });
    const breaches: Breach[] = [];
    engine.breaches$.subscribe((b) => breaches.push(b));
    // long 1 at 4000 (bar 1 open); bar 2 dips to 3919 (-81 ticks = -1012.5) but closes at 3990
    engine.push(chunk([4000, 4000, { open: 4000, high: 4001, low: 3919, close: 3990 }, 3990, 3990, 3990]));
    expect(breaches).toHaveLength(1);
    expect(breaches[0]).toMatchObject({ type: 6, rule: 'dailyLossLimit', duration: 2 });
    expect(engine.tradingState().state).toBe('HALTED');
    // the engine flattened at the next bar's open, and the target(2) at bar 3 was refused
    expect(engine.accounting.position(ES.id)).toBe(0);
    expect(venue.placed.map((o) => `${o.id} ${o.side} ${o.size}`)).toEqual(['scripted-1 buy 1', 'risk-1 sell 1']);
  });

  it('is drivable asynchronously: intents outside a push are decided at once', () => {
    const venue = new TinyVenue();
    const idle = defineStrategy({ name: 'idle', params: z.object({}), run: () => EMPTY });
    const engine = createEngine({
      strategies: [{ strategy: idle }],
      contracts: [ES],
      venue,
      account: { startingBalance: 50_000 },
      clock: () => 123,
    });
    engine.push(chunk([100]));
    engine.submit('idle', marketOrder('buy', 1));
    expect(venue.placed).toHaveLength(1);
    expect(venue.placed[0]!.id).toBe('idle-1');
    // a live fill arrives later, outside any push
    venue.subject.next({
      kind: 'fill',
      fillId: 'x1',
      orderId: 'idle-1',
      contractId: ES.id,
      side: 'buy',
      size: 1,
      price: 100,
      fees: 0,
      time: 200,
    });
    venue.subject.next({
      kind: 'fill',
      fillId: 'x1',
      orderId: 'idle-1',
      contractId: ES.id,
      side: 'buy',
      size: 1,
      price: 100,
      fees: 0,
      time: 200,
    });
    expect(engine.accounting.position(ES.id)).toBe(1);
  });

  it('can be fed from a MarketData source', () => {
    const venue = new TinyVenue();
    const engine = createEngine({
      strategies: [{ strategy: smaCross, params: { fast: 2, slow: 3 } }],
      contracts: [ES],
      venue,
      account: { startingBalance: 50_000 },
    });
    const whole = chunk([10, 9, 8, 7, 6, 8, 10, 12, 14, 12, 10, 8, 6]);
    const marketData = { bars: () => of(...split(whole, [5, 8])) };
    connectMarketData(engine, marketData, [{ contractId: ES.id, timeframe: whole.timeframe }]);
    expect(venue.placed.map((o) => `${o.side} ${o.size}`)).toEqual(['buy 1', 'sell 2']);
  });

  it('a failing strategy makes push throw (or is only logged when configured)', () => {
    const broken = defineStrategy({
      name: 'broken',
      params: z.object({}),
      run: ({ bars }) =>
        bars().pipe(
          map(() => {
            throw new Error('boom');
          }),
        ),
    });
    const loud = createEngine({
      strategies: [{ strategy: broken }],
      contracts: [ES],
      venue: new TinyVenue(),
      account: { startingBalance: 1 },
    });
    expect(() => loud.push(chunk([1, 2]))).toThrow(/strategy 'broken' failed at the bar of 20[0-9-]+T[0-9:.]+Z: boom/);
    const quiet = createEngine({
      strategies: [{ strategy: broken }],
      contracts: [ES],
      venue: new TinyVenue(),
      account: { startingBalance: 1 },
      onStrategyError: 'log',
    });
    const failures: string[] = [];
    quiet.errors$.subscribe((f) => failures.push(f.strategyId));
    quiet.push(chunk([1, 2]));
    expect(failures).toEqual(['broken']);
  });

  it("stamps an intent emitted without a bar index at the chunk's last bar", () => {
    const everyChunk = defineStrategy({
      name: 'every-chunk',
      params: z.object({}),
      run: ({ bars }) => bars().pipe(map((c) => target(c.length))),
    });
    const venue = new TinyVenue();
    const engine = createEngine({
      strategies: [{ strategy: everyChunk }],
      contracts: [ES],
      venue,
      account: { startingBalance: 1 },
    });
    const whole = chunk([1, 2, 3, 4, 5, 6]);
    for (const piece of split(whole, [4, 2])) engine.push(piece);
    expect(venue.placed.map((o) => [(o.decidedAt - whole.time[0]!) / 60_000, o.side, o.size])).toEqual([
      [3, 'buy', 4],
      [5, 'sell', 2],
    ]);
  });
});
