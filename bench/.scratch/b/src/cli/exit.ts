/** Exit codes of every command, so scripts can tell a bad config from a failed account. */
export const ExitCode = {
  Ok: 0,
  /** Something failed while running (a gateway fault, an I/O error). */
  Failure: 1,
  /** Bad usage, arguments or configuration: nothing was run. */
  Usage: 2,
  /** The run completed but the account broke a rule (a backtest that would have failed the evaluation). */
  RuleBreak: 3,
  /** Interrupted by a signal. */
  Interrupted: 130,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/** An error a command reports as a usage or configuration problem (exit code 2), with a message for people. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
  readonly code = 'USAGE';
}
