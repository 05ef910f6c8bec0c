/**
 * Typed errors of the gateway client. Each carries a stable `code`, the endpoint, what the server said,
 * and whether the outcome is known: `unknown` means the request may have taken effect (a timeout or a
 * reset after sending), so a caller must reconcile instead of retrying. Serialising an error never
 * includes request headers, tokens or keys: only the fields below exist on it.
 */
import type { z } from 'zod';
import { codeName, type CodeTable } from '../../protocol/codes.ts';
import { scrubSecrets } from '../../engine/secrets.ts';
import { describeIssues, type FieldIssue } from '../../protocol/field-issues.ts';
import { TicklineError, type ErrorKind } from '../../engine/errors.ts';

export type { FieldIssue };

export type Outcome = 'rejected' | 'unknown' | 'not-sent';

export type GatewayErrorCode =
  /** The request failed validation before it was sent. */
  | 'INVALID_REQUEST'
  /** The server answered `success: false` (or a non-zero register `result`). */
  | 'GATEWAY_REJECTED'
  /** Login failed with a documented login errorCode. */
  | 'LOGIN_FAILED'
  /** The response did not match the endpoint's schema. */
  | 'MALFORMED_RESPONSE'
  /** An HTTP status that is not 2xx (after any retries a read is allowed). */
  | 'HTTP_STATUS'
  | 'UNAUTHORIZED'
  | 'RATE_LIMITED'
  /** The connection failed before the request could be sent. */
  | 'CONNECTION_FAILED'
  /** The request was sent and no answer came in time, or the connection broke while waiting. */
  | 'OUTCOME_UNKNOWN'
  | 'TIMEOUT'
  /** A request the client refuses to send (a trades export over 30 days, a limit over 20,000). */
  | 'RANGE_REFUSED';

export interface GatewayErrorDetails {
  endpoint: string;
  outcome: Outcome;
  httpStatus?: number;
  errorCode?: number;
  errorName?: string;
  errorMessage?: string | null;
  issues?: ReadonlyArray<FieldIssue>;
  attempts?: number;
  cause?: unknown;
}

export class GatewayError extends TicklineError {
  override readonly name: string = 'GatewayError';
  readonly code: GatewayErrorCode;
  readonly endpoint: string;
  readonly outcome: Outcome;
  readonly httpStatus: number | undefined;
  readonly errorCode: number | undefined;
  readonly errorName: string | undefined;
  readonly errorMessage: string | null | undefined;
  readonly issues: ReadonlyArray<FieldIssue> | undefined;
  readonly attempts: number | undefined;
  readonly kind: ErrorKind;

  constructor(code: GatewayErrorCode, message: string, details: GatewayErrorDetails) {
    super(scrubSecrets(message), details.cause === undefined ? undefined : { cause: details.cause });
    this.code = code;
    // Credentials the gateway refuses and a gateway out of reach are the setup's to fix before anything can
    // run; every other fault (a rejection, a timeout, a malformed answer) happens while running.
    this.kind = code === 'LOGIN_FAILED' || code === 'CONNECTION_FAILED' ? 'environment' : 'runtime';
    this.endpoint = details.endpoint;
    this.outcome = details.outcome;
    this.httpStatus = details.httpStatus;
    this.errorCode = details.errorCode;
    this.errorName = details.errorName;
    this.errorMessage =
      typeof details.errorMessage === 'string' ? scrubSecrets(details.errorMessage) : details.errorMessage;
    this.issues = details.issues?.map(scrubIssue);
    this.attempts = details.attempts;
  }

  /** What logs and `JSON.stringify` see: the facts, never a header or credential. */
  toJSON(): Record<string, unknown> {
    return {
      name: this.name,
      code: this.code,
      message: this.message,
      endpoint: this.endpoint,
      outcome: this.outcome,
      httpStatus: this.httpStatus,
      errorCode: this.errorCode,
      errorName: this.errorName,
      errorMessage: this.errorMessage,
      issues: this.issues,
      attempts: this.attempts,
    };
  }
}

/** `success: false` on an endpoint, with the code's name for that endpoint. */
export class GatewayRejection extends GatewayError {
  override readonly name: string = 'GatewayRejection';
  constructor(endpoint: string, table: CodeTable, errorCode: number, errorMessage: string | null, httpStatus?: number) {
    const errorName = codeName(table, errorCode);
    super(
      'GATEWAY_REJECTED',
      `${endpoint} rejected: ${errorName} (${errorCode})${errorMessage ? `: ${errorMessage}` : ''}`,
      {
        endpoint,
        outcome: 'rejected',
        errorCode,
        errorName,
        errorMessage,
        ...(httpStatus === undefined ? {} : { httpStatus }),
      },
    );
  }
}

/**
 * Cancel's errorCode 6 (AccountRejected) split by its documented message (spec 7.3).
 * `reason` is `follower`, `live`, or `other` for an undocumented message.
 */
export class CancelAccountRejected extends GatewayRejection {
  override readonly name: string = 'CancelAccountRejected';
  readonly reason: 'follower' | 'live' | 'other';
  constructor(endpoint: string, table: CodeTable, errorMessage: string | null, reason: 'follower' | 'live' | 'other') {
    super(endpoint, table, 6, errorMessage);
    this.reason = reason;
  }
  override toJSON(): Record<string, unknown> {
    return { ...super.toJSON(), reason: this.reason };
  }
}

export class LoginError extends GatewayError {
  override readonly name: string = 'LoginError';
  constructor(endpoint: string, table: CodeTable, errorCode: number, errorMessage: string | null) {
    const errorName = codeName(table, errorCode);
    super('LOGIN_FAILED', `${endpoint} failed: ${errorName} (${errorCode})${errorMessage ? `: ${errorMessage}` : ''}`, {
      endpoint,
      outcome: 'rejected',
      errorCode,
      errorName,
      errorMessage,
    });
  }
}

/** An issue's received value, as an excerpt with secrets scrubbed: an error never carries a raw body whole. */
function scrubIssue(issue: FieldIssue): FieldIssue {
  const received = issue.received;
  if (received === undefined || received === null || typeof received === 'number' || typeof received === 'boolean')
    return issue;
  const text = typeof received === 'string' ? received : JSON.stringify(received);
  const clean = scrubSecrets(text.length > 120 ? `${text.slice(0, 120)}…` : text);
  return clean === text ? issue : { ...issue, received: clean };
}

function formatIssues(issues: ReadonlyArray<FieldIssue>): string {
  return issues
    .slice(0, 5)
    .map((i) => `${i.path}: ${i.message} (received ${JSON.stringify(i.received) ?? 'undefined'})`)
    .join('; ');
}

/** Parse what a server sent; a mismatch names the endpoint, each field path and the value received. */
export function parseResponse<T extends z.ZodType>(
  schema: T,
  endpoint: string,
  body: unknown,
  httpStatus?: number,
): z.infer<T> {
  const result = schema.safeParse(body);
  if (result.success) return result.data;
  const issues = describeIssues(result.error, body);
  throw new GatewayError('MALFORMED_RESPONSE', `${endpoint}: malformed response: ${formatIssues(issues)}`, {
    endpoint,
    outcome: 'unknown',
    issues,
    ...(httpStatus === undefined ? {} : { httpStatus }),
  });
}

/** Validate a request before it leaves the process. */
export function parseRequest<T extends z.ZodType>(schema: T, endpoint: string, body: unknown): z.infer<T> {
  const result = schema.safeParse(body);
  if (result.success) return result.data;
  const issues = describeIssues(result.error, body);
  throw new GatewayError('INVALID_REQUEST', `${endpoint}: invalid request: ${formatIssues(issues)}`, {
    endpoint,
    outcome: 'not-sent',
    issues,
  });
}
