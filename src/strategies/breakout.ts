/**
 * Channel breakout with a trailing-stop exit. Entry: when flat with no working order, a close above the
 * highest high (below the lowest low) of the previous `channel` bars buys (sells) `size` at market.
 * Exit: once the position exists, a trailing stop `trailTicks` behind the close protects it; when the
 * open profit reaches `tightenAfterTicks`, one modify tightens it to `tightTrailTicks` behind the close.
 * Both use `trailPrice` as the gateway reads it: an ABSOLUTE price in ticks (close -/+ distance), never
 * a distance. Works bar by bar (`onBar`) because it needs its position and working orders.
 */
import { z } from 'zod';
import { cancelOrder, marketOrder, modifyOrder, trailingStopOrder } from '../engine/intents.ts';
import { onBar } from '../engine/on-bar.ts';
import { defineStrategy } from '../engine/strategy.ts';
import type { Intent } from '../engine/types.ts';

export default defineStrategy({
  name: 'breakout',
  description: 'Channel breakout entry; exit by a trailing stop tightened with a trailPrice modify.',
  params: z
    .strictObject({
      channel: z.number().int().min(2).default(20),
      size: z.number().int().positive().default(1),
      trailTicks: z.number().int().positive().default(12),
      tightenAfterTicks: z.number().int().positive().default(16),
      tightTrailTicks: z.number().int().positive().default(6),
    })
    .refine((p) => p.tightTrailTicks < p.trailTicks, { message: 'tightTrailTicks must be smaller than trailTicks' }),
  // The channel is the previous `channel` bars: the first break can come at the bar after them.
  warmup: (p) => p.channel,
  run: (ctx) => {
    const { channel, size, trailTicks, tightenAfterTicks, tightTrailTicks } = ctx.params;
    const highs = new Float64Array(channel);
    const lows = new Float64Array(channel);
    let seen = 0;
    let tightened = false;
    return onBar(ctx, (bar) => {
      // At most one intent a bar (a leftover trail is cancelled before any entry is considered).
      let decision: Intent | undefined;
      const position = ctx.position();
      const orders = ctx.openOrders();
      const trail = orders.find((o) => o.order.type === 'trailingStop');
      if (position === 0) {
        tightened = false;
        // A trail left over from a closed position goes; a pending entry (live) is left to fill.
        if (trail !== undefined) decision = cancelOrder(trail.id);
        if (orders.length === 0 && seen >= channel) {
          let high = -Infinity;
          let low = Infinity;
          for (let k = 0; k < channel; k++) {
            if (highs[k]! > high) high = highs[k]!;
            if (lows[k]! < low) low = lows[k]!;
          }
          if (bar.close > high) decision = marketOrder('buy', size);
          else if (bar.close < low) decision = marketOrder('sell', size);
        }
      } else {
        const long = position > 0;
        const side = long ? 'sell' : 'buy';
        if (trail === undefined) {
          decision = trailingStopOrder(
            side,
            Math.abs(position),
            long ? bar.close - trailTicks : bar.close + trailTicks,
            {
              unit: 'ticks',
            },
          );
        } else if (!tightened) {
          const profit = (bar.close - ctx.averagePrice()) * (long ? 1 : -1);
          if (profit >= tightenAfterTicks) {
            tightened = true;
            decision = modifyOrder(trail.id, {
              trailPrice: long ? bar.close - tightTrailTicks : bar.close + tightTrailTicks,
              unit: 'ticks',
            });
          }
        }
      }
      highs[seen % channel] = bar.high;
      lows[seen % channel] = bar.low;
      seen++;
      return decision;
    });
  },
  plots: (p) => [
    { name: `Channel high (${p.channel})`, values: (bars) => channelEdge(bars.high, p.channel, Math.max) },
    { name: `Channel low (${p.channel})`, values: (bars) => channelEdge(bars.low, p.channel, Math.min) },
  ],
});

/** The highest (or lowest) of the previous `channel` values at each bar: the level a close must break. */
function channelEdge(values: Float64Array, channel: number, pick: (a: number, b: number) => number): Float64Array {
  const out = new Float64Array(values.length).fill(Number.NaN);
  for (let i = channel; i < values.length; i++) {
    let edge = values[i - channel]!;
    for (let k = i - channel + 1; k < i; k++) edge = pick(edge, values[k]!);
    out[i] = edge;
  }
  return out;
}
