/**
 * The live `Venue`: turns accepted commands into Order/place, Order/modify and Order/cancel calls, and
 * learns what happened only from the gateway (Order/search, Order/searchOpen, Trade/search), through the
 * transition table of `order-state.ts`. Invariants:
 *
 * - Every order is journaled (state `submitting`, with its customTag) before the place request is sent.
 * - A place whose outcome is unknown is looked up by customTag before anything else; it is never re-sent.
 *   It stays unresolved (the engine counts it as pending exposure) until a lookup finds it or the
 *   unknown-outcome window has passed; one that turns up after that is adopted and the engine is told so.
 * - A fill the gateway's order record reports (`fillVolume`) reaches the engine at once as provisional;
 *   the exact fills are Trade/search records, identified by the trade id; a trade already journaled is
 *   ignored, and the order's fill transition is journaled in the same transaction as the fill.
 * - A write that failed is not retried blindly: the next status report decides.
 */
import { Subject } from 'rxjs';
import { GatewayError } from '../gateway/gateway-errors.ts';
import { signedBrackets } from '../../protocol/brackets.ts';
import { OrderSide, OrderType, TradeSide } from '../../protocol/codes.ts';
import type * as S from '../../protocol/schemas.ts';
import type { TradingClient } from '../gateway/trading.ts';
import type { Logger } from '../../engine/log.ts';
import { modifiedSpec } from '../../engine/order-book.ts';
import type {
  ContractSpec,
  Fill,
  ModifyCommand,
  OrderCommand,
  OrderSpec,
  OrderState,
  OrderUpdate,
  Side,
  Venue,
  VenueEvent,
  VenueTraits,
} from '../../engine/types.ts';
import type { Journal, JournaledFill, JournaledOrder } from './journal.ts';
import { expiryInstant } from './month-follower.ts';
import { describe, flattenAccount, type FlattenResult } from './kill-switch.ts';
import { newOrder, transition, venueStatusOf, type LiveOrder, type OrderEvent } from './order-state.ts';

/** The part of the trading client the executor uses. */
export type ExecutionClient = Pick<
  TradingClient,
  | 'placeOrder'
  | 'modifyOrder'
  | 'cancelOrder'
  | 'searchOrders'
  | 'searchOpenOrders'
  | 'searchTrades'
  | 'searchOpenPositions'
  | 'closePosition'
>;

export interface LiveExecutorOptions {
  readonly client: ExecutionClient;
  readonly journal: Journal;
  readonly accountId: number;
  readonly contracts: ReadonlyMap<string, ContractSpec>;
  readonly logger: Logger;
  readonly now?: () => number;
  /** How far before an order's creation a lookup by tag searches (clock skew between bot and gateway). */
  readonly lookupSlackMs?: number;
  /**
   * Wall milliseconds after its creation during which a place whose outcome is unknown is not taken as
   * lost however many lookups miss it (default 60 s: well above any request timeout).
   */
  readonly unknownOutcomeMs?: number;
  /** Gateway milliseconds per wall millisecond (the simulator may run accelerated); 1 by default. */
  readonly speed?: number;
  /**
   * Whether a gateway month's market is open at an instant (the exchange calendar of its root); absent:
   * every place is sent whatever the hour. The session sets it, so no order leaves while the market is
   * closed (docs/live.md, Running for weeks).
   */
  readonly marketOpen?: (contractId: string, t: number) => boolean;
}

/** Default of `unknownOutcomeMs`. */
export const UNKNOWN_OUTCOME_MS = 60_000;

export type Anomaly = { readonly time: number; readonly tag: string | null; readonly message: string };

const ISO = (ms: number): string => new Date(ms).toISOString();

/**
 * What the gateway's venue is to the engine, for a paper account (on the simulator or the gateway) as for a
 * live one: it answers later, on its own time; a fill can come twice or late (the realtime event and the
 * trade search, a poll after a restart); and the gateway books each closed trade's PnL in cents, so the
 * engine must too or the balances drift apart.
 */
const GATEWAY: VenueTraits = Object.freeze({
  kind: 'live',
  fillsCanRepeat: true,
  pnlRounding: 'cents',
  keepsCommands: true,
});

/** Anomalies kept in memory (the latest); the journal holds every one. */
export const ANOMALY_MEMORY = 256;

export class LiveExecutor implements Venue {
  readonly traits: VenueTraits = GATEWAY;
  readonly events = new Subject<VenueEvent>();
  /** The latest anomalies (at most ANOMALY_MEMORY); the journal holds every one (`anomaly` events). */
  readonly anomalies: Anomaly[] = [];
  private readonly client: ExecutionClient;
  private readonly journal: Journal;
  private readonly accountId: number;
  private readonly contracts: ReadonlyMap<string, ContractSpec>;
  private readonly log: Logger;
  private readonly now: () => number;
  private readonly lookupSlackMs: number;
  private readonly unknownOutcomeMs: number;
  private readonly speed: number;
  private readonly marketOpen: ((contractId: string, t: number) => boolean) | undefined;
  /** The gateway's reported fill volume per tag, where it is ahead of the journaled fills. */
  private readonly reportedFills = new Map<string, number>();
  /** Tags whose place request is in flight in this process: a lookup must not call them missing. */
  private readonly placing = new Set<string>();
  private readonly tasks = new Set<Promise<void>>();
  private stopped = false;
  /** Place refused while positions cannot be seen, unless it provably reduces (set by the session). */
  private blindReason: string | undefined;
  private lastPositions = new Map<string, number>();
  /** Orders at the gateway the bot did not place (bracket legs, manual orders): last state sent to the engine. */
  private readonly foreign = new Map<number, { key: string; working: boolean; createdAt: number }>();

  constructor(options: LiveExecutorOptions) {
    this.client = options.client;
    this.journal = options.journal;
    this.accountId = options.accountId;
    this.contracts = options.contracts;
    this.log = options.logger;
    this.now = options.now ?? Date.now;
    this.lookupSlackMs = options.lookupSlackMs ?? 120_000;
    this.unknownOutcomeMs = options.unknownOutcomeMs ?? UNKNOWN_OUTCOME_MS;
    this.speed = options.speed ?? 1;
    this.marketOpen = options.marketOpen;
  }

  // ------------------------------------------------------------------ Venue

  place(command: OrderCommand): void {
    if (this.stopped) {
      this.emitOrder(command, 'rejected', 0, undefined, 'executor stopped');
      return;
    }
    const expiresAt = expiryInstant(command.contractId);
    if (expiresAt !== undefined && this.now() >= expiresAt) {
      // The month stopped trading: the gateway would refuse the order (ContractNotActive), so it is never sent.
      const reason = `contract ${command.contractId} expired at ${new Date(expiresAt).toISOString()}`;
      this.journal.record('place-refused', 'event', command.id, { reason, command });
      this.log.warn({ tag: command.id, contractId: command.contractId, reason }, 'place refused: the month expired');
      this.emitOrder(command, 'rejected', 0, undefined, reason);
      return;
    }
    if (this.marketOpen !== undefined && !this.marketOpen(command.contractId, this.now())) {
      // Found by test/integration/live/weeks.test.ts: the guard refuses new risk while the market is closed but
      // lets a reducing order through (a backtest fills it at the next open), so a strategy's exit decided on
      // the bar that ends at the close (16:00 CT, a holiday halt, an early close) was sent to a closed market,
      // where the gateway refuses it (OutsideTradingHours) or, on a real one, could queue it for the open. It is
      // refused here instead, before anything is sent; the strategy decides again on the next bar.
      const reason = `the market of ${command.contractId} is closed at ${new Date(this.now()).toISOString()}`;
      this.journal.record('place-refused', 'event', command.id, { reason, command });
      this.log.warn({ tag: command.id, contractId: command.contractId, reason }, 'place refused: the market is closed');
      this.emitOrder(command, 'rejected', 0, undefined, reason);
      return;
    }
    if (this.journal.order(command.id)) {
      // The engine restored its sequence from the journal, so this is a bug upstream; sending would
      // place a second order under one tag.
      this.anomaly(command.id, `place for ${command.id} refused: the tag is already journaled`);
      return;
    }
    if (this.blindReason !== undefined && !this.reducesKnownPosition(command)) {
      this.journal.record('place-refused', 'event', command.id, { reason: this.blindReason, command });
      this.log.warn({ tag: command.id, reason: this.blindReason }, 'place refused while positions cannot be seen');
      this.emitOrder(command, 'rejected', 0, undefined, `positions not visible: ${this.blindReason}`);
      return;
    }
    let request: S.PlaceOrderRequest;
    try {
      request = this.placeRequest(command);
      // The one write that must precede the request: if it fails, nothing is sent.
      this.journal.beginPlace(
        {
          ...newOrder(command.id, command.size),
          contractId: command.contractId,
          side: command.side,
          spec: command.order,
          ...(command.bracket ? { bracket: command.bracket } : {}),
        },
        request,
      );
    } catch (error) {
      this.log.error({ tag: command.id, err: error }, 'place not sent');
      this.emitOrder(command, 'rejected', 0, undefined, `not sent: ${describe(error)}`);
      return;
    }
    this.emitOrder(command, 'pending', 0);
    this.placing.add(command.id);
    this.track(this.sendPlace(command.id, request));
  }

  modify(command: ModifyCommand): void {
    const order = this.journal.order(command.orderId);
    if (!order || order.venueOrderId === undefined || order.state !== 'working') {
      const reason = order ? `order is ${order.state}` : 'unknown order';
      this.journal.record('modify-refused', 'event', command.orderId, { reason, command });
      this.log.warn({ tag: command.orderId, reason }, 'modify refused');
      if (order) this.emitFromJournal(order, `modify refused: ${reason}`);
      return;
    }
    const grid = this.grid(order.contractId);
    const request: S.ModifyRequest = {
      accountId: this.accountId,
      orderId: order.venueOrderId,
      ...(command.size === undefined ? {} : { size: command.size }),
      ...(command.limitPrice === undefined ? {} : { limitPrice: grid.toPrice(command.limitPrice) }),
      ...(command.stopPrice === undefined ? {} : { stopPrice: grid.toPrice(command.stopPrice) }),
      ...(command.trailPrice === undefined ? {} : { trailPrice: grid.toPrice(command.trailPrice) }),
    };
    this.journal.record('modify', 'before', order.tag, request);
    this.track(
      this.client.modifyOrder(request).then(
        () => {
          this.journal.record('modify', 'after', order.tag, { ok: true });
          const spec = modifiedSpec(order.spec, command);
          const size = command.size ?? order.size;
          this.journal.updateTerms(order.tag, spec, size);
          const latest = this.journal.order(order.tag);
          if (latest) this.emitFromJournal(latest);
        },
        (error: unknown) => {
          const outcome = error instanceof GatewayError ? error.outcome : 'unknown';
          this.journal.record('modify', 'after', order.tag, { ok: false, outcome, error: describe(error) });
          this.log.warn({ tag: order.tag, endpoint: 'Order/modify', outcome, err: error }, 'modify failed');
          const latest = this.journal.order(order.tag);
          if (latest)
            this.emitFromJournal(
              latest,
              `modify ${outcome === 'unknown' ? 'outcome unknown' : 'rejected'}: ${describe(error)}`,
            );
        },
      ),
    );
  }

  cancel(orderId: string): void {
    this.apply(orderId, { type: 'cancelRequested' }, { kind: 'cancel-intent', payload: {} });
  }

  // ------------------------------------------------------------------ state from the gateway

  /**
   * Apply an Order/search result: statuses of known orders by venue id, and resolution of orders whose
   * place outcome is unknown (or that were in flight when a previous process died) by customTag.
   * `searchedFrom` is the search's start: an unresolved order created after it that is absent is lost.
   */
  applyOrderSearch(orders: readonly S.Order[], searchedFrom: number): void {
    this.applyOrders(orders, searchedFrom);
  }

  /**
   * Apply orders a realtime event reported. Unlike a search, an event lists only what changed, so the
   * absence of an unresolved order from it proves nothing.
   */
  applyOrderEvents(orders: readonly S.Order[]): void {
    this.applyOrders(orders, undefined);
  }

  private applyOrders(orders: readonly S.Order[], searchedFrom: number | undefined): void {
    const byVenueId = new Map(orders.map((o) => [o.id, o]));
    const byTag = new Map<string, S.Order>();
    for (const o of orders) if (o.customTag) byTag.set(o.customTag, o);
    // Only orders that can still change by status: final ones change only by a late fill, which
    // Trade/search delivers (a cancelled order whose fills complete it becomes filled).
    for (const order of this.journal.orders({ states: ['submitting', 'unknown', 'lost', 'working', 'cancelling'] })) {
      if (order.state === 'submitting' || order.state === 'unknown' || order.state === 'lost') {
        const found = byTag.get(order.tag);
        if (found) {
          const untagged = this.journal.untaggedFills(found.id);
          this.noteReportedFill(
            order.tag,
            found,
            untagged.reduce((sum, f) => sum + f.size, 0),
          );
          this.apply(
            order.tag,
            { type: 'lookupFound', venueOrderId: found.id, status: venueStatusOf(found.status) },
            { kind: 'lookup', payload: found },
          );
          if (untagged.length > 0) this.attachFills(order.tag, untagged, order.state === 'lost');
        } else if (
          searchedFrom !== undefined &&
          order.state !== 'lost' &&
          !this.placing.has(order.tag) &&
          order.createdAt - this.lookupSlackMs >= searchedFrom
        ) {
          const ageMs = (this.now() - order.createdAt) / this.speed;
          const expired = ageMs >= this.unknownOutcomeMs;
          this.apply(
            order.tag,
            { type: 'lookupMissing', expired },
            {
              kind: 'lookup',
              payload: { found: false, searchedFrom: ISO(searchedFrom), ageMs: Math.round(ageMs), expired },
            },
          );
        }
        continue;
      }
      if (order.venueOrderId === undefined) continue;
      const seen = byVenueId.get(order.venueOrderId);
      if (seen) {
        this.syncTerms(order, seen);
        const moreFilled = this.noteReportedFill(order.tag, seen);
        this.apply(
          order.tag,
          { type: 'venueStatus', status: venueStatusOf(seen.status) },
          { kind: 'status', payload: seen },
          moreFilled,
        );
      }
    }
    for (const o of orders) {
      if ((o.customTag && this.journal.order(o.customTag)) || this.journal.orderByVenueId(o.id)) continue;
      this.reportForeign(o, venueStatusOf(o.status), o.fillVolume ?? 0);
    }
  }

  /**
   * The gateway's prices and size of a working order are the truth: after a modify whose outcome was
   * unknown (or one made by hand), the journal and the engine take them over.
   */
  private syncTerms(order: JournaledOrder, seen: S.Order): void {
    const venueSpec = foreignSpec(seen, this.contracts.get(order.contractId)?.grid);
    if (!venueSpec || venueSpec.type !== order.spec.type || order.spec.type === 'trailingStop') return;
    if (JSON.stringify(venueSpec) === JSON.stringify(order.spec) && seen.size === order.size) return;
    this.journal.updateTerms(order.tag, venueSpec, seen.size);
    this.journal.record('terms', 'event', order.tag, {
      from: { spec: order.spec, size: order.size },
      to: { spec: venueSpec, size: seen.size },
    });
    const latest = this.journal.order(order.tag);
    if (latest) this.emitFromJournal(latest);
  }

  /**
   * Remember the gateway's fill volume of an order when it is ahead of the journaled fills; true when it
   * grew (the engine must hear of it now, not when Trade/search gets round to it).
   */
  private noteReportedFill(tag: string, seen: S.Order, untagged = 0): boolean {
    const volume = seen.fillVolume ?? 0;
    // Fills already journaled for this gateway order without our tag are not provisional: they are in.
    const journaled = (this.journal.order(tag)?.filledSize ?? 0) + untagged;
    const known = this.reportedFills.get(tag) ?? 0;
    if (volume <= journaled) {
      this.reportedFills.delete(tag);
      return false;
    }
    if (volume <= known) return false;
    this.reportedFills.set(tag, volume);
    this.journal.record('reported-fill', 'event', tag, {
      fillVolume: volume,
      filledPrice: seen.filledPrice ?? null,
      journaled,
    });
    return true;
  }

  /**
   * Trades of an order that reached the journal before the order could be named (it had been given up as
   * lost when they came): they become its fills, with its fill transitions. The engine already has them
   * as fills; it is told the order's filled size, and, for an adopted order, to re-assert the target.
   */
  private attachFills(tag: string, fills: readonly JournaledFill[], adopted: boolean): void {
    for (const fill of fills) {
      const current = this.journal.order(tag);
      if (!current) return;
      const step = transition(current, { type: 'fill', fillId: fill.fillId, size: fill.size });
      if (step.anomaly) this.anomaly(tag, step.anomaly);
      this.journal.tagFill(
        fill.fillId,
        tag,
        step.ignored
          ? undefined
          : {
              order: step.order,
              cause: {
                kind: 'fill-state',
                phase: 'event',
                payload: { event: { type: 'fill', fillId: fill.fillId, size: fill.size }, attached: true },
              },
            },
      );
    }
    const saved = this.journal.order(tag);
    if (saved) this.emitFromJournal(saved, undefined, adopted);
  }

  /** Places whose outcome is not known yet (in flight, unknown, or from a previous process). */
  unresolvedCount(): number {
    return this.journal.orders({ states: ['submitting', 'unknown'] }).length;
  }

  /** Creation time of the oldest order the bot did not place that is still working (for the search window). */
  oldestForeignWorking(): number | undefined {
    let oldest: number | undefined;
    for (const f of this.foreign.values()) if (f.working) oldest = Math.min(oldest ?? f.createdAt, f.createdAt);
    return oldest;
  }

  /**
   * Orders the bot did not place (the gateway's bracket legs, orders placed by hand) reach the engine as
   * `venue-<id>` order updates, so its book and the guard see the protective orders that are working.
   */
  private reportForeign(o: S.OpenOrder | S.Order, status: ReturnType<typeof venueStatusOf>, filledSize: number): void {
    const spec = foreignSpec(o, this.contracts.get(o.contractId)?.grid);
    if (!spec) return;
    const state: OrderState = status === 'open' ? 'working' : status;
    const key = `${state}|${o.size}|${filledSize}|${JSON.stringify(spec)}`;
    const known = this.foreign.get(o.id);
    if (known?.key === key) return;
    if (known === undefined && state !== 'working') return;
    // A finished order is forgotten once told (a later search showing it finished again is ignored above):
    // the map holds the working ones, not every order placed by hand or bracket leg of the run.
    if (state === 'working') this.foreign.set(o.id, { key, working: true, createdAt: Date.parse(o.creationTimestamp) });
    else this.foreign.delete(o.id);
    this.events.next({
      kind: 'order',
      orderId: `venue-${o.id}`,
      state,
      time: this.now(),
      contractId: o.contractId,
      side: o.side === OrderSide.Bid ? 'buy' : 'sell',
      size: o.size,
      filledSize,
      order: spec,
      ...(Number.isFinite(Date.parse(o.creationTimestamp)) ? { createdAt: Date.parse(o.creationTimestamp) } : {}),
      venueOrderId: o.id,
    });
  }

  /** Apply an Order/searchOpen result: every working order of ours that is absent has left the book. */
  applyOpenOrders(open: readonly S.OpenOrder[]): void {
    const ids = new Set(open.map((o) => o.id));
    for (const o of open) if (!this.journal.orderByVenueId(o.id)) this.reportForeign(o, 'open', 0);
    for (const order of this.journal.orders({ states: ['working', 'cancelling'] })) {
      if (order.venueOrderId !== undefined && ids.has(order.venueOrderId)) {
        this.apply(order.tag, { type: 'venueStatus', status: 'open' }, { kind: 'status', payload: { open: true } });
      }
      // Absent from the open list: filled, cancelled or expired, which only Order/search can tell apart.
    }
  }

  /**
   * Apply a Trade/search result. Each non-voided trade is a fill, applied once (by trade id). A trade of
   * an order the journal cannot name yet is held back while any of our places is unresolved (it may be
   * that order's); otherwise it is journaled without a tag (a bracket child, a position close, an order
   * placed by hand) so that positions stay right. Returns the time of the newest trade applied.
   */
  applyTrades(trades: readonly S.Trade[]): { newest: number | undefined; heldBack: number | undefined } {
    let newest: number | undefined;
    let heldBack: number | undefined;
    const unresolved = this.journal.orders({ states: ['submitting', 'unknown'] }).length > 0;
    const sorted = [...trades].sort(
      (a, b) => Date.parse(a.creationTimestamp) - Date.parse(b.creationTimestamp) || a.id - b.id,
    );
    for (const trade of sorted) {
      const time = Date.parse(trade.creationTimestamp);
      const fillId = String(trade.id);
      if (trade.voided || this.journal.hasFill(fillId)) {
        newest = Math.max(newest ?? time, time);
        continue;
      }
      const owner = this.journal.orderByVenueId(trade.orderId);
      if (!owner && unresolved) {
        heldBack = Math.min(heldBack ?? time, time);
        continue;
      }
      const grid = this.grid(trade.contractId);
      const exact = grid.toTicks(trade.price);
      const price = Number.isInteger(exact) ? exact : grid.roundToTicks(trade.price);
      if (!Number.isInteger(exact))
        this.anomaly(owner?.tag ?? null, `trade ${trade.id} price ${trade.price} is off the tick grid`);
      const side: Side = trade.side === TradeSide.Buy ? 'buy' : 'sell';
      const fill: Fill = {
        kind: 'fill',
        fillId,
        orderId: owner?.tag ?? `venue-${trade.orderId}`,
        contractId: trade.contractId,
        side,
        size: trade.size,
        price,
        fees: trade.fees,
        time,
      };
      const journaled = {
        fillId,
        tag: owner?.tag ?? null,
        venueOrderId: trade.orderId,
        contractId: trade.contractId,
        side,
        size: trade.size,
        price,
        fees: trade.fees,
        time,
      };
      newest = Math.max(newest ?? time, time);
      if (!owner) {
        if (!this.journal.addFill(journaled)) continue;
        this.events.next(fill);
        this.log.info(
          { tradeId: trade.id, orderId: trade.orderId, contractId: trade.contractId },
          'fill of an order the bot did not place',
        );
        continue;
      }
      // The fill and the order's fill transition are one transaction: neither is journaled without the other.
      const step = transition(owner, { type: 'fill', fillId, size: trade.size });
      if (step.anomaly) this.anomaly(owner.tag, step.anomaly);
      const added = this.journal.addFill(
        journaled,
        step.ignored
          ? undefined
          : {
              order: step.order,
              cause: {
                kind: 'fill-state',
                phase: 'event',
                payload: { event: { type: 'fill', fillId, size: trade.size } },
              },
            },
      );
      if (!added) continue;
      this.events.next(fill);
      const saved = this.journal.order(owner.tag);
      if (saved && (saved.state !== owner.state || saved.filledSize !== owner.filledSize)) this.emitFromJournal(saved);
    }
    return { newest, heldBack };
  }

  /** Latest Position/searchOpen, signed sizes per contract; used to judge whether a place reduces. */
  setPositions(positions: readonly S.Position[]): void {
    this.lastPositions = new Map(positions.map((p) => [p.contractId, p.type === 2 ? -p.size : p.size]));
  }

  /** While set, places that do not provably reduce a known position are refused. */
  setBlind(reason: string | undefined): void {
    if (reason !== this.blindReason) this.journal.record('visibility', 'event', null, { blind: reason ?? null });
    this.blindReason = reason;
  }

  get blind(): string | undefined {
    return this.blindReason;
  }

  // ------------------------------------------------------------------ kill switch

  /**
   * Kill switch: cancel our working orders through the transition table (a place still unresolved gets
   * its cancel as soon as it turns up), then cancel whatever else is open and close every position at
   * the gateway, reading back until flat or out of rounds.
   */
  async flatten(contractId?: string, options: { rounds?: number; pauseMs?: number } = {}): Promise<FlattenResult> {
    this.journal.record('flatten', 'before', null, { contractId: contractId ?? null });
    for (const order of this.journal.orders({ states: ['working', 'submitting', 'unknown'] })) {
      if (contractId === undefined || order.contractId === contractId)
        this.apply(order.tag, { type: 'cancelRequested' }, { kind: 'cancel-intent', payload: { flatten: true } });
    }
    await this.idle();
    const result = await flattenAccount(this.client, this.accountId, this.log, {
      ...options,
      ...(contractId === undefined ? {} : { contractId }),
    });
    this.journal.record('flatten', 'after', null, result);
    return result;
  }

  // ------------------------------------------------------------------ lifecycle

  /** Wait for every request in flight (their answers get journaled), then refuse new work. */
  async stop(): Promise<void> {
    this.stopped = true;
    while (this.tasks.size > 0) await Promise.allSettled([...this.tasks]);
  }

  async idle(): Promise<void> {
    while (this.tasks.size > 0) await Promise.allSettled([...this.tasks]);
  }

  complete(): void {
    this.events.complete();
  }

  // ------------------------------------------------------------------ internals

  private async sendPlace(tag: string, request: S.PlaceOrderRequest): Promise<void> {
    let event: OrderEvent;
    let payload: unknown;
    try {
      const venueOrderId = await this.client.placeOrder(request);
      event = { type: 'placeAccepted', venueOrderId };
      payload = { orderId: venueOrderId };
    } catch (error) {
      const outcome = error instanceof GatewayError ? error.outcome : 'unknown';
      payload = { outcome, error: describe(error) };
      if (outcome === 'unknown') {
        this.log.warn(
          { tag, endpoint: 'Order/place', err: error },
          'place outcome unknown; looking the order up by customTag',
        );
        event = { type: 'placeUnknown' };
      } else {
        this.log.warn({ tag, endpoint: 'Order/place', err: error }, 'place rejected');
        event = { type: 'placeRejected', reason: describe(error) };
      }
    } finally {
      this.placing.delete(tag);
    }
    this.apply(tag, event, { kind: 'place', phase: 'after', payload });
  }

  private async lookup(tag: string): Promise<void> {
    const order = this.journal.order(tag);
    if (!order) return;
    const from = order.createdAt - this.lookupSlackMs;
    try {
      const orders = await this.client.searchOrders({ accountId: this.accountId, startTimestamp: ISO(from) });
      this.applyOrderSearch(orders, from);
    } catch (error) {
      // Stays `unknown`; the poller's next Order/search resolves it. Nothing is sent for it meanwhile.
      this.log.warn(
        { tag, endpoint: 'Order/search', err: error },
        'lookup by customTag failed; will retry on the next poll',
      );
    }
  }

  private async sendCancel(tag: string): Promise<void> {
    const order = this.journal.order(tag);
    if (!order || order.venueOrderId === undefined) return;
    const request = { accountId: this.accountId, orderId: order.venueOrderId };
    this.journal.record('cancel', 'before', tag, request);
    let event: OrderEvent;
    let payload: unknown;
    try {
      await this.client.cancelOrder(request);
      event = { type: 'cancelAccepted' };
      payload = { ok: true };
    } catch (error) {
      const outcome = error instanceof GatewayError ? error.outcome : 'unknown';
      payload = { ok: false, outcome, error: describe(error) };
      this.log.warn({ tag, endpoint: 'Order/cancel', outcome, err: error }, 'cancel failed');
      event = outcome === 'unknown' ? { type: 'cancelUnknown' } : { type: 'cancelRejected', reason: describe(error) };
    }
    this.apply(tag, event, { kind: 'cancel', phase: 'after', payload });
  }

  private apply(
    tag: string,
    event: OrderEvent,
    cause: { kind: string; phase?: 'before' | 'after' | 'event'; payload: unknown },
    reportedFillGrew = false,
  ): void {
    const current = this.journal.order(tag);
    if (!current) {
      this.log.warn({ tag, event: event.type }, 'event for an order the journal does not know');
      return;
    }
    const result = transition(current, event);
    const adopted = current.state === 'lost' && result.order.state !== 'lost';
    if (result.anomaly) this.anomaly(tag, adopted ? this.adoptionText(current, result.anomaly) : result.anomaly);
    if (result.ignored) {
      if (cause.phase === 'after') this.journal.record(cause.kind, 'after', tag, cause.payload);
      if (reportedFillGrew) this.emitFromJournal(current);
      return;
    }
    this.journal.saveOrder(result.order, {
      kind: cause.kind,
      phase: cause.phase ?? 'event',
      payload: { event, data: cause.payload },
    });
    const saved = this.journal.order(tag);
    if (
      saved &&
      (adopted || reportedFillGrew || saved.state !== current.state || saved.filledSize !== current.filledSize)
    )
      // A rejection's line says why: the gateway's errorCode name and message travel with the update.
      this.emitFromJournal(saved, 'reason' in event ? event.reason : undefined, adopted);
    for (const effect of result.effects) {
      if (effect === 'lookupByTag') this.track(this.lookup(tag));
      else this.track(this.sendCancel(tag));
    }
  }

  private track(task: Promise<void>): void {
    const guarded = task.catch((error: unknown) => this.log.error({ err: error }, 'executor task failed'));
    this.tasks.add(guarded);
    void guarded.finally(() => this.tasks.delete(guarded));
  }

  /** Journal, log and keep a difference between what the bot believes and what the gateway shows. */
  anomaly(tag: string | null, message: string, detail?: object): void {
    const entry = { time: this.now(), tag, message };
    this.anomalies.push(entry);
    if (this.anomalies.length > ANOMALY_MEMORY) this.anomalies.splice(0, this.anomalies.length - ANOMALY_MEMORY);
    this.journal.record('anomaly', 'event', tag, { message, ...detail });
    this.log.warn({ tag, ...detail }, message);
  }

  private reducesKnownPosition(command: OrderCommand): boolean {
    const position = this.lastPositions.get(command.contractId) ?? 0;
    const signed = command.side === 'buy' ? command.size : -command.size;
    return position !== 0 && Math.sign(signed) === -Math.sign(position) && Math.abs(signed) <= Math.abs(position);
  }

  private grid(contractId: string) {
    const spec = this.contracts.get(contractId);
    if (!spec) throw new Error(`contract ${contractId} is not configured`);
    return spec.grid;
  }

  private placeRequest(command: OrderCommand): S.PlaceOrderRequest {
    // The engine checks intents, but the one mapping to Bid/Ask must not guess either.
    if (command.side !== 'buy' && command.side !== 'sell')
      throw new TypeError(`side ${JSON.stringify(command.side)} is not 'buy' or 'sell'`);
    const grid = this.grid(command.contractId);
    const o = command.order;
    const prices: Partial<Record<'limitPrice' | 'stopPrice' | 'trailPrice', number>> = {};
    let type: number;
    switch (o.type) {
      case 'market':
        type = OrderType.Market;
        break;
      case 'limit':
        type = OrderType.Limit;
        prices.limitPrice = grid.toPrice(o.limitPrice);
        break;
      case 'stop':
        type = OrderType.Stop;
        prices.stopPrice = grid.toPrice(o.stopPrice);
        break;
      case 'stopLimit':
        type = OrderType.StopLimit;
        prices.stopPrice = grid.toPrice(o.stopPrice);
        prices.limitPrice = grid.toPrice(o.limitPrice);
        break;
      case 'trailingStop':
        type = OrderType.TrailingStop;
        prices.trailPrice = grid.toPrice(o.trailPrice);
        break;
    }
    const b = command.bracket;
    return {
      accountId: this.accountId,
      contractId: command.contractId,
      type,
      side: command.side === 'buy' ? OrderSide.Bid : OrderSide.Ask,
      size: command.size,
      ...prices,
      customTag: command.id,
      ...signedBrackets(command.side, b),
    };
  }

  private emitOrder(
    command: OrderCommand,
    state: OrderState,
    filledSize: number,
    venueOrderId?: number,
    reason?: string,
  ): void {
    const createdAt = this.journal.order(command.id)?.createdAt;
    const update: OrderUpdate = {
      kind: 'order',
      orderId: command.id,
      state,
      time: this.now(),
      ...(createdAt === undefined ? {} : { createdAt }),
      contractId: command.contractId,
      side: command.side,
      size: command.size,
      filledSize,
      order: command.order,
      ...(venueOrderId === undefined ? {} : { venueOrderId }),
      ...(reason === undefined ? {} : { reason }),
    };
    this.events.next(update);
  }

  private emitFromJournal(order: JournaledOrder, reason?: string, adopted = false): void {
    const why =
      reason ?? (order.state === 'lost' ? 'not found at the gateway for the whole unknown-outcome window' : undefined);
    const update = journaledUpdate(order, this.now(), why, this.reportedFills.get(order.tag));
    this.events.next(adopted ? { ...update, adopted: true } : update);
  }

  /** The anomaly of an adopted order names it and the orders of its contract placed since it was given up. */
  private adoptionText(order: JournaledOrder, anomaly: string): string {
    const since = this.journal
      .orders()
      .filter((o) => o.contractId === order.contractId && o.createdAt >= order.updatedAt && o.tag !== order.tag)
      .map((o) => o.tag);
    return `${anomaly}; adopted, the engine corrects its exposure (orders placed since it was given up: ${since.join(', ') || 'none'})`;
  }
}

/** The engine's update for a journaled order, as of `time`; `reportedFilled` is the gateway's fill volume when ahead of the journal. */
export function journaledUpdate(
  order: JournaledOrder,
  time: number,
  reason?: string,
  reportedFilled?: number,
): OrderUpdate {
  return {
    kind: 'order',
    orderId: order.tag,
    state: engineState(order),
    time,
    contractId: order.contractId,
    side: order.side,
    size: order.size,
    filledSize: order.filledSize,
    ...(reportedFilled !== undefined && reportedFilled > order.filledSize
      ? { reportedFilledSize: reportedFilled }
      : {}),
    order: order.spec,
    createdAt: order.createdAt,
    ...(order.venueOrderId === undefined ? {} : { venueOrderId: order.venueOrderId }),
    ...(reason === undefined ? {} : { reason }),
  };
}

/** The engine's coarser view of a live order state. */
export function engineState(order: LiveOrder): OrderState {
  switch (order.state) {
    case 'submitting':
    case 'unknown':
      return 'pending';
    case 'working':
    case 'cancelling':
      return 'working';
    case 'lost':
      return 'rejected';
    default:
      return order.state;
  }
}

/** The engine's view of an order the bot did not place; undefined for types it has no spec for (join bid/ask). */
function foreignSpec(
  o: S.OpenOrder,
  grid: { toTicks(p: number): number; roundToTicks(p: number): number } | undefined,
): OrderSpec | undefined {
  if (!grid) return undefined;
  const ticks = (p: number | null): number | undefined => {
    if (p === null) return undefined;
    const t = grid.toTicks(p);
    return Number.isInteger(t) ? t : grid.roundToTicks(p);
  };
  const limit = ticks(o.limitPrice);
  const stop = ticks(o.stopPrice);
  switch (o.type) {
    case OrderType.Market:
      return { type: 'market' };
    case OrderType.Limit:
      return limit === undefined ? undefined : { type: 'limit', limitPrice: limit };
    case OrderType.Stop:
      return stop === undefined ? undefined : { type: 'stop', stopPrice: stop };
    case OrderType.StopLimit:
      return stop === undefined || limit === undefined
        ? undefined
        : { type: 'stopLimit', stopPrice: stop, limitPrice: limit };
    case OrderType.TrailingStop:
      // The open order shows the stop's current level; as an absolute trailPrice it gives the same distance.
      return stop === undefined ? undefined : { type: 'trailingStop', trailPrice: stop };
    default:
      return undefined;
  }
}
