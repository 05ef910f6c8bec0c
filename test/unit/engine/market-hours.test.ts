import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { map } from 'rxjs';
import { target, marketOrder, cancelOrder, flatten } from '../../../src/engine/intents.ts';
import { checkIntent, riskConfigSchema, type GuardState } from '../../../src/engine/risk.ts';
import { createEngine, type Decision, type EngineOptions } from '../../../src/engine/runner.ts';
import { defineStrategy, type StrategyContext } from '../../../src/engine/strategy.ts';
import type { SessionInfo } from '../../../src/engine/market-hours.ts';
import type { BarChunk } from '../../../src/engine/types.ts';
import { contractMarketHours } from '../../../src/market/contract-hours.ts';
import { EXCHANGE_CALENDAR } from '../../../src/market/exchange-hours.ts';
import { ES, MINUTE, TinyVenue } from './helpers.ts';

const MIN = 60_000;
/** Chicago is UTC-6 in late November 2026. */
const ct = (date: string, hhmm: string) => Date.parse(`${date}T${hhmm}:00-06:00`);

/** One-minute bars at the given starts, all at `price`. */
function bars(times: number[], price = 20_000): BarChunk {
  const n = times.length;
  const col = () => new Float64Array(n);
  const c: BarChunk = {
    contractId: ES.id,
    timeframe: MINUTE,
    length: n,
    time: Float64Array.from(times),
    open: col().fill(price),
    high: col().fill(price),
    low: col().fill(price),
    close: col().fill(price),
    volume: col().fill(1),
  };
  return c;
}

function minutes(from: number, count: number): number[] {
  return Array.from({ length: count }, (_, i) => from + i * MIN);
}

/** Wants one contract long on every bar. */
const alwaysLong = defineStrategy({
  name: 'always-long',
  params: z.object({}),
  run: ({ barRecords }) => barRecords().pipe(map(() => target(1))),
});

const hours = contractMarketHours([ES]);

function setup(extra: Partial<EngineOptions> = {}) {
  const venue = new TinyVenue();
  const engine = createEngine({
    strategies: [{ strategy: alwaysLong }],
    contracts: [ES],
    venue,
    account: { startingBalance: 50_000 },
    marketHours: hours,
    ...extra,
  });
  const decisions: Decision[] = [];
  engine.decisions$.subscribe((d) => decisions.push(d));
  return { venue, engine, decisions };
}

/** The codes of the strategy's place decisions at a decision time. */
function codesAt(decisions: Decision[], time: number): string[] {
  return decisions
    .filter((d) => d.time === time && d.intent.kind === 'place')
    .map((d) => (d.result.accepted ? (d.result.adjusted ?? 'ok') : d.result.code));
}

describe('the guard knows the market hours', () => {
  it('the contract calendar gives ES its exchange hours', () => {
    expect(Object.keys(hours)).toEqual([ES.id]);
    const es = hours[ES.id]!;
    expect(es.isOpen(ct('2026-11-17', '15:59'))).toBe(true);
    expect(es.isOpen(ct('2026-11-17', '16:30'))).toBe(false);
    expect(es.nextClose(ct('2026-11-27', '09:00'))).toBe(ct('2026-11-27', '12:15'));
  });

  it('daily break: flat N minutes before the close, MARKET_CLOSED at the close, new risk again at the open', () => {
    const { engine, decisions, venue } = setup({ risk: { flatBeforeClose: { minutes: 5 } } });
    const before = minutes(ct('2026-11-17', '15:45'), 15); // 15:45 .. 15:59
    const after = minutes(ct('2026-11-17', '17:00'), 3);
    engine.push(bars([...before, ...after]));
    // Entered at the first bar, flattened when the bar ending 15:55 closed.
    expect(codesAt(decisions, ct('2026-11-17', '15:46'))).toEqual(['ok']);
    const flat = decisions.filter((d) => d.strategyId === 'risk' && d.intent.kind === 'place');
    expect(flat.map((d) => d.time)).toEqual([ct('2026-11-17', '15:55')]);
    expect(codesAt(decisions, ct('2026-11-17', '15:55'))).toEqual(['ok', 'BEFORE_CLOSE']);
    expect(codesAt(decisions, ct('2026-11-17', '15:59'))).toEqual(['BEFORE_CLOSE']);
    // The last bar ends at the close: the market is closed at its decision.
    expect(codesAt(decisions, ct('2026-11-17', '16:00'))).toEqual(['MARKET_CLOSED']);
    expect(codesAt(decisions, ct('2026-11-17', '17:01'))).toEqual(['ok']);
    expect(engine.accounting.position(ES.id)).toBe(1);
    // Nothing that adds risk was sent from the flat-by to the open.
    const sent = venue.placed.filter(
      (p) => p.decidedAt >= ct('2026-11-17', '15:54') && p.decidedAt < ct('2026-11-17', '17:00'),
    );
    expect(sent.map((p) => p.side)).toEqual(['sell']);
  });

  it('without a flat-by the guard still refuses new risk at the close, and closing orders pass', () => {
    const plan = [target(1), target(1), target(-1), target(0)];
    let i = 0;
    const scripted = defineStrategy({
      name: 'scripted',
      params: z.object({}),
      run: ({ barRecords }) => barRecords().pipe(map(() => plan[i++]!)),
    });
    const { engine, decisions } = setup({ strategies: [{ strategy: scripted }] });
    // Bars 15:57, 15:58 and 15:59 (ending at the close), then 17:00.
    engine.push(bars([...minutes(ct('2026-11-17', '15:57'), 3), ct('2026-11-17', '17:00')]));
    // target(-1) decided at 16:00 while long 1: the reversal is cut to its closing part.
    const reversal = decisions.find((d) => d.time === ct('2026-11-17', '16:00') && d.intent.kind === 'place')!;
    expect(reversal.result).toMatchObject({ accepted: true, size: 1, adjusted: 'MARKET_CLOSED' });
  });

  it('early close and weekend: Thanksgiving Friday 2026 closes at 12:15 CT; flat at 12:10, open again Sunday 17:00', () => {
    const { engine, decisions } = setup({ risk: { flatBeforeClose: { minutes: 5 } } });
    engine.push(bars([...minutes(ct('2026-11-27', '12:00'), 16), ...minutes(ct('2026-11-29', '17:00'), 2)]));
    const flat = decisions.filter((d) => d.strategyId === 'risk' && d.intent.kind === 'place');
    expect(flat.map((d) => d.time)).toEqual([ct('2026-11-27', '12:10')]);
    expect(codesAt(decisions, ct('2026-11-27', '12:14'))).toEqual(['BEFORE_CLOSE']);
    expect(codesAt(decisions, ct('2026-11-27', '12:15'))).toEqual(['MARKET_CLOSED']);
    // Bars after the early close (the data may have some): still closed.
    expect(codesAt(decisions, ct('2026-11-27', '12:16'))).toEqual(['MARKET_CLOSED']);
    expect(codesAt(decisions, ct('2026-11-29', '17:01'))).toEqual(['ok']);
    expect(engine.rejections()).toEqual({ BEFORE_CLOSE: 5, MARKET_CLOSED: 2 });
    expect(engine.accounting.position(ES.id)).toBe(1); // long again from the Sunday open
  });

  it('property: no order that adds risk is accepted while the market is closed', () => {
    const base: GuardState = {
      now: 0,
      tradingState: 'ACTIVE',
      lockedUntil: 0,
      session: 'open',
      marketPhase: () => 'closed',
      equity: 50_000,
      dayPnl: 0,
      dailyLossFloor: -Infinity,
      maximumLossFloor: -Infinity,
      personalDailyLossLimit: undefined,
      personalDailyProfitTarget: undefined,
      contract: (id) => (id === ES.id ? ES : undefined),
      position: () => 0,
      lastPrice: () => 16_000,
      order: () => undefined,
      openOrderCount: () => 0,
      workingEntrySize: () => 0,
      hasStopOrder: () => false,
      ordersSince: () => 0,
    };
    const limits = riskConfigSchema.parse({});
    fc.assert(
      fc.property(
        fc.integer({ min: -5, max: 5 }),
        fc.constantFrom('buy' as const, 'sell' as const),
        fc.integer({ min: 1, max: 10 }),
        fc.constantFrom('closed' as const, 'closing' as const),
        (position, side, size, phase) => {
          const state: GuardState = { ...base, position: () => position, marketPhase: () => phase };
          const intent = { ...marketOrder(side, size, { contractId: ES.id }), contractId: ES.id };
          const result = checkIntent(intent, state, limits);
          const closable = (side === 'buy' ? position < 0 : position > 0) ? Math.min(Math.abs(position), size) : 0;
          if (!result.accepted) return closable === 0;
          const accepted = result.size ?? size;
          return accepted <= closable && closable > 0;
        },
      ),
    );
    // Cancels of working orders and flattens pass while closed.
    const withOrder: GuardState = {
      ...base,
      order: () => ({ contractId: ES.id, side: 'buy', size: 1, order: { type: 'market' }, trailStop: Number.NaN }),
    };
    expect(checkIntent(cancelOrder('x'), withOrder, limits).accepted).toBe(true);
    expect(checkIntent(flatten(), base, limits).accepted).toBe(true);
  });

  it('property: an engine over random bars of a week never sends new risk while closed', () => {
    const week = ct('2026-11-22', '16:00');
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.integer({ min: 0, max: 7 * 24 * 60 }), { minLength: 1, maxLength: 60 }),
        fc.integer({ min: 0, max: 30 }),
        (offsets, flatMinutes) => {
          const times = offsets.sort((a, b) => a - b).map((m) => week + m * MIN);
          const { engine, decisions } = setup(
            flatMinutes === 0 ? {} : { risk: { flatBeforeClose: { minutes: flatMinutes } } },
          );
          engine.push(bars(times));
          const es = hours[ES.id]!;
          for (const d of decisions) {
            if (d.intent.kind !== 'place' || !d.result.accepted || d.strategyId === 'risk') continue;
            // The strategy only ever buys toward +1: an accepted buy adds risk, so the market was open.
            if (d.intent.side === 'buy') {
              expect(es.isOpen(d.time)).toBe(true);
              if (flatMinutes > 0) expect(d.time).toBeLessThan(es.nextClose(d.time) - flatMinutes * MIN);
            }
          }
        },
      ),
      { numRuns: 40 },
    );
  });
});

describe('the trading day turns at 17:00 CT by the clock', () => {
  it('advance() turns the day with no bar at the boundary', () => {
    let clock = ct('2026-11-17', '15:58');
    const engine = createEngine({
      strategies: [{ strategy: alwaysLong }],
      contracts: [ES],
      venue: new TinyVenue(0),
      account: { startingBalance: 50_000, dailyLossLimit: 1_000 },
      clock: () => clock,
      marketHours: hours,
    });
    engine.push(bars(minutes(ct('2026-11-17', '15:57'), 2), 20_000));
    engine.push(bars([ct('2026-11-17', '15:59')], 20_040)); // long 1 from 20_000: +40 ticks
    expect(engine.rules.tradingDay).toBe('2026-11-17');
    clock = ct('2026-11-17', '16:59');
    engine.advance();
    expect(engine.rules.tradingDay).toBe('2026-11-17');
    clock = ct('2026-11-17', '17:00') + 500;
    engine.advance();
    expect(engine.rules.tradingDay).toBe('2026-11-18');
    // The new day starts from the balance at the boundary (the gateway's startOfDayBalance), no bar needed.
    expect(engine.rules.dayStartBalance).toBe(engine.accounting.balance);
    expect(engine.rules.dailyLossFloor()).toBe(engine.accounting.balance - 1_000);
    // The first bar of the new day does not turn it again.
    engine.push(bars([ct('2026-11-17', '17:00')], 20_040));
    expect(engine.rules.tradingDay).toBe('2026-11-18');
  });
});

describe('ctx.session', () => {
  function recorder(seen: Array<SessionInfo & { at: number }>, snapshots: SessionInfo[]) {
    return defineStrategy({
      name: 'session-reader',
      params: z.object({}),
      run: (ctx: StrategyContext) =>
        ctx.barRecords().pipe(
          map((bar) => {
            const s = ctx.session;
            seen.push({
              at: ctx.now(),
              open: s.open,
              minutesToClose: s.minutesToClose,
              nextClose: s.nextClose,
              nextOpen: s.nextOpen,
              tradingDay: s.tradingDay,
            });
            snapshots.push(ctx.sessionAt(bar.time));
            return target(0);
          }),
        ),
    });
  }

  it('open, minutes to the close, the next close and the trading day at the engine clock', () => {
    const seen: Array<SessionInfo & { at: number }> = [];
    const snapshots: SessionInfo[] = [];
    const { engine } = setup({ strategies: [{ strategy: recorder(seen, snapshots) }] });
    engine.push(bars([ct('2026-11-27', '12:10'), ct('2026-11-27', '12:14'), ct('2026-11-29', '17:00')]));
    expect(seen[0]).toMatchObject({ open: true, minutesToClose: 4, tradingDay: '2026-11-27' });
    expect(seen[0]!.nextClose).toBe(ct('2026-11-27', '12:15'));
    expect(seen[1]).toMatchObject({ open: false, minutesToClose: Infinity, tradingDay: '2026-11-27' });
    expect(seen[1]!.nextOpen).toBe(ct('2026-11-29', '17:00'));
    expect(seen[2]).toMatchObject({ open: true, tradingDay: '2026-11-30' });
    expect(seen[2]!.nextClose).toBe(ct('2026-11-30', '16:00'));
    // sessionAt at the bar's start: open at 12:14.
    expect(snapshots[1]).toMatchObject({ open: true, minutesToClose: 1 });
    expect(EXCHANGE_CALENDAR.holidayOn('ES', '2026-11-27')?.kind).toBe('earlyClose');
  });

  it('without market hours the market counts as always open, on the engine trading day', () => {
    const seen: Array<SessionInfo & { at: number }> = [];
    const { engine } = setup({ strategies: [{ strategy: recorder(seen, []) }], marketHours: {} });
    engine.push(bars([ct('2026-11-17', '16:30'), ct('2026-11-17', '17:30')]));
    expect(seen.map((s) => [s.open, s.minutesToClose, s.tradingDay])).toEqual([
      [true, Infinity, '2026-11-17'],
      [true, Infinity, '2026-11-18'],
    ]);
  });
});
