/**
 * The one way to log: pino, with every credential-bearing field redacted wherever it appears
 * (top level, one or two levels deep, and in header maps), and every registered secret value scrubbed
 * from each line as it is written (`secrets.ts`).
 */
import pino, { type Logger, type DestinationStream } from 'pino';
import { scrubSecrets } from './secrets.ts';

export type { Logger } from 'pino';

const SECRET_KEYS = ['apiKey', 'token', 'password', 'newToken', 'loginToken', 'Authorization', 'authorization'];

export const REDACT_PATHS: string[] = SECRET_KEYS.flatMap((key) => [
  key,
  `*.${key}`,
  `*.*.${key}`,
  `headers["${key.toLowerCase()}"]`,
  `*.headers["${key.toLowerCase()}"]`,
  `headers.${key}`,
  `*.headers.${key}`,
]);

export interface LoggerOptions {
  level?: string;
  name?: string;
  /** Where lines go; standard error by default so command output on standard out stays clean. */
  destination?: DestinationStream;
  /**
   * A file that gets every line at `level`; standard error then gets only warnings and errors, so a
   * person at the terminal reads the readable event lines, not a flood of JSON.
   */
  file?: string;
}

const LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'];

export function createLogger(options: LoggerOptions = {}): Logger {
  const level = options.level ?? process.env.TICKLINE_LOG_LEVEL ?? 'info';
  const toStderr = LEVELS.indexOf(level) > LEVELS.indexOf('warn') ? level : 'warn';
  const destination =
    options.destination ??
    (options.file === undefined
      ? pino.destination(2)
      : pino.multistream([
          { level: level as pino.Level, stream: pino.destination({ dest: options.file, mkdir: true, sync: true }) },
          { level: toStderr as pino.Level, stream: pino.destination(2) },
        ]));
  return pino(
    {
      level,
      ...(options.name === undefined ? {} : { name: options.name }),
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      serializers: { err: pino.stdSerializers.err },
      // By value as well as by field: a secret inside a message, a raw body or an error's text.
      hooks: { streamWrite: scrubSecrets },
    },
    destination,
  );
}

/** A logger that writes nothing, for library callers that pass none. */
export const silentLogger: Logger = pino({ level: 'silent' });
