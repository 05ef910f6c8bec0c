import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createEngine, type Decision } from '../../../src/engine/runner.ts';
import { StrategyError, parseParams } from '../../../src/engine/strategy.ts';
import breakout from '../../../src/strategies/breakout.ts';
import { builtinStrategyNames, loadStrategy } from '../../../src/strategies/index.ts';
import meanReversion from '../../../src/strategies/mean-reversion.ts';
import smaCross from '../../../src/strategies/sma-cross.ts';
import type { StrategyModule } from '../../../src/engine/strategy.ts';
import { ES, TinyVenue, chunk, split, type BarInput } from '../engine/helpers.ts';

function run(strategy: StrategyModule, params: unknown, bars: Array<number | BarInput>, sizes?: number[]) {
  const venue = new TinyVenue();
  const engine = createEngine({
    strategies: [{ strategy, params }],
    contracts: [ES],
    venue,
    account: { startingBalance: 50_000 },
  });
  const decisions: Decision[] = [];
  engine.decisions$.subscribe((d) => decisions.push(d));
  const whole = chunk(bars);
  for (const piece of sizes === undefined ? [whole] : split(whole, sizes)) engine.push(piece);
  const barOf = (time: number) => (time - whole.time[0]!) / 60_000;
  return { venue, engine, decisions, barOf };
}

describe('sma-cross', () => {
  const closes = [10, 10, 10, 10, 12, 14, 12, 10, 8, 10, 12];
  it('targets -1 on the cross down and +1 on the cross up; the first side is not a cross', () => {
    for (const sizes of [undefined, [1], [3, 2]]) {
      const { venue, barOf, engine } = run(smaCross, { fast: 2, slow: 3 }, closes, sizes);
      expect(venue.placed.map((o) => [barOf(o.decidedAt), o.side, o.size])).toEqual([
        [7, 'sell', 1],
        [10, 'buy', 2],
      ]);
      expect(engine.accounting.position(ES.id)).toBe(-1);
    }
  });
  it('defaults to the issue 7 reference: SMA(10)/SMA(30), size 1', () => {
    expect(parseParams(smaCross, {})).toEqual({ fast: 10, slow: 30, size: 1 });
    expect(() => parseParams(smaCross, { fast: 30, slow: 10 })).toThrow(StrategyError);
    expect(() => parseParams(smaCross, { fats: 3 })).toThrow(/fats/);
  });
  it('sends nothing during warm-up', () => {
    const { venue } = run(smaCross, { fast: 2, slow: 5 }, [10, 20, 5, 30, 1]);
    expect(venue.placed).toEqual([]);
  });
});

describe('breakout', () => {
  const flat = { open: 100, high: 101, low: 99, close: 100 };
  const bars: BarInput[] = [
    flat,
    flat,
    flat,
    { open: 100, high: 103, low: 100, close: 103 }, // breaks the 3-bar high (101): buy
    { open: 103, high: 104, low: 102, close: 104 }, // filled at 103; trail placed at 104 - 4 = 100
    { open: 104, high: 110, low: 104, close: 110 }, // profit 7 >= 6: tighten to 110 - 2 = 108
    { open: 109, high: 109, low: 107, close: 107 }, // stop at 108 hit
  ];
  it('enters on the channel break and manages the exit with absolute trailPrice modifies', () => {
    const { venue, barOf, engine, decisions } = run(
      breakout,
      { channel: 3, trailTicks: 4, tightenAfterTicks: 6, tightTrailTicks: 2 },
      bars,
    );
    expect(venue.placed.map((o) => [barOf(o.decidedAt), o.side, o.size, o.order])).toEqual([
      [3, 'buy', 1, { type: 'market' }],
      [4, 'sell', 1, { type: 'trailingStop', trailPrice: 100 }],
    ]);
    expect(venue.modified).toEqual([{ orderId: 'breakout-2', trailPrice: 108 }]);
    expect(decisions.every((d) => d.result.accepted)).toBe(true);
    expect(engine.accounting.position(ES.id)).toBe(0);
    expect(engine.accounting.realizedPnl).toBe(5 * 12.5);
  });
  it('sells the break of the channel low', () => {
    const down: BarInput[] = [
      flat,
      flat,
      flat,
      { open: 100, high: 100, low: 97, close: 97 },
      { open: 97, high: 98, low: 96, close: 96 },
    ];
    const { venue } = run(breakout, { channel: 3 }, down);
    expect(venue.placed.map((o) => [o.side, o.order])).toEqual([
      ['sell', { type: 'market' }],
      ['buy', { type: 'trailingStop', trailPrice: 96 + 12 }],
    ]);
  });
});

describe('mean-reversion', () => {
  const params = {
    period: 5,
    stdDev: 1,
    rsiPeriod: 3,
    oversold: 30,
    overbought: 70,
    stopLossTicks: 4,
    takeProfitTicks: 6,
  };
  it('buys below the lower band with a low RSI, with a bracket in ticks', () => {
    const { venue, barOf } = run(meanReversion, params, [100, 100, 100, 100, 100, 99, 97, 94]);
    expect(venue.placed.map((o) => [barOf(o.decidedAt), o.side, o.size, o.order, o.bracket])).toEqual([
      [5, 'buy', 1, { type: 'market' }, { stopLossTicks: 4, takeProfitTicks: 6 }],
    ]);
  });
  it('sells above the upper band with a high RSI', () => {
    const { venue, barOf } = run(meanReversion, params, [100, 100, 100, 100, 100, 101, 103]);
    expect(venue.placed.map((o) => [barOf(o.decidedAt), o.side])).toEqual([[5, 'sell']]);
  });
  it('gives no signal during warm-up', () => {
    const { venue } = run(meanReversion, params, [100, 50, 150, 20]);
    expect(venue.placed).toEqual([]);
  });
});

describe('loadStrategy', () => {
  const fixtures = path.resolve(import.meta.dirname, 'fixtures');
  it('loads built-ins by name', async () => {
    expect(builtinStrategyNames()).toEqual(['breakout', 'mean-reversion', 'sma-cross']);
    expect(await loadStrategy('sma-cross')).toBe(smaCross);
  });
  it("imports a quant's own .ts file", async () => {
    const strategy = await loadStrategy('custom-strategy.ts', fixtures);
    expect(strategy.name).toBe('always-long');
    const { venue } = run(strategy, { size: 2 }, [1, 2, 3]);
    expect(venue.placed.map((o) => `${o.side} ${o.size}`)).toEqual(['buy 2']);
  });
  it('explains what is wrong', async () => {
    await expect(loadStrategy('nope')).rejects.toMatchObject({
      code: 'STRATEGY_NOT_FOUND',
      message: expect.stringContaining('sma-cross'),
    });
    await expect(loadStrategy('./missing.ts', fixtures)).rejects.toMatchObject({ code: 'STRATEGY_NOT_FOUND' });
    await expect(loadStrategy('not-a-strategy.ts', fixtures)).rejects.toMatchObject({
      code: 'STRATEGY_INVALID',
      message: expect.stringContaining('defineStrategy'),
    });
  });
});
