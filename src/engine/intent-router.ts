import type { Accounting } from './accounting.ts';
import type { BarClock } from './bar-clock.ts';
import type { DecisionLog } from './decision-log.ts';
import { sequenceIds } from './column-blocks.ts';
import { NumberedText } from './numbered-text.ts';
import type { GuardStep } from './guard-step.ts';
import { intentShapeProblem } from './intent-shape.ts';
import { copyIntent, MARKET_ORDER, PRIMARY_CONTRACT } from './intents.ts';
import type { Logger } from './log.ts';
import type { Multicast } from './multicast.ts';
import { modifiedSpec, orderTowards, trackTrail, type Exposure, type OrderBook } from './order-book.ts';
import type { OrderRate } from './order-rate.ts';
import { modifyInTicks, placeInTicks } from './price-units.ts';
import { checkIntent, type GuardResult, type ResolvedRiskConfig } from './risk.ts';
import { ownExposure, ownPosition } from './strategy-exposure.ts';
import type { StrategyLedger } from './strategy-ledger.ts';
import type { StrategyPauses } from './strategy-pause.ts';
import { TargetKeeper, targetKey } from './target-keeper.ts';
import type { TradingStateMachine } from './trading-state.ts';
import type {
  ContractSpec,
  Intent,
  ModifyIntent,
  OrderCommand,
  PlaceIntent,
  TargetIntent,
  Venue,
  Writable,
} from './types.ts';

const ACCEPTED_FLATTEN = Object.freeze({ accepted: true as const, message: 'flatten' });

// Objects of one shape each, every field set by the caller: the router's own (`targetScratch`, `placeScratch`,
// `commandScratch`), or new ones for a call inside another.
function blankTarget(): Writable<TargetIntent> {
  return { kind: 'target', contractId: '', size: 0, id: '', label: undefined };
}

function blankPlace(): Writable<PlaceIntent> {
  return { kind: 'place', id: '', contractId: '', side: 'buy', size: 0, order: MARKET_ORDER, label: undefined };
}

function blankCommand(): Writable<OrderCommand> {
  return {
    id: '',
    contractId: '',
    side: 'buy',
    size: 0,
    order: MARKET_ORDER,
    bracket: undefined,
    decidedAt: Number.NaN,
  };
}

export interface StampedIntent {
  readonly strategyId: string;
  readonly intent: Intent;
  /** Decision time, epoch ms. */
  readonly time: number;
}

/** The strategy an intent comes from, as far as routing needs it: its contracts, the first its primary. */
export interface IntentSource {
  readonly contracts: readonly ContractSpec[];
}

export interface IntentRouterParts {
  readonly contracts: ReadonlyMap<string, ContractSpec>;
  /** The engine's first contract: an intent without a strategy trades it. */
  readonly defaultContract: string;
  readonly venue: Venue;
  readonly limits: ResolvedRiskConfig;
  readonly book: OrderBook;
  readonly accounting: Accounting;
  readonly guard: GuardStep;
  readonly rate: OrderRate;
  readonly trading: TradingStateMachine;
  readonly decisions: DecisionLog;
  readonly intents$: Multicast<StampedIntent>;
  readonly barClock: BarClock;
  readonly logger: Logger;
  readonly riskStrategyId: string;
  readonly sequenceStart: number | Readonly<Record<string, number>> | undefined;
  readonly findInstance: (strategyId: string) => IntentSource | undefined;
  /** Each strategy's own lines: a target on a contract strategies share moves the strategy's own. */
  readonly ledger: StrategyLedger;
  /** Paused strategies: the guard step refuses what adds to their risk. */
  readonly pauses: StrategyPauses;
}

/**
 * An intent's way to the venue: ids, prices in ticks, targets and flattens expanded into orders, each
 * order checked by the risk guard, accepted ones booked and sent.
 */
export class IntentRouter {
  /** Re-asserts live targets when an order's outcome becomes known (the venue bridge reports outcomes to it). */
  readonly keeper: TargetKeeper;
  /** Per strategy id: the `<id>-` prefix of its client ids and its next sequence number (one lookup an id). */
  private readonly sequences = new Map<string, { readonly ids: NumberedText; next: number }>();
  private readonly contracts: ReadonlyMap<string, ContractSpec>;
  private readonly defaultContract: string;
  private readonly venue: Venue;
  private readonly limits: ResolvedRiskConfig;
  private readonly book: OrderBook;
  private readonly accounting: Accounting;
  private readonly guard: GuardStep;
  private readonly rate: OrderRate;
  private readonly trading: TradingStateMachine;
  private readonly decisions: DecisionLog;
  private readonly intents$: Multicast<StampedIntent>;
  private readonly barClock: BarClock;
  private readonly logger: Logger;
  /** The venue answers later (its traits' kind is `live`): live mode. */
  private readonly live: boolean;
  private readonly riskStrategyId: string;
  private readonly sequenceStart: number | Readonly<Record<string, number>> | undefined;
  private readonly findInstance: (strategyId: string) => IntentSource | undefined;
  private readonly ledger: StrategyLedger;
  private readonly pauses: StrategyPauses;
  /** Calls of `processIntent` under way (a venue's event can start one inside another). */
  private depth = 0;
  /**
   * The decision time and the time of each call under way, by depth (`[2d]`, `[2d + 1]`): a call inside
   * another writes a pair of its own and leaves the outer one's as it was.
   */
  private readonly times: number[] = [Number.NaN, Number.NaN];
  /**
   * The intents a target makes on its way, for the outermost call only: nothing keeps them (the decision
   * log and `intents$` publish copies; the book and the venue copy their fields), so a backtest makes none
   * per order. A call inside another makes its own, since the outer one's are still in use.
   */
  private readonly targetScratch = blankTarget();
  private readonly placeScratch = blankPlace();
  /** The venue copies a place command during the call (its traits say so): one object serves every order. */
  private readonly lendsCommands: boolean;
  private readonly commandScratch = blankCommand();

  constructor(parts: IntentRouterParts) {
    this.contracts = parts.contracts;
    this.defaultContract = parts.defaultContract;
    this.venue = parts.venue;
    this.limits = parts.limits;
    this.book = parts.book;
    this.accounting = parts.accounting;
    this.guard = parts.guard;
    this.rate = parts.rate;
    this.trading = parts.trading;
    this.decisions = parts.decisions;
    this.intents$ = parts.intents$;
    this.barClock = parts.barClock;
    this.logger = parts.logger;
    this.live = parts.venue.traits.kind === 'live';
    this.lendsCommands = !parts.venue.traits.keepsCommands;
    this.riskStrategyId = parts.riskStrategyId;
    this.sequenceStart = parts.sequenceStart;
    this.findInstance = parts.findInstance;
    this.ledger = parts.ledger;
    this.pauses = parts.pauses;
    this.keeper = new TargetKeeper((strategyId, contractId, size) => this.reassertTarget(strategyId, contractId, size));
  }

  /** The next sequence number a strategy will use. */
  nextSequence(strategyId: string): number {
    return this.sequences.get(strategyId)?.next ?? this.firstSequence(strategyId);
  }

  /** The next client id of a strategy: `<strategyId>-<sequence>`. */
  nextId(strategyId: string): string {
    let sequence = this.sequences.get(strategyId);
    if (sequence === undefined) {
      sequence = { ids: new NumberedText(`${strategyId}-`), next: this.firstSequence(strategyId) };
      this.sequences.set(strategyId, sequence);
    }
    const n = sequence.next++;
    const id = sequence.ids.text(n);
    // The order and fill columns then keep the id as these two numbers without parsing it back.
    sequenceIds.made(id, sequence.ids.prefix, n);
    return id;
  }

  /** The sequence number a strategy starts from: the configured one (live restarts), else 1. */
  private firstSequence(strategyId: string): number {
    return typeof this.sequenceStart === 'number' ? this.sequenceStart : (this.sequenceStart?.[strategyId] ?? 1);
  }

  resolveContract(instance: IntentSource | undefined, contractId: string): string {
    if (contractId !== PRIMARY_CONTRACT) return contractId;
    return instance?.contracts[0]?.id ?? this.defaultContract;
  }

  processIntent(
    instance: IntentSource | undefined,
    strategyId: string,
    raw: Intent,
    decidedAt: number,
    time: number,
  ): void {
    const d = this.depth;
    this.times[2 * d] = decidedAt;
    this.times[2 * d + 1] = time;
    this.call(instance, strategyId, raw);
  }

  /**
   * `processIntent` at the bar the bar loop is on: decided at its start, now its end. The times are read
   * here, not passed: a time passed to a call is a 16-byte heap number (two an order).
   */
  processAtBar(instance: IntentSource | undefined, strategyId: string, raw: Intent): void {
    const d = this.depth;
    this.times[2 * d] = this.barClock.barStartOr(Number.NaN);
    this.times[2 * d + 1] = this.barClock.now;
    this.call(instance, strategyId, raw);
  }

  private call(instance: IntentSource | undefined, strategyId: string, raw: Intent): void {
    this.depth++;
    try {
      this.route(instance, strategyId, raw);
    } finally {
      this.depth--;
    }
  }

  /** The decision time of the call under way (the start of the bar it was decided on). */
  private decidedAt(): number {
    return this.times[2 * this.depth - 2]!;
  }

  /** The time of the call under way (the end of that bar, or the clock's time). */
  private now(): number {
    return this.times[2 * this.depth - 1]!;
  }

  private route(instance: IntentSource | undefined, strategyId: string, raw: Intent): void {
    const time = this.now();
    const problem = intentShapeProblem(raw);
    if (problem !== undefined) {
      this.decisions.decide(
        strategyId,
        raw,
        undefined,
        { accepted: false, code: 'INVALID_INTENT', message: `${problem.field}: ${problem.message}` },
        time,
      );
      return;
    }
    let intent: Intent = raw;
    if (raw.kind === 'target' && raw.id === undefined) {
      // The hot path of target-position strategies: the router's own target, filled again (`targetScratch`).
      const contractId =
        raw.contractId === PRIMARY_CONTRACT ? this.resolveContract(instance, PRIMARY_CONTRACT) : raw.contractId;
      // The scratch has no `at` (a field added to it would stay): a target stamped at a bar gets its own.
      const stamped = raw.at === undefined && this.depth === 1 ? this.targetScratch : blankTarget();
      stamped.contractId = contractId;
      stamped.size = raw.size;
      stamped.id = this.nextId(strategyId);
      stamped.label = raw.label;
      if (raw.at !== undefined) stamped.at = raw.at;
      intent = stamped;
    } else if (intent.id === undefined) intent = { ...intent, id: this.nextId(strategyId) };
    if ((intent.kind === 'place' || intent.kind === 'target') && intent.contractId === PRIMARY_CONTRACT) {
      intent = { ...intent, contractId: this.resolveContract(instance, intent.contractId) };
    } else if (intent.kind === 'flatten' && intent.contractId === PRIMARY_CONTRACT) {
      intent = { ...intent, contractId: this.resolveContract(instance, PRIMARY_CONTRACT) };
    }
    if ((intent.kind === 'place' || intent.kind === 'modify') && intent.unit === 'price') {
      const inTicks = this.toTicks(intent);
      if (inTicks !== undefined && 'accepted' in inTicks) {
        this.decisions.decide(strategyId, intent, undefined, inTicks, time);
        return;
      }
      if (inTicks !== undefined) intent = inTicks;
    }
    if (this.intents$.observed) this.intents$.next({ strategyId, intent: copyIntent(intent), time });
    switch (intent.kind) {
      case 'target':
        return this.expandTarget(strategyId, intent);
      case 'flatten':
        return this.expandFlatten(strategyId, intent);
      default: {
        let result = checkIntent(intent, this.guard.refresh(time), this.limits);
        if (this.pauses.count > 0) result = this.pausedCheck(strategyId, intent, result);
        this.decisions.decide(strategyId, intent, undefined, result, time);
        if (result.accepted) this.execute(strategyId, intent, result);
      }
    }
  }

  /**
   * A place or modify in prices, in ticks of its contract; undefined when the contract or order is
   * unknown (the guard then refuses it for that).
   */
  private toTicks(intent: PlaceIntent | ModifyIntent): PlaceIntent | ModifyIntent | GuardResult | undefined {
    if (intent.kind === 'place') {
      const contract = this.contracts.get(intent.contractId);
      return contract === undefined ? undefined : placeInTicks(intent, contract);
    }
    const order = this.book.get(intent.orderId);
    const contract = order === undefined ? undefined : this.contracts.get(order.contractId);
    return contract === undefined ? undefined : modifyInTicks(intent, contract);
  }

  private execute(strategyId: string, intent: Intent, result: GuardResult & { accepted: true }): void {
    const decidedAt = this.decidedAt();
    const time = this.now();
    switch (intent.kind) {
      case 'place': {
        const size = result.size ?? intent.size;
        const id = intent.id!;
        const trail =
          intent.order.type === 'trailingStop'
            ? trackTrail(intent.side, this.guard.lastPrice(intent.contractId), intent.order.trailPrice)
            : undefined;
        this.book.add(
          id,
          strategyId,
          intent.contractId,
          intent.side,
          size,
          intent.order,
          'pending',
          trail,
          intent.label,
        );
        this.rate.noteSent(time);
        const command = this.lendsCommands && this.depth === 1 ? this.commandScratch : blankCommand();
        command.id = id;
        command.contractId = intent.contractId;
        command.side = intent.side;
        command.size = size;
        command.order = intent.order;
        command.bracket = intent.bracket;
        command.decidedAt = decidedAt;
        this.venue.place(command);
        return;
      }
      case 'modify': {
        const order = this.book.get(intent.orderId);
        if (order !== undefined) {
          if (intent.size !== undefined) order.size = intent.size + order.filledSize;
          order.order = modifiedSpec(order.order, intent);
          if (intent.trailPrice !== undefined)
            this.book.setTrail(
              order,
              trackTrail(order.side, this.guard.lastPrice(order.contractId), intent.trailPrice),
            );
        }
        this.rate.noteSent(time);
        this.venue.modify({
          orderId: intent.orderId,
          ...(intent.size === undefined ? {} : { size: intent.size }),
          ...(intent.limitPrice === undefined ? {} : { limitPrice: intent.limitPrice }),
          ...(intent.stopPrice === undefined ? {} : { stopPrice: intent.stopPrice }),
          ...(intent.trailPrice === undefined ? {} : { trailPrice: intent.trailPrice }),
        });
        return;
      }
      case 'cancel':
        this.venue.cancel(intent.orderId);
        return;
      default:
        return;
    }
  }

  private expandTarget(strategyId: string, intent: Intent & { kind: 'target' }): void {
    const time = this.now();
    if (!Number.isInteger(intent.size)) {
      this.decisions.decide(
        strategyId,
        intent,
        undefined,
        { accepted: false, code: 'INVALID_SIZE', message: `target ${intent.size} is not a whole number` },
        time,
      );
      return;
    }
    if (!this.contracts.has(intent.contractId)) {
      this.decisions.decide(
        strategyId,
        intent,
        undefined,
        { accepted: false, code: 'UNKNOWN_CONTRACT', message: `unknown contract '${intent.contractId}'` },
        time,
      );
      return;
    }
    if (this.live) this.keeper.noteTarget(strategyId, intent.contractId, intent.size);
    const exposure = this.exposureOf(strategyId, intent.contractId);
    if (this.live && exposure.pendingBuys + exposure.pendingSells > 0)
      this.notePendingCounted(strategyId, intent.contractId);
    const diff = orderTowards(intent.size, exposure);
    if (diff === 0) {
      this.decisions.decide(strategyId, intent, undefined, { accepted: true, message: 'already at target' }, time);
      return;
    }
    const order = this.depth === 1 ? this.placeScratch : blankPlace();
    order.id = intent.id!;
    order.contractId = intent.contractId;
    order.side = diff > 0 ? 'buy' : 'sell';
    order.size = Math.abs(diff);
    order.label = intent.label;
    let result = checkIntent(order, this.guard.refresh(time), this.limits);
    if (this.pauses.count > 0) result = this.pausedCheck(strategyId, order, result);
    this.decisions.decide(strategyId, order, intent, result, time);
    if (result.accepted) this.execute(strategyId, order, result);
  }

  /**
   * What a target of this strategy moves: on a contract strategies share, its own position and orders;
   * otherwise the account's, as with one strategy.
   */
  private exposureOf(strategyId: string, contractId: string): Exposure {
    return this.ledger.anyShared && this.ledger.isShared(contractId) && strategyId !== this.riskStrategyId
      ? ownExposure(this.book, this.ledger, strategyId, contractId)
      : this.book.exposure(contractId, this.accounting.position(contractId));
  }

  /** The position a paused strategy may only reduce: its own on a shared contract, else the account's. */
  private pausedCheck(strategyId: string, intent: Intent, result: GuardResult): GuardResult {
    if (!result.accepted || (intent.kind !== 'place' && intent.kind !== 'modify')) return result;
    const order = intent.kind === 'modify' ? this.book.get(intent.orderId) : undefined;
    const contractId = intent.kind === 'place' ? intent.contractId : order?.contractId;
    if (contractId === undefined) return result;
    const position =
      this.ledger.anyShared && this.ledger.isShared(contractId)
        ? ownPosition(this.book, this.ledger, strategyId, contractId)
        : this.guard.position(contractId);
    return this.pauses.check(
      strategyId,
      intent,
      result,
      position,
      order === undefined ? undefined : { side: order.side, remaining: order.size - order.filledSize },
    );
  }

  /** The pending orders of a contract were counted conservatively: their outcome must re-assert this target. */
  private notePendingCounted(strategyId: string, contractId: string): void {
    const key = targetKey(strategyId, contractId);
    const own = this.ledger.anyShared && this.ledger.isShared(contractId);
    for (let k = 0; k < this.book.size; k++) {
      const order = this.book.at(k);
      if (order.contractId === contractId && order.state === 'pending' && (!own || order.strategyId === strategyId))
        this.keeper.watch(order.id, key);
    }
  }

  /** Bring a strategy's exposure back to its last target (at most one order); outside ACTIVE only a reduction. */
  private reassertTarget(strategyId: string, contractId: string, size: number): void {
    const exposure = this.exposureOf(strategyId, contractId);
    const diff = orderTowards(size, exposure);
    if (diff === 0) return;
    const position = exposure.definite;
    const reduces = Math.sign(diff) === -Math.sign(position) && Math.abs(diff) <= Math.abs(position);
    if (this.trading.current.state !== 'ACTIVE' && !reduces) return;
    this.logger.warn(
      { strategyId, contractId, target: size, exposure },
      're-asserting the target after an order outcome became known',
    );
    const instance = this.findInstance(strategyId);
    this.processIntent(
      instance,
      strategyId,
      { kind: 'target', contractId, size },
      this.barClock.time(),
      this.barClock.time(),
    );
  }

  private expandFlatten(strategyId: string, intent: Intent & { kind: 'flatten' }): void {
    const time = this.now();
    const targets = intent.contractId === undefined ? [...this.contracts.keys()] : [intent.contractId];
    let any = false;
    for (const contractId of targets) {
      if (this.ledger.anyShared && strategyId !== this.riskStrategyId && this.ledger.isShared(contractId)) {
        if (this.flattenOwn(strategyId, contractId, intent, targets.length === 1)) any = true;
        continue;
      }
      for (const order of this.book.values()) {
        if (order.contractId !== contractId) continue;
        any = true;
        const cancel: Intent = { kind: 'cancel', orderId: order.id, id: order.id };
        this.decisions.decide(strategyId, cancel, intent, ACCEPTED_FLATTEN, time);
        this.venue.cancel(order.id);
      }
      const position = this.accounting.position(contractId) + this.book.provisionalPosition(contractId);
      if (position !== 0) {
        any = true;
        const close: PlaceIntent = {
          kind: 'place',
          id: targets.length === 1 ? intent.id! : this.nextId(strategyId),
          contractId,
          side: position > 0 ? 'sell' : 'buy',
          size: Math.abs(position),
          order: MARKET_ORDER,
        };
        // Closing orders of a flatten pass in every state (the kill switch must be able to flatten).
        this.decisions.decide(strategyId, close, intent, ACCEPTED_FLATTEN, time);
        this.execute(strategyId, close, ACCEPTED_FLATTEN);
      }
    }
    if (!any)
      this.decisions.decide(strategyId, intent, undefined, { accepted: true, message: 'nothing to flatten' }, time);
  }

  /**
   * A strategy's flatten of a contract it shares: its own orders cancelled, its own position closed by an
   * order the guard checks against the account (closing one strategy's line may open the account's).
   */
  private flattenOwn(
    strategyId: string,
    contractId: string,
    intent: Intent & { kind: 'flatten' },
    single: boolean,
  ): boolean {
    const time = this.now();
    let any = false;
    for (const order of this.book.values()) {
      if (order.contractId !== contractId || order.strategyId !== strategyId) continue;
      any = true;
      const cancel: Intent = { kind: 'cancel', orderId: order.id, id: order.id };
      this.decisions.decide(strategyId, cancel, intent, ACCEPTED_FLATTEN, time);
      this.venue.cancel(order.id);
    }
    const position = ownPosition(this.book, this.ledger, strategyId, contractId);
    if (position === 0) return any;
    const close: PlaceIntent = {
      kind: 'place',
      id: single ? intent.id! : this.nextId(strategyId),
      contractId,
      side: position > 0 ? 'sell' : 'buy',
      size: Math.abs(position),
      order: MARKET_ORDER,
    };
    const result = checkIntent(close, this.guard.refresh(time), this.limits);
    this.decisions.decide(strategyId, close, intent, result, time);
    if (result.accepted) this.execute(strategyId, close, result);
    return true;
  }

  /** The engine's own flatten of one contract (the calendar flat-by before its market closes). */
  flattenContract(contractId: string, reason: string, time: number): void {
    this.logger.warn({ reason, contractId }, 'engine flattens a contract');
    this.keeper.zero();
    this.processIntent(
      undefined,
      this.riskStrategyId,
      { kind: 'flatten', contractId },
      this.barClock.barStartOr(time),
      time,
    );
  }

  /** The engine's own flatten of every position (rule breach, flat-by time, kill switch). */
  flattenAll(reason: string, time: number): void {
    this.logger.warn({ reason }, 'engine flattens every position');
    // The strategies' targets no longer stand: a re-assertion may only bring the position back to flat.
    this.keeper.zero();
    this.processIntent(undefined, this.riskStrategyId, { kind: 'flatten' }, this.barClock.barStartOr(time), time);
  }
}
