import { z } from 'zod';
import { defineStrategy, rsi, signals, target } from 'tickline';

// RSI mean reversion: long below `low`, short above `high`, holding the side in between.
export default defineStrategy({
  name: 'rsi-reversion',
  params: z.strictObject({
    period: z.number().int().min(2).default(14),
    low: z.number().min(0).max(100).default(30),
    high: z.number().min(0).max(100).default(70),
    size: z.number().int().positive().default(1),
  }),
  warmup: (p) => p.period + 1,
  run: ({ bars, params }) =>
    bars().pipe(
      signals(rsi(params.period), (_chunk, i, values) => {
        const value = values[i]!;
        if (value < params.low) return target(params.size);
        if (value > params.high) return target(-params.size);
        return undefined;
      }),
    ),
});
