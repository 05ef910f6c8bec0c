/** Logins and session tokens: API-key login, bearer tokens that live 24 hours of simulator time, validate and logout. */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { AGREEMENTS_NOT_SIGNED_MESSAGE, LoginErrorCode } from '../protocol/codes.ts';
import { Limits, type ResponseOf } from '../protocol/endpoints.ts';
import type { TradingEnvelope } from '../protocol/schemas.ts';
import type { SimClock } from './clock.ts';
import type { Db, UserRow } from './store.ts';
import { ok } from './wire.ts';

export class Sessions {
  constructor(
    private readonly db: Db,
    private readonly clock: SimClock,
  ) {}

  login(userName: string, apiKey: string): ResponseOf<'login'> {
    const user = this.db.prepare('SELECT * FROM users WHERE user_name = ?').get(userName) as UserRow | undefined;
    const failed = (errorCode: number, errorMessage: string | null = null) => ({
      success: false,
      errorCode,
      errorMessage,
      token: null,
    });
    if (!user || user.api_key === null || !sameSecret(user.api_key, apiKey))
      return failed(LoginErrorCode.InvalidCredentials);
    if (!user.api_key_login_enabled) return failed(LoginErrorCode.ApiKeyAuthenticationDisabled);
    if (!user.subscription_active) return failed(LoginErrorCode.ApiSubscriptionNotFound);
    if (!user.agreements_signed) return failed(LoginErrorCode.AgreementsNotSigned, AGREEMENTS_NOT_SIGNED_MESSAGE);
    return { ...ok(), token: this.issueToken(user.id) };
  }

  issueToken(userId: number): string {
    const token = randomBytes(32).toString('base64url');
    const now = this.clock.now();
    this.db
      .prepare('INSERT INTO tokens (token, user_id, issued_at, expires_at) VALUES (?, ?, ?, ?)')
      .run(token, userId, now, now + Limits.tokenLifetimeMs);
    return token;
  }

  /** The user a bearer token belongs to, or undefined when it is unknown, revoked or older than 24 hours. */
  authenticate(token: string): UserRow | undefined {
    return this.db
      .prepare(
        'SELECT users.* FROM tokens JOIN users ON users.id = tokens.user_id WHERE token = ? AND revoked = 0 AND expires_at > ?',
      )
      .get(token, this.clock.now()) as UserRow | undefined;
  }

  validate(user: UserRow): ResponseOf<'validate'> {
    return { ...ok(), newToken: this.issueToken(user.id) };
  }

  logout(token: string): TradingEnvelope {
    this.db.prepare('UPDATE tokens SET revoked = 1 WHERE token = ?').run(token);
    return ok();
  }
}

function sameSecret(expected: string, given: string): boolean {
  const a = Buffer.from(expected);
  const b = Buffer.from(given);
  return a.length === b.length && timingSafeEqual(a, b);
}
