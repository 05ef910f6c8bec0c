import {
  FILL_REPEATED,
  NO_TRADE,
  type AccountSnapshot,
  type Accounting,
  type ClosedTrade,
  type PositionView,
} from './accounting.ts';
import type { BarClock } from './bar-clock.ts';
import type { DecisionLog } from './decision-log.ts';
import type { GuardStep } from './guard-step.ts';
import type { Logger } from './log.ts';
import type { Multicast } from './multicast.ts';
import { trackTrail, type OrderBook } from './order-book.ts';
import type { RuleEnforcer } from './rule-enforcer.ts';
import type { RuleBook } from './account-rules.ts';
import type { StrategyLedger } from './strategy-ledger.ts';
import { targetKey, type TargetKeeper } from './target-keeper.ts';
import type { TradingStateMachine } from './trading-state.ts';
import type { Fill, Intent, OrderState, OrderUpdate, Venue, VenueEvent } from './types.ts';

/** An order in this state changes no more (compared, not looked up in a set: once or twice a fill). */
function isTerminal(state: OrderState): boolean {
  return state === 'filled' || state === 'cancelled' || state === 'rejected' || state === 'expired';
}

export interface VenueBridgeParts {
  readonly venue: Venue;
  readonly book: OrderBook;
  readonly accounting: Accounting;
  readonly rules: RuleBook;
  readonly enforcer: RuleEnforcer;
  readonly guard: GuardStep;
  readonly trading: TradingStateMachine;
  readonly decisions: DecisionLog;
  readonly keeper: TargetKeeper;
  readonly ledger: StrategyLedger;
  readonly barClock: BarClock;
  readonly fills$: Multicast<Fill>;
  readonly orders$: Multicast<OrderUpdate>;
  readonly trades$: Multicast<ClosedTrade>;
  readonly positions$: Multicast<PositionView>;
  readonly account$: Multicast<AccountSnapshot>;
  readonly logger: Logger;
}

/**
 * The venue's reports applied to the engine: order updates to the book, fills to the book and
 * accounting (and the rules outside a bar), the account's canTrade to the trading state, and in live
 * mode order outcomes to the target keeper.
 */
export class VenueBridge {
  private readonly venue: Venue;
  private readonly book: OrderBook;
  private readonly accounting: Accounting;
  private readonly rules: RuleBook;
  private readonly enforcer: RuleEnforcer;
  private readonly guard: GuardStep;
  private readonly trading: TradingStateMachine;
  private readonly decisions: DecisionLog;
  private readonly keeper: TargetKeeper;
  private readonly ledger: StrategyLedger;
  private readonly barClock: BarClock;
  private readonly fills$: Multicast<Fill>;
  private readonly orders$: Multicast<OrderUpdate>;
  private readonly trades$: Multicast<ClosedTrade>;
  private readonly positions$: Multicast<PositionView>;
  private readonly account$: Multicast<AccountSnapshot>;
  private readonly logger: Logger;
  /** The venue answers later (its traits' kind is `live`): live mode. */
  private readonly live: boolean;
  private readonly subscription: { unsubscribe(): void };

  constructor(parts: VenueBridgeParts) {
    this.venue = parts.venue;
    this.book = parts.book;
    this.accounting = parts.accounting;
    this.rules = parts.rules;
    this.enforcer = parts.enforcer;
    this.guard = parts.guard;
    this.trading = parts.trading;
    this.decisions = parts.decisions;
    this.keeper = parts.keeper;
    this.ledger = parts.ledger;
    this.barClock = parts.barClock;
    this.fills$ = parts.fills$;
    this.orders$ = parts.orders$;
    this.trades$ = parts.trades$;
    this.positions$ = parts.positions$;
    this.account$ = parts.account$;
    this.logger = parts.logger;
    this.live = parts.venue.traits.kind === 'live';
    this.subscription =
      this.venue.listen !== undefined
        ? this.venue.listen(this.onEvent)
        : this.venue.events.subscribe({
            next: this.onEvent,
            error: (error: unknown) => this.logger.error({ err: error }, 'venue event stream failed'),
          });
  }

  close(): void {
    this.subscription.unsubscribe();
  }

  /** The venue's event listener (one function for the engine's life). */
  readonly onEvent = (event: VenueEvent): void => {
    switch (event.kind) {
      case 'fill':
        return this.onFill(event);
      case 'order':
        return this.onOrder(event);
      case 'account':
        if (!event.canTrade && this.trading.current.state !== 'HALTED')
          this.trading.change('HALTED', 'venue reports canTrade = false', Infinity, event.time);
        else if (
          event.canTrade &&
          this.trading.current.state === 'HALTED' &&
          this.trading.current.reason === 'venue reports canTrade = false'
        ) {
          this.trading.change('ACTIVE', 'venue reports canTrade = true', Infinity, event.time);
        }
        return;
    }
  };

  private onOrder(update: OrderUpdate): void {
    const existing = this.book.get(update.orderId);
    const reported = Math.max(update.filledSize, update.reportedFilledSize ?? 0);
    if (isTerminal(update.state)) {
      if (existing !== undefined) {
        existing.reportedFilled = Math.max(existing.reportedFilled, reported);
        existing.filledSize = Math.max(existing.filledSize, update.filledSize);
        this.book.remove(existing);
      } else if (reported > update.filledSize) {
        this.book.addProvisional(update.orderId, update.contractId, update.side, reported - update.filledSize);
      }
    } else if (existing === undefined) {
      // Orders the venue created (bracket legs), or one of ours adopted again, join the book so targets and the guard
      // see them.
      const trail =
        update.order.type === 'trailingStop'
          ? trackTrail(update.side, this.guard.lastPrice(update.contractId), update.order.trailPrice)
          : undefined;
      const order = this.book.add(
        update.orderId,
        strategyOf(update.orderId),
        update.contractId,
        update.side,
        update.size,
        update.order,
        update.state,
        trail,
        undefined,
      );
      order.filledSize = update.filledSize;
      order.reportedFilled = reported;
    } else {
      existing.state = update.state;
      existing.size = update.size;
      existing.filledSize = Math.max(existing.filledSize, update.filledSize);
      existing.reportedFilled = Math.max(existing.reportedFilled, reported);
      existing.order = update.order;
    }
    // The update may be the venue's view: orders$ copies it for its subscribers.
    if (this.orders$.observed) this.orders$.next(update);
    // Read after the subscribers acted: a live venue (the gateway's, which has no `listen`) reports objects
    // of its own, never a view their actions could rewrite.
    if (this.live) this.afterOrderOutcome(update, reported);
  }

  private afterOrderOutcome(update: OrderUpdate, reported: number): void {
    if (update.adopted === true) {
      const key = targetKey(strategyOf(update.orderId), update.contractId);
      if (!isTerminal(update.state)) {
        // Given up once, the strategy has decided without it since: it must not execute now.
        const cancel: Intent = { kind: 'cancel', orderId: update.orderId, id: update.orderId };
        this.decisions.decide(
          strategyOf(update.orderId),
          cancel,
          undefined,
          { accepted: true, message: 'adopted order cancelled: its place had been given up' },
          update.time,
        );
        this.venue.cancel(update.orderId);
      }
      this.keeper.watch(update.orderId, key);
      if (reported > 0) this.keeper.schedule(key);
      return;
    }
    const key = this.keeper.watching(update.orderId);
    if (key === undefined || update.state === 'pending') return;
    if (update.state === 'working' || reported > 0) this.keeper.schedule(key);
    if (isTerminal(update.state)) this.keeper.unwatch(update.orderId);
  }

  private onFill(fill: Fill): void {
    if (fill.time >= this.enforcer.nextDayStart) this.enforcer.rollDay(fill.time);
    const order = this.book.get(fill.orderId);
    // The book knows the order's strategy, whatever its id, also of the order it let go last (filled just
    // before its fill came); an order gone before that is named by its id's prefix.
    const known = order ?? this.book.recent(fill.orderId);
    const label = known !== undefined ? known.label : this.book.labelOf(fill.orderId);
    const owner = known !== undefined ? known.strategyId : undefined;
    this.ledger.beforeFill(fill, owner);
    const closed = this.accounting.bookFillAt(fill, this.rules.tradingDay, label);
    if (closed === FILL_REPEATED) {
      this.logger.debug({ fillId: fill.fillId }, 'fill seen twice, ignored');
      return;
    }
    this.ledger.afterFill(fill, owner, this.rules.tradingDay, label);
    if (order !== undefined) {
      order.filledSize += fill.size;
      if (order.reportedFilled < order.filledSize) order.reportedFilled = order.filledSize;
      if (order.filledSize >= order.size) this.book.remove(order);
    } else {
      this.book.confirmFill(fill.orderId, fill.size);
    }
    const passLock = this.enforcer.passLock;
    if (passLock !== undefined) passLock.noteFill();
    this.fills$.next(fill);
    if (closed !== NO_TRADE && this.trades$.observed) this.trades$.next(this.accounting.closedTrades.trade(closed));
    if (this.positions$.observed) this.positions$.next(this.accounting.positionView(fill.contractId));
    if (this.account$.observed) this.account$.next(this.accounting.snapshot());
    if (this.barClock.index < 0) {
      // The fill's price is its contract's latest trade: the mark, rather than the last bar's close. A live
      // restart replays the journal's fills with no bar between them, and the first fill's price as the
      // mark of every later one read a rising market as a loss and broke a floor that never broke.
      const equity = this.accounting.balance + this.accounting.unrealizedWith(fill.contractId, fill.price);
      this.rules.evaluate(fill.time, this.accounting.balance, equity, equity, this.enforcer.onBreach);
      if (passLock !== undefined) this.enforcer.checkPassLock(fill.time, equity);
    }
    if (this.live) {
      const key = this.keeper.watching(fill.orderId);
      if (key !== undefined) this.keeper.schedule(key);
    }
  }
}

/** Client ids are `<strategyId>-<sequence>`; venue-created legs `<entry id>:sl` file under the entry's strategy. */
function strategyOf(orderId: string): string {
  return orderId.slice(0, Math.max(0, orderId.lastIndexOf('-')));
}
