/** Errors of the engine's own use (configuration and wiring mistakes), each with a stable code. */
export type EngineErrorCode =
  | 'UNKNOWN_CONTRACT'
  | 'NO_CONTRACTS'
  | 'DUPLICATE_STRATEGY_ID'
  | 'INVALID_PERIOD'
  | 'INVALID_TIMEFRAME'
  | 'INVALID_TIME_OF_DAY'
  | 'UNKNOWN_TIME_ZONE'
  | 'INVALID_RESTORE';

export class EngineError extends Error {
  override readonly name = 'EngineError';
  constructor(
    readonly code: EngineErrorCode,
    message: string,
  ) {
    super(message);
  }
}
