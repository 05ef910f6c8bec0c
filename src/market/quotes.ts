/**
 * The book both venues quote from bar data (prices in ticks): a best bid and a best ask around the last
 * trade, levels of equal size behind them, and the rules that turn an order into fills at the touch. The
 * simulator and the backtest's fill model both call these functions, so a paper run and a backtest with
 * the same options fill the same orders at the same prices.
 *
 * - **Where the last trade sits** (the tick rule): after an up move the last trade lifted the offer, so it
 *   is the ask and the bid is `spread` ticks below; after a down move it hit the bid. A buy that takes
 *   liquidity pays the spread only when the market last moved down, half the time on average.
 * - **Spread**: fixed ticks, or scaled by the volatility of the bar before (one more tick per
 *   `rangeTicksPerTick` ticks of its range) and widened when that bar traded thin (nights).
 * - **Book**: every level holds the same size, a share of the bar before's volume (bounded); a market
 *   order larger than the top walks down the levels one tick at a time (the book has as many as needed).
 * - **Queue**: a resting limit order waits behind the size shown at its price when it arrived; the
 *   volume a bar trades at one price level (its volume spread evenly over its range) works through it.
 */
import { z } from 'zod';

export const spreadModelSchema = z.discriminatedUnion('type', [
  /** Always this many ticks (0: bid = ask = last). */
  z.strictObject({ type: z.literal('fixed'), ticks: z.number().int().nonnegative() }),
  z
    .strictObject({
      type: z.literal('volatility'),
      minTicks: z.number().int().min(1).default(1),
      maxTicks: z.number().int().min(1).default(4),
      /** One more tick of spread for every this-many ticks of the previous bar's range. */
      rangeTicksPerTick: z.number().positive(),
      /** A previous bar with less volume than this widens the spread by `thinTicks` (a thin book). */
      thinVolume: z.number().nonnegative().default(0),
      thinTicks: z.number().int().nonnegative().default(1),
    })
    .refine((m) => m.maxTicks >= m.minTicks, { message: 'maxTicks must be at least minTicks', path: ['maxTicks'] }),
]);
export type SpreadModel = z.output<typeof spreadModelSchema>;

export const bookModelSchema = z
  .strictObject({
    /** Size at each price level: this share of the previous bar's volume, within [minSize, maxSize]. */
    sizeShare: z.number().positive().default(0.25),
    minSize: z.number().int().min(1).default(1),
    maxSize: z.number().int().min(1).default(1000),
    /** Levels per side that depth (the realtime market hub) shows. */
    levels: z.number().int().min(1).max(20).default(5),
  })
  .refine((b) => b.maxSize >= b.minSize, { message: 'maxSize must be at least minSize', path: ['maxSize'] });
export type BookModel = z.output<typeof bookModelSchema>;
export const DEFAULT_BOOK: BookModel = bookModelSchema.parse({});

/** How a venue fills orders at the touch. */
export interface TouchFills {
  readonly spread: SpreadModel;
  readonly book: BookModel;
  /** Orders larger than a level fill in parts: a market order walks the book, a resting limit takes a level per bar. */
  readonly partialFills: boolean;
  /** Resting limit orders wait behind the size ahead of them. */
  readonly queue: boolean;
}

/** What the quote of a bar is computed from: the bar before it (or the bar itself when it is the first). */
export interface BarFacts {
  readonly high: number;
  readonly low: number;
  readonly volume: number;
}

export interface Quote {
  readonly bid: number;
  readonly ask: number;
  readonly bidSize: number;
  readonly askSize: number;
}

export interface PartFill {
  readonly price: number;
  readonly size: number;
}

export function spreadTicks(model: SpreadModel, previous: BarFacts): number {
  if (model.type === 'fixed') return model.ticks;
  const widened =
    model.minTicks +
    Math.floor((previous.high - previous.low) / model.rangeTicksPerTick) +
    (previous.volume < model.thinVolume ? model.thinTicks : 0);
  return Math.min(model.maxTicks, Math.max(model.minTicks, widened));
}

export function levelSize(book: BookModel, previous: BarFacts): number {
  return Math.min(book.maxSize, Math.max(book.minSize, Math.round(previous.volume * book.sizeShare)));
}

/** The quote around a last trade at `last` that moved in `direction` (0 reads as up). */
export function quoteAround(last: number, direction: number, spread: number, size: number): Quote {
  return direction < 0
    ? { bid: last, ask: last + spread, bidSize: size, askSize: size }
    : { bid: last - spread, ask: last, bidSize: size, askSize: size };
}

export function quoteOf(fills: TouchFills, last: number, direction: number, previous: BarFacts): Quote {
  return quoteAround(last, direction, spreadTicks(fills.spread, previous), levelSize(fills.book, previous));
}

/** The price an order that takes liquidity meets first: the ask for a buy (`sign` 1), the bid for a sell. */
export function touch(quote: Quote, sign: 1 | -1): number {
  return sign === 1 ? quote.ask : quote.bid;
}

/**
 * Fills of an order of `size` that takes liquidity from `quote`, never beyond `limit` (a limit order; a
 * market order has none). Without partial fills the whole order trades at the touch when the touch is
 * within the limit. With them it walks the book one level (one tick, `levelSize` contracts) at a time, as
 * far as the limit allows: what is left rests.
 */
export function takeLiquidity(
  quote: Quote,
  sign: 1 | -1,
  size: number,
  limit: number | undefined,
  partialFills: boolean,
): PartFill[] {
  const first = touch(quote, sign);
  if (limit !== undefined && sign * first > sign * limit) return [];
  if (!partialFills) return [{ price: first, size }];
  const perLevel = sign === 1 ? quote.askSize : quote.bidSize;
  const fills: PartFill[] = [];
  for (let left = size, price = first; left > 0; price += sign) {
    if (limit !== undefined && sign * price > sign * limit) break;
    const part = Math.min(left, perLevel);
    fills.push({ price, size: part });
    left -= part;
  }
  return fills;
}

/** Levels of depth on each side of a quote (the realtime market hub's book), best first. */
export function depthOf(quote: Quote, levels: number): { bids: PartFill[]; asks: PartFill[] } {
  const bids: PartFill[] = [];
  const asks: PartFill[] = [];
  for (let k = 0; k < levels; k++) {
    bids.push({ price: quote.bid - k, size: quote.bidSize });
    asks.push({ price: quote.ask + k, size: quote.askSize });
  }
  return { bids, asks };
}

/** Contracts a bar trades at one price level: its volume spread evenly over the ticks of its range (at least 1). */
export function levelVolume(bar: BarFacts): number {
  return Math.max(1, Math.floor(bar.volume / (bar.high - bar.low + 1)));
}

/**
 * The size ahead of a limit order that starts to rest at `limit`: nothing when it improves on the best
 * price of its side (a new level), else the size shown at a level (it joins the back of the queue).
 */
export function queueAhead(quote: Quote, sign: 1 | -1, limit: number): number {
  const best = sign === 1 ? quote.bid : quote.ask;
  return sign * limit > sign * best ? 0 : sign === 1 ? quote.bidSize : quote.askSize;
}

/**
 * One bar's touch of a resting limit order's price without trading through it. Returns the contracts it
 * fills (at its limit) and the size still ahead. The queue model lets the level's volume work through the
 * size ahead first; partial fills cap a touch at one level's size. Trading through a limit fills it whole
 * and is not decided here.
 */
export function touchFill(
  fills: TouchFills,
  remaining: number,
  ahead: number,
  bar: BarFacts,
  previous: BarFacts,
): { size: number; ahead: number } {
  let available = Number.POSITIVE_INFINITY;
  let stillAhead = ahead;
  if (fills.queue) {
    const traded = levelVolume(bar);
    if (traded <= ahead) return { size: 0, ahead: ahead - traded };
    available = traded - ahead;
    stillAhead = 0;
  }
  if (!fills.partialFills) return { size: available > 0 ? remaining : 0, ahead: stillAhead };
  return { size: Math.min(remaining, available, levelSize(fills.book, previous)), ahead: stillAhead };
}
