import type { Logger } from './log.ts';
import type { Multicast } from './multicast.ts';
import type { TradingState } from './risk.ts';

export interface TradingStateChange {
  readonly state: TradingState;
  readonly reason: string;
  /** When the state lapses back to ACTIVE (epoch ms); Infinity when only the operator can change it. */
  readonly until: number;
  readonly time: number;
}

/** Whether the engine may take new risk (ACTIVE, REDUCING, HALTED), why, and until when new risk is locked out. */
export class TradingStateMachine {
  current: TradingStateChange = { state: 'ACTIVE', reason: 'start', until: Infinity, time: NaN };
  /** Epoch ms until which new risk is locked out (0: none; Infinity: for good). */
  lockedUntil = 0;

  constructor(
    private readonly changes: Multicast<TradingStateChange>,
    private readonly logger: Logger,
  ) {}

  change(next: TradingState, reason: string, until: number, time: number): void {
    this.current = { state: next, reason, until, time };
    this.logger.warn(
      { state: next, reason, until: until === Infinity ? 'operator' : new Date(until).toISOString() },
      'trading state changed',
    );
    this.changes.next(this.current);
  }

  /** The operator's change: it stands until the operator changes it again. */
  set(next: TradingState, reason: string, time: number): void {
    if (next === 'ACTIVE') this.lockedUntil = 0;
    this.change(next, reason, Infinity, time);
  }
}
