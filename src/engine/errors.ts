/**
 * What went wrong, as a command's exit code is decided by it (src/cli/exit.ts holds the one table): the
 * command line (`usage`), a configuration file or a value overriding it (`config`), the data a command
 * was given to read (`input`), what the command needs around it: credentials, a gateway, a port, a file
 * another process holds (`environment`), something failing while running (`runtime`), the account
 * breaking a rule (`ruleBreak`).
 */
export type ErrorKind = 'usage' | 'config' | 'input' | 'environment' | 'runtime' | 'ruleBreak';

/**
 * The root of every error tickline throws, so that a caller (the command line first) can tell a mistake to
 * fix from a failure without a list of classes or codes. `code` is stable: tests, logs and journals match it.
 */
export abstract class TicklineError extends Error {
  abstract readonly kind: ErrorKind;
  abstract readonly code: string;
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
  }
}

/** Errors of the engine's own use (configuration and wiring mistakes), each with a stable code. */
export type EngineErrorCode =
  | 'UNKNOWN_CONTRACT'
  | 'NO_CONTRACTS'
  | 'DUPLICATE_STRATEGY_ID'
  | 'INVALID_PERIOD'
  | 'INVALID_TIMEFRAME'
  | 'INVALID_TIME_OF_DAY'
  | 'UNKNOWN_TIME_ZONE'
  | 'INVALID_RESTORE'
  | 'INVALID_VENUE'
  | 'UNKNOWN_STRATEGY'
  | 'INVALID_SIZE';

export class EngineError extends TicklineError {
  override readonly name = 'EngineError';
  // Mistakes of the program driving the engine, found as it runs: a command checks a user's config first.
  readonly kind = 'runtime';
  constructor(
    readonly code: EngineErrorCode,
    message: string,
  ) {
    super(message);
  }
}
