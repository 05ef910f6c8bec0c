/**
 * The backtest's venue: it takes the engine's orders (place, modify, cancel), keeps them in its book
 * (venue-book.ts: working orders, bracket legs one-cancels-other, the order list, the events it reports)
 * and matches them against each bar before the strategies see it (the runner calls `onBar(chunk, i)`
 * first, so an order decided at the close of bar i can only fill from bar i+1: no look-ahead).
 *
 * How an order fills is its fill rules', one family chosen here from the options: the bar rules
 * (bar-fill-rules.ts: the bar's open, high, low and close) or, with `touch` (the config's `fills.spread`),
 * the touch rules (touch-fill-rules.ts: the quoted book, its levels and queue). Without `touch` nothing of
 * the touch runs and results are those of the bar rules. Both share:
 * - slippage: `slippageTicks` against market fills, `stopSlippageTicks` against stop and trailing-stop fills;
 * - trailing stop: spec 4.1 through `src/engine/trailing.ts`: the distance is |last close - trailPrice| in
 *   whole ticks at acceptance (and again at a `trailPrice` modify), measured here;
 * - brackets: a stop loss and a take profit at `stopLossTicks`/`takeProfitTicks` from the entry's fill,
 *   one-cancels-other; when one bar touches both, `sameBar` decides (default `stop-first`, conservative);
 * - fees: `feePerContractPerSide` times the fill size on every fill.
 * docs/backtest.md lists the rules for people. All prices are integer ticks.
 */
import type { Observable } from 'rxjs';
import type { BlockSpill } from '../../engine/column-blocks.ts';
import type { BlockLease } from '../../engine/block-stock.ts';
import { TicklineError } from '../../engine/errors.ts';
import type { IdList } from '../../engine/id-list.ts';
import { startTrail, trailStopPrice } from '../../engine/trailing.ts';
import type {
  BarChunk,
  ModifyCommand,
  OrderCommand,
  OrderSpec,
  Venue,
  VenueEvent,
  VenueTraits,
} from '../../engine/types.ts';
import type { TouchFills } from '../../market/quotes.ts';
import { BarFillRules } from './bar-fill-rules.ts';
import type { FillRules, SameBarRule } from './fill-rules.ts';
import { TouchFillRules } from './touch-fill-rules.ts';
import { TouchQuotes } from './touch-quotes.ts';
import { VenueBook, type OrderRecord, type VenueOrder } from './venue-book.ts';

export type { SameBarRule } from './fill-rules.ts';
export type { OrderRecord } from './venue-book.ts';

export interface FillModelOptions {
  /** Ticks against the order on market fills (>= 0). */
  readonly slippageTicks: number;
  /** Ticks against the order on stop and trailing-stop fills (>= 0); default 0: stops fill at their price. */
  readonly stopSlippageTicks?: number;
  /** Money per contract per side. */
  readonly feePerContractPerSide: number;
  readonly sameBar?: SameBarRule;
  /** Fill at the touch of a quoted book (spread, levels, partial fills, queue); absent: the bar rules. */
  readonly touch?: TouchFills;
}

/**
 * What the simulated venue is to the engine: it answers at once, inside `onBar` and `place`; it fills each
 * order from its own book, so a fill comes once and in order; and it books PnL exactly.
 */
const SIMULATED: VenueTraits = Object.freeze({
  kind: 'simulated',
  fillsCanRepeat: false,
  pnlRounding: 'none',
  keepsCommands: false,
});

export class SimulatedVenue implements Venue {
  readonly traits: VenueTraits = SIMULATED;
  readonly events: Observable<VenueEvent>;
  private readonly book: VenueBook;
  private readonly working: IdList<VenueOrder>;
  /** Chosen once, here: the per-bar call is always to the same class. */
  private readonly rules: FillRules;
  /** The rules need no bar while nothing works (the bar rules): the hot path of a backtest, most bars. */
  private readonly skipIdleBars: boolean;
  /**
   * Calls of this venue under way (a listener may call it from inside a fill): the book's retired orders
   * are made over only when none is, so no call still holds one (`VenueBook.reuseRetired`).
   */
  private calls = 0;
  private lastChunk: BarChunk | null = null;
  private lastIndex = -1;
  private readonly lastCloseByContract = new Map<string, number>();

  /** `spill`: where full blocks of the run's settled orders go (a streamed run's); all kept in memory otherwise. */
  constructor(options: FillModelOptions, spill?: BlockSpill, lease?: BlockLease) {
    for (const [name, value] of [
      ['slippageTicks', options.slippageTicks],
      ['stopSlippageTicks', options.stopSlippageTicks ?? 0],
    ] as const) {
      if (!Number.isInteger(value) || value < 0)
        throw new RangeError(`${name} must be a whole number of ticks >= 0, got ${value}`);
    }
    if (!(options.feePerContractPerSide >= 0))
      throw new RangeError(`feePerContractPerSide must be >= 0, got ${options.feePerContractPerSide}`);
    this.book = new VenueBook(options.feePerContractPerSide, spill, lease);
    this.working = this.book.working;
    const settings = {
      slippage: options.slippageTicks,
      stopSlippage: options.stopSlippageTicks ?? 0,
      sameBar: options.sameBar ?? 'stop-first',
    };
    this.rules =
      options.touch === undefined
        ? new BarFillRules(this.book, settings)
        : new TouchFillRules(this.book, settings, new TouchQuotes(options.touch));
    this.skipIdleBars = !this.rules.followsEveryBar;
    this.events = this.book.events.asObservable();
  }

  listen(listener: (event: VenueEvent) => void): { unsubscribe(): void } {
    return this.book.events.listen(listener);
  }

  /** Every order of the run in placement order (bracket legs right after their entry's fill). */
  orders(): readonly OrderRecord[] {
    return this.book.orders();
  }

  /** `orders()` one at a time, each record made as it is reached (for writing a long run's list). */
  eachOrder(): Iterable<OrderRecord> {
    return this.book.eachOrder();
  }

  /** sha256 of `orders()` (src/adapters/backtest/order-list-hash.ts), hashed as the orders became final. */
  orderListHash(): string {
    return this.book.orderListHash();
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
    if (this.skipIdleBars && this.working.size === 0) return;
    this.enter();
    try {
      this.rules.onBar(chunk, index);
    } finally {
      this.calls--;
    }
  }

  private enter(): void {
    if (this.calls++ === 0) this.book.reuseRetired();
  }

  matchesBars(): boolean {
    return !this.skipIdleBars || this.working.size !== 0;
  }

  /**
   * Matches the working orders of `contractId` against one price, now: the last close before a roll or a
   * gap, where the runner closes a position in the month (or the session) it was opened in. A market
   * order fills there with the usual slippage and fee; nothing else of the bar state moves.
   */
  settleAt(contractId: string, time: number, price: number): void {
    this.enter();
    try {
      this.rules.settleAt(contractId, time, price);
    } finally {
      this.calls--;
    }
  }

  place(command: OrderCommand): void {
    this.enter();
    try {
      this.accept(command);
    } finally {
      this.calls--;
    }
  }

  modify(command: ModifyCommand): void {
    this.enter();
    try {
      this.reprice(command);
    } finally {
      this.calls--;
    }
  }

  cancel(orderId: string): void {
    this.enter();
    try {
      this.withdraw(orderId);
    } finally {
      this.calls--;
    }
  }

  private accept(command: OrderCommand): void {
    const problem = invalidOrder(command);
    const order = this.book.newOrder(command, 'entry', null);
    if (problem !== undefined || this.working.has(command.id)) {
      // Only a duplicate of a working order is caught here; the engine's ids are unique by construction.
      order.state = 'rejected';
      this.book.emitOrder(order, command.decidedAt, problem ?? `duplicate order id ${command.id}`);
      return;
    }
    if (command.order.type === 'trailingStop') {
      const last = this.lastPrice(command.contractId);
      if (last === undefined) {
        // The gateway rejects a trailing stop when the contract has no last traded price (spec 4.1).
        order.state = 'rejected';
        this.book.emitOrder(order, command.decidedAt, 'no last traded price to measure the trail from');
        return;
      }
      order.trail = startTrail(command.side, last, command.order.trailPrice);
      order.stopPrice = trailStopPrice(order.trail);
    }
    this.book.add(order, command.decidedAt);
  }

  private reprice(command: ModifyCommand): void {
    const order = this.working.get(command.orderId);
    const time = this.currentTime();
    if (order === undefined) {
      this.refuseFinished(command.orderId, 'modify', time);
      return;
    }
    const refuse = (reason: string): void => this.book.emitOrder(order, time, `modify refused: ${reason}`);
    if (command.size !== undefined && (!Number.isInteger(command.size) || command.size <= 0))
      return refuse(`size ${command.size} is not a positive whole number`);
    if (command.size !== undefined && command.size <= order.filledSize)
      return refuse(`size ${command.size} is not more than the ${order.filledSize} contracts already filled`);
    for (const [name, value] of [
      ['limitPrice', command.limitPrice],
      ['stopPrice', command.stopPrice],
      ['trailPrice', command.trailPrice],
    ] as const) {
      if (value !== undefined && !Number.isInteger(value))
        return refuse(`${name} ${value} is not a whole number of ticks`);
    }
    if (command.limitPrice !== undefined && order.limitPrice === null)
      return refuse(`a ${order.type} order has no limit price`);
    if (command.stopPrice !== undefined && order.type !== 'stop' && order.type !== 'stopLimit')
      return refuse(`a ${order.type} order has no stop price to set`);
    if (command.trailPrice !== undefined && order.type !== 'trailingStop')
      return refuse('trailPrice applies to trailing stops only');
    if (command.trailPrice !== undefined) {
      const last = this.lastPrice(order.contractId);
      if (last === undefined) return refuse('no last traded price to measure the trail from');
      order.trail = startTrail(order.side, last, command.trailPrice);
      order.trailPrice = command.trailPrice;
      order.stopPrice = trailStopPrice(order.trail);
    }
    if (command.size !== undefined) order.size = command.size;
    if (command.limitPrice !== undefined) order.limitPrice = command.limitPrice;
    if (command.stopPrice !== undefined) order.stopPrice = command.stopPrice;
    // A new price meets the market as a new order (at the back of the queue).
    if (command.limitPrice !== undefined || command.stopPrice !== undefined || command.trailPrice !== undefined)
      order.arrived = true;
    order.modifies++;
    order.spec = specOf(order);
    this.book.emitOrder(order, time);
  }

  private withdraw(orderId: string): void {
    const order = this.working.get(orderId);
    const time = this.currentTime();
    if (order === undefined) {
      this.refuseFinished(orderId, 'cancel', time);
      return;
    }
    this.book.finish(order, 'cancelled', time);
  }

  /** A modify or cancel of an order that is no longer working is refused with its state; an id never seen is a caller's bug. */
  private refuseFinished(orderId: string, action: 'modify' | 'cancel', time: number): void {
    // Rare, so a scan from the newest order back is cheaper than keeping every finished order indexed.
    const record = this.book.findOrder(orderId);
    if (record !== undefined) {
      this.book.emitOrder(record, time, `${action} refused: order is ${record.state}`);
      return;
    }
    throw new UnknownOrderError(orderId, action);
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
