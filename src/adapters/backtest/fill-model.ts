/**
 * The backtest's venue: a fill model that matches working orders against each bar before the strategies
 * see it (the runner calls `onBar(chunk, i)` first, so an order decided at the close of bar i can only
 * fill from bar i+1: no look-ahead). All prices are integer ticks; no float comparison decides a fill.
 *
 * Rules (docs/backtest.md lists them for people):
 * - market: the next bar's open, `slippageTicks` against the order;
 * - limit: the open when the bar opens through the price (better than asked), else the limit price when
 *   the bar's range touches it;
 * - stop: the open when the bar gaps through, else the stop price when touched; `stopSlippageTicks` against;
 * - stop-limit: triggers like a stop, then fills like a limit; a trigger inside the bar fills at once only
 *   when the limit is marketable at the stop price, otherwise the limit rests from the next bar;
 * - trailing stop: spec 4.1 through `src/engine/trailing.ts`: the distance is |last close - trailPrice| in
 *   whole ticks at acceptance (and again at a `trailPrice` modify); inside a bar the price is assumed to go
 *   open -> adverse extreme -> favourable extreme -> close, so the stop is tested before it is advanced;
 * - brackets: a stop loss and a take profit at `stopLossTicks`/`takeProfitTicks` from the entry's fill,
 *   one-cancels-other; when one bar touches both, `sameBar` decides (default `stop-first`, conservative);
 * - fees: `feePerContractPerSide` times the fill size on every fill.
 *
 * With `touch` (the config's `fills.spread`), orders fill at the touch of the book the simulator quotes
 * (src/market/quotes.ts, bar by bar in touch.ts) instead: a market order, a stop once triggered, or a limit
 * that arrives marketable takes the ask (buy) or the bid (sell) of the bar's open or of the trigger moment,
 * walking the book with `partialFills`; a resting limit fills whole when the bar trades through its price
 * and, when the bar only touches it, a level's size (partial fills) once the queue ahead has traded (queue
 * model); brackets follow the filled size. Slippage still applies on top. Without `touch` nothing of this
 * runs and results are those of the rules above.
 */
import type { Observable } from 'rxjs';
import { IdList } from '../../engine/id-list.ts';
import { Multicast } from '../../engine/multicast.ts';
import { advanceTrail, startTrail, trailStopPrice, trailTriggered, type TrailState } from '../../engine/trailing.ts';
import { lowFirst } from '../../market/path.ts';
import { queueAhead, takeLiquidity, touch, touchFill, type Quote, type TouchFills } from '../../market/quotes.ts';
import { TouchQuotes } from './touch.ts';
import type {
  BarChunk,
  BracketSpec,
  Fill,
  ModifyCommand,
  OrderCommand,
  OrderSpec,
  OrderState,
  OrderUpdate,
  Side,
  Venue,
  VenueEvent,
} from '../../engine/types.ts';
import { TicklineError } from '../../engine/errors.ts';

/**
 * Which of a stop and a target that the same bar touches fills (the other is cancelled). `path`: the one
 * the simulator's intrabar path reaches first (the low first on an up bar, the high first on a down bar).
 */
export type SameBarRule = 'stop-first' | 'target-first' | 'nearest-to-open' | 'path';

export interface FillModelOptions {
  /** Ticks against the order on market fills (>= 0). */
  readonly slippageTicks: number;
  /** Ticks against the order on stop and trailing-stop fills (>= 0); default 0: stops fill at their price. */
  readonly stopSlippageTicks?: number;
  /** Money per contract per side. */
  readonly feePerContractPerSide: number;
  readonly sameBar?: SameBarRule;
  /** Fill at the touch of a quoted book (spread, levels, partial fills, queue); absent: the rules above. */
  readonly touch?: TouchFills;
}

/** One order as the run saw it, in placement order: the order list that is hashed and written out. */
export interface OrderRecord {
  readonly id: string;
  readonly contractId: string;
  readonly side: Side;
  size: number;
  readonly type: OrderSpec['type'];
  limitPrice: number | null;
  stopPrice: number | null;
  trailPrice: number | null;
  /** `entry` for orders the engine placed, `stopLoss` / `takeProfit` for bracket legs. */
  readonly role: 'entry' | 'stopLoss' | 'takeProfit';
  /** Id of the entry for a bracket leg. */
  readonly parentId: string | null;
  readonly placedAt: number;
  state: OrderState;
  /** Average price of the fills so far (ticks; between ticks when parts filled at different prices). */
  fillPrice: number | null;
  /** Time of the last fill. */
  fillTime: number | null;
  /** Contracts filled so far. */
  filledSize: number;
  /** Modifies applied, in order (each one changes the order list hash). */
  modifies: number;
  /** The order as it stands now (what order updates carry). */
  spec: OrderSpec;
}

interface Working {
  readonly record: OrderRecord;
  readonly sign: 1 | -1;
  /** Stop-limit whose stop has been reached: it now works as a limit. */
  triggered: boolean;
  trail: TrailState | null;
  readonly bracket: BracketSpec | undefined;
  /** The other leg of a bracket: filling one cancels it. */
  oco: Working | null;
  /** At the touch: placed (or repriced) since the last bar, so it meets the next open as a new order. */
  arrived: boolean;
  /** At the touch, with the queue model: contracts ahead of it at its limit price (null: none). */
  queueAhead: number | null;
  /** At the touch: working legs of an entry with brackets, which follow its filled size. */
  legs: Working[] | null;
}

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
  readonly touched: Set<Working>;
}

export class FillModel implements Venue {
  readonly events: Observable<VenueEvent>;
  private readonly subject = new Multicast<VenueEvent>();
  private readonly slippage: number;
  private readonly stopSlippage: number;
  private readonly fee: number;
  private readonly sameBar: SameBarRule;
  private readonly quotes: TouchQuotes | undefined;
  /** Working orders in placement order, by id (finished ones leave, so the list stays small over a long run). */
  private readonly working = new IdList<Working>();
  private readonly records: OrderRecord[] = [];
  /** matchBar's lists of the orders to try (reused: a bar with orders working must not allocate them anew). */
  private readonly atOpen: Array<Working | undefined> = [];
  private readonly inside: Array<Working | undefined> = [];
  private matching = false;
  private fillSequence = 0;
  private lastChunk: BarChunk | null = null;
  private lastIndex = -1;
  private readonly lastCloseByContract = new Map<string, number>();

  constructor(options: FillModelOptions) {
    for (const [name, value] of [
      ['slippageTicks', options.slippageTicks],
      ['stopSlippageTicks', options.stopSlippageTicks ?? 0],
    ] as const) {
      if (!Number.isInteger(value) || value < 0)
        throw new RangeError(`${name} must be a whole number of ticks >= 0, got ${value}`);
    }
    if (!(options.feePerContractPerSide >= 0))
      throw new RangeError(`feePerContractPerSide must be >= 0, got ${options.feePerContractPerSide}`);
    this.slippage = options.slippageTicks;
    this.stopSlippage = options.stopSlippageTicks ?? 0;
    this.fee = options.feePerContractPerSide;
    this.sameBar = options.sameBar ?? 'stop-first';
    this.quotes = options.touch === undefined ? undefined : new TouchQuotes(options.touch);
    this.events = this.subject.asObservable();
  }

  listen(listener: (event: VenueEvent) => void): { unsubscribe(): void } {
    return this.subject.listen(listener);
  }

  /** Every order of the run in placement order (bracket legs right after their entry's fill). */
  orders(): readonly OrderRecord[] {
    return this.records;
  }

  /** Last close seen for a contract (ticks), the "last traded price" of the backtest. */
  lastPrice(contractId: string): number | undefined {
    const chunk = this.lastChunk;
    if (chunk !== null && chunk.contractId === contractId) return chunk.close[this.lastIndex];
    return this.lastCloseByContract.get(contractId);
  }

  onBar(chunk: BarChunk, index: number): void {
    const previous = this.lastChunk;
    if (previous !== chunk && previous !== null && previous.contractId !== chunk.contractId) {
      this.lastCloseByContract.set(previous.contractId, previous.close[this.lastIndex]!);
    }
    this.lastChunk = chunk;
    this.lastIndex = index;
    if (this.quotes !== undefined) return this.onBarAtTouch(this.quotes, chunk, index);
    // The hot path of a backtest: most bars have nothing working.
    if (this.working.size === 0) return;
    this.matchBar(
      chunk.contractId,
      chunk.time[index]!,
      chunk.open[index]!,
      chunk.high[index]!,
      chunk.low[index]!,
      chunk.close[index]!,
    );
  }

  /**
   * Matches the working orders of `contractId` against one price, now: the last close before a roll or a
   * gap, where the runner closes a position in the month (or the session) it was opened in. A market
   * order fills there with the usual slippage and fee; nothing else of the bar state moves.
   */
  settleAt(contractId: string, time: number, price: number): void {
    if (this.quotes !== undefined)
      return this.matchBarAtTouch(this.quotes, contractId, time, price, price, price, price);
    if (this.working.size === 0) return;
    this.matchBar(contractId, time, price, price, price, price);
  }

  place(command: OrderCommand): void {
    const problem = invalidOrder(command);
    const o = command.order;
    const record: OrderRecord = {
      id: command.id,
      contractId: command.contractId,
      side: command.side,
      size: command.size,
      type: command.order.type,
      limitPrice: o.type === 'limit' || o.type === 'stopLimit' ? o.limitPrice : null,
      stopPrice: o.type === 'stop' || o.type === 'stopLimit' ? o.stopPrice : null,
      trailPrice: o.type === 'trailingStop' ? o.trailPrice : null,
      role: 'entry',
      parentId: null,
      placedAt: command.decidedAt,
      state: 'working',
      fillPrice: null,
      fillTime: null,
      filledSize: 0,
      modifies: 0,
      spec: o,
    };
    this.records.push(record);
    if (problem !== undefined || this.working.has(command.id)) {
      // Only a duplicate of a working order is caught here; the engine's ids are unique by construction.
      record.state = 'rejected';
      this.emitOrder(record, command.decidedAt, problem ?? `duplicate order id ${command.id}`);
      return;
    }
    let trail: TrailState | null = null;
    if (command.order.type === 'trailingStop') {
      const last = this.lastPrice(command.contractId);
      if (last === undefined) {
        // The gateway rejects a trailing stop when the contract has no last traded price (spec 4.1).
        record.state = 'rejected';
        this.emitOrder(record, command.decidedAt, 'no last traded price to measure the trail from');
        return;
      }
      trail = startTrail(command.side, last, command.order.trailPrice);
      record.stopPrice = trailStopPrice(trail);
    }
    const order: Working = {
      record,
      sign: command.side === 'buy' ? 1 : -1,
      triggered: false,
      trail,
      bracket: command.bracket,
      oco: null,
      arrived: true,
      queueAhead: null,
      legs: null,
    };
    this.working.set(record.id, order);
    this.emitOrder(record, command.decidedAt);
  }

  modify(command: ModifyCommand): void {
    const order = this.working.get(command.orderId);
    const time = this.currentTime();
    if (order === undefined) {
      this.refuseFinished(command.orderId, 'modify', time);
      return;
    }
    const record = order.record;
    const refuse = (reason: string): void => this.emitOrder(record, time, `modify refused: ${reason}`);
    if (command.size !== undefined && (!Number.isInteger(command.size) || command.size <= 0))
      return refuse(`size ${command.size} is not a positive whole number`);
    if (command.size !== undefined && command.size <= record.filledSize)
      return refuse(`size ${command.size} is not more than the ${record.filledSize} contracts already filled`);
    for (const [name, value] of [
      ['limitPrice', command.limitPrice],
      ['stopPrice', command.stopPrice],
      ['trailPrice', command.trailPrice],
    ] as const) {
      if (value !== undefined && !Number.isInteger(value))
        return refuse(`${name} ${value} is not a whole number of ticks`);
    }
    if (command.limitPrice !== undefined && record.limitPrice === null)
      return refuse(`a ${record.type} order has no limit price`);
    if (command.stopPrice !== undefined && record.type !== 'stop' && record.type !== 'stopLimit')
      return refuse(`a ${record.type} order has no stop price to set`);
    if (command.trailPrice !== undefined && record.type !== 'trailingStop')
      return refuse('trailPrice applies to trailing stops only');
    if (command.trailPrice !== undefined) {
      const last = this.lastPrice(record.contractId);
      if (last === undefined) return refuse('no last traded price to measure the trail from');
      order.trail = startTrail(record.side, last, command.trailPrice);
      record.trailPrice = command.trailPrice;
      record.stopPrice = trailStopPrice(order.trail);
    }
    if (command.size !== undefined) record.size = command.size;
    if (command.limitPrice !== undefined) record.limitPrice = command.limitPrice;
    if (command.stopPrice !== undefined) record.stopPrice = command.stopPrice;
    // A new price meets the market as a new order (at the back of the queue).
    if (command.limitPrice !== undefined || command.stopPrice !== undefined || command.trailPrice !== undefined)
      order.arrived = true;
    record.modifies++;
    record.spec = specOf(record);
    this.emitOrder(record, time);
  }

  cancel(orderId: string): void {
    const order = this.working.get(orderId);
    const time = this.currentTime();
    if (order === undefined) {
      this.refuseFinished(orderId, 'cancel', time);
      return;
    }
    this.finish(order, 'cancelled', time);
  }

  /** A modify or cancel of an order that is no longer working is refused with its state; an id never seen is a caller's bug. */
  private refuseFinished(orderId: string, action: 'modify' | 'cancel', time: number): void {
    // Rare, so a scan from the newest order back is cheaper than keeping every finished order indexed.
    for (let k = this.records.length - 1; k >= 0; k--) {
      const record = this.records[k]!;
      if (record.id === orderId) {
        this.emitOrder(record, time, `${action} refused: order is ${record.state}`);
        return;
      }
    }
    throw new UnknownOrderError(orderId, action);
  }

  // ---------------------------------------------------------------- matching

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
      if (order.record.contractId === contractId) atOpen[candidates++] = order;
    }
    let waiting = 0;
    try {
      // Phase 1: everything that trades at the open (market orders, gaps through a price).
      for (let k = 0; k < candidates; k++) {
        const order = atOpen[k]!;
        if (order.record.state !== 'working') continue;
        const price = this.openFill(order, open);
        if (price !== undefined) this.execute(order, price, time, Phase.Open, open, high, low, close);
        else inside[waiting++] = order;
      }
      // Phase 2: prices touched inside the bar. A bracket pair touched together follows the same-bar rule.
      for (let k = 0; k < waiting; k++) {
        const order = inside[k]!;
        if (order.record.state !== 'working') continue;
        const price = this.insideFill(order, open, high, low, close);
        if (price === undefined) continue;
        const other = order.oco;
        if (other !== null && other.record.state === 'working') {
          const otherPrice = this.insideFill(other, open, high, low, close, true);
          if (otherPrice !== undefined && this.otherLegFirst(order, price, other, otherPrice, open, close)) {
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
  private openFill(order: Working, open: number): number | undefined {
    const r = order.record;
    const s = order.sign;
    switch (r.type) {
      case 'market':
        return open + s * this.slippage;
      case 'limit':
        return s * open <= s * r.limitPrice! ? open : undefined;
      case 'stop':
        return s * open >= s * r.stopPrice! ? open + s * this.stopSlippage : undefined;
      case 'stopLimit':
        if (!order.triggered) {
          if (s * open < s * r.stopPrice!) return undefined;
          order.triggered = true;
        }
        return s * open <= s * r.limitPrice! ? open : undefined;
      case 'trailingStop': {
        const stop = trailStopPrice(order.trail!);
        if (s * open >= s * stop) return open + s * this.stopSlippage;
        order.trail = advanceTrail(order.trail!, open);
        r.stopPrice = trailStopPrice(order.trail);
        return undefined;
      }
    }
  }

  /**
   * Price of a fill inside the bar (after the open did not trade it), or undefined. `peek` evaluates without
   * changing trailing or trigger state (used to ask whether the other bracket leg was touched too).
   */
  private insideFill(
    order: Working,
    _open: number,
    high: number,
    low: number,
    close: number,
    peek = false,
  ): number | undefined {
    const r = order.record;
    const s = order.sign;
    // The extreme a buy order waits for is the low (limit) or the high (stop), and the reverse for a sell.
    const down = s === 1 ? low : -high; // s * (price that favours a buyer's limit)
    const up = s === 1 ? high : -low; // s * (price that triggers a buyer's stop)
    switch (r.type) {
      case 'market':
        return undefined;
      case 'limit':
        return down <= s * r.limitPrice! ? r.limitPrice! : undefined;
      case 'stop':
        return up >= s * r.stopPrice! ? r.stopPrice! + s * this.stopSlippage : undefined;
      case 'stopLimit': {
        if (order.triggered) return down <= s * r.limitPrice! ? r.limitPrice! : undefined;
        if (up < s * r.stopPrice!) return undefined;
        if (!peek) order.triggered = true;
        // Reached at the stop price: fills there when the limit accepts it; otherwise the order of the
        // bar's prices after the trigger is unknown, so the limit waits for the next bar.
        return s * r.stopPrice! <= s * r.limitPrice! ? r.stopPrice! : undefined;
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
          r.stopPrice = trailStopPrice(trail);
        }
        return hit ? stop + s * this.stopSlippage : undefined;
      }
    }
  }

  /** For a bracket pair both touched inside one bar: true when `other` fills instead of `order`. */
  private otherLegFirst(
    order: Working,
    price: number,
    _other: Working,
    otherPrice: number,
    open: number,
    close: number,
  ): boolean {
    const orderIsStop = order.record.role === 'stopLoss';
    switch (this.sameBar) {
      case 'stop-first':
        return !orderIsStop;
      case 'target-first':
        return orderIsStop;
      case 'nearest-to-open': {
        const mine = Math.abs(price - open);
        const theirs = Math.abs(otherPrice - open);
        return theirs < mine || (theirs === mine && !orderIsStop);
      }
      case 'path':
        // The legs sit on either side of the entry: the one on the side the path visits first goes first.
        return lowFirst(open, close) ? otherPrice < price : otherPrice > price;
    }
  }

  private execute(
    order: Working,
    price: number,
    time: number,
    phase: Phase,
    open: number,
    high: number,
    low: number,
    close: number,
  ): void {
    const r = order.record;
    r.fillPrice = price;
    r.fillTime = time;
    r.filledSize = r.size;
    const fill: Fill = {
      kind: 'fill',
      fillId: `F${++this.fillSequence}`,
      orderId: r.id,
      contractId: r.contractId,
      side: r.side,
      size: r.size,
      price,
      fees: this.fee * r.size,
      time,
    };
    this.finish(order, 'filled', time);
    this.subject.next(fill);
    if (order.oco !== null && order.oco.record.state === 'working')
      this.finish(order.oco, 'cancelled', time, 'other bracket leg filled');
    if (order.bracket !== undefined) this.attachBracket(order, price, time, phase, open, high, low, close);
  }

  private attachBracket(
    entry: Working,
    price: number,
    time: number,
    phase: Phase,
    open: number,
    high: number,
    low: number,
    close: number,
  ): void {
    const [stopLoss, takeProfit] = this.placeLegs(entry, price, entry.record.size, time);
    // The rest of this bar: after a fill at the open both legs can be reached by the bar's range (the
    // same-bar rule picks one); after a fill inside the bar the order of the remaining prices is unknown,
    // so only the leg the same-bar rule favours is tested (the stop, by default), the other waits.
    const legs: Working[] = [];
    if (phase === Phase.Open) {
      if (stopLoss) legs.push(stopLoss);
      if (takeProfit) legs.push(takeProfit);
    } else if (this.sameBar === 'stop-first' && stopLoss) legs.push(stopLoss);
    else if (this.sameBar === 'target-first' && takeProfit) legs.push(takeProfit);
    const hitPrice = (o: Working): number | undefined => {
      const level = o.record.role === 'stopLoss' ? o.record.stopPrice! : o.record.limitPrice!;
      const reached =
        o.record.role === 'stopLoss'
          ? o.sign === 1
            ? high >= level
            : low <= level
          : o.sign === 1
            ? low <= level
            : high >= level;
      if (!reached) return undefined;
      return o.record.role === 'stopLoss' ? level + o.sign * this.stopSlippage : level;
    };
    const hits = legs
      .map((o) => [o, hitPrice(o)] as const)
      .filter((h): h is readonly [Working, number] => h[1] !== undefined);
    if (hits.length === 0) return;
    let chosen = hits[0]!;
    if (hits.length === 2 && this.otherLegFirst(hits[0]![0], hits[0]![1], hits[1]![0], hits[1]![1], open, close))
      chosen = hits[1]!;
    this.execute(chosen[0], chosen[1], time, Phase.Inside, open, high, low, close);
  }

  /** The stop-loss and take-profit legs of a bracket for `size` contracts filled at `price`, one-cancels-other. */
  private placeLegs(entry: Working, price: number, size: number, time: number): [Working | null, Working | null] {
    const { stopLossTicks, takeProfitTicks } = entry.bracket!;
    const exitSide: Side = entry.sign === 1 ? 'sell' : 'buy';
    const s = entry.sign;
    const leg = (role: 'stopLoss' | 'takeProfit', ticks: number): Working => {
      const isStop = role === 'stopLoss';
      const level = isStop ? price - s * ticks : price + s * ticks;
      const record: OrderRecord = {
        // `<entry id>:sl`: the engine files venue-created orders under the id's prefix before its last '-', so a
        // leg of `<strategy>-<n>` belongs to that strategy (its openOrders() lists it).
        id: `${entry.record.id}:${isStop ? 'sl' : 'tp'}${entry.legs === null ? '' : `.${this.records.length}`}`,
        contractId: entry.record.contractId,
        side: exitSide,
        size,
        type: isStop ? 'stop' : 'limit',
        limitPrice: isStop ? null : level,
        stopPrice: isStop ? level : null,
        trailPrice: null,
        role,
        parentId: entry.record.id,
        placedAt: time,
        state: 'working',
        fillPrice: null,
        fillTime: null,
        filledSize: 0,
        modifies: 0,
        spec: isStop ? { type: 'stop', stopPrice: level } : { type: 'limit', limitPrice: level },
      };
      this.records.push(record);
      const order: Working = {
        record,
        sign: exitSide === 'buy' ? 1 : -1,
        triggered: false,
        trail: null,
        bracket: undefined,
        oco: null,
        arrived: false,
        queueAhead: null,
        legs: null,
      };
      this.working.set(record.id, order);
      this.emitOrder(record, time);
      return order;
    };
    const stopLoss = stopLossTicks === undefined ? null : leg('stopLoss', stopLossTicks);
    const takeProfit = takeProfitTicks === undefined ? null : leg('takeProfit', takeProfitTicks);
    if (stopLoss !== null && takeProfit !== null) {
      stopLoss.oco = takeProfit;
      takeProfit.oco = stopLoss;
    }
    return [stopLoss, takeProfit];
  }

  // ---------------------------------------------------------------- matching at the touch

  private onBarAtTouch(quotes: TouchQuotes, chunk: BarChunk, index: number): void {
    const contractId = chunk.contractId;
    const open = chunk.open[index]!;
    const high = chunk.high[index]!;
    const low = chunk.low[index]!;
    const close = chunk.close[index]!;
    quotes.begin(contractId, open, high, low, chunk.volume[index]!);
    if (this.working.size > 0) this.matchBarAtTouch(quotes, contractId, chunk.time[index]!, open, high, low, close);
    quotes.end(contractId, open, high, low, close, chunk.volume[index]!);
  }

  private matchBarAtTouch(
    quotes: TouchQuotes,
    contractId: string,
    time: number,
    open: number,
    high: number,
    low: number,
    close: number,
  ): void {
    const candidates: Working[] = [];
    for (let k = 0; k < this.working.size; k++) {
      const order = this.working.at(k);
      if (order.record.contractId === contractId) candidates.push(order);
    }
    const bar: Bar = { time, open, high, low, close, touched: new Set() };
    const atOpen = quotes.atOpen(open);
    const inside: Working[] = [];
    for (const order of candidates) {
      if (order.record.state !== 'working') continue;
      this.openAtTouch(quotes, order, atOpen, bar);
      if (order.record.state === 'working') inside.push(order);
    }
    for (const order of inside) {
      if (order.record.state !== 'working') continue;
      const other = order.oco;
      if (other !== null && other.record.state === 'working') {
        const mine = this.insideLevel(order, bar);
        const theirs = this.insideLevel(other, bar);
        if (mine !== undefined && theirs !== undefined && this.otherLegFirst(order, mine, other, theirs, open, close)) {
          this.insideAtTouch(quotes, other, bar);
          continue;
        }
      }
      this.insideAtTouch(quotes, order, bar);
    }
    for (const order of candidates) order.arrived = false;
  }

  /** An order at the bar's open: what arrived trades if it can; what rested trades if the open gapped through it. */
  private openAtTouch(quotes: TouchQuotes, order: Working, quote: Quote, bar: Bar): void {
    const r = order.record;
    const s = order.sign;
    switch (r.type) {
      case 'market':
        return this.takeAtTouch(quotes, order, quote, undefined, this.slippage, bar, Phase.Open);
      case 'stop':
        if (s * bar.open >= s * r.stopPrice!)
          this.takeAtTouch(quotes, order, quote, undefined, this.stopSlippage, bar, Phase.Open);
        return;
      case 'trailingStop': {
        if (trailTriggered(order.trail!, bar.open))
          return this.takeAtTouch(quotes, order, quote, undefined, this.stopSlippage, bar, Phase.Open);
        order.trail = advanceTrail(order.trail!, bar.open);
        r.stopPrice = trailStopPrice(order.trail);
        return;
      }
      case 'stopLimit':
        if (!order.triggered) {
          if (s * bar.open < s * r.stopPrice!) return;
          order.triggered = true;
          order.arrived = true;
        }
        return this.limitAtOpen(quotes, order, quote, bar);
      case 'limit':
        return this.limitAtOpen(quotes, order, quote, bar);
    }
  }

  private limitAtOpen(quotes: TouchQuotes, order: Working, quote: Quote, bar: Bar): void {
    const r = order.record;
    const s = order.sign;
    if (!order.arrived) {
      // Resting before the bar: an open through its price trades it whole there.
      if (s * bar.open < s * r.limitPrice!) this.fillAtTouch(order, r.size - r.filledSize, bar.open, bar, Phase.Open);
      return;
    }
    const marketable = s * touch(quote, s) <= s * r.limitPrice!;
    if (marketable) this.takeAtTouch(quotes, order, quote, r.limitPrice!, 0, bar, Phase.Open);
    if (r.state === 'working' && quotes.fills.queue)
      order.queueAhead = marketable ? null : queueAhead(quote, s, r.limitPrice!);
  }

  /** The price at which the bar reaches an order inside it (for the same-bar rule of a bracket pair), or undefined. */
  private insideLevel(order: Working, bar: Bar): number | undefined {
    const r = order.record;
    const s = order.sign;
    const favourable = s === 1 ? bar.low : bar.high;
    const adverse = s === 1 ? bar.high : bar.low;
    if (r.type === 'limit' || (r.type === 'stopLimit' && order.triggered))
      return s * favourable <= s * r.limitPrice! ? r.limitPrice! : undefined;
    if (r.type === 'stop' || r.type === 'stopLimit') return s * adverse >= s * r.stopPrice! ? r.stopPrice! : undefined;
    if (r.type === 'trailingStop')
      return s * adverse >= s * trailStopPrice(order.trail!) ? trailStopPrice(order.trail!) : undefined;
    return undefined;
  }

  /** An order against the bar's range after its open. */
  private insideAtTouch(quotes: TouchQuotes, order: Working, bar: Bar): void {
    const r = order.record;
    const s = order.sign;
    const favourable = s === 1 ? bar.low : bar.high;
    const adverse = s === 1 ? bar.high : bar.low;
    switch (r.type) {
      case 'market':
        return;
      case 'limit':
        return this.limitInside(quotes, order, bar);
      case 'stop':
        // Triggered by the last trade reaching the stop while moving toward it: that trade is at the touch.
        if (s * adverse >= s * r.stopPrice!)
          this.takeAtTouch(quotes, order, quotes.at(r.stopPrice!, s), undefined, this.stopSlippage, bar, Phase.Inside);
        return;
      case 'stopLimit': {
        if (order.triggered) return this.limitInside(quotes, order, bar);
        if (s * adverse < s * r.stopPrice!) return;
        order.triggered = true;
        // Marketable at the trigger, it trades there; otherwise the order of the bar's later prices is
        // unknown, so the limit rests from the next bar.
        const quote = quotes.at(r.stopPrice!, s);
        const marketable = s * touch(quote, s) <= s * r.limitPrice!;
        if (marketable) this.takeAtTouch(quotes, order, quote, r.limitPrice!, 0, bar, Phase.Inside);
        else if (quotes.fills.queue) order.queueAhead = queueAhead(quote, s, r.limitPrice!);
        return;
      }
      case 'trailingStop': {
        // Path open -> adverse extreme -> favourable extreme -> close: test, then advance, then test the close.
        let trail = order.trail!;
        let stop = trailStopPrice(trail);
        if (s * adverse >= s * stop)
          return this.takeAtTouch(quotes, order, quotes.at(stop, s), undefined, this.stopSlippage, bar, Phase.Inside);
        trail = advanceTrail(trail, favourable);
        stop = trailStopPrice(trail);
        const hit = s * bar.close >= s * stop;
        trail = advanceTrail(trail, bar.close);
        order.trail = trail;
        r.stopPrice = trailStopPrice(trail);
        if (hit) this.takeAtTouch(quotes, order, quotes.at(stop, s), undefined, this.stopSlippage, bar, Phase.Inside);
        return;
      }
    }
  }

  /** A resting limit and the bar: through its price it fills whole; touching it, what the queue and a level allow. */
  private limitInside(quotes: TouchQuotes, order: Working, bar: Bar): void {
    const r = order.record;
    const s = order.sign;
    const favourable = s === 1 ? bar.low : bar.high;
    const remaining = r.size - r.filledSize;
    if (s * favourable < s * r.limitPrice!) return this.fillAtTouch(order, remaining, r.limitPrice!, bar, Phase.Inside);
    if (favourable !== r.limitPrice! || bar.touched.has(order)) return;
    bar.touched.add(order);
    const { bar: facts, previous } = quotes.bars();
    const { size, ahead } = touchFill(quotes.fills, remaining, order.queueAhead ?? 0, facts, previous);
    if (order.queueAhead !== null) order.queueAhead = ahead;
    if (size > 0) this.fillAtTouch(order, size, r.limitPrice!, bar, Phase.Inside);
  }

  /** Takes what the quote offers (walking the book with partial fills), never beyond `limit`, `slippage` ticks against it. */
  private takeAtTouch(
    quotes: TouchQuotes,
    order: Working,
    quote: Quote,
    limit: number | undefined,
    slippage: number,
    bar: Bar,
    phase: Phase,
  ): void {
    const r = order.record;
    for (const part of takeLiquidity(quote, order.sign, r.size - r.filledSize, limit, quotes.fills.partialFills)) {
      if (r.state !== 'working') return;
      this.fillAtTouch(order, part.size, part.price + order.sign * slippage, bar, phase);
    }
  }

  /** One fill of `size` contracts of an order at the touch: its record, the fill, bracket legs in step with it. */
  private fillAtTouch(order: Working, size: number, price: number, bar: Bar, phase: Phase): void {
    const r = order.record;
    r.fillPrice = r.filledSize === 0 ? price : (r.fillPrice! * r.filledSize + price * size) / (r.filledSize + size);
    r.filledSize += size;
    r.fillTime = bar.time;
    const fill: Fill = {
      kind: 'fill',
      fillId: `F${++this.fillSequence}`,
      orderId: r.id,
      contractId: r.contractId,
      side: r.side,
      size,
      price,
      fees: this.fee * size,
      time: bar.time,
    };
    const complete = r.filledSize >= r.size;
    if (complete) this.finish(order, 'filled', bar.time);
    this.subject.next(fill);
    if (!complete) this.emitOrder(r, bar.time);
    const other = order.oco;
    if (other !== null && other.record.state === 'working') {
      // A leg traded: its sibling protects that many contracts fewer, and goes once it protects none.
      const left = complete ? other.record.filledSize : other.record.size - size;
      if (left <= other.record.filledSize) this.finish(other, 'cancelled', bar.time, 'other bracket leg filled');
      else this.resize(other, left, bar.time);
    }
    if (order.bracket !== undefined) this.followEntry(order, size, price, bar, phase);
  }

  /** An entry with brackets traded `size` more: its working legs grow by that, or a new pair is placed at this price. */
  private followEntry(entry: Working, size: number, price: number, bar: Bar, phase: Phase): void {
    const working = entry.legs?.filter((leg) => leg.record.state === 'working') ?? [];
    if (working.length > 0) {
      for (const leg of working) this.resize(leg, leg.record.size + size, bar.time);
      return;
    }
    const legs = this.placeLegs(entry, price, size, bar.time).filter((leg): leg is Working => leg !== null);
    entry.legs = legs;
    // The rest of this bar, as without the touch: after the open both legs meet the range (the same-bar
    // rule picks the first); inside the bar only the leg the rule favours.
    const quotes = this.quotes!;
    const candidates =
      phase === Phase.Open
        ? legs
        : legs.filter((leg) =>
            this.sameBar === 'target-first'
              ? leg.record.role === 'takeProfit'
              : this.sameBar === 'stop-first' && leg.record.role === 'stopLoss',
          );
    const reached = candidates
      .map((leg) => [leg, this.insideLevel(leg, bar)] as const)
      .filter((h): h is readonly [Working, number] => h[1] !== undefined);
    if (reached.length === 0) return;
    let first = reached[0]!;
    if (
      reached.length === 2 &&
      this.otherLegFirst(reached[0]![0], reached[0]![1], reached[1]![0], reached[1]![1], bar.open, bar.close)
    )
      first = reached[1]!;
    this.insideAtTouch(quotes, first[0], bar);
  }

  private resize(order: Working, size: number, time: number): void {
    order.record.size = size;
    this.emitOrder(order.record, time);
  }

  private finish(order: Working, state: OrderState, time: number, reason?: string): void {
    order.record.state = state;
    this.working.delete(order.record.id);
    this.emitOrder(order.record, time, reason);
  }

  private emitOrder(record: OrderRecord, time: number, reason?: string): void {
    const update: { -readonly [K in keyof OrderUpdate]: OrderUpdate[K] } = {
      kind: 'order',
      orderId: record.id,
      state: record.state,
      time,
      contractId: record.contractId,
      side: record.side,
      size: record.size,
      filledSize: record.filledSize,
      order: record.spec,
    };
    if (reason !== undefined) update.reason = reason;
    this.subject.next(update);
  }

  private currentTime(): number {
    const chunk = this.lastChunk;
    return chunk === null ? 0 : chunk.time[this.lastIndex]!;
  }
}

export class UnknownOrderError extends TicklineError {
  override readonly name = 'UnknownOrderError';
  readonly kind = 'runtime';
  readonly code = 'UNKNOWN_ORDER';
  constructor(
    readonly orderId: string,
    readonly action: 'modify' | 'cancel',
  ) {
    super(`${action} of unknown order ${orderId}`);
  }
}

function specOf(r: OrderRecord): OrderSpec {
  switch (r.type) {
    case 'market':
      return { type: 'market' };
    case 'limit':
      return { type: 'limit', limitPrice: r.limitPrice! };
    case 'stop':
      return { type: 'stop', stopPrice: r.stopPrice! };
    case 'stopLimit':
      return { type: 'stopLimit', stopPrice: r.stopPrice!, limitPrice: r.limitPrice! };
    case 'trailingStop':
      return { type: 'trailingStop', trailPrice: r.trailPrice! };
  }
}

function invalidOrder(command: OrderCommand): string | undefined {
  if (!Number.isInteger(command.size) || command.size <= 0)
    return `size ${command.size} is not a positive whole number`;
  const o = command.order;
  let problem: string | undefined;
  switch (o.type) {
    case 'market':
      break;
    case 'limit':
      problem = whole('limitPrice', o.limitPrice);
      break;
    case 'stop':
      problem = whole('stopPrice', o.stopPrice);
      break;
    case 'stopLimit':
      problem = whole('stopPrice', o.stopPrice) ?? whole('limitPrice', o.limitPrice);
      break;
    case 'trailingStop':
      problem = whole('trailPrice', o.trailPrice);
      break;
  }
  if (problem !== undefined) return problem;
  const b = command.bracket;
  if (b !== undefined) {
    for (const [name, value] of [
      ['stopLossTicks', b.stopLossTicks],
      ['takeProfitTicks', b.takeProfitTicks],
    ] as const) {
      if (value !== undefined && (!Number.isInteger(value) || value <= 0))
        return `bracket ${name} ${value} is not a positive whole number of ticks`;
    }
  }
  return undefined;
}

// Module level, not a closure inside invalidOrder: under tsx (keepNames) every closure created per order
// also pays a defineProperty of its name, which showed in the bench's profile of a million-bar run.
function whole(name: string, value: number): string | undefined {
  return Number.isInteger(value) ? undefined : `${name} ${value} is not a whole number of ticks`;
}
