import type { Logger } from './log.ts';
import type { Multicast } from './multicast.ts';
import type { GuardResult } from './risk.ts';
import { copyIntent } from './intents.ts';
import type { Intent } from './types.ts';

/** One risk-guard decision. Expanded target and flatten intents give one decision per resulting order. */
export interface Decision {
  readonly strategyId: string;
  /** What was checked (a place, modify or cancel; or a target/flatten that needed no order). */
  readonly intent: Intent;
  /** The target or flatten intent this order was expanded from. */
  readonly origin?: Intent;
  readonly result: GuardResult;
  readonly time: number;
}

/** Where every guard decision goes: the log, the rejection counts and `decisions$`. */
export class DecisionLog {
  // Counted here, so a caller that needs only the counts (a backtest without decisions.csv) need not
  // observe decisions$, which makes a Decision object for every order.
  private readonly rejections: Record<string, number> = {};

  constructor(
    private readonly decisions: Multicast<Decision>,
    private readonly logger: Logger,
  ) {}

  decide(strategyId: string, intent: Intent, origin: Intent | undefined, result: GuardResult, time: number): void {
    if (!result.accepted) {
      this.rejections[result.code] = (this.rejections[result.code] ?? 0) + 1;
      // A line's object and text are made only for a logger that writes it: a backtest's writes nothing,
      // and its guard may refuse a target at every bar the market is closed.
      if (this.logger.isLevelEnabled('warn'))
        this.logger.warn(
          { strategyId, intent: copyIntent(intent), code: result.code },
          `risk guard rejected: ${result.message}`,
        );
    } else if (result.adjusted !== undefined && this.logger.isLevelEnabled('warn')) {
      this.logger.warn(
        { strategyId, intent: copyIntent(intent), code: result.adjusted },
        `risk guard reduced: ${result.message}`,
      );
    }
    // The intents are lent for this call (the router fills them again for its next order): a decision
    // published keeps copies.
    if (this.decisions.observed)
      this.decisions.next(
        origin === undefined
          ? { strategyId, intent: copyIntent(intent), result, time }
          : { strategyId, intent: copyIntent(intent), origin: copyIntent(origin), result, time },
      );
  }

  /** Rejections so far by reason code, in the order each code first occurred. */
  rejectionCounts(): Readonly<Record<string, number>> {
    return { ...this.rejections };
  }
}
