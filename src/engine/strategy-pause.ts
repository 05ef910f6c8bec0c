/**
 * Pausing one strategy instance while the others trade: its stream keeps running (its indicators stay warm
 * and it keeps deciding), but the guard step refuses what would open or add to its risk (STRATEGY_PAUSED);
 * what reduces its own position, cancels and flattens pass, so a paused strategy can still get out.
 */
import type { Logger } from './log.ts';
import type { Multicast } from './multicast.ts';
import type { GuardResult } from './risk.ts';
import type { Intent, Side } from './types.ts';

/** A strategy instance paused or resumed, by whom and why (`engine.strategyStates$`). */
export interface StrategyStateChange {
  readonly strategyId: string;
  readonly paused: boolean;
  readonly reason: string;
  readonly time: number;
}

export class StrategyPauses {
  private readonly paused = new Map<string, StrategyStateChange>();

  constructor(
    private readonly changes: Multicast<StrategyStateChange>,
    private readonly logger: Logger,
  ) {}

  /** How many instances are paused: the guard step skips the check while none is. */
  get count(): number {
    return this.paused.size;
  }

  set(strategyId: string, paused: boolean, reason: string, time: number): void {
    const change: StrategyStateChange = { strategyId, paused, reason, time };
    if (paused) this.paused.set(strategyId, change);
    else this.paused.delete(strategyId);
    this.logger.warn({ strategyId, paused, reason }, paused ? 'strategy paused' : 'strategy resumed');
    this.changes.next(change);
  }

  /** The instances paused now, each with the change that paused it. */
  current(): StrategyStateChange[] {
    return [...this.paused.values()];
  }

  /**
   * The guard's result for a paused strategy's order: only what closes `position` (the strategy's own on a
   * shared contract, else the account's) passes; a modify may not grow an order that does not reduce it.
   */
  check(
    strategyId: string,
    intent: Intent,
    result: GuardResult,
    position: number,
    order?: { readonly side: Side; readonly remaining: number },
  ): GuardResult {
    const pause = this.paused.get(strategyId);
    if (pause === undefined || !result.accepted) return result;
    const why = `strategy '${strategyId}' is paused (${pause.reason})`;
    if (intent.kind === 'place') {
      const size = result.size ?? intent.size;
      const closable = (intent.side === 'buy' ? position < 0 : position > 0) ? Math.min(Math.abs(position), size) : 0;
      if (closable >= size) return result;
      if (closable > 0)
        return {
          accepted: true,
          size: closable,
          adjusted: 'STRATEGY_PAUSED',
          message: `${why}: only what reduces its position passes; reduced to the closing ${closable}`,
        };
      return { accepted: false, code: 'STRATEGY_PAUSED', message: `${why}: no new risk` };
    }
    if (intent.kind === 'modify' && intent.size !== undefined && order !== undefined && intent.size > order.remaining) {
      const reduces = order.side === 'buy' ? position < 0 : position > 0;
      if (!reduces) return { accepted: false, code: 'STRATEGY_PAUSED', message: `${why}: its orders may not grow` };
    }
    return result;
  }
}
