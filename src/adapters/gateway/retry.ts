/**
 * Which failures may be retried and how long to wait. Only `read` endpoints are retried: a place, modify
 * or cancel that failed may still have taken effect, and a blind retry duplicated orders for users of
 * other clients of this gateway (extras "Known pitfalls"). Login is retried only when the server cannot
 * have issued a token (429, 5xx, refused connection), never after a timeout.
 */
import { Endpoints, type Endpoint } from '../../protocol/endpoints.ts';
import { GatewayError } from './gateway-errors.ts';

export interface RetryOptions {
  /** Attempts in total, the first included. 1 disables retries. */
  maxAttempts?: number;
  baseDelayMs?: number;
  maxDelayMs?: number;
  /** A `Retry-After` longer than this is not waited out: the error is raised instead. */
  maxRetryAfterMs?: number;
}

export interface RetryPolicy {
  maxAttempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
  maxRetryAfterMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = {
  maxAttempts: 4,
  baseDelayMs: 250,
  maxDelayMs: 8_000,
  maxRetryAfterMs: 60_000,
};

export function retryPolicy(options: RetryOptions = {}): RetryPolicy {
  const policy = { ...DEFAULT_RETRY, ...stripUndefined(options) };
  if (!Number.isInteger(policy.maxAttempts) || policy.maxAttempts < 1) {
    throw new RangeError(`retry.maxAttempts must be a positive integer, got ${policy.maxAttempts}`);
  }
  if (policy.baseDelayMs < 0 || policy.maxDelayMs < 0) throw new RangeError('retry delays must not be negative');
  return policy;
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** Whether a failed attempt of `endpoint` may be sent again. */
export function isRetryable(endpoint: Endpoint, error: unknown): boolean {
  if (!(error instanceof GatewayError)) return false;
  if (endpoint.effect !== 'read') return false;
  const serverBusy = error.code === 'RATE_LIMITED' || (error.code === 'HTTP_STATUS' && (error.httpStatus ?? 0) >= 500);
  const neverSent = error.code === 'CONNECTION_FAILED' && error.outcome === 'not-sent';
  if (endpoint.name === Endpoints.login.name) return serverBusy || neverSent;
  return serverBusy || error.code === 'CONNECTION_FAILED' || error.code === 'TIMEOUT';
}

/** Exponential backoff with equal jitter: half the step is fixed, half random, capped at `maxDelayMs`. */
export function backoffDelay(policy: RetryPolicy, attempt: number, random: () => number = Math.random): number {
  const step = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
  return Math.round(step / 2 + random() * (step / 2));
}

/**
 * A `Retry-After` header as milliseconds from `now`: delta seconds or an HTTP date. `undefined` when
 * absent or unreadable.
 */
export function parseRetryAfter(value: string | string[] | undefined, now: number): number | undefined {
  const raw = Array.isArray(value) ? value[0] : value;
  if (raw === undefined) return undefined;
  const text = raw.trim();
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  const at = Date.parse(text);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now);
}
