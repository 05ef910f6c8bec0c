/**
 * The session token of the trading interface (spec 5): log in once and reuse the token; a token lives
 * 24 hours from issue, so it is renewed with Auth/validate shortly before that; an HTTP 401 means the
 * server dropped it, so the client logs in again once and replays the request once. Callers that need a
 * token at the same moment share one login (login counts against the rate budget, spec 5.9).
 */
import type { Logger } from '../../engine/log.ts';
import { silentLogger } from '../../engine/log.ts';
import { registerSecret } from '../../engine/secrets.ts';
import { Endpoints, Limits, type Endpoint } from '../../protocol/endpoints.ts';
import { GatewayError } from './gateway-errors.ts';
import type { Transport } from './transport.ts';

export interface SessionOptions {
  userName: string;
  apiKey: string;
  now?: () => number;
  /** Renew this long before the 24-hour expiry. */
  renewBeforeMs?: number;
  logger?: Logger;
}

export const DEFAULT_RENEW_BEFORE_MS = 60 * 60 * 1000;

interface Held {
  token: string;
  issuedAt: number;
}

export class SessionManager {
  private readonly transport: Transport;
  private readonly credentials: { userName: string; apiKey: string };
  private readonly now: () => number;
  private readonly renewBeforeMs: number;
  private readonly logger: Logger;
  private held: Held | undefined;
  private pending: Promise<string> | undefined;

  constructor(transport: Transport, options: SessionOptions) {
    this.transport = transport;
    // Kept off `this` as named fields only; never logged (the logger redacts apiKey as a second guard).
    this.credentials = { userName: options.userName, apiKey: options.apiKey };
    registerSecret(options.apiKey);
    this.now = options.now ?? Date.now;
    this.renewBeforeMs = options.renewBeforeMs ?? DEFAULT_RENEW_BEFORE_MS;
    this.logger = options.logger ?? silentLogger;
  }

  /** When the held token expires (epoch ms), or undefined without one. */
  get expiresAt(): number | undefined {
    return this.held === undefined ? undefined : this.held.issuedAt + Limits.tokenLifetimeMs;
  }

  /** A usable token: the held one, a renewed one near expiry, or a fresh login. */
  token(): Promise<string> {
    if (this.pending) return this.pending;
    const held = this.held;
    const now = this.now();
    if (held && now < held.issuedAt + Limits.tokenLifetimeMs - this.renewBeforeMs) return Promise.resolve(held.token);
    if (held && now < held.issuedAt + Limits.tokenLifetimeMs) return this.share(() => this.renewOrLogin(held.token));
    return this.share(() => this.doLogin());
  }

  /** Log in now (sharing a login already under way) and hold the new token. */
  login(): Promise<string> {
    return this.pending ?? this.share(() => this.doLogin());
  }

  /** Renew with Auth/validate and hold the `newToken`. */
  validate(): Promise<string> {
    if (this.pending) return this.pending;
    return this.share(async () => this.doValidate(this.held?.token ?? (await this.doLogin())));
  }

  /** After a 401 with `rejected`: log in again unless another caller already replaced that token. */
  reloginAfter(rejected: string): Promise<string> {
    if (this.pending) return this.pending;
    if (this.held && this.held.token !== rejected) return Promise.resolve(this.held.token);
    this.held = undefined;
    return this.share(() => this.doLogin());
  }

  /** Forget the token without telling the server (the server already dropped it, or logout ran). */
  forget(): void {
    this.held = undefined;
  }

  get current(): string | undefined {
    return this.held?.token;
  }

  /**
   * Send an authenticated request: with the token, and on a 401 once more after one new login.
   */
  async send(endpoint: Endpoint, input: unknown): Promise<unknown> {
    const token = await this.token();
    try {
      return await this.transport.send(endpoint, input, { headers: bearer(token) });
    } catch (error) {
      if (!(error instanceof GatewayError) || error.code !== 'UNAUTHORIZED') throw error;
      this.logger.info({ endpoint: endpoint.name }, 'gateway token refused; logging in again once');
      const fresh = await this.reloginAfter(token);
      return this.transport.send(endpoint, input, { headers: bearer(fresh) });
    }
  }

  private share(work: () => Promise<string>): Promise<string> {
    const promise = work().finally(() => {
      if (this.pending === promise) this.pending = undefined;
    });
    this.pending = promise;
    return promise;
  }

  private async doLogin(): Promise<string> {
    const issuedAt = this.now();
    const response = (await this.transport.send(Endpoints.login, this.credentials)) as { token: string | null };
    if (!response.token) {
      throw new GatewayError('MALFORMED_RESPONSE', `${Endpoints.login.name}: success without a token`, {
        endpoint: Endpoints.login.name,
        outcome: 'unknown',
        issues: [{ path: 'token', message: 'expected a token on success', received: response.token }],
      });
    }
    registerSecret(response.token);
    this.held = { token: response.token, issuedAt };
    return response.token;
  }

  private async doValidate(token: string): Promise<string> {
    const issuedAt = this.now();
    const response = (await this.transport.send(Endpoints.validate, {}, { headers: bearer(token) })) as {
      newToken: string;
    };
    registerSecret(response.newToken);
    this.held = { token: response.newToken, issuedAt };
    return response.newToken;
  }

  private async renewOrLogin(token: string): Promise<string> {
    try {
      return await this.doValidate(token);
    } catch (error) {
      // The old token still works for a while, but a token that cannot be renewed will soon fail:
      // a new login is the one way to get a fresh 24 hours.
      this.logger.warn(
        { error: error instanceof GatewayError ? error.toJSON() : String(error) },
        'gateway token renewal failed; logging in',
      );
      return this.doLogin();
    }
  }
}

export function bearer(token: string): Record<string, string> {
  return { authorization: `Bearer ${token}` };
}
