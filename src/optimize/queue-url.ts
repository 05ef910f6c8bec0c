/**
 * Where a sweep queue is and how its jobs are retried: what a command checks before it loads BullMQ (a
 * sweep run in this process never does; the queue's client took a quarter of a second to load).
 */
import { registerSecret } from '../engine/secrets.ts';
import { TicklineError } from '../engine/errors.ts';

/** A job that throws is run this many more times before it is reported with its error. */
export const DEFAULT_RETRIES = 2;

export class QueueUrlError extends TicklineError {
  override readonly name = 'QueueUrlError';
  readonly kind = 'usage';
  readonly code = 'USAGE';
}

/** The URL with its password replaced, for messages and logs. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password !== '') u.password = '***';
    return u.toString();
  } catch {
    return '<unparsable queue URL>';
  }
}

/** Where a command finds the queue when --queue is not given: a password kept out of the process list. */
export const QUEUE_URL_ENV = 'TICKLINE_QUEUE_URL';

/** `--queue`, or the URL in TICKLINE_QUEUE_URL; undefined when neither is set. */
export function queueUrlFrom(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const url = flag ?? env[QUEUE_URL_ENV];
  return url === undefined || url === '' ? undefined : checkQueueUrl(url);
}

/** `redis://[user:password@]host:port[/db]` or `rediss://...` (TLS); its password is a secret from now on. */
export function checkQueueUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new QueueUrlError(`--queue ${redactUrl(url)}: expected redis://host:port[/db] or rediss://... for TLS`);
  }
  if (parsed.password !== '') {
    registerSecret(parsed.password);
    registerSecret(decodeURIComponent(parsed.password));
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:')
    throw new QueueUrlError(`--queue must be a redis:// or rediss:// URL, not ${parsed.protocol}`);
  if (parsed.pathname !== '' && parsed.pathname !== '/' && !/^\/\d+$/.test(parsed.pathname))
    throw new QueueUrlError(`--queue ${redactUrl(url)}: the path is a database number (/0, /1, ...)`);
  return url;
}
