/** Which failures a retry may follow, and the backoff arithmetic. */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  DEFAULT_RETRY,
  Endpoints,
  GatewayError,
  backoffDelay,
  isRetryable,
  parseRetryAfter,
  retryPolicy,
  type GatewayErrorCode,
  type Outcome,
} from '../../../src/adapters/gateway/index.ts';

const err = (code: GatewayErrorCode, outcome: Outcome, httpStatus?: number) =>
  new GatewayError(code, code, { endpoint: 'x', outcome, ...(httpStatus ? { httpStatus } : {}) });

describe('isRetryable', () => {
  const faults = [
    err('RATE_LIMITED', 'rejected', 429),
    err('HTTP_STATUS', 'unknown', 503),
    err('TIMEOUT', 'unknown'),
    err('CONNECTION_FAILED', 'not-sent'),
    err('CONNECTION_FAILED', 'unknown'),
    err('OUTCOME_UNKNOWN', 'unknown'),
  ];

  it('never retries a write endpoint, whatever the failure', () => {
    const writes = Object.values(Endpoints).filter((e) => e.effect === 'write');
    expect(writes.map((e) => e.name)).toEqual(expect.arrayContaining(['Order/place', 'Order/modify', 'Order/cancel']));
    for (const endpoint of writes) for (const fault of faults) expect(isRetryable(endpoint, fault)).toBe(false);
  });

  it('retries reads on 429, 5xx, timeouts and connection errors, not on 4xx or rejections', () => {
    const read = Endpoints.orderSearch;
    expect(faults.slice(0, 5).every((f) => isRetryable(read, f))).toBe(true);
    expect(isRetryable(read, err('HTTP_STATUS', 'rejected', 404))).toBe(false);
    expect(isRetryable(read, err('GATEWAY_REJECTED', 'rejected'))).toBe(false);
    expect(isRetryable(read, err('MALFORMED_RESPONSE', 'unknown'))).toBe(false);
    expect(isRetryable(read, new Error('plain'))).toBe(false);
  });

  it('retries login only when no token can have been issued', () => {
    const login = Endpoints.login;
    expect(isRetryable(login, err('RATE_LIMITED', 'rejected', 429))).toBe(true);
    expect(isRetryable(login, err('HTTP_STATUS', 'unknown', 500))).toBe(true);
    expect(isRetryable(login, err('CONNECTION_FAILED', 'not-sent'))).toBe(true);
    expect(isRetryable(login, err('TIMEOUT', 'unknown'))).toBe(false);
    expect(isRetryable(login, err('CONNECTION_FAILED', 'unknown'))).toBe(false);
  });
});

describe('backoff', () => {
  it('stays within [step/2, step] with step doubling up to the cap (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 12 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (attempt, r) => {
          const step = Math.min(DEFAULT_RETRY.maxDelayMs, DEFAULT_RETRY.baseDelayMs * 2 ** (attempt - 1));
          const delay = backoffDelay(DEFAULT_RETRY, attempt, () => r);
          expect(delay).toBeGreaterThanOrEqual(Math.floor(step / 2));
          expect(delay).toBeLessThanOrEqual(step);
        },
      ),
    );
  });

  it('rejects nonsense options', () => {
    expect(() => retryPolicy({ maxAttempts: 0 })).toThrow(RangeError);
    expect(retryPolicy({ maxAttempts: undefined }).maxAttempts).toBe(DEFAULT_RETRY.maxAttempts);
  });
});

describe('Retry-After', () => {
  it('reads delta seconds and HTTP dates', () => {
    const now = Date.parse('2025-01-01T00:00:00Z');
    expect(parseRetryAfter('3', now)).toBe(3_000);
    expect(parseRetryAfter(' 0 ', now)).toBe(0);
    expect(parseRetryAfter('Wed, 01 Jan 2025 00:00:10 GMT', now)).toBe(10_000);
    expect(parseRetryAfter('Tue, 31 Dec 2024 00:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
    expect(parseRetryAfter('soon', now)).toBeUndefined();
  });
});
