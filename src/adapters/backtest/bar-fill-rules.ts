/**
 * The simulated venue's bar rules: how a working order fills against a bar's open, high, low and close
 * (docs/backtest.md lists them for people). All prices are integer ticks; no float comparison decides a fill.
 *
 * - market: the next bar's open, `slippage` ticks against the order;
 * - limit: the open when the bar opens through the price (better than asked), else the limit price when
 *   the bar's range touches it;
 * - stop: the open when the bar gaps through, else the stop price when touched; `stopSlippage` against;
 * - stop-limit: triggers like a stop, then fills like a limit; a trigger inside the bar fills at once only
 *   when the limit is marketable at the stop price, otherwise the limit rests from the next bar;
 * - trailing stop: inside a bar the price is assumed to go open -> adverse extreme -> favourable extreme ->
 *   close, so the stop is tested before it is advanced;
 * - brackets: the legs placed at an entry's fill meet the rest of its bar; when one bar touches both,
 *   the same-bar rule decides which fills.
 *
 * An order fills whole: the book (venue-book.ts) records it and reports the fill.
 */
import type { IdList } from '../../engine/id-list.ts';
import { advanceTrail, trailStopPrice } from '../../engine/trailing.ts';
import type { BarChunk } from '../../engine/types.ts';
import { otherLegFirst, type FillRules, type FillRuleSettings, type SameBarRule } from './fill-rules.ts';
import type { VenueBook, VenueOrder } from './venue-book.ts';

const enum Phase {
  Open = 0,
  Inside = 1,
}

export class BarFillRules implements FillRules {
  readonly followsEveryBar = false;
  private readonly working: IdList<VenueOrder>;
  private readonly slippage: number;
  private readonly stopSlippage: number;
  private readonly sameBar: SameBarRule;
  /** matchBar's lists of the orders to try (reused: a bar with orders working must not allocate them anew). */
  private readonly atOpen: Array<VenueOrder | undefined> = [];
  private readonly inside: Array<VenueOrder | undefined> = [];
  private matching = false;

  constructor(
    private readonly book: VenueBook,
    settings: FillRuleSettings,
  ) {
    this.working = book.working;
    this.slippage = settings.slippage;
    this.stopSlippage = settings.stopSlippage;
    this.sameBar = settings.sameBar;
  }

  /** Called only while orders are working (`followsEveryBar` false): most bars of a backtest never get here. */
  onBar(chunk: BarChunk, index: number): void {
    this.matchBar(
      chunk.contractId,
      chunk.time[index]!,
      chunk.open[index]!,
      chunk.high[index]!,
      chunk.low[index]!,
      chunk.close[index]!,
    );
  }

  settleAt(contractId: string, time: number, price: number): void {
    if (this.working.size === 0) return;
    this.matchBar(contractId, time, price, price, price, price);
  }

  private matchBar(contractId: string, time: number, open: number, high: number, low: number, close: number): void {
    // A nested call (a subscriber that pushed a bar from inside a fill) gets lists of its own.
    const nested = this.matching;
    const atOpen = nested ? [] : this.atOpen;
    const inside = nested ? [] : this.inside;
    this.matching = true;
    // Iterate over a snapshot: fills add bracket legs and remove orders.
    let candidates = 0;
    for (let k = 0; k < this.working.size; k++) {
      const order = this.working.at(k);
      if (order.contractId === contractId) atOpen[candidates++] = order;
    }
    let waiting = 0;
    try {
      // Phase 1: everything that trades at the open (market orders, gaps through a price).
      for (let k = 0; k < candidates; k++) {
        const order = atOpen[k]!;
        if (order.state !== 'working') continue;
        const price = this.openFill(order, open);
        if (price !== undefined) this.execute(order, price, time, Phase.Open, open, high, low, close);
        else inside[waiting++] = order;
      }
      // Phase 2: prices touched inside the bar. A bracket pair touched together follows the same-bar rule.
      for (let k = 0; k < waiting; k++) {
        const order = inside[k]!;
        if (order.state !== 'working') continue;
        const price = this.insideFill(order, high, low, close);
        if (price === undefined) continue;
        const other = order.oco;
        if (other !== null && other.state === 'working') {
          const otherPrice = this.insideFill(other, high, low, close, true);
          if (otherPrice !== undefined && otherLegFirst(this.sameBar, order, price, otherPrice, open, close)) {
            this.execute(other, otherPrice, time, Phase.Inside, open, high, low, close);
            continue;
          }
        }
        this.execute(order, price, time, Phase.Inside, open, high, low, close);
      }
    } finally {
      // The lists keep their length (and capacity), not the orders.
      for (let k = 0; k < candidates; k++) atOpen[k] = undefined;
      for (let k = 0; k < waiting; k++) inside[k] = undefined;
      this.matching = nested;
    }
  }

  /** Price of a fill at the bar's open, or undefined when the order does not trade there. */
  private openFill(order: VenueOrder, open: number): number | undefined {
    const s = order.sign;
    switch (order.type) {
      case 'market':
        return open + s * this.slippage;
      case 'limit':
        return s * open <= s * order.limitPrice! ? open : undefined;
      case 'stop':
        return s * open >= s * order.stopPrice! ? open + s * this.stopSlippage : undefined;
      case 'stopLimit':
        if (!order.triggered) {
          if (s * open < s * order.stopPrice!) return undefined;
          order.triggered = true;
        }
        return s * open <= s * order.limitPrice! ? open : undefined;
      case 'trailingStop': {
        const stop = trailStopPrice(order.trail!);
        if (s * open >= s * stop) return open + s * this.stopSlippage;
        order.trail = advanceTrail(order.trail!, open);
        order.stopPrice = trailStopPrice(order.trail);
        return undefined;
      }
    }
  }

  /**
   * Price of a fill inside the bar (after the open did not trade it), or undefined. `peek` evaluates without
   * changing trailing or trigger state (used to ask whether the other bracket leg was touched too).
   */
  private insideFill(order: VenueOrder, high: number, low: number, close: number, peek = false): number | undefined {
    const s = order.sign;
    // The extreme a buy order waits for is the low (limit) or the high (stop), and the reverse for a sell.
    const down = s === 1 ? low : -high; // s * (price that favours a buyer's limit)
    const up = s === 1 ? high : -low; // s * (price that triggers a buyer's stop)
    switch (order.type) {
      case 'market':
        return undefined;
      case 'limit':
        return down <= s * order.limitPrice! ? order.limitPrice! : undefined;
      case 'stop':
        return up >= s * order.stopPrice! ? order.stopPrice! + s * this.stopSlippage : undefined;
      case 'stopLimit': {
        if (order.triggered) return down <= s * order.limitPrice! ? order.limitPrice! : undefined;
        if (up < s * order.stopPrice!) return undefined;
        if (!peek) order.triggered = true;
        // Reached at the stop price: fills there when the limit accepts it; otherwise the order of the
        // bar's prices after the trigger is unknown, so the limit waits for the next bar.
        return s * order.stopPrice! <= s * order.limitPrice! ? order.stopPrice! : undefined;
      }
      case 'trailingStop': {
        // Path open -> adverse extreme -> favourable extreme -> close: test, then advance, then test the close.
        let trail = order.trail!;
        let stop = trailStopPrice(trail);
        if (up >= s * stop) return stop + s * this.stopSlippage;
        trail = advanceTrail(trail, s === 1 ? low : high);
        stop = trailStopPrice(trail);
        const hit = s * close >= s * stop;
        if (!peek) {
          trail = advanceTrail(trail, close);
          order.trail = trail;
          order.stopPrice = trailStopPrice(trail);
        }
        return hit ? stop + s * this.stopSlippage : undefined;
      }
    }
  }

  /** The whole order at `price`; an entry with brackets then places its legs, which meet the rest of the bar. */
  private execute(
    order: VenueOrder,
    price: number,
    time: number,
    phase: Phase,
    open: number,
    high: number,
    low: number,
    close: number,
  ): void {
    this.book.fill(order, order.size, price, time);
    if (order.bracket !== undefined) this.attachBracket(order, price, time, phase, open, high, low, close);
  }

  private attachBracket(
    entry: VenueOrder,
    price: number,
    time: number,
    phase: Phase,
    open: number,
    high: number,
    low: number,
    close: number,
  ): void {
    const [stopLoss, takeProfit] = this.book.placeLegs(entry, price, entry.size, time);
    // The rest of this bar: after a fill at the open both legs can be reached by the bar's range (the
    // same-bar rule picks one); after a fill inside the bar the order of the remaining prices is unknown,
    // so only the leg the same-bar rule favours is tested (the stop, by default), the other waits.
    const legs: VenueOrder[] = [];
    if (phase === Phase.Open) {
      if (stopLoss) legs.push(stopLoss);
      if (takeProfit) legs.push(takeProfit);
    } else if (this.sameBar === 'stop-first' && stopLoss) legs.push(stopLoss);
    else if (this.sameBar === 'target-first' && takeProfit) legs.push(takeProfit);
    const hitPrice = (o: VenueOrder): number | undefined => {
      const level = o.role === 'stopLoss' ? o.stopPrice! : o.limitPrice!;
      const reached =
        o.role === 'stopLoss'
          ? o.sign === 1
            ? high >= level
            : low <= level
          : o.sign === 1
            ? low <= level
            : high >= level;
      if (!reached) return undefined;
      return o.role === 'stopLoss' ? level + o.sign * this.stopSlippage : level;
    };
    const hits = legs
      .map((o) => [o, hitPrice(o)] as const)
      .filter((h): h is readonly [VenueOrder, number] => h[1] !== undefined);
    if (hits.length === 0) return;
    let chosen = hits[0]!;
    if (hits.length === 2 && otherLegFirst(this.sameBar, hits[0]![0], hits[0]![1], hits[1]![1], open, close))
      chosen = hits[1]!;
    this.execute(chosen[0], chosen[1], time, Phase.Inside, open, high, low, close);
  }
}
