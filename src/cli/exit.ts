import { TicklineError, type ErrorKind } from '../engine/errors.ts';
import { ConfigError } from './config-loader.ts';

/** Exit codes of every command, so scripts can tell a bad config from a failed account. */
export const ExitCode = {
  Ok: 0,
  /** Something failed while running (a gateway fault, an I/O error). */
  Failure: 1,
  /** Bad usage, arguments or configuration: nothing was run. */
  Usage: 2,
  /** The run completed but the account broke a rule (a backtest that would have failed the evaluation). */
  RuleBreak: 3,
  /** A paper or live session on a pinned contract month flattened and ended before the month expired. */
  ContractExpired: 4,
  /** Interrupted by a signal. */
  Interrupted: 130,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/** An error a command reports as a usage or configuration problem (exit code 2), with a message for people. */
export class UsageError extends TicklineError {
  override readonly name = 'UsageError';
  readonly kind = 'usage';
  readonly code = 'USAGE';
}

/**
 * The one table from what went wrong to the exit code, for every command: fix the setup and run again
 * (2: nothing was run), a failure while running (1), an account that broke a rule (3).
 */
export const EXIT_CODE_OF_KIND: Readonly<Record<ErrorKind, ExitCode>> = {
  usage: ExitCode.Usage,
  config: ExitCode.Usage,
  input: ExitCode.Usage,
  environment: ExitCode.Usage,
  runtime: ExitCode.Failure,
  ruleBreak: ExitCode.RuleBreak,
};

/**
 * Node's own errors that reach a command unwrapped and still say what to fix: a port that cannot be used.
 * A file a command was given is read where it is named, and its errors wrapped there with the file's name.
 */
const NODE_ERROR_KINDS: Readonly<Record<string, ErrorKind>> = {
  EADDRINUSE: 'environment',
  ERR_SOCKET_BAD_PORT: 'environment',
};

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

/** The kind of an error, or undefined for one tickline does not know (a bug, or a fault nobody wrapped). */
export function kindOf(error: unknown): ErrorKind | undefined {
  if (error instanceof TicklineError) return error.kind;
  const code = codeOf(error);
  return code === undefined ? undefined : NODE_ERROR_KINDS[code];
}

export function exitCodeFor(error: unknown): ExitCode {
  const kind = kindOf(error);
  return kind === undefined ? ExitCode.Failure : EXIT_CODE_OF_KIND[kind];
}

/**
 * The line a command prints for an error: its message and what to do; the stack only when asked for
 * (`--verbose`, or TICKLINE_LOG_LEVEL=debug). An error of an unknown kind is a bug, and says how to see more.
 */
export function errorReport(command: string, error: unknown, verbose: boolean): string {
  const kind = kindOf(error);
  const message = error instanceof Error ? error.message : String(error);
  // Usage text and a config's every issue are meant to be read whole, and their stack tells nothing more.
  if (kind === 'usage' || error instanceof ConfigError) return `${command}: ${message}`;
  const code = codeOf(error);
  const firstLine = message.split('\n')[0]!;
  const hint = code === undefined ? undefined : HINTS[code];
  if (verbose) return `${command} failed: ${error instanceof Error ? (error.stack ?? message) : message}`;
  if (kind === undefined) return `${command} failed: ${firstLine} (run again with --verbose for the stack trace)`;
  // A data file's every problem, as a config's.
  if (kind === 'input') return `${command}: ${message}`;
  return `${command}: ${firstLine}${hint === undefined || firstLine.includes(hint) ? '' : ` (${hint})`}`;
}

/** `--verbose` anywhere on the command line, or a debug log level, asks for stack traces. */
/** The command being run: whether --verbose was given (main strips it from the command's arguments). */
export const cliRun: { verbose: boolean } = { verbose: false };

/**
 * The line a command ends with when a strategy failed (the run's outputs were still written): the
 * failure's one line, and with --verbose the stack of what the strategy threw.
 */
export function strategyFailureReport(command: string, failure: Error, suffix: string): string {
  const line = `${command}: ${failure.message.split('\n')[0]}${suffix}`;
  if (!cliRun.verbose) return line;
  const cause = (failure as { cause?: unknown }).cause;
  const stack = cause instanceof Error ? cause.stack : failure.stack;
  return stack === undefined ? line : `${line}\n${stack}`;
}

export function wantsVerbose(args: readonly string[], env: NodeJS.ProcessEnv = process.env): boolean {
  return args.includes('--verbose') || env.TICKLINE_LOG_LEVEL === 'debug' || env.TICKLINE_LOG_LEVEL === 'trace';
}
