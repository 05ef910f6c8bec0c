/**
 * A strategy that reads back-adjusted prices while the engine trades real ones. In a continuous backtest
 * the bars, quotes, market trades, last price, average price and working orders a strategy sees are moved by its
 * segment's
 * adjustment (continuous.ts), so a roll's price difference is no signal; the prices its intents carry
 * are moved back to real prices before the engine reads them. Fills, order updates and positions keep
 * real prices (they are what the account booked).
 */
import { map } from 'rxjs';
import type { StrategyContext, StrategyModule, WorkingOrder } from '../../engine/strategy.ts';
import type { BarChunk, BarRecord, Intent, OrderSpec } from '../../engine/types.ts';
import type { AdjustMode } from '../../data/continuous.ts';

/** The adjustment in force for the bars being pushed (the runner sets it before each piece). */
export class PriceAdjustment {
  private offset = 0;
  private ratio = 1;

  constructor(readonly mode: AdjustMode) {}

  set(offset: number, ratio: number): void {
    this.offset = this.mode === 'difference' ? offset : 0;
    this.ratio = this.mode === 'ratio' ? ratio : 1;
  }

  get identity(): boolean {
    return this.offset === 0 && this.ratio === 1;
  }

  /** Real ticks to the strategy's view (NaN stays NaN). */
  toView(ticks: number): number {
    return this.ratio === 1 ? ticks + this.offset : ticks * this.ratio;
  }

  /** The strategy's view back to real ticks; a ratio's result is rounded to the nearest tick. */
  toReal(ticks: number): number {
    return this.ratio === 1 ? ticks - this.offset : Math.round(ticks / this.ratio);
  }
}

export function adjustedStrategy(module: StrategyModule, adjustment: PriceAdjustment): StrategyModule {
  return {
    ...module,
    run: (context) =>
      module.run(adjustedContext(context, adjustment)).pipe(map((intent) => realIntent(intent, adjustment, context))),
  };
}

function adjustedContext<P>(context: StrategyContext<P>, adjustment: PriceAdjustment): StrategyContext<P> {
  const view = (ticks: number) => adjustment.toView(ticks);
  return {
    id: context.id,
    params: context.params,
    contracts: context.contracts,
    contract: context.contract,
    session: context.session,
    sessionAt: (time, contractId) => context.sessionAt(time, contractId),
    bars: (contractId, timeframe) =>
      context.bars(contractId, timeframe).pipe(map((chunk) => adjustChunk(chunk, adjustment))),
    barRecords: (contractId, timeframe) =>
      context.barRecords(contractId, timeframe).pipe(map((bar) => adjustRecord(bar, adjustment))),
    position: (contractId) => context.position(contractId),
    averagePrice: (contractId) => view(context.averagePrice(contractId)),
    lastPrice: (contractId) => view(context.lastPrice(contractId)),
    toPrice: (ticks, contractId) => context.toPrice(ticks, contractId),
    toTicks: (price, contractId) => context.toTicks(price, contractId),
    openOrders: (contractId) => context.openOrders(contractId).map((order) => adjustOrder(order, adjustment)),
    quotes: (contractId) =>
      context
        .quotes(contractId)
        .pipe(
          map((quote) =>
            adjustment.identity
              ? quote
              : { ...quote, bid: view(quote.bid), ask: view(quote.ask), last: view(quote.last) },
          ),
        ),
    trades: (contractId) =>
      context
        .trades(contractId)
        .pipe(map((trade) => (adjustment.identity ? trade : { ...trade, price: view(trade.price) }))),
    fills: context.fills,
    orders: context.orders,
    positions: context.positions,
    account: context.account,
    now: () => context.now(),
    sizing: context.sizing,
    logger: context.logger,
  };
}

function adjustChunk(chunk: BarChunk, adjustment: PriceAdjustment): BarChunk {
  if (adjustment.identity) return chunk;
  const column = (values: Float64Array) => {
    const out = new Float64Array(values.length);
    for (let i = 0; i < values.length; i++) out[i] = adjustment.toView(values[i]!);
    return out;
  };
  return {
    ...chunk,
    open: column(chunk.open),
    high: column(chunk.high),
    low: column(chunk.low),
    close: column(chunk.close),
  };
}

function adjustRecord(bar: BarRecord, adjustment: PriceAdjustment): BarRecord {
  if (adjustment.identity) return bar;
  const v = (ticks: number) => adjustment.toView(ticks);
  return { ...bar, open: v(bar.open), high: v(bar.high), low: v(bar.low), close: v(bar.close) };
}

function adjustOrder(order: WorkingOrder, adjustment: PriceAdjustment): WorkingOrder {
  if (adjustment.identity) return order;
  return {
    ...order,
    order: mapSpec(order.order, (ticks) => adjustment.toView(ticks)),
    trailStop: adjustment.toView(order.trailStop),
  };
}

function mapSpec(spec: OrderSpec, f: (ticks: number) => number): OrderSpec {
  switch (spec.type) {
    case 'market':
      return spec;
    case 'limit':
      return { type: 'limit', limitPrice: f(spec.limitPrice) };
    case 'stop':
      return { type: 'stop', stopPrice: f(spec.stopPrice) };
    case 'stopLimit':
      return { type: 'stopLimit', stopPrice: f(spec.stopPrice), limitPrice: f(spec.limitPrice) };
    case 'trailingStop':
      return { type: 'trailingStop', trailPrice: f(spec.trailPrice) };
  }
}

/** An intent's absolute prices back to real ones (bracket distances are relative and stay). */
function realIntent<P>(intent: Intent, adjustment: PriceAdjustment, context: StrategyContext<P>): Intent {
  if (adjustment.identity) return intent;
  if (intent.kind !== 'place' && intent.kind !== 'modify') return intent;
  // Decimal prices (`unit: 'price'`) are moved on the grid and written back as decimals.
  const real =
    intent.unit === 'price'
      ? (price: number) => context.toPrice(adjustment.toReal(context.toTicks(price)))
      : (ticks: number) => adjustment.toReal(ticks);
  if (intent.kind === 'place') return { ...intent, order: mapSpec(intent.order, real) };
  return {
    ...intent,
    ...(intent.limitPrice === undefined ? {} : { limitPrice: real(intent.limitPrice) }),
    ...(intent.stopPrice === undefined ? {} : { stopPrice: real(intent.stopPrice) }),
    ...(intent.trailPrice === undefined ? {} : { trailPrice: real(intent.trailPrice) }),
  };
}
