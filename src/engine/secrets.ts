/**
 * Secrets scrubbed by value. Redacting log fields by name misses a token inside a raw response body, a
 * zod issue's `received`, an error message or a URL; so every secret the process learns (the API key,
 * each session token, the administration credential) is registered here, and every log line, error
 * message and printed error passes through `scrubSecrets`, which replaces each registered value wherever
 * it stands. Values that arrive before they can be registered (a token inside a login answer that could
 * not be parsed) are caught by shape: a `"token": "…"` field, a bearer credential, a JWT.
 */
const registered = new Set<string>();
/** Longest first, so a secret that contains another is replaced whole. */
let ordered: string[] = [];

const REDACTED = '[redacted]';
/** Shorter values would match ordinary text. */
const MIN_LENGTH = 6;

/** A secret field in JSON text, also inside JSON quoted again (`\"token\":\"…`): the value up to its quote. */
const SECRET_FIELD =
  /(\\*"(?:token|newToken|loginToken|apiKey|password|authorization|access_token)\\*"\s*:\s*\\*")[^"\\]*/gi;
const BEARER = /\b(Bearer\s+)[A-Za-z0-9._~+/=-]+/gi;
const JWT = /\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*(?:\.[A-Za-z0-9_-]*)?/g;
const QUERY_TOKEN = /([?&]access_token=)[^&\s"]+/gi;

export function registerSecret(value: string | undefined | null): void {
  if (typeof value !== 'string' || value.length < MIN_LENGTH || registered.has(value)) return;
  registered.add(value);
  const escaped = JSON.stringify(value).slice(1, -1);
  if (escaped !== value) registered.add(escaped);
  ordered = [...registered].sort((a, b) => b.length - a.length);
}

/** Forget every registered value (tests). */
export function clearSecrets(): void {
  registered.clear();
  ordered = [];
}

export function scrubSecrets(text: string): string {
  let out = text;
  for (const secret of ordered) if (out.includes(secret)) out = out.replaceAll(secret, REDACTED);
  if (out.includes('"')) out = out.replace(SECRET_FIELD, `$1${REDACTED}`);
  return out.replace(BEARER, `$1${REDACTED}`).replace(JWT, REDACTED).replace(QUERY_TOKEN, `$1${REDACTED}`);
}

/** A message cut to a short excerpt and scrubbed: raw bodies never travel whole in errors. */
export function excerpt(text: string, max = 120): string {
  const short = text.length > max ? `${text.slice(0, max)}…` : text;
  return scrubSecrets(short);
}
