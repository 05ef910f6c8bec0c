/**
 * Sends one endpoint of the table over a keep-alive undici pool: validates the request, places its
 * fields (body, query or path), waits for the rate budget, reads the response by its envelope kind and
 * turns every failure into a `GatewayError`. Reads are retried by `retry.ts`; writes get one attempt.
 * One log line per call: endpoint, status, duration and attempts, never a header or a body.
 */
import { Pool } from 'undici';
import type { z } from 'zod';
import type { Logger } from '../../engine/log.ts';
import { silentLogger } from '../../engine/log.ts';
import { CancelErrorCode, CancelRejectionMessage } from '../../protocol/codes.ts';
import { Endpoints, type Endpoint } from '../../protocol/endpoints.ts';
import {
  CancelAccountRejected,
  GatewayError,
  GatewayRejection,
  LoginError,
  parseRequest,
  parseResponse,
  type FieldIssue,
} from './gateway-errors.ts';
import { RateLimiter, realClock, type Clock, type RateLimits } from './rate-limiter.ts';
import {
  backoffDelay,
  isRetryable,
  parseRetryAfter,
  retryPolicy,
  type RetryOptions,
  type RetryPolicy,
} from './retry.ts';
import { ExportEnvelope, RegisterResponse, TradingEnvelope } from '../../protocol/schemas.ts';

export interface TransportOptions {
  baseUrl: string;
  logger?: Logger;
  /** Per attempt, from sending to the last byte of the answer. */
  timeoutMs?: number;
  rateLimits?: RateLimits;
  retry?: RetryOptions;
  /** Epoch ms; injectable for the limiter and Retry-After dates. */
  now?: () => number;
  /** How the client waits (backoff, rate budget); injectable so tests need not wait. */
  sleep?: (ms: number) => Promise<void>;
  /** Headers sent on every request (the administration interface's credentials). */
  headers?: Record<string, string>;
}

export const DEFAULT_TIMEOUT_MS = 15_000;

/** Keys whose values are credentials: never copied into an error or a log line. */
const SECRET_FIELDS = new Set([
  'apiKey',
  'token',
  'password',
  'newToken',
  'loginToken',
  'authorization',
  'Authorization',
]);

/** Connection errors raised before a byte of the request could leave the process. */
const NOT_SENT_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EADDRNOTAVAIL',
  'UND_ERR_CONNECT_TIMEOUT',
]);

export interface SendOptions {
  /** Extra headers for this call (the bearer token). */
  headers?: Record<string, string>;
}

export class Transport {
  readonly baseUrl: string;
  private readonly origin: string;
  private readonly prefix: string;
  private readonly pool: Pool;
  private readonly logger: Logger;
  private readonly timeoutMs: number;
  private readonly limiter: RateLimiter;
  private readonly policy: RetryPolicy;
  private readonly clock: Clock;
  private readonly headers: Record<string, string>;

  constructor(options: TransportOptions) {
    let url: URL;
    try {
      url = new URL(options.baseUrl);
    } catch {
      throw new RangeError(`baseUrl is not a URL: ${JSON.stringify(options.baseUrl)}`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new RangeError(`baseUrl must be http or https, got ${url.protocol}`);
    }
    this.baseUrl = options.baseUrl;
    this.origin = url.origin;
    this.prefix = url.pathname.replace(/\/+$/, '');
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    if (!(this.timeoutMs > 0)) throw new RangeError(`timeoutMs must be positive, got ${this.timeoutMs}`);
    this.clock = { now: options.now ?? realClock.now, sleep: options.sleep ?? realClock.sleep };
    this.limiter = new RateLimiter(options.rateLimits, this.clock);
    this.policy = retryPolicy(options.retry);
    this.logger = options.logger ?? silentLogger;
    this.headers = { ...(options.headers ?? {}) };
    this.pool = new Pool(this.origin, {
      connections: 16,
      keepAliveTimeout: 30_000,
      connectTimeout: Math.min(this.timeoutMs, 10_000),
    });
  }

  get rateLimiter(): RateLimiter {
    return this.limiter;
  }

  /**
   * Validate `input`, send it (retrying a read as the policy allows) and return the parsed response.
   * For `text` endpoints the body text is returned.
   */
  async send(endpoint: Endpoint, input: unknown, options: SendOptions = {}): Promise<unknown> {
    const request = parseRequest(endpoint.request, endpoint.name, input ?? {}) as Record<string, unknown>;
    const started = performance.now();
    let attempts = 0;
    let lastStatus: number | undefined;
    for (;;) {
      attempts += 1;
      await this.limiter.acquire(endpoint.bucket, endpoint.effect);
      try {
        const { value, status } = await this.attempt(endpoint, request, options);
        lastStatus = status;
        this.logger.info(
          { endpoint: endpoint.name, status, durationMs: Math.round(performance.now() - started), attempts },
          'gateway request',
        );
        return value;
      } catch (error) {
        const failure = error instanceof GatewayError ? error : this.unexpected(endpoint, error);
        lastStatus = failure.httpStatus ?? lastStatus;
        const more = attempts < this.policy.maxAttempts && isRetryable(endpoint, failure);
        const retryAfterMs = retryAfterByError.get(failure);
        if (more && (retryAfterMs === undefined || retryAfterMs <= this.policy.maxRetryAfterMs)) {
          const delayMs = Math.max(retryAfterMs ?? 0, backoffDelay(this.policy, attempts));
          this.logger.debug(
            { endpoint: endpoint.name, status: failure.httpStatus, code: failure.code, attempts, delayMs },
            'gateway retry',
          );
          await this.clock.sleep(delayMs);
          continue;
        }
        const final = withAttempts(failure, attempts);
        this.logger.warn(
          {
            endpoint: endpoint.name,
            status: lastStatus,
            durationMs: Math.round(performance.now() - started),
            attempts,
            error: final.toJSON(),
          },
          'gateway request failed',
        );
        throw final;
      }
    }
  }

  async close(): Promise<void> {
    await this.pool.close();
  }

  private unexpected(endpoint: Endpoint, error: unknown): GatewayError {
    return new GatewayError('CONNECTION_FAILED', `${endpoint.name}: unexpected failure: ${String(error)}`, {
      endpoint: endpoint.name,
      outcome: 'unknown',
      cause: error,
    });
  }

  private buildPath(endpoint: Endpoint, request: Record<string, unknown>): string {
    let path = endpoint.path;
    if (endpoint.params === 'path') {
      path = path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(String(request[name])));
    }
    let query = '';
    if (endpoint.params === 'query') {
      const search = new URLSearchParams();
      for (const [key, value] of Object.entries(request))
        if (value !== undefined && value !== null) search.append(key, String(value));
      const text = search.toString();
      if (text) query = `?${text}`;
    }
    return `${this.prefix}${path}${query}`;
  }

  private async attempt(
    endpoint: Endpoint,
    request: Record<string, unknown>,
    options: SendOptions,
  ): Promise<{ value: unknown; status: number }> {
    const hasBody = endpoint.params === 'body';
    const headers: Record<string, string> = {
      accept: endpoint.iface === 'trading' ? 'text/plain' : 'application/json',
      ...this.headers,
      ...(options.headers ?? {}),
    };
    if (hasBody) headers['content-type'] = 'application/json';
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), this.timeoutMs);
    let status: number;
    let text: string;
    let retryAfter: string | string[] | undefined;
    try {
      const response = await this.pool.request({
        path: this.buildPath(endpoint, request),
        method: endpoint.method,
        headers,
        body: hasBody ? JSON.stringify(request) : endpoint.method === 'GET' ? null : '',
        signal: controller.signal,
        headersTimeout: this.timeoutMs + 1_000,
        bodyTimeout: this.timeoutMs + 1_000,
      });
      status = response.statusCode;
      retryAfter = response.headers['retry-after'];
      text = await response.body.text();
    } catch (error) {
      throw this.transportFailure(endpoint, error, controller.signal.aborted);
    } finally {
      clearTimeout(timer);
    }
    if (status < 200 || status > 299) throw this.statusFailure(endpoint, status, text, retryAfter);
    return { value: this.read(endpoint, status, text), status };
  }

  private transportFailure(endpoint: Endpoint, error: unknown, timedOut: boolean): GatewayError {
    const code = (error as { code?: unknown } | null)?.code;
    const write = endpoint.effect === 'write';
    if (!timedOut && typeof code === 'string' && NOT_SENT_CODES.has(code)) {
      return new GatewayError(
        'CONNECTION_FAILED',
        `${endpoint.name}: could not connect (${code}); the request was not sent`,
        {
          endpoint: endpoint.name,
          outcome: 'not-sent',
          cause: error,
        },
      );
    }
    const what = timedOut
      ? `no answer within ${this.timeoutMs} ms`
      : `connection lost while waiting (${String(code ?? error)})`;
    if (write) {
      return new GatewayError(
        'OUTCOME_UNKNOWN',
        `${endpoint.name}: ${what}; the request may have taken effect, reconcile before retrying`,
        {
          endpoint: endpoint.name,
          outcome: 'unknown',
          cause: error,
        },
      );
    }
    return new GatewayError(timedOut ? 'TIMEOUT' : 'CONNECTION_FAILED', `${endpoint.name}: ${what}`, {
      endpoint: endpoint.name,
      outcome: 'unknown',
      cause: error,
    });
  }

  private statusFailure(
    endpoint: Endpoint,
    status: number,
    text: string,
    retryAfter: string | string[] | undefined,
  ): GatewayError {
    const serverMessage = messageOf(text);
    const suffix = serverMessage ? `: ${serverMessage}` : '';
    const details = { endpoint: endpoint.name, httpStatus: status, errorMessage: serverMessage ?? null };
    if (status === 401) {
      return new GatewayError('UNAUTHORIZED', `${endpoint.name}: HTTP 401 unauthorized${suffix}`, {
        ...details,
        outcome: 'rejected',
      });
    }
    if (status === 429) {
      const error = new GatewayError('RATE_LIMITED', `${endpoint.name}: HTTP 429 rate limited${suffix}`, {
        ...details,
        outcome: 'rejected',
      });
      const ms = parseRetryAfter(retryAfter, this.clock.now());
      if (ms !== undefined) retryAfterByError.set(error, ms);
      return error;
    }
    // A 4xx means the server refused the request; a 5xx may come after the work was done.
    const outcome = status >= 400 && status < 500 ? 'rejected' : 'unknown';
    const error = new GatewayError('HTTP_STATUS', `${endpoint.name}: HTTP ${status}${suffix}`, { ...details, outcome });
    const ms = status === 503 ? parseRetryAfter(retryAfter, this.clock.now()) : undefined;
    if (ms !== undefined) retryAfterByError.set(error, ms);
    return error;
  }

  private read(endpoint: Endpoint, status: number, text: string): unknown {
    if (endpoint.envelope === 'text') return text;
    const body = parseJson(endpoint, status, text);
    switch (endpoint.envelope) {
      case 'trading': {
        const envelope = parseClean(TradingEnvelope, endpoint.name, body, status);
        if (!envelope.success || envelope.errorCode !== 0)
          throw rejection(endpoint, envelope.errorCode, envelope.errorMessage, status);
        return parseClean(endpoint.response, endpoint.name, body, status);
      }
      case 'export': {
        const envelope = parseClean(ExportEnvelope, endpoint.name, body, status);
        if (!envelope.success) {
          // This envelope has no errorCode (spec 2.1): the rejection carries the message only.
          throw new GatewayError(
            'GATEWAY_REJECTED',
            `${endpoint.name} rejected${envelope.errorMessage ? `: ${envelope.errorMessage}` : ''}`,
            {
              endpoint: endpoint.name,
              outcome: 'rejected',
              httpStatus: status,
              errorMessage: envelope.errorMessage,
            },
          );
        }
        return parseClean(endpoint.response, endpoint.name, body, status);
      }
      case 'register': {
        const result = parseClean(RegisterResponse, endpoint.name, body, status);
        if (result.result !== 0)
          throw new GatewayRejection(endpoint.name, endpoint.errorCodes, result.result, result.errorMessage, status);
        return result;
      }
      case 'bare':
        return parseClean(endpoint.response, endpoint.name, body, status);
    }
  }
}

/** Retry-After values travel beside the error, so the error itself stays free of response headers. */
const retryAfterByError = new WeakMap<GatewayError, number>();

/** An attempt's error is built before the count is known; the count is stamped on the final one. */
function withAttempts(error: GatewayError, attempts: number): GatewayError {
  (error as { attempts: number | undefined }).attempts = attempts;
  return error;
}

/** The typed error for `success: false` on a trading endpoint. */
export function rejection(
  endpoint: Endpoint,
  errorCode: number,
  errorMessage: string | null,
  httpStatus?: number,
): GatewayError {
  if (endpoint.name === Endpoints.login.name)
    return new LoginError(endpoint.name, endpoint.errorCodes, errorCode, errorMessage);
  if (endpoint.name === Endpoints.orderCancel.name && errorCode === CancelErrorCode.AccountRejected) {
    const reason =
      errorMessage?.trim() === CancelRejectionMessage.Follower
        ? 'follower'
        : errorMessage?.trim() === CancelRejectionMessage.Live
          ? 'live'
          : 'other';
    return new CancelAccountRejected(endpoint.name, endpoint.errorCodes, errorMessage, reason);
  }
  return new GatewayRejection(endpoint.name, endpoint.errorCodes, errorCode, errorMessage, httpStatus);
}

function messageOf(text: string): string | undefined {
  if (!text) return undefined;
  try {
    const body = JSON.parse(text) as unknown;
    if (body && typeof body === 'object') {
      const record = body as Record<string, unknown>;
      for (const key of ['errorMessage', 'message', 'title', 'error'])
        if (typeof record[key] === 'string') return record[key] as string;
    }
  } catch {
    // not JSON: a short plain-text body is still what the server said
  }
  return text.length <= 200 ? text.trim() || undefined : `${text.slice(0, 200).trim()}…`;
}

function parseJson(endpoint: Endpoint, status: number, text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    const received = text.length > 120 ? `${text.slice(0, 120)}…` : text;
    throw new GatewayError(
      'MALFORMED_RESPONSE',
      `${endpoint.name}: response is not JSON (received ${JSON.stringify(received)})`,
      {
        endpoint: endpoint.name,
        outcome: 'unknown',
        httpStatus: status,
        issues: [{ path: '(root)', message: 'not JSON', received }],
      },
    );
  }
}

/** `parseResponse`, with credential values taken out of the issues it reports. */
function parseClean<T extends z.ZodType>(schema: T, endpoint: string, body: unknown, status: number): z.infer<T> {
  try {
    return parseResponse(schema, endpoint, body, status);
  } catch (error) {
    if (!(error instanceof GatewayError) || !error.issues?.some(isSecretIssue)) throw error;
    const issues: FieldIssue[] = error.issues.map((i) => (isSecretIssue(i) ? { ...i, received: '[redacted]' } : i));
    const text = issues
      .map((i) => `${i.path}: ${i.message} (received ${JSON.stringify(i.received) ?? 'undefined'})`)
      .join('; ');
    throw new GatewayError('MALFORMED_RESPONSE', `${endpoint}: malformed response: ${text}`, {
      endpoint,
      outcome: 'unknown',
      httpStatus: status,
      issues,
    });
  }
}

function isSecretIssue(issue: FieldIssue): boolean {
  const last = issue.path.split('.').at(-1) ?? '';
  return SECRET_FIELDS.has(last);
}
