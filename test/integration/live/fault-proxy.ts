/**
 * A loopback HTTP proxy in front of the simulator that injects faults on chosen paths, a chosen number
 * of times, and records every request (so a test can count places per customTag at the wire).
 *
 * Faults:
 * - `status`: answer this HTTP status without forwarding (500, 503, 429, 401...).
 * - `status-after`: forward, let the server act, then answer this status instead of its answer (a 5xx
 *   after the gateway applied the request).
 * - `drop-before`: destroy the connection without forwarding (the request never reached the server).
 * - `drop-after`: forward, let the server act, then destroy the connection instead of answering
 *   (the classic unknown outcome: the order exists, the bot never hears so).
 * - `malformed`: forward, then answer with the response body corrupted by `corrupt`.
 * - `truncate`: forward, then announce the whole body but send only its first `keep` bytes and cut the
 *   connection (a transfer broken mid-body).
 * - `delay`: forward after `delayMs` (a request held by the network, delivered late).
 * - `late-answer`: forward at once, answer after `delayMs` (the answer held by the network).
 * - `hold`: forward, then keep the answer until `release()` (for killing the bot mid-request).
 *
 * A rule may match one path, several, or every path (`'*'`), only every n-th matching request (`every`),
 * and only while `when()` holds. `expireTokens()` makes every session token issued so far answer 401,
 * as a gateway does once a token expired, until the client logs in again.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export type FaultAction =
  | {
      readonly kind: 'status';
      readonly status: number;
      readonly body?: string;
      readonly headers?: Record<string, string>;
    }
  | { readonly kind: 'status-after'; readonly status: number; readonly body?: string }
  | { readonly kind: 'drop-before' }
  | { readonly kind: 'drop-after' }
  | { readonly kind: 'malformed'; readonly corrupt: (body: string) => string }
  | { readonly kind: 'truncate'; readonly keep: (body: string) => number }
  | { readonly kind: 'delay'; readonly delayMs: number }
  | { readonly kind: 'late-answer'; readonly delayMs: number }
  /** Keep the answer until `release()`; with `forward: false` the request is not even forwarded. */
  | { readonly kind: 'hold'; readonly forward?: boolean };

export interface FaultRule {
  /** A path (`/api/Order/place`), several, or `'*'` for every path. */
  readonly path: string | readonly string[];
  readonly action: FaultAction;
  /** How many matching requests get the fault (default 1). */
  times?: number;
  /** Only every n-th matching request gets the fault (default 1: each one). */
  readonly every?: number;
  /** The rule is considered only while this holds (for example: once a place has been answered). */
  readonly when?: () => boolean;
}

export interface SeenRequest {
  readonly method: string;
  readonly path: string;
  readonly body: unknown;
  /** Wall-clock time the request arrived at the proxy. */
  readonly at: number;
  /** False until it is forwarded (it stays false when the fault kept it from reaching the server). */
  forwarded: boolean;
  forwardedAt?: number;
  readonly fault?: FaultAction['kind'] | 'expired-token';
  /** Set once an answer (of any status) has been written back to the client. */
  answeredStatus?: number;
  answeredAt?: number;
}

export interface FaultProxy {
  readonly url: string;
  readonly requests: SeenRequest[];
  inject(rule: FaultRule): void;
  clear(): void;
  /** Resolves when a held request has been forwarded and its answer is being withheld. */
  held(): Promise<void>;
  /** Answer (or, with `drop`, destroy) every held request. */
  release(options?: { drop?: boolean }): void;
  /** Place requests that reached the server, per customTag. */
  placesByTag(accountId?: number): Map<string, number>;
  /** Session tokens the server issued through this proxy (login and validate answers, also the ones a fault corrupted). */
  tokens(): string[];
  /** Every token issued so far is refused with 401 from now on (not forwarded), as after its expiry. */
  expireTokens(): void;
  close(): Promise<void>;
}

const TOKEN_FIELD = /"(?:token|newToken)"\s*:\s*"([^"]+)"/g;
const AUTH_PATHS = new Set(['/api/Auth/loginKey', '/api/Auth/validate']);

function pathMatches(rule: FaultRule, path: string): boolean {
  if (rule.path === '*') return true;
  return typeof rule.path === 'string' ? rule.path === path : rule.path.includes(path);
}

export async function startFaultProxy(target: string): Promise<FaultProxy> {
  const upstream = new URL(target);
  const rules: Array<FaultRule & { seen: number }> = [];
  const requests: SeenRequest[] = [];
  const issuedTokens = new Set<string>();
  const expiredTokens = new Set<string>();
  let heldWaiters: Array<() => void> = [];
  const heldAnswers: Array<{
    res: http.ServerResponse;
    seen: SeenRequest;
    status: number;
    headers: http.IncomingHttpHeaders;
    body: Buffer;
  }> = [];
  const notifyHeld = (): void => {
    const waiters = heldWaiters;
    heldWaiters = [];
    for (const w of waiters) w();
  };

  const noteTokens = (path: string, body: Buffer): void => {
    if (!AUTH_PATHS.has(path)) return;
    for (const match of body.toString('utf8').matchAll(TOKEN_FIELD)) issuedTokens.add(match[1]!);
  };

  const forward = (
    req: http.IncomingMessage,
    body: Buffer,
  ): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }> =>
    new Promise((resolve, reject) => {
      const out = http.request(
        {
          host: upstream.hostname,
          port: upstream.port,
          method: req.method,
          path: req.url,
          headers: { ...req.headers, host: upstream.host },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () =>
            resolve({ status: res.statusCode ?? 502, headers: res.headers, body: Buffer.concat(chunks) }),
          );
          res.on('error', reject);
        },
      );
      out.on('error', reject);
      out.end(body);
    });

  const passHeaders = (headers: http.IncomingHttpHeaders): Record<string, string> => {
    const h: Record<string, string> = {};
    for (const [k, v] of Object.entries(headers))
      if (typeof v === 'string' && !['content-length', 'transfer-encoding', 'connection'].includes(k)) h[k] = v;
    return h;
  };

  const answer = (
    res: http.ServerResponse,
    seen: SeenRequest,
    status: number,
    headers: http.IncomingHttpHeaders,
    body: Buffer,
  ): void => {
    // The client may have given up (a timeout) and closed the connection: nothing left to answer.
    if (res.destroyed || res.writableEnded) return;
    res.writeHead(status, { ...passHeaders(headers), 'content-length': String(body.length) });
    res.end(body);
    seen.answeredStatus = status;
    seen.answeredAt = Date.now();
  };

  const ruleFor = (path: string): FaultRule | undefined => {
    for (const rule of rules) {
      if ((rule.times ?? 1) <= 0 || !pathMatches(rule, path)) continue;
      if (rule.when && !rule.when()) continue;
      rule.seen += 1;
      if (rule.seen % (rule.every ?? 1) !== 0) continue;
      rule.times = (rule.times ?? 1) - 1;
      return rule;
    }
    return undefined;
  };

  const server = http.createServer((req, res) => {
    res.on('error', () => undefined);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const path = (req.url ?? '').split('?')[0]!;
      let parsed: unknown = null;
      try {
        parsed = raw.length ? JSON.parse(raw.toString('utf8')) : null;
      } catch {
        parsed = raw.toString('utf8');
      }
      const at = Date.now();
      const bearer = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? '')?.[1];
      if (bearer !== undefined && expiredTokens.has(bearer)) {
        const seen: SeenRequest = {
          method: req.method ?? 'GET',
          path,
          body: parsed,
          at,
          forwarded: false,
          fault: 'expired-token',
        };
        requests.push(seen);
        answer(
          res,
          seen,
          401,
          { 'content-type': 'application/json' },
          Buffer.from('{"message":"Missing, unknown, revoked or expired session token"}'),
        );
        return;
      }
      const action = ruleFor(path)?.action;
      // Logged as it arrives (a delayed request shows before it is forwarded).
      const seen: SeenRequest = {
        method: req.method ?? 'GET',
        path,
        body: parsed,
        at,
        forwarded: false,
        ...(action ? { fault: action.kind } : {}),
      };
      requests.push(seen);
      const fail = (error: unknown): void => {
        res.destroy(error instanceof Error ? error : undefined);
      };
      if (action?.kind === 'status') {
        answer(
          res,
          seen,
          action.status,
          { 'content-type': 'application/json', ...(action.headers ?? {}) },
          Buffer.from(action.body ?? ''),
        );
        return;
      }
      if (action?.kind === 'drop-before') {
        req.socket.destroy();
        return;
      }
      if (action?.kind === 'hold' && action.forward === false) {
        heldAnswers.push({ res, seen, status: 0, headers: {}, body: Buffer.alloc(0) });
        notifyHeld();
        return;
      }
      const go = (): void => {
        seen.forwarded = true;
        seen.forwardedAt = Date.now();
        forward(req, raw).then((up) => {
          noteTokens(path, up.body);
          switch (action?.kind) {
            case 'drop-after':
              req.socket.destroy();
              return;
            case 'status-after':
              answer(res, seen, action.status, { 'content-type': 'application/json' }, Buffer.from(action.body ?? ''));
              return;
            case 'malformed':
              answer(res, seen, up.status, up.headers, Buffer.from(action.corrupt(up.body.toString('utf8'))));
              return;
            case 'truncate': {
              if (res.destroyed) return;
              res.writeHead(up.status, { ...passHeaders(up.headers), 'content-length': String(up.body.length) });
              res.write(
                up.body.subarray(0, Math.max(0, Math.min(up.body.length - 1, action.keep(up.body.toString('utf8'))))),
              );
              seen.answeredStatus = up.status;
              seen.answeredAt = Date.now();
              // Let the partial body leave before the connection is cut.
              setTimeout(() => req.socket.destroy(), 20);
              return;
            }
            case 'late-answer':
              setTimeout(() => answer(res, seen, up.status, up.headers, up.body), action.delayMs);
              return;
            case 'hold':
              heldAnswers.push({ res, seen, ...up });
              notifyHeld();
              return;
            default:
              answer(res, seen, up.status, up.headers, up.body);
          }
        }, fail);
      };
      if (action?.kind === 'delay') setTimeout(go, action.delayMs);
      else go();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    inject: (rule) => rules.push({ ...rule, seen: 0 }),
    clear: () => void rules.splice(0),
    held: () =>
      heldAnswers.length > 0 ? Promise.resolve() : new Promise<void>((resolve) => heldWaiters.push(resolve)),
    release: (options) => {
      for (const h of heldAnswers.splice(0)) {
        if (options?.drop || h.status === 0) h.res.socket?.destroy();
        else answer(h.res, h.seen, h.status, h.headers, h.body);
      }
    },
    // A customTag is unique per account: two accounts' bots may each use `fast-1`.
    placesByTag: (accountId?: number) => {
      const counts = new Map<string, number>();
      for (const r of requests) {
        if (r.path !== '/api/Order/place' || !r.forwarded) continue;
        const body = r.body as { customTag?: string; accountId?: number } | null;
        if (accountId !== undefined && body?.accountId !== accountId) continue;
        const tag = body?.customTag ?? '(none)';
        counts.set(tag, (counts.get(tag) ?? 0) + 1);
      }
      return counts;
    },
    tokens: () => [...issuedTokens],
    expireTokens: () => {
      for (const token of issuedTokens) expiredTokens.add(token);
    },
    close: async () => {
      for (const h of heldAnswers.splice(0)) h.res.socket?.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
