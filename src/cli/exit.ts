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

/**
 * Error codes that mean "fix the setup and run again" (exit 2): usage, configuration, credentials, and an
 * environment the command cannot work in (no gateway, a journal another bot holds). Everything else that
 * goes wrong is a failure while running (exit 1).
 */
const SETUP_CODES: ReadonlySet<string> = new Set([
  'USAGE',
  'CONFIG_INVALID',
  'CREDENTIALS_MISSING',
  'LOGIN_FAILED',
  'CONNECTION_FAILED',
  'ACCOUNT_NOT_FOUND',
  'ACCOUNT_KIND',
  'JOURNAL_ACCOUNT',
  'JOURNAL_LOCKED',
  'JOURNAL_OPEN',
  'CONTRACT',
  'RATE_PLAN',
  'STRATEGY_NOT_FOUND',
  'STRATEGY_INVALID',
  'STRATEGY_PARAMS',
  'QUEUE_UNREACHABLE',
  'SWEEP_NOT_FOUND',
  // Node's own, for a port that cannot be used.
  'ERR_SOCKET_BAD_PORT',
  'EADDRINUSE',
]);

/** What to do about an error, where its message does not already say. */
const HINTS: Readonly<Record<string, string>> = {
  LOGIN_FAILED: 'check TICKLINE_USERNAME and TICKLINE_API_KEY',
  CONNECTION_FAILED: 'is the gateway reachable at the configured URL (gateway.url)?',
  STRATEGY_FAILED: 'fix the strategy and run again',
  QUEUE_UNREACHABLE: 'is redis-server running there? see docs/distributed.md',
  EADDRINUSE: 'another process listens on that port: choose another with --port',
};

function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

export function exitCodeFor(error: unknown): ExitCode {
  const code = codeOf(error);
  return code !== undefined && SETUP_CODES.has(code) ? ExitCode.Usage : ExitCode.Failure;
}

/**
 * The line a command prints for an error: its message and what to do; the stack only when asked for
 * (`--verbose`, or TICKLINE_LOG_LEVEL=debug). An error without a code is a bug, and says how to see more.
 */
export function errorReport(command: string, error: unknown, verbose: boolean): string {
  // Usage text and a config's every issue are meant to be read whole.
  if (error instanceof UsageError || codeOf(error) === 'CONFIG_INVALID') return `${command}: ${error instanceof Error ? error.message : String(error)}`;
  const code = codeOf(error);
  const message = error instanceof Error ? error.message : String(error);
  const firstLine = message.split('\n')[0]!;
  const hint = code === undefined ? undefined : HINTS[code];
  if (verbose) return `${command} failed: ${error instanceof Error ? (error.stack ?? message) : message}`;
  if (code === undefined) return `${command} failed: ${firstLine} (run again with --verbose for the stack trace)`;
  return `${command}: ${firstLine}${hint === undefined || firstLine.includes(hint) ? '' : ` (${hint})`}`;
}

/** `--verbose` anywhere on the command line, or a debug log level, asks for stack traces. */
export function wantsVerbose(args: readonly string[], env: NodeJS.ProcessEnv = process.env): boolean {
  return args.includes('--verbose') || env.TICKLINE_LOG_LEVEL === 'debug' || env.TICKLINE_LOG_LEVEL === 'trace';
}
