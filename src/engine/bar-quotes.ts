/**
 * Quotes and market trades made from bars, for strategies that read `ctx.quotes()` or `ctx.trades()`
 * where no live source exists (a backtest, or a live gateway without its market hub): one quote at each
 * bar's close (the adapter's spread model, or no spread), one print of the bar's volume at its close,
 * the aggressor by the tick rule. The same strategy then runs unchanged on bars and on live quotes.
 */
import { type OperatorFunction, map } from 'rxjs';
import type { BarQuoteModel, BarRecord, MarketTrade, Quote } from './types.ts';

/** No spread: bid and ask at the close, the bar's volume on each side. */
export const closeQuote: BarQuoteModel = (bar) => ({
  bid: bar.close,
  ask: bar.close,
  bidSize: bar.volume,
  askSize: bar.volume,
});

/** The tick rule: the direction of the last change of the close (up before any). */
function tickRule(): (bar: BarRecord) => { previous: BarRecord | undefined; direction: 1 | -1 } {
  let previous: BarRecord | undefined;
  let direction: 1 | -1 = 1;
  return (bar) => {
    const before = previous;
    if (before !== undefined && bar.close !== before.close) direction = bar.close > before.close ? 1 : -1;
    previous = bar;
    return { previous: before, direction };
  };
}

export function quotesFromBars(model: BarQuoteModel = closeQuote): OperatorFunction<BarRecord, Quote> {
  return (source) => {
    const rule = tickRule();
    return source.pipe(
      map((bar) => {
        const { previous, direction } = rule(bar);
        return { contractId: bar.contractId, time: bar.time, last: bar.close, ...model(bar, previous, direction) };
      }),
    );
  };
}

export function tradesFromBars(): OperatorFunction<BarRecord, MarketTrade> {
  return (source) => {
    const rule = tickRule();
    return source.pipe(
      map((bar) => {
        const { direction } = rule(bar);
        return {
          contractId: bar.contractId,
          time: bar.time,
          price: bar.close,
          size: bar.volume,
          side: direction === 1 ? ('buy' as const) : ('sell' as const),
        };
      }),
    );
  };
}
