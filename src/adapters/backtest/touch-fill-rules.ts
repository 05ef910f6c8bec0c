/**
 * The simulated venue's touch rules (the config's `fills.spread`): orders fill at the touch of the book the
 * simulator quotes (src/market/quotes.ts, bar by bar in touch-quotes.ts) instead of at the bar's prices. A
 * market order, a stop once triggered, or a limit that arrives marketable takes the ask (buy) or the bid
 * (sell) of the bar's open or of the trigger moment, walking the book with `partialFills`; a resting limit
 * fills whole when the bar trades through its price and, when the bar only touches it, a level's size
 * (partial fills) once the queue ahead has traded (queue model); brackets follow the filled size. Slippage
 * still applies on top. Trailing stops and the same-bar rule of a bracket pair follow the bar rules'
 * intrabar path (bar-fill-rules.ts).
 */
import type { IdList } from '../../engine/id-list.ts';
import { advanceTrail, trailStopPrice, trailTriggered } from '../../engine/trailing.ts';
import type { BarChunk } from '../../engine/types.ts';
import { queueAhead, takeLiquidity, touch, touchFill, type Quote } from '../../market/quotes.ts';
import { otherLegFirst, type FillRules, type FillRuleSettings, type SameBarRule } from './fill-rules.ts';
import type { TouchQuotes } from './touch-quotes.ts';
import type { VenueBook, VenueOrder } from './venue-book.ts';

const enum Phase {
  Open = 0,
  Inside = 1,
}

/** The bar being matched at the touch; `touched`: resting limits that took their touch fill in it already. */
interface Bar {
  readonly time: number;
  readonly open: number;
  readonly high: number;
  readonly low: number;
  readonly close: number;
  readonly touched: Set<VenueOrder>;
}

export class TouchFillRules implements FillRules {
  readonly followsEveryBar = true;
  private readonly working: IdList<VenueOrder>;
  private readonly slippage: number;
  private readonly stopSlippage: number;
  private readonly sameBar: SameBarRule;

  constructor(
    private readonly book: VenueBook,
    settings: FillRuleSettings,
    private readonly quotes: TouchQuotes,
  ) {
    this.working = book.working;
    this.slippage = settings.slippage;
    this.stopSlippage = settings.stopSlippage;
    this.sameBar = settings.sameBar;
  }

  onBar(chunk: BarChunk, index: number): void {
    const quotes = this.quotes;
    const contractId = chunk.contractId;
    const open = chunk.open[index]!;
    const high = chunk.high[index]!;
    const low = chunk.low[index]!;
    const close = chunk.close[index]!;
    quotes.begin(contractId, open, high, low, chunk.volume[index]!);
    if (this.working.size > 0) this.matchBar(contractId, chunk.time[index]!, open, high, low, close);
    quotes.end(contractId, open, high, low, close, chunk.volume[index]!);
  }

  settleAt(contractId: string, time: number, price: number): void {
    this.matchBar(contractId, time, price, price, price, price);
  }

  private matchBar(contractId: string, time: number, open: number, high: number, low: number, close: number): void {
    const quotes = this.quotes;
    const candidates: VenueOrder[] = [];
    for (let k = 0; k < this.working.size; k++) {
      const order = this.working.at(k);
      if (order.contractId === contractId) candidates.push(order);
    }
    const bar: Bar = { time, open, high, low, close, touched: new Set() };
    const atOpen = quotes.atOpen(open);
    const inside: VenueOrder[] = [];
    for (const order of candidates) {
      if (order.state !== 'working') continue;
      this.atOpen(order, atOpen, bar);
      if (order.state === 'working') inside.push(order);
    }
    for (const order of inside) {
      if (order.state !== 'working') continue;
      const other = order.oco;
      if (other !== null && other.state === 'working') {
        const mine = this.insideLevel(order, bar);
        const theirs = this.insideLevel(other, bar);
        if (
          mine !== undefined &&
          theirs !== undefined &&
          otherLegFirst(this.sameBar, order, mine, theirs, open, close)
        ) {
          this.inside(other, bar);
          continue;
        }
      }
      this.inside(order, bar);
    }
    for (const order of candidates) order.arrived = false;
  }

  /** An order at the bar's open: what arrived trades if it can; what rested trades if the open gapped through it. */
  private atOpen(order: VenueOrder, quote: Quote, bar: Bar): void {
    const s = order.sign;
    switch (order.type) {
      case 'market':
        return this.take(order, quote, undefined, this.slippage, bar, Phase.Open);
      case 'stop':
        if (s * bar.open >= s * order.stopPrice!)
          this.take(order, quote, undefined, this.stopSlippage, bar, Phase.Open);
        return;
      case 'trailingStop': {
        if (trailTriggered(order.trail!, bar.open))
          return this.take(order, quote, undefined, this.stopSlippage, bar, Phase.Open);
        order.trail = advanceTrail(order.trail!, bar.open);
        order.stopPrice = trailStopPrice(order.trail);
        return;
      }
      case 'stopLimit':
        if (!order.triggered) {
          if (s * bar.open < s * order.stopPrice!) return;
          order.triggered = true;
          order.arrived = true;
        }
        return this.limitAtOpen(order, quote, bar);
      case 'limit':
        return this.limitAtOpen(order, quote, bar);
    }
  }

  private limitAtOpen(order: VenueOrder, quote: Quote, bar: Bar): void {
    const s = order.sign;
    if (!order.arrived) {
      // Resting before the bar: an open through its price trades it whole there.
      if (s * bar.open < s * order.limitPrice!)
        this.fill(order, order.size - order.filledSize, bar.open, bar, Phase.Open);
      return;
    }
    const marketable = s * touch(quote, s) <= s * order.limitPrice!;
    if (marketable) this.take(order, quote, order.limitPrice!, 0, bar, Phase.Open);
    if (order.state === 'working' && this.quotes.fills.queue)
      order.queueAhead = marketable ? null : queueAhead(quote, s, order.limitPrice!);
  }

  /** The price at which the bar reaches an order inside it (for the same-bar rule of a bracket pair), or undefined. */
  private insideLevel(order: VenueOrder, bar: Bar): number | undefined {
    const s = order.sign;
    const favourable = s === 1 ? bar.low : bar.high;
    const adverse = s === 1 ? bar.high : bar.low;
    if (order.type === 'limit' || (order.type === 'stopLimit' && order.triggered))
      return s * favourable <= s * order.limitPrice! ? order.limitPrice! : undefined;
    if (order.type === 'stop' || order.type === 'stopLimit')
      return s * adverse >= s * order.stopPrice! ? order.stopPrice! : undefined;
    if (order.type === 'trailingStop')
      return s * adverse >= s * trailStopPrice(order.trail!) ? trailStopPrice(order.trail!) : undefined;
    return undefined;
  }

  /** An order against the bar's range after its open. */
  private inside(order: VenueOrder, bar: Bar): void {
    const quotes = this.quotes;
    const s = order.sign;
    const favourable = s === 1 ? bar.low : bar.high;
    const adverse = s === 1 ? bar.high : bar.low;
    switch (order.type) {
      case 'market':
        return;
      case 'limit':
        return this.limitInside(order, bar);
      case 'stop':
        // Triggered by the last trade reaching the stop while moving toward it: that trade is at the touch.
        if (s * adverse >= s * order.stopPrice!)
          this.take(order, quotes.at(order.stopPrice!, s), undefined, this.stopSlippage, bar, Phase.Inside);
        return;
      case 'stopLimit': {
        if (order.triggered) return this.limitInside(order, bar);
        if (s * adverse < s * order.stopPrice!) return;
        order.triggered = true;
        // Marketable at the trigger, it trades there; otherwise the order of the bar's later prices is
        // unknown, so the limit rests from the next bar.
        const quote = quotes.at(order.stopPrice!, s);
        const marketable = s * touch(quote, s) <= s * order.limitPrice!;
        if (marketable) this.take(order, quote, order.limitPrice!, 0, bar, Phase.Inside);
        else if (quotes.fills.queue) order.queueAhead = queueAhead(quote, s, order.limitPrice!);
        return;
      }
      case 'trailingStop': {
        // Path open -> adverse extreme -> favourable extreme -> close: test, then advance, then test the close.
        let trail = order.trail!;
        let stop = trailStopPrice(trail);
        if (s * adverse >= s * stop)
          return this.take(order, quotes.at(stop, s), undefined, this.stopSlippage, bar, Phase.Inside);
        trail = advanceTrail(trail, favourable);
        stop = trailStopPrice(trail);
        const hit = s * bar.close >= s * stop;
        trail = advanceTrail(trail, bar.close);
        order.trail = trail;
        order.stopPrice = trailStopPrice(trail);
        if (hit) this.take(order, quotes.at(stop, s), undefined, this.stopSlippage, bar, Phase.Inside);
        return;
      }
    }
  }

  /** A resting limit and the bar: through its price it fills whole; touching it, what the queue and a level allow. */
  private limitInside(order: VenueOrder, bar: Bar): void {
    const quotes = this.quotes;
    const s = order.sign;
    const favourable = s === 1 ? bar.low : bar.high;
    const remaining = order.size - order.filledSize;
    if (s * favourable < s * order.limitPrice!)
      return this.fill(order, remaining, order.limitPrice!, bar, Phase.Inside);
    if (favourable !== order.limitPrice! || bar.touched.has(order)) return;
    bar.touched.add(order);
    const { bar: facts, previous } = quotes.bars();
    const { size, ahead } = touchFill(quotes.fills, remaining, order.queueAhead ?? 0, facts, previous);
    if (order.queueAhead !== null) order.queueAhead = ahead;
    if (size > 0) this.fill(order, size, order.limitPrice!, bar, Phase.Inside);
  }

  /** Takes what the quote offers (walking the book with partial fills), never beyond `limit`, `slippage` ticks against it. */
  private take(
    order: VenueOrder,
    quote: Quote,
    limit: number | undefined,
    slippage: number,
    bar: Bar,
    phase: Phase,
  ): void {
    for (const part of takeLiquidity(
      quote,
      order.sign,
      order.size - order.filledSize,
      limit,
      this.quotes.fills.partialFills,
    )) {
      if (order.state !== 'working') return;
      this.fill(order, part.size, part.price + order.sign * slippage, bar, phase);
    }
  }

  /** One fill of `size` contracts of an order at the touch; an entry's bracket legs keep in step with it. */
  private fill(order: VenueOrder, size: number, price: number, bar: Bar, phase: Phase): void {
    this.book.fill(order, size, price, bar.time);
    if (order.bracket !== undefined) this.followEntry(order, size, price, bar, phase);
  }

  /** An entry with brackets traded `size` more: its working legs grow by that, or a new pair is placed at this price. */
  private followEntry(entry: VenueOrder, size: number, price: number, bar: Bar, phase: Phase): void {
    const working = entry.legs?.filter((leg) => leg.state === 'working') ?? [];
    if (working.length > 0) {
      for (const leg of working) this.book.resize(leg, leg.size + size, bar.time);
      return;
    }
    const legs = this.book.placeLegs(entry, price, size, bar.time).filter((leg): leg is VenueOrder => leg !== null);
    entry.legs = legs;
    // The rest of this bar, as without the touch: after the open both legs meet the range (the same-bar
    // rule picks the first); inside the bar only the leg the rule favours.
    const candidates =
      phase === Phase.Open
        ? legs
        : legs.filter((leg) =>
            this.sameBar === 'target-first'
              ? leg.role === 'takeProfit'
              : this.sameBar === 'stop-first' && leg.role === 'stopLoss',
          );
    const reached = candidates
      .map((leg) => [leg, this.insideLevel(leg, bar)] as const)
      .filter((h): h is readonly [VenueOrder, number] => h[1] !== undefined);
    if (reached.length === 0) return;
    let first = reached[0]!;
    if (
      reached.length === 2 &&
      otherLegFirst(this.sameBar, reached[0]![0], reached[0]![1], reached[1]![1], bar.open, bar.close)
    )
      first = reached[1]!;
    this.inside(first[0], bar);
  }
}
