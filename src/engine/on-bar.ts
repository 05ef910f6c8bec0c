/**
 * The per-bar style without a hand-made Observable: `run: (ctx) => onBar(ctx, (bar) => intents)`. The
 * handler is called once per closed bar, inside the runner's per-bar loop (after the venue filled orders at
 * that bar, so `ctx.position()` and `ctx.openOrders()` are current), and returns what to do: an intent, a
 * list of them, or nothing. A throw in it is the strategy failing at that bar (contained and attributed like
 * any of the strategy's callbacks). Dispatch allocates nothing of its own: the bar record (which the engine
 * makes for every listener), then only what the handler returns.
 */
import { Observable } from 'rxjs';
import type { StrategyContext } from './strategy.ts';
import type { BarRecord, Intent, Timeframe } from './types.ts';

/** What a per-bar handler returns: one intent, several, or nothing (undefined, null or an empty list). */
export type BarDecision = Intent | readonly Intent[] | undefined | null;

export interface OnBarOptions {
  /** The contract whose bars drive the handler; the primary contract by default. */
  readonly contractId?: string;
  /** A timeframe coarser than the base stream: the handler sees its bars, each at the base bar completing it. */
  readonly timeframe?: Timeframe;
}

/**
 * The intents of a per-bar handler, to return from `run`. Keep the strategy's state in `run`'s closure
 * (the scalar kernels: `new SmaKernel(p.period)`), read the context in the handler:
 *
 * ```ts
 * run: (ctx) => {
 *   const mean = new SmaKernel(ctx.params.period);
 *   return onBar(ctx, (bar) => {
 *     const m = mean.next(bar.close);
 *     if (ctx.position() === 0 && bar.close < m - 8) return marketOrder('buy', 1, { bracket: { stopLossTicks: 8, takeProfitTicks: 12 } });
 *   });
 * }
 * ```
 */
export function onBar<P>(
  ctx: StrategyContext<P>,
  handler: (bar: BarRecord, ctx: StrategyContext<P>) => BarDecision,
  options: OnBarOptions = {},
): Observable<Intent> {
  // Asked for now, not at subscription: streams of several timeframes are delivered in the order of the calls.
  const records = ctx.barRecords(options.contractId, options.timeframe);
  return new Observable<Intent>((subscriber) =>
    records.subscribe((bar) => {
      const decision = handler(bar, ctx);
      if (decision === undefined || decision === null) return;
      if (isIntentList(decision)) {
        for (let k = 0; k < decision.length; k++) subscriber.next(decision[k]!);
      } else subscriber.next(decision as Intent);
    }),
  );
}

function isIntentList(decision: Intent | readonly Intent[]): decision is readonly Intent[] {
  return Array.isArray(decision);
}
