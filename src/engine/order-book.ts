/**
 * The engine's order book and exposure: every order that may still execute, per contract.
 *
 * Exposure is more than the position. An order the venue has not acknowledged yet (`pending`: in flight,
 * or its place outcome unknown after a timeout) may still execute, later; a fill the venue reported on an
 * order (its filled volume) before the trade itself was delivered is already a position. So a target is
 * computed from three parts:
 *
 * - `definite`: the confirmed position, plus fills reported but not yet delivered (provisional), plus
 *   working orders, which are counted as if they fill;
 * - `pendingBuys` / `pendingSells`: orders whose fate is unknown, counted only in the direction that makes
 *   the next order smaller, so the position never goes beyond the target whichever way they resolve.
 *
 * With a synchronous venue (the backtest) an order is working as soon as it is placed, so nothing is ever
 * pending at a decision and the target is `target - definite`, as it always was.
 */
import { IdList } from './id-list.ts';
import { MARKET_ORDER } from './intents.ts';
import { Recycler } from './recycler.ts';
import type { WorkingOrder } from './strategy.ts';
import { startTrail, trailStopPrice, type TrailState } from './trailing.ts';
import type { OrderSpec, OrderState, Side, Writable } from './types.ts';

export interface BookOrder extends WorkingOrder {
  size: number;
  /** Confirmed by fills the engine has applied. */
  filledSize: number;
  /** Filled as the venue reports it (at least `filledSize`); the difference is provisional. */
  reportedFilled: number;
  order: OrderSpec;
  state: OrderState;
  trailStop: number;
  trail: TrailState | undefined;
  /** The intent's label (`PlaceIntent.label`): given to the trade its fills open. */
  label?: string | undefined;
}

interface Provisional {
  readonly contractId: string;
  readonly side: Side;
  size: number;
}

export interface Exposure {
  /** Position + provisional fills + working market and limit orders (signed). */
  readonly definite: number;
  /** Remaining size of pending (unacknowledged) buy and sell market and limit orders. */
  readonly pendingBuys: number;
  readonly pendingSells: number;
}

/** The signed size of the one order that moves `exposure` to `target` without overshooting it; 0 when none. */
export function orderTowards(target: number, exposure: Exposure): number {
  const highest = exposure.definite + exposure.pendingBuys;
  if (target > highest) return target - highest;
  const lowest = exposure.definite - exposure.pendingSells;
  if (target < lowest) return target - lowest;
  return 0;
}

const LABEL_MEMORY = 1024;
/** Records kept for `reclaim` at most: more between two reclaims are left to the collector. */
const RETIRED_MAX = 256;

/** A book order of the one shape every record has (`add` sets each field). */
function blankOrder(): BookOrder {
  return {
    id: '',
    strategyId: '',
    contractId: '',
    side: 'buy',
    size: 0,
    filledSize: 0,
    reportedFilled: 0,
    order: MARKET_ORDER,
    state: 'pending',
    trailStop: Number.NaN,
    trail: undefined,
    label: undefined,
  };
}

export class OrderBook {
  private readonly orders = new IdList<BookOrder>();
  /** Terminal orders whose reported fills have not all been delivered yet, by order id. */
  private readonly provisional = new Map<string, Provisional>();
  private readonly provisionalNet = new Map<string, number>();
  /** Orders in the book with a trail to advance (read by the bar loop; kept by `add`, `remove` and `setTrail`). */
  trailingCount = 0;
  /**
   * Labels of orders that left the book: a venue may report an order filled before its fill (the simulated
   * one does), and the fill still gives its label to the trade. Two generations keep memory bounded.
   */
  private goneLabels = new Map<string, string>();
  private olderGoneLabels = new Map<string, string>();
  /** The order that left the book last (`recent`). */
  private lastRemoved: BookOrder | undefined;
  /**
   * The records of orders gone before `lastRemoved`, made over by `add` once `reclaim` says no caller holds
   * them: a backtest then makes no record per order. Undefined in a live engine, whose asynchronous callers
   * may hold an order across an await.
   */
  private readonly recycled: Recycler<BookOrder> | undefined;

  constructor(recycles = false) {
    this.recycled = recycles ? new Recycler(RETIRED_MAX) : undefined;
  }

  get size(): number {
    return this.orders.size;
  }

  at(k: number): BookOrder {
    return this.orders.at(k);
  }

  get(id: string): BookOrder | undefined {
    return this.orders.get(id);
  }

  /** The label of an order in the book, or of one that left it lately (its last fill may come after). */
  /**
   * The book's order of this id, or the one it let go last: a venue that reports an order filled before
   * its fill (the simulated one always) is asked about it next, for its strategy and label.
   */
  recent(id: string): BookOrder | undefined {
    const order = this.orders.get(id);
    if (order !== undefined) return order;
    const gone = this.lastRemoved;
    return gone !== undefined && gone.id === id ? gone : undefined;
  }

  labelOf(id: string): string | undefined {
    const order = this.orders.get(id);
    if (order !== undefined) return order.label;
    if (this.goneLabels.size === 0 && this.olderGoneLabels.size === 0) return undefined;
    return this.goneLabels.get(id) ?? this.olderGoneLabels.get(id);
  }

  values(): BookOrder[] {
    return this.orders.values();
  }

  /**
   * A new order in the book, unfilled; the record is the book's (a spare one made over when there is one),
   * so a caller reads it but never keeps it beyond the order's time in the book.
   */
  add(
    id: string,
    strategyId: string,
    contractId: string,
    side: Side,
    size: number,
    spec: OrderSpec,
    state: OrderState,
    trail: TrailState | undefined,
    label: string | undefined,
  ): BookOrder {
    const order = (this.recycled?.take() ?? blankOrder()) as Writable<BookOrder>;
    order.id = id;
    order.strategyId = strategyId;
    order.contractId = contractId;
    order.side = side;
    order.size = size;
    order.filledSize = 0;
    order.reportedFilled = 0;
    order.order = spec;
    order.state = state;
    order.trail = trail;
    order.trailStop = trail === undefined ? Number.NaN : trailStopPrice(trail);
    order.label = label;
    if (trail !== undefined) this.trailingCount++;
    this.orders.set(id, order);
    return order;
  }

  /**
   * The records of orders gone before the last one become spare. Called by the bar loop between its calls
   * into the engine, where no caller holds a record; the last order gone stays as it is, for `recent`.
   */
  reclaim(): void {
    this.recycled?.reclaim();
  }

  /** A book order's trail changed (a modify of its trailPrice): its estimated stop, and the count of trailing orders. */
  setTrail(order: BookOrder, trail: TrailState | undefined): void {
    if (order.trail === undefined && trail !== undefined) this.trailingCount++;
    if (order.trail !== undefined && trail === undefined) this.trailingCount--;
    order.trail = trail;
    order.trailStop = trail === undefined ? NaN : trailStopPrice(trail);
  }

  /**
   * The order leaves the book (terminal). Whatever the venue reported filled beyond the fills delivered
   * stays counted as a provisional position until those fills arrive.
   */
  remove(order: BookOrder): void {
    if (order.trail !== undefined) this.trailingCount--;
    if (order.label !== undefined) {
      if (this.goneLabels.size >= LABEL_MEMORY) {
        this.olderGoneLabels = this.goneLabels;
        this.goneLabels = new Map();
      }
      this.goneLabels.set(order.id, order.label);
    }
    this.orders.delete(order.id);
    const before = this.lastRemoved;
    if (before !== undefined && before !== order) this.recycled?.retire(before);
    this.lastRemoved = order;
    this.addProvisional(order.id, order.contractId, order.side, order.reportedFilled - order.filledSize);
  }

  /** A terminal order the book did not hold (adopted after it was given up) with reported fills. */
  addProvisional(id: string, contractId: string, side: Side, size: number): void {
    if (size <= 0) return;
    const existing = this.provisional.get(id);
    if (existing !== undefined) {
      this.shiftNet(contractId, side, size - existing.size);
      existing.size = size;
      return;
    }
    this.provisional.set(id, { contractId, side, size });
    this.shiftNet(contractId, side, size);
  }

  /** A delivered fill confirms that much of an order's provisional size (no-op for orders without one). */
  confirmFill(orderId: string, size: number): void {
    if (this.provisional.size === 0) return;
    const entry = this.provisional.get(orderId);
    if (entry === undefined) return;
    const used = Math.min(size, entry.size);
    entry.size -= used;
    this.shiftNet(entry.contractId, entry.side, -used);
    if (entry.size <= 0) this.provisional.delete(orderId);
  }

  /** Signed provisional position of a contract (fills reported, not delivered yet). */
  provisionalPosition(contractId: string): number {
    if (this.provisionalNet.size === 0) return 0;
    return this.provisionalNet.get(contractId) ?? 0;
  }

  provisionalOrders(): Array<{ orderId: string; contractId: string; side: Side; size: number }> {
    return [...this.provisional].map(([orderId, p]) => ({
      orderId,
      contractId: p.contractId,
      side: p.side,
      size: p.size,
    }));
  }

  /** Exposure of a contract beyond `position` (the confirmed one), for target expansion. */
  exposure(contractId: string, position: number): Exposure {
    return this.exposureOf(contractId, position + this.provisionalPosition(contractId));
  }

  /**
   * `definite` plus the contract's market and limit orders (of one strategy's only, when given): working ones
   * count as definite, pending ones on their side.
   */
  exposureOf(contractId: string, definite: number, strategyId?: string): Exposure {
    let pendingBuys = 0;
    let pendingSells = 0;
    for (let k = 0; k < this.orders.size; k++) {
      const order = this.orders.at(k);
      if (order.contractId !== contractId) continue;
      if (strategyId !== undefined && order.strategyId !== strategyId) continue;
      const type = order.order.type;
      // Protective stops are not exposure a target should offset: they trade only against the position.
      if (type !== 'market' && type !== 'limit') continue;
      const remaining = order.size - order.filledSize;
      if (order.state === 'pending') {
        if (order.side === 'buy') pendingBuys += remaining;
        else pendingSells += remaining;
      } else {
        definite += order.side === 'buy' ? remaining : -remaining;
      }
    }
    return { definite, pendingBuys, pendingSells };
  }

  /** Remaining size of market and limit orders on one side, pending ones included (the position cap's worst case). */
  workingEntrySize(contractId: string, side: Side): number {
    let total = 0;
    for (let k = 0; k < this.orders.size; k++) {
      const order = this.orders.at(k);
      if (
        order.contractId === contractId &&
        order.side === side &&
        (order.order.type === 'market' || order.order.type === 'limit')
      ) {
        total += order.size - order.filledSize;
      }
    }
    return total;
  }

  hasStopOrder(contractId: string, side: Side): boolean {
    for (let k = 0; k < this.orders.size; k++) {
      const order = this.orders.at(k);
      if (
        order.contractId === contractId &&
        order.side === side &&
        order.order.type !== 'market' &&
        order.order.type !== 'limit'
      )
        return true;
    }
    return false;
  }

  private shiftNet(contractId: string, side: Side, size: number): void {
    const next = (this.provisionalNet.get(contractId) ?? 0) + (side === 'buy' ? size : -size);
    if (next === 0) this.provisionalNet.delete(contractId);
    else this.provisionalNet.set(contractId, next);
  }
}

/** The engine's own estimate of a trailing stop, when the last price is known in whole ticks. */
export function trackTrail(side: Side, last: number, trailPrice: number): TrailState | undefined {
  return Number.isInteger(last) && Number.isInteger(trailPrice) ? startTrail(side, last, trailPrice) : undefined;
}

/** What a strategy sees of a book order. */
export function publicOrder(order: BookOrder): WorkingOrder {
  return {
    id: order.id,
    strategyId: order.strategyId,
    contractId: order.contractId,
    side: order.side,
    size: order.size,
    filledSize: order.filledSize,
    order: order.order,
    state: order.state,
    trailStop: order.trailStop,
  };
}

/** An order's terms after a modify (prices in ticks; a field left out keeps its value). */
export function modifiedSpec(
  spec: OrderSpec,
  intent: { limitPrice?: number; stopPrice?: number; trailPrice?: number },
): OrderSpec {
  switch (spec.type) {
    case 'market':
      return spec;
    case 'limit':
      return intent.limitPrice === undefined ? spec : { type: 'limit', limitPrice: intent.limitPrice };
    case 'stop':
      return intent.stopPrice === undefined ? spec : { type: 'stop', stopPrice: intent.stopPrice };
    case 'stopLimit':
      return {
        type: 'stopLimit',
        stopPrice: intent.stopPrice ?? spec.stopPrice,
        limitPrice: intent.limitPrice ?? spec.limitPrice,
      };
    case 'trailingStop':
      return intent.trailPrice === undefined ? spec : { type: 'trailingStop', trailPrice: intent.trailPrice };
  }
}
