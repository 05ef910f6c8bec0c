/**
 * How a notification reaches each kind of target: a JSON webhook, a Discord webhook (`{ content }`), the
 * Telegram Bot API (`sendMessage` with `{ chat_id, text }`), a local command (the webhook's JSON on its
 * standard input). Each sender returns an outcome the queue acts on and never throws; its reasons name a
 * status or an error code, never a URL or a token (the URL of a webhook and the bot's token are registered
 * secrets, scrubbed from every log line anyway).
 *
 * HTTP goes through the notifier's own undici Agent: a receiver that hangs holds only its own connection,
 * never one the gateway's client needs.
 */
import { spawn } from 'node:child_process';
import { request, type Dispatcher } from 'undici';
import { excerpt, registerSecret } from '../../engine/secrets.ts';
import { TicklineError } from '../../engine/errors.ts';
import { missingSecrets, type NotifyEvent, type NotifyTarget } from '../../adapters/live/notify-config.ts';
import type { SendOutcome } from './delivery-queue.ts';
import type { Logger } from '../../engine/log.ts';

/** One notification, as every target gets it (the webhook's and the command's JSON). */
export interface Notice {
  readonly event: NotifyEvent;
  /** Epoch ms of what happened (the journal's time). */
  readonly time: number;
  /** The account's name and the bot's strategy id, so one channel can serve several bots. */
  readonly account: string;
  readonly bot: string;
  /** A few words (`Fill`, `Trading HALTED`), then one or more readable lines. */
  readonly title: string;
  readonly text: string;
  /** The journal's payload or the summary's figures, for a receiver that wants numbers. */
  readonly data: unknown;
}

export class NotifyError extends TicklineError {
  override readonly name = 'NotifyError';
  readonly kind = 'environment';
  readonly code = 'NOTIFY_SECRET_MISSING';
}

/** A target with its secret read from the environment. */
export type ResolvedTarget = NotifyTarget & { readonly label: string; readonly endpoint?: string };

/** The targets with their URLs and tokens from the environment, each registered for redaction by value. */
export function resolveTargets(targets: readonly NotifyTarget[], env: NodeJS.ProcessEnv): ResolvedTarget[] {
  const missing = targets.flatMap((target, i) =>
    missingSecrets(target, env).map(
      ([key, variable]) => `notify[${i}].${key}: ${variable} is not set in the environment`,
    ),
  );
  if (missing.length > 0) throw new NotifyError(missing.join('\n'));
  return targets.map((target, i) => {
    const label = target.name ?? `${target.type}-${i + 1}`;
    switch (target.type) {
      case 'webhook':
      case 'discord': {
        const url = target.url ?? env[target.urlEnv!]!;
        registerSecret(url);
        return { ...target, label, endpoint: url };
      }
      case 'telegram': {
        const token = env[target.tokenEnv]!;
        registerSecret(token);
        const endpoint = `${target.apiUrl.replace(/\/+$/, '')}/bot${token}/sendMessage`;
        registerSecret(endpoint);
        return { ...target, label, endpoint };
      }
      default:
        return { ...target, label };
    }
  });
}

const DISCORD_LIMIT = 2_000;
const TELEGRAM_LIMIT = 4_096;

function cut(text: string, limit: number): string {
  return text.length <= limit ? text : `${text.slice(0, limit - 1)}…`;
}

/** The readable form: `[bot @ account] title` and the text below it. */
export function noticeText(notice: Notice): string {
  return `[${notice.bot} @ ${notice.account}] ${notice.title}\n${notice.text}`;
}

/** The generic JSON: what a webhook receives and a command reads on its standard input. */
export function noticeJson(notice: Notice): string {
  return JSON.stringify({ ...notice, time: new Date(notice.time).toISOString() });
}

export type Sender = (notice: Notice, signal: AbortSignal) => Promise<SendOutcome>;

export function createSender(target: ResolvedTarget, dispatcher: Dispatcher, logger: Logger): Sender {
  switch (target.type) {
    case 'webhook':
      return (notice, signal) => postJson(target, dispatcher, noticeJson(notice), signal);
    case 'discord':
      return (notice, signal) =>
        postJson(target, dispatcher, JSON.stringify({ content: cut(noticeText(notice), DISCORD_LIMIT) }), signal);
    case 'telegram':
      return (notice, signal) =>
        postJson(
          target,
          dispatcher,
          JSON.stringify({ chat_id: target.chatId, text: cut(noticeText(notice), TELEGRAM_LIMIT) }),
          signal,
        );
    case 'command':
      return (notice, signal) => runCommand(target, noticeJson(notice), signal, logger);
  }
}

async function postJson(
  target: ResolvedTarget,
  dispatcher: Dispatcher,
  body: string,
  stop: AbortSignal,
): Promise<SendOutcome> {
  const signal = AbortSignal.any([stop, AbortSignal.timeout(target.timeoutMs)]);
  try {
    const response = await request(target.endpoint!, {
      method: 'POST',
      dispatcher,
      headers: { 'content-type': 'application/json' },
      body,
      signal,
    });
    const text = await response.body.text();
    const status = response.statusCode;
    if (status >= 200 && status < 300) return { ok: true };
    if (status === 429) {
      const retryAfterMs = retryAfter(response.headers['retry-after'], text);
      return { ok: false, reason: 'HTTP 429 (rate limited)', ...(retryAfterMs === undefined ? {} : { retryAfterMs }) };
    }
    const reason = `HTTP ${status}${text === '' ? '' : `: ${excerpt(text, 200)}`}`;
    // A 4xx says the request itself is wrong (a revoked webhook, a bad token or chat): trying again cannot help.
    return status >= 400 && status < 500 && status !== 408
      ? { ok: false, reason, permanent: true }
      : { ok: false, reason };
  } catch (error) {
    if (signal.aborted && !stop.aborted) return { ok: false, reason: `no answer within ${target.timeoutMs} ms` };
    return { ok: false, reason: errorReason(error) };
  }
}

/**
 * Milliseconds to wait from a 429: the Retry-After header (seconds or an HTTP date), else the body's
 * `retry_after` (Discord: seconds, fractional) or `parameters.retry_after` (Telegram: seconds).
 */
export function retryAfter(header: string | string[] | undefined, body: string): number | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  if (value !== undefined && value.trim() !== '') {
    const seconds = Number(value);
    if (Number.isFinite(seconds) && seconds >= 0) return Math.ceil(seconds * 1000);
    const date = Date.parse(value);
    if (Number.isFinite(date)) return Math.max(0, date - Date.now());
  }
  try {
    const parsed = JSON.parse(body) as { retry_after?: unknown; parameters?: { retry_after?: unknown } };
    const seconds = typeof parsed.retry_after === 'number' ? parsed.retry_after : parsed.parameters?.retry_after;
    if (typeof seconds === 'number' && Number.isFinite(seconds) && seconds >= 0) return Math.ceil(seconds * 1000);
  } catch {
    // Not JSON: no hint in the body, the queue's own backoff applies.
  }
  return undefined;
}

function errorReason(error: unknown): string {
  const code = (error as { code?: unknown }).code;
  const message = error instanceof Error ? error.message : String(error);
  return excerpt(typeof code === 'string' ? `${code}: ${message}` : message, 200);
}

/** The command with the JSON on its standard input: exit 0 is delivered; a timeout kills it. */
function runCommand(
  target: ResolvedTarget & { readonly argv: readonly string[] },
  json: string,
  stop: AbortSignal,
  logger: Logger,
): Promise<SendOutcome> {
  const { argv, timeoutMs } = target;
  return new Promise((resolve) => {
    let settled = false;
    const settle = (outcome: SendOutcome): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(outcome);
    };
    const child = spawn(argv[0]!, argv.slice(1), { stdio: ['pipe', 'ignore', 'pipe'], signal: stop });
    let stderr = '';
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      if (stderr.length < 1_000) stderr += chunk;
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      settle({ ok: false, reason: `${argv[0]} did not finish within ${timeoutMs} ms` });
    }, timeoutMs);
    child.on('error', (error: NodeJS.ErrnoException) => {
      // A command that does not exist or may not run will not start on a second try either.
      const permanent = error.code === 'ENOENT' || error.code === 'EACCES';
      settle({ ok: false, reason: errorReason(error), permanent });
    });
    child.on('close', (code, signal) => {
      if (code === 0) settle({ ok: true });
      else
        settle({
          ok: false,
          reason: `${argv[0]} exited with ${code === null ? `signal ${signal}` : `code ${code}`}${stderr === '' ? '' : `: ${excerpt(stderr.trim(), 200)}`}`,
        });
    });
    // A command that exits without reading its input closes the pipe: its exit code decides, not the pipe.
    child.stdin.on('error', (error) =>
      logger.debug({ target: target.label, err: error }, 'notification command did not read its input'),
    );
    child.stdin.end(`${json}\n`);
  });
}
