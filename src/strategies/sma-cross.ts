/**
 * Moving-average crossover, the reference strategy of issue 7: SMA(fast) and SMA(slow) of the close;
 * the side is the sign of fast - slow (a tie keeps the previous side); the first defined side is only
 * remembered, and every later change of side targets +size (cross up) or -size (cross down). After the
 * first cross it is always in the market. Target intents make repeating a signal harmless.
 */
import { map } from 'rxjs';
import { z } from 'zod';
import { crossover, sma } from '../engine/indicators.ts';
import { target } from '../engine/intents.ts';
import { defineStrategy } from '../engine/strategy.ts';

export default defineStrategy({
  name: 'sma-cross',
  description: 'SMA(fast)/SMA(slow) crossover of the close: cross up targets +size, cross down -size.',
  params: z
    .strictObject({
      fast: z.number().int().positive().default(10),
      slow: z.number().int().positive().default(30),
      size: z.number().int().positive().default(1),
    })
    .refine((p) => p.fast < p.slow, { message: 'fast must be shorter than slow' }),
  warmup: (p) => p.slow,
  run: ({ bars, params }) =>
    bars().pipe(
      crossover(sma(params.fast), sma(params.slow)),
      map((cross) => target(cross.direction === 'up' ? params.size : -params.size)),
    ),
  plots: (params) => [
    { name: `SMA ${params.fast}`, values: (bars) => sma(params.fast)().update(bars) },
    { name: `SMA ${params.slow}`, values: (bars) => sma(params.slow)().update(bars) },
  ],
});
