/**
 * The simulated venue's book: its working orders, every order of the run, the bracket legs it places and
 * their one-cancels-other link, and the events it reports (order updates and fills). The venue
 * (simulated-venue.ts) puts the orders it accepts here; its fill rules (bar-fill-rules.ts,
 * touch-fill-rules.ts) decide what fills at which price and tell the book, which keeps the records and
 * reports. Nothing here decides a price.
 */
import { objectArray } from '../../engine/object-array.ts';
import { IdList } from '../../engine/id-list.ts';
import { Multicast } from '../../engine/multicast.ts';
import type { TrailState } from '../../engine/trailing.ts';
import { ownVenueEvent } from '../../engine/event-copies.ts';
import { MARKET_ORDER } from '../../engine/intents.ts';
import { Recycler } from '../../engine/recycler.ts';
import { OrderColumns } from './order-columns.ts';
import { OrderListHasher } from './order-list-hash.ts';
import { BLOCK_MASK, sequenceFillId, type BlockSpill } from '../../engine/column-blocks.ts';
import type { BlockLease } from '../../engine/block-stock.ts';
import type {
  BracketSpec,
  Fill,
  OrderCommand,
  OrderSpec,
  OrderState,
  OrderUpdate,
  Side,
  VenueEvent,
  Writable,
} from '../../engine/types.ts';

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

/**
 * An order of the venue's book: its record, with what the fill rules keep of it between bars. One object
 * an order, of one shape, whatever its role or state (a rejected order has the working fields unused).
 */
export interface VenueOrder extends OrderRecord {
  readonly sign: 1 | -1;
  /** Stop-limit whose stop has been reached: it now works as a limit. */
  triggered: boolean;
  trail: TrailState | null;
  readonly bracket: BracketSpec | undefined;
  /** The other leg of a bracket: filling one cancels it. */
  oco: VenueOrder | null;
  /** At the touch: placed (or repriced) since the last bar, so it meets the next open as a new order. */
  arrived: boolean;
  /** At the touch, with the queue model: contracts ahead of it at its limit price (null: none). */
  queueAhead: number | null;
  /** At the touch: working legs of an entry with brackets, which follow its filled size. */
  legs: VenueOrder[] | null;
}

/**
 * An order of the book's one shape with nothing set yet (`renewOrder` sets every field): a new object, or
 * a settled one made over, is the same object to the fill rules.
 */
function blankOrder(): VenueOrder {
  return {
    id: '',
    contractId: '',
    side: 'buy',
    size: 0,
    type: 'market',
    limitPrice: null,
    stopPrice: null,
    trailPrice: null,
    role: 'entry',
    parentId: null,
    placedAt: Number.NaN,
    state: 'working',
    fillPrice: null,
    fillTime: null,
    filledSize: 0,
    modifies: 0,
    spec: MARKET_ORDER,
    sign: 1,
    triggered: false,
    trail: null,
    bracket: undefined,
    oco: null,
    arrived: false,
    queueAhead: null,
    legs: null,
  };
}

/**
 * `order` (blank, or settled and held by no one) made into a new order of the book, working, placed at the
 * command's decision time: `entry` for the engine's, a bracket leg (`parentId` its entry's id) for the
 * venue's own. Every field is set here, so a made-over order keeps nothing of the one before. An entry
 * meets the next open as a new order.
 */
function renewOrder(
  order: VenueOrder,
  command: OrderCommand,
  role: OrderRecord['role'],
  parentId: string | null,
): VenueOrder {
  const o = order as Writable<VenueOrder>;
  const spec = command.order;
  o.id = command.id;
  o.contractId = command.contractId;
  o.side = command.side;
  o.size = command.size;
  o.type = spec.type;
  o.limitPrice = spec.type === 'limit' || spec.type === 'stopLimit' ? spec.limitPrice : null;
  o.stopPrice = spec.type === 'stop' || spec.type === 'stopLimit' ? spec.stopPrice : null;
  o.trailPrice = spec.type === 'trailingStop' ? spec.trailPrice : null;
  o.role = role;
  o.parentId = parentId;
  o.placedAt = command.decidedAt;
  o.state = 'working';
  o.fillPrice = null;
  o.fillTime = null;
  o.filledSize = 0;
  o.modifies = 0;
  o.spec = spec;
  o.sign = command.side === 'buy' ? 1 : -1;
  o.triggered = false;
  o.trail = null;
  o.bracket = command.bracket;
  o.oco = null;
  o.arrived = role === 'entry';
  o.queueAhead = null;
  o.legs = null;
  return order;
}

/** The record of an order alone, without the book's fields (what a run's order list gives out). */
function recordOf(o: OrderRecord): OrderRecord {
  return {
    id: o.id,
    contractId: o.contractId,
    side: o.side,
    size: o.size,
    type: o.type,
    limitPrice: o.limitPrice,
    stopPrice: o.stopPrice,
    trailPrice: o.trailPrice,
    role: o.role,
    parentId: o.parentId,
    placedAt: o.placedAt,
    state: o.state,
    fillPrice: o.fillPrice,
    fillTime: o.fillTime,
    filledSize: o.filledSize,
    modifies: o.modifies,
    spec: o.spec,
  };
}

export class VenueBook {
  /** Order updates and fills are views the book rewrites (`view`, `fillView`): a subscriber gets copies. */
  readonly events = new Multicast<VenueEvent>(ownVenueEvent);
  /** Working orders in placement order, by id (finished ones leave, so the list stays small over a long run). */
  readonly working = new IdList<VenueOrder>();
  /**
   * Every order of the run in placement order (bracket legs right after their entry's fill): the first
   * `settledOrders.length` as columns, the rest as records. An order moves to the columns once it and
   * every order before it are final (no longer pending or working, so they change no more): the run then
   * keeps no object per order. The order list hash reads the columns' rows a full block at a time, before
   * a streamed run parks the block, so a parked block is never read again for the hash.
   */
  private readonly settledOrders: OrderColumns;
  /**
   * The records not settled yet, in placement order: order `settledOrders.length + k` is
   * `unsettled[head + k]`, for `head + k < tail`. The settled ones' slots are cleared and, once they are most
   * of the list, the rest move to its front: the run keeps nothing of an order that settled. The array
   * itself is kept (its length only grows): one cut to a new array grew again by steps, 18 bytes an order.
   */
  private readonly unsettled: (VenueOrder | undefined)[] = objectArray();
  private head = 0;
  private tail = 0;
  /**
   * Settled orders that nothing links to (an entry without brackets: no leg or sibling points at it), to be
   * made over into new orders (`newOrder`) instead of allocated: each order's object was a quarter of the
   * bytes a backtest allocated an order (docs/bench.md, issue 30's ninth turn). One retired may still be in
   * the hands of a call of the venue under way (a fill settles its order before the fill rules are done
   * with it), so it is made over only after `reuseRetired`, which the venue calls when none of its calls
   * is under way.
   */
  private readonly recycled = new Recycler<VenueOrder>();
  private readonly hasher = new OrderListHasher();
  private fillSequence = 0;
  /** The one fill the book reports, rewritten for each (`fill`): a listener reads it in the call. */
  private readonly fillView: Writable<Fill> = {
    kind: 'fill',
    fillId: '',
    orderId: '',
    contractId: '',
    side: 'buy',
    size: 0,
    price: 0,
    fees: 0,
    time: 0,
  };
  /** The one order update the book reports, rewritten for each (`emitOrder`): a listener reads it in the call. */
  private readonly view: Writable<OrderUpdate> & { reason: string | undefined } = {
    kind: 'order',
    orderId: '',
    state: 'working',
    time: 0,
    contractId: '',
    side: 'buy',
    size: 0,
    filledSize: 0,
    order: MARKET_ORDER,
    reason: undefined,
  };

  /**
   * `fee`: money per contract per side, on every fill; `spill`: where full blocks of settled orders go;
   * `lease`: where their blocks come from.
   */
  constructor(
    private readonly fee: number,
    spill?: BlockSpill,
    lease?: BlockLease,
  ) {
    this.settledOrders = new OrderColumns(spill, lease);
  }

  /** Orders placed so far (rejected ones and bracket legs included). */
  get orderCount(): number {
    return this.settledOrders.length + this.tail - this.head;
  }

  /**
   * A new order of the book (`renewOrder`), a spare one made over when there is one; it joins the order
   * list (placement order), working until the caller says otherwise.
   */
  newOrder(command: OrderCommand, role: OrderRecord['role'], parentId: string | null): VenueOrder {
    const order = renewOrder(this.recycled.take() ?? blankOrder(), command, role, parentId);
    this.unsettled[this.tail++] = order;
    return order;
  }

  /** The orders retired so far may be made over: no call of the venue that could hold one is under way. */
  reuseRetired(): void {
    this.recycled.reclaim();
  }

  /** Every order of the run in placement order, as records (new objects for the settled ones). */
  orders(): OrderRecord[] {
    const out = new Array<OrderRecord>(this.orderCount);
    for (let k = 0; k < out.length; k++) out[k] = this.orderAt(k);
    return out;
  }

  /** The same orders one at a time, each made as it is reached (a long run's list is never all objects at once). */
  *eachOrder(): Generator<OrderRecord, void, undefined> {
    for (let k = 0; k < this.orderCount; k++) yield this.orderAt(k);
  }

  /** The newest order with this id (the book's own while it can change; made from the columns once settled), or undefined. */
  findOrder(id: string): OrderRecord | undefined {
    for (let k = this.tail - 1; k >= this.head; k--) if (this.unsettled[k]!.id === id) return this.unsettled[k];
    for (let k = this.settledOrders.length - 1; k >= 0; k--)
      if (this.settledOrders.idAt(k) === id) return this.settledOrders.record(k);
    return undefined;
  }

  /** The k-th order of the run: its record while it can change, made from the columns once settled. */
  private orderAt(k: number): OrderRecord {
    const settled = this.settledOrders.length;
    return k < settled ? this.settledOrders.record(k) : recordOf(this.unsettled[this.head + k - settled]!);
  }

  /** A new order joins the book and is reported working. */
  add(order: VenueOrder, time: number): void {
    this.working.set(order.id, order);
    this.emitOrder(order, time);
  }

  /**
   * `size` more contracts of `order` traded at `price`: its record, the fill, and its bracket sibling, which
   * protects that many contracts fewer and goes once it protects none. What an entry's own brackets do is
   * the fill rules' (the rest of the bar is theirs to match).
   */
  fill(order: VenueOrder, size: number, price: number, time: number): void {
    order.fillPrice =
      order.filledSize === 0 ? price : (order.fillPrice! * order.filledSize + price * size) / (order.filledSize + size);
    order.filledSize += size;
    order.fillTime = time;
    const fillId = sequenceFillId(++this.fillSequence);
    const complete = order.filledSize >= order.size;
    if (complete) this.finish(order, 'filled', time);
    const fill = this.fillView;
    fill.fillId = fillId;
    fill.orderId = order.id;
    fill.contractId = order.contractId;
    fill.side = order.side;
    fill.size = size;
    fill.price = price;
    fill.fees = this.fee * size;
    fill.time = time;
    this.events.next(fill);
    if (!complete) this.emitOrder(order, time);
    const other = order.oco;
    if (other !== null && other.state === 'working') {
      const left = complete ? other.filledSize : other.size - size;
      if (left <= other.filledSize) this.finish(other, 'cancelled', time, 'other bracket leg filled');
      else this.resize(other, left, time);
    }
  }

  /** The stop-loss and take-profit legs of a bracket for `size` contracts filled at `price`, one-cancels-other. */
  placeLegs(entry: VenueOrder, price: number, size: number, time: number): [VenueOrder | null, VenueOrder | null] {
    const { stopLossTicks, takeProfitTicks } = entry.bracket!;
    const stopLoss =
      stopLossTicks === undefined ? null : this.placeLeg(entry, 'stopLoss', stopLossTicks, price, size, time);
    const takeProfit =
      takeProfitTicks === undefined ? null : this.placeLeg(entry, 'takeProfit', takeProfitTicks, price, size, time);
    if (stopLoss !== null && takeProfit !== null) {
      stopLoss.oco = takeProfit;
      takeProfit.oco = stopLoss;
    }
    return [stopLoss, takeProfit];
  }

  private placeLeg(
    entry: VenueOrder,
    role: 'stopLoss' | 'takeProfit',
    ticks: number,
    price: number,
    size: number,
    time: number,
  ): VenueOrder {
    const isStop = role === 'stopLoss';
    const s = entry.sign;
    const level = isStop ? price - s * ticks : price + s * ticks;
    const order = this.newOrder(
      {
        // `<entry id>:sl`: the engine files venue-created orders under the id's prefix before its last '-', so a
        // leg of `<strategy>-<n>` belongs to that strategy (its openOrders() lists it).
        id: `${entry.id}:${isStop ? 'sl' : 'tp'}${entry.legs === null ? '' : `.${this.orderCount}`}`,
        contractId: entry.contractId,
        side: s === 1 ? 'sell' : 'buy',
        size,
        order: isStop ? { type: 'stop', stopPrice: level } : { type: 'limit', limitPrice: level },
        decidedAt: time,
      },
      role,
      entry.id,
    );
    this.add(order, time);
    return order;
  }

  resize(order: VenueOrder, size: number, time: number): void {
    order.size = size;
    this.emitOrder(order, time);
  }

  finish(order: VenueOrder, state: OrderState, time: number, reason?: string): void {
    order.state = state;
    this.working.delete(order.id);
    this.emitOrder(order, time, reason);
  }

  emitOrder(record: OrderRecord, time: number, reason?: string): void {
    // One object serves every update, so an order makes none (`events` copies it for a subscriber).
    const update = this.view;
    update.orderId = record.id;
    update.state = record.state;
    update.time = time;
    update.contractId = record.contractId;
    update.side = record.side;
    update.size = record.size;
    update.filledSize = record.filledSize;
    update.order = record.spec;
    update.reason = reason;
    // Every change of a record's state is reported here, so this is where a record can become final.
    const records = this.unsettled;
    let k = this.head;
    const settled = this.settledOrders;
    while (k < this.tail && isFinal(records[k]!.state)) {
      const order = records[k]!;
      settled.push(order);
      if (order.bracket === undefined && order.role === 'entry') this.recycled.retire(order);
      // A full block is hashed from its rows before the next one starts (and a streamed run parks it).
      if ((settled.length & BLOCK_MASK) === 0) this.hasher.addRows(settled);
      records[k] = undefined;
      k++;
    }
    this.head = k;
    // An order settles a bar or two after it is placed, so nearly every slot before `head` is cleared: the
    // few orders after them move to the front every 64 or so orders, not one at a time.
    if (k > 64 && k * 2 > this.tail) {
      const tail = this.tail;
      for (let j = k; j < tail; j++) {
        records[j - k] = records[j];
        records[j] = undefined;
      }
      this.tail = tail - k;
      this.head = 0;
    }
    this.events.next(update);
  }

  /** sha256 of the order list so far (orders still working as they stand now); the run goes on unchanged. */
  orderListHash(): string {
    const records = this.unsettled;
    const settled = this.settledOrders;
    // The settled orders of the block not yet full are hashed once, here; the working ones as they stand now.
    this.hasher.addRows(settled);
    if (this.head === this.tail) return this.hasher.digest();
    const tail = this.hasher.copy();
    for (let k = this.head; k < this.tail; k++) tail.add(records[k]!);
    return tail.digest();
  }
}

function isFinal(state: OrderState): boolean {
  return state !== 'working' && state !== 'pending';
}
