import fc from 'fast-check';
import { combineLatest, config as rxjsConfig, filter, merge, Observable, of } from 'rxjs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { marketOrder, target } from '../../../src/engine/intents.ts';
import { onBar } from '../../../src/engine/on-bar.ts';
import { createEngine, type Decision } from '../../../src/engine/runner.ts';
import { defineStrategy, StrategyError, type StrategyContext } from '../../../src/engine/strategy.ts';
import { timeframe } from '../../../src/engine/timeframe.ts';
import type { BarRecord, Intent } from '../../../src/engine/types.ts';
import { ES, T0, TinyVenue, chunk } from './helpers.ts';

const strategyOf = (name: string, run: (ctx: StrategyContext) => Observable<Intent>) =>
  defineStrategy({ name, params: z.object({}), run });

function engineOf(strategy: ReturnType<typeof strategyOf>, account: Record<string, unknown> = {}, risk = {}) {
  const venue = new TinyVenue();
  const engine = createEngine({
    strategies: [{ strategy }],
    contracts: [ES],
    venue,
    account: { startingBalance: 50_000, ...account },
    risk,
  });
  const decisions: Decision[] = [];
  engine.decisions$.subscribe((d) => decisions.push(d));
  return { engine, venue, decisions };
}

function failureOf(push: () => void): StrategyError {
  try {
    push();
  } catch (error) {
    if (error instanceof StrategyError) return error;
    throw error;
  }
  throw new Error('the push did not fail');
}

describe('a throw in any per-bar style is contained at once, attributed to the strategy and the bar', () => {
  // Nothing may reach RxJS's asynchronous unhandled-error path (in a CLI run it kills the process).
  const unhandled: unknown[] = [];
  let previous: typeof rxjsConfig.onUnhandledError;
  beforeEach(() => {
    unhandled.length = 0;
    previous = rxjsConfig.onUnhandledError;
    rxjsConfig.onUnhandledError = (error) => unhandled.push(error);
  });
  afterEach(() => {
    rxjsConfig.onUnhandledError = previous;
  });

  const boomAt = (bar: BarRecord) => {
    if (bar.close === 12) throw new Error('bad bar');
  };
  const styles: Array<[string, (ctx: StrategyContext) => Observable<Intent>]> = [
    ['subscribe by hand', (ctx) => new Observable<Intent>(() => ctx.barRecords().subscribe(boomAt))],
    [
      'behind an operator',
      (ctx) =>
        new Observable<Intent>(() =>
          ctx
            .barRecords()
            .pipe(filter(() => true))
            .subscribe(boomAt),
        ),
    ],
    [
      'a combination the engine did not make',
      (ctx) => new Observable<Intent>(() => combineLatest([ctx.barRecords(), of(1)]).subscribe(([bar]) => boomAt(bar))),
    ],
    ['onBar', (ctx) => onBar(ctx, (bar) => (boomAt(bar), bar.close === 11 ? target(1) : undefined))],
  ];

  it.each(styles)('%s: STRATEGY_FAILED at the bar, and the run stops after it', async (_style, run) => {
    const { engine, decisions } = engineOf(strategyOf('throwing', run));
    const error = failureOf(() => engine.push(chunk([10, 11, 12, 13, 14])));
    expect(error.code).toBe('STRATEGY_FAILED');
    expect(error.strategyId).toBe('throwing');
    expect(error.barTime).toBe(T0 + 2 * 60_000);
    expect(error.message).toBe(
      `strategy 'throwing' failed at the bar of ${new Date(T0 + 2 * 60_000).toISOString()}: bad bar`,
    );
    // The bars after the failing one did not run: the last price is the failing bar's close.
    expect(engine.accounting.lastPrice(ES.id)).toBe(12);
    expect(decisions.length).toBeLessThanOrEqual(1);
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(unhandled).toEqual([]);
  });

  it('run() itself throwing fails the strategy before its first bar', () => {
    const { engine } = engineOf(
      strategyOf('broken', () => {
        throw new Error('no setup');
      }),
    );
    const error = failureOf(() => engine.push(chunk([10, 11])));
    expect(error.message).toBe("strategy 'broken' failed: no setup");
    expect(engine.accounting.lastPrice(ES.id)).not.toBe(11);
  });
});

describe('onBar', () => {
  it('emits what the handler returns: one intent, a list, or nothing', () => {
    const { engine, decisions } = engineOf(
      strategyOf('lists', (ctx) =>
        onBar(ctx, (bar, c) => {
          expect(c).toBe(ctx);
          if (bar.close === 10) return marketOrder('buy', 1);
          if (bar.close === 11) return [marketOrder('buy', 1), marketOrder('sell', 2)];
          if (bar.close === 12) return [];
          return null;
        }),
      ),
    );
    engine.push(chunk([10, 11, 12, 13]));
    expect(decisions.map((d) => [d.time, (d.intent as { side?: string }).side])).toEqual([
      // A decision's time is its bar's end.
      [T0 + 60_000, 'buy'],
      [T0 + 2 * 60_000, 'buy'],
      [T0 + 2 * 60_000, 'sell'],
    ]);
  });

  it('sees the position after the fills of its bar, like barRecords', () => {
    const seen: number[] = [];
    const { engine } = engineOf(
      strategyOf('positions', (ctx) =>
        onBar(ctx, () => {
          seen.push(ctx.position());
          return seen.length === 1 ? target(2) : undefined;
        }),
      ),
    );
    engine.push(chunk([10, 11, 12]));
    expect(seen[0]).toBe(0);
    expect(seen[2]).toBe(2);
  });
});

describe('multi-timeframe ordering', () => {
  // 15:00 to 15:29 UTC: the 15:14 one-minute bar completes the 15:00 fifteen-minute bar.
  const bars = Array.from({ length: 30 }, (_, i) => 100 + i);
  const record = (ctx: StrategyContext, order: Array<'1m' | '15m'>, seen: string[], fifteenFirst = false) => {
    const fifteen = fifteenFirst ? ctx.barRecords(undefined, timeframe('minute', 15)) : undefined;
    const one = ctx.barRecords();
    const streams = { '1m': one, '15m': fifteen ?? ctx.barRecords(undefined, timeframe('minute', 15)) };
    return new Observable<Intent>(() => {
      const subscriptions = order.map((unit) =>
        streams[unit].subscribe((bar) =>
          seen.push(
            `${unit} ${new Date(bar.time).toISOString().slice(11, 16)} now ${new Date(ctx.now()).toISOString().slice(11, 16)}`,
          ),
        ),
      );
      return () => subscriptions.forEach((s) => s.unsubscribe());
    });
  };

  it('a 15-minute record arrives at the 1-minute bar completing it, after that bar when asked for second', () => {
    const seen: string[] = [];
    const { engine } = engineOf(strategyOf('mtf', (ctx) => record(ctx, ['1m', '15m'], seen)));
    engine.push(chunk(bars));
    const at = seen.indexOf('15m 15:00 now 15:15');
    expect(seen.slice(at - 1, at + 2)).toEqual(['1m 15:14 now 15:15', '15m 15:00 now 15:15', '1m 15:15 now 15:16']);
    expect(seen.filter((s) => s.startsWith('15m'))).toEqual(['15m 15:00 now 15:15', '15m 15:15 now 15:30']);
  });

  it('in the order of the barRecords calls, whatever the order of the subscriptions', () => {
    const seen: string[] = [];
    // barRecords() called first, subscribed second: the 1-minute record still comes first.
    engineOf(strategyOf('mtf', (ctx) => record(ctx, ['15m', '1m'], seen))).engine.push(chunk(bars));
    let at = seen.indexOf('15m 15:00 now 15:15');
    expect(seen.slice(at - 1, at + 1)).toEqual(['1m 15:14 now 15:15', '15m 15:00 now 15:15']);
    // The 15-minute stream asked for first: its record comes before the 1-minute bar that completed it.
    seen.length = 0;
    engineOf(strategyOf('mtf', (ctx) => record(ctx, ['1m', '15m'], seen, true))).engine.push(chunk(bars));
    at = seen.indexOf('15m 15:00 now 15:15');
    expect(seen.slice(at, at + 2)).toEqual(['15m 15:00 now 15:15', '1m 15:14 now 15:15']);
  });
});

describe('multi-timeframe ordering with onBar', () => {
  it('follows the order of the onBar calls, whatever the order of merge', () => {
    const seen: string[] = [];
    const { engine } = engineOf(
      strategyOf('mtf', (ctx) => {
        const one = onBar(ctx, (bar) => void seen.push(`1m ${new Date(bar.time).toISOString().slice(11, 16)}`));
        const fifteen = onBar(ctx, (bar) => void seen.push(`15m ${new Date(bar.time).toISOString().slice(11, 16)}`), {
          timeframe: timeframe('minute', 15),
        });
        return merge(fifteen, one);
      }),
    );
    engine.push(chunk(Array.from({ length: 16 }, (_, i) => 100 + i)));
    expect(seen.slice(13)).toEqual(['1m 15:13', '1m 15:14', '15m 15:00', '1m 15:15']);
  });
});

describe('ctx.sizing: an order sized by it is never refused as RISK_EXCEEDS_ROOM', () => {
  const limits = fc.record({
    startingBalance: fc.integer({ min: 5_000, max: 100_000 }),
    dailyLossLimit: fc.option(fc.integer({ min: 100, max: 3_000 }), { nil: undefined }),
    mll: fc.option(fc.integer({ min: 200, max: 5_000 }), { nil: undefined }),
    personalDailyLossLimit: fc.option(fc.integer({ min: 50, max: 2_000 }), { nil: undefined }),
    safetyBuffer: fc.integer({ min: 0, max: 300 }),
    position: fc.integer({ min: -3, max: 3 }),
    move: fc.integer({ min: -80, max: 80 }),
    money: fc.double({ min: 1, max: 20_000, noNaN: true }),
    stopTicks: fc.integer({ min: 1, max: 60 }),
    oversize: fc.boolean(),
  });

  it('fromRisk and maxSizeForStop within the room; one contract more is refused', () => {
    fc.assert(
      fc.property(limits, (l) => {
        const sized: Array<{ size: number; max: number; room: number }> = [];
        const { engine, decisions } = engineOf(
          strategyOf('sized', (ctx) => {
            let bar = 0;
            return onBar(ctx, () => {
              bar++;
              if (bar === 1) return l.position === 0 ? undefined : target(l.position);
              if (bar !== 3) return undefined;
              const room = ctx.sizing.room();
              const max = ctx.sizing.maxSizeForStop(l.stopTicks);
              const size = l.oversize
                ? Number.isFinite(max)
                  ? max + 1
                  : 0
                : ctx.sizing.fromRisk(l.money, l.stopTicks);
              sized.push({ size, max, room });
              // A buy opens what it does not close of a short: size it on top of the short's contracts.
              const closing = Math.max(0, -ctx.position());
              if (size <= 0) return undefined;
              return marketOrder('buy', size + closing, {
                bracket: { stopLossTicks: l.stopTicks, takeProfitTicks: 8 },
              });
            });
          }),
          {
            startingBalance: l.startingBalance,
            ...(l.dailyLossLimit === undefined ? {} : { dailyLossLimit: l.dailyLossLimit }),
            ...(l.mll === undefined ? {} : { maximumLossLimit: { amount: l.mll, variant: 'static' } }),
            ...(l.personalDailyLossLimit === undefined ? {} : { personalDailyLossLimit: l.personalDailyLossLimit }),
          },
          { safetyBuffer: l.safetyBuffer },
        );
        engine.push(chunk([1000, 1000, 1000 + l.move, 1000 + l.move]));
        const [s] = sized;
        if (s === undefined) return;
        if (s.size <= 0 || (s.room === Infinity && l.oversize)) return;
        const last = decisions[decisions.length - 1]!;
        const code = last.result.accepted ? (last.result.adjusted ?? 'ok') : last.result.code;
        // One contract over the helper's maximum is refused for the room (or earlier, when a breach already
        // stopped new risk, or no room is left at all: a floor's own code).
        if (l.oversize) {
          expect(code).not.toBe('ok'); // refused, or cut to the part that closes the short
          if (s.max >= 1 && code !== 'STATE_HALTED') expect(code).toBe('RISK_EXCEEDS_ROOM');
        }
        if (!l.oversize) {
          expect(code).not.toBe('RISK_EXCEEDS_ROOM');
          expect(s.size).toBeLessThanOrEqual(s.max);
          expect(s.size * l.stopTicks * ES.grid.tickValue).toBeLessThanOrEqual(l.money + 1e-9);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('reads the guard room: floors with the buffer, the personal limit, Infinity without limits', () => {
    let seen: number[] = [];
    const probe = strategyOf('probe', (ctx) =>
      onBar(ctx, () => {
        seen = [
          ctx.sizing.room(),
          ctx.sizing.maxSizeForStop(8),
          ctx.sizing.fromRisk(1_000, 8),
          ctx.sizing.maxSizeForStop(0),
        ];
        return undefined;
      }),
    );
    engineOf(probe).engine.push(chunk([1000]));
    expect(seen).toEqual([Infinity, Infinity, 10, 0]);
    engineOf(probe, { dailyLossLimit: 1_000, personalDailyLossLimit: 600 }, { safetyBuffer: 100 }).engine.push(
      chunk([1000]),
    );
    // Tightest: the personal 600 (daily 1,000 - buffer 100 = 900); 8 ticks x 12.50 = 100 a contract.
    expect(seen).toEqual([600, 6, 6, 0]);
  });
});
