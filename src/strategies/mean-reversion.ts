/**
 * Mean reversion with a bracket. When flat with no working order: a close below the lower Bollinger band
 * (`period`, `stdDev`) with RSI(`rsiPeriod`) at or below `oversold` buys `size` at market; a close above
 * the upper band with RSI at or above `overbought` sells. Every entry carries a bracket: a stop loss
 * `stopLossTicks` and a take profit `takeProfitTicks` from the fill, so the exit is the venue's job.
 * Bar by bar (`onBar`), with the incremental kernels (no signal during the indicators' warm-up).
 */
import { z } from 'zod';
import { bollinger, rsi, RsiKernel, StdDevKernel } from '../engine/indicators.ts';
import { marketOrder } from '../engine/intents.ts';
import { onBar } from '../engine/on-bar.ts';
import { defineStrategy } from '../engine/strategy.ts';

export default defineStrategy({
  name: 'mean-reversion',
  description: 'Bollinger band + RSI reversal entries with a stop-loss / take-profit bracket in ticks.',
  params: z
    .strictObject({
      period: z.number().int().min(2).default(20),
      stdDev: z.number().positive().default(2),
      rsiPeriod: z.number().int().min(2).default(14),
      oversold: z.number().min(0).max(100).default(30),
      overbought: z.number().min(0).max(100).default(70),
      size: z.number().int().positive().default(1),
      stopLossTicks: z.number().int().positive().default(16),
      takeProfitTicks: z.number().int().positive().default(24),
    })
    .refine((p) => p.oversold < p.overbought, { message: 'oversold must be below overbought' }),
  // RSI needs one bar more than its period (it works on changes).
  warmup: (p) => Math.max(p.period, p.rsiPeriod + 1),
  run: (ctx) => {
    const p = ctx.params;
    const deviation = new StdDevKernel(p.period);
    const strength = new RsiKernel(p.rsiPeriod);
    const bracket = { stopLossTicks: p.stopLossTicks, takeProfitTicks: p.takeProfitTicks };
    return onBar(ctx, (bar) => {
      const sd = deviation.next(bar.close);
      const mean = deviation.lastMean;
      const rsi = strength.next(bar.close);
      // NaN (warm-up) fails every comparison below, so no entry before both are defined.
      if (ctx.position() !== 0 || ctx.openOrders().length > 0) return;
      if (bar.close < mean - p.stdDev * sd && rsi <= p.oversold) return marketOrder('buy', p.size, { bracket });
      if (bar.close > mean + p.stdDev * sd && rsi >= p.overbought) return marketOrder('sell', p.size, { bracket });
    });
  },
  plots: (p) => [
    {
      name: `Bollinger upper (${p.period}, ${p.stdDev})`,
      values: (bars) => bollinger(p.period, p.stdDev)().update(bars).upper,
    },
    { name: `SMA ${p.period}`, values: (bars) => bollinger(p.period, p.stdDev)().update(bars).middle },
    {
      name: `Bollinger lower (${p.period}, ${p.stdDev})`,
      values: (bars) => bollinger(p.period, p.stdDev)().update(bars).lower,
    },
    { name: `RSI ${p.rsiPeriod}`, pane: 'own', values: (bars) => rsi(p.rsiPeriod)().update(bars) },
  ],
});
