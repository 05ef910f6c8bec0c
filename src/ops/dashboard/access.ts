/**
 * The dashboard's access token: random, registered as a secret (scrubbed from every log line), and
 * compared in constant time. The page is opened once with `?token=`; the server answers with an
 * HttpOnly, SameSite=Strict cookie and sends the browser to the bare URL, so the token leaves the address
 * bar and history, and no other site's page can make the browser send it.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { registerSecret } from '../../engine/secrets.ts';

export const COOKIE_NAME = 'tickline_dashboard';

export function newAccessToken(): string {
  const token = randomBytes(24).toString('base64url');
  registerSecret(token);
  return token;
}

/** Equal digests of equal length: the comparison takes the same time whatever the guess. */
export function tokenMatches(expected: string, given: string | undefined): boolean {
  if (given === undefined || given === '') return false;
  const a = createHash('sha256').update(expected).digest();
  const b = createHash('sha256').update(given).digest();
  return timingSafeEqual(a, b);
}

/** The token a request carries: `Authorization: Bearer`, the cookie, or (the page's first load) `?token=`. */
export function presentedTokens(request: {
  headers: Record<string, string | string[] | undefined>;
  query?: unknown;
}): string[] {
  const out: string[] = [];
  const auth = request.headers.authorization;
  if (typeof auth === 'string' && /^Bearer /i.test(auth)) out.push(auth.slice(7).trim());
  const cookie = request.headers.cookie;
  if (typeof cookie === 'string') {
    for (const part of cookie.split(';')) {
      const [key, ...value] = part.trim().split('=');
      if (key === COOKIE_NAME) out.push(decodeURIComponent(value.join('=')));
    }
  }
  const query = request.query as { token?: unknown } | undefined;
  if (typeof query?.token === 'string') out.push(query.token);
  return out;
}

export function cookieFor(token: string): string {
  return `${COOKIE_NAME}=${encodeURIComponent(token)}; HttpOnly; SameSite=Strict; Path=/`;
}
