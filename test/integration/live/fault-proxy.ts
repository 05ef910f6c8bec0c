/**
 * A loopback HTTP proxy in front of the simulator that injects faults on chosen paths, a chosen number
 * of times, and records every request (so a test can count places per customTag at the wire).
 *
 * Faults:
 * - `status`: answer this HTTP status without forwarding (500, 503, 429, 401...).
 * - `drop-before`: destroy the connection without forwarding (the request never reached the server).
 * - `drop-after`: forward, let the server act, then destroy the connection instead of answering
 *   (the classic unknown outcome: the order exists, the bot never hears so).
 * - `malformed`: forward, then answer with the response body corrupted by `corrupt`.
 * - `delay`: forward after `delayMs`.
 * - `hold`: forward, then keep the answer until `release()` (for killing the bot mid-request).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export type FaultAction =
  | { readonly kind: 'status'; readonly status: number; readonly body?: string; readonly headers?: Record<string, string> }
  | { readonly kind: 'drop-before' }
  | { readonly kind: 'drop-after' }
  | { readonly kind: 'malformed'; readonly corrupt: (body: string) => string }
  | { readonly kind: 'delay'; readonly delayMs: number }
  /** Keep the answer until `release()`; with `forward: false` the request is not even forwarded. */
  | { readonly kind: 'hold'; readonly forward?: boolean };

export interface FaultRule {
  readonly path: string;
  readonly action: FaultAction;
  /** How many matching requests get the fault (default 1). */
  times?: number;
}

export interface SeenRequest {
  readonly method: string;
  readonly path: string;
  readonly body: unknown;
  /** False when the fault kept it from reaching the server. */
  readonly forwarded: boolean;
  readonly fault?: FaultAction['kind'];
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
  placesByTag(): Map<string, number>;
  close(): Promise<void>;
}

export async function startFaultProxy(target: string): Promise<FaultProxy> {
  const upstream = new URL(target);
  const rules: FaultRule[] = [];
  const requests: SeenRequest[] = [];
  let heldWaiters: Array<() => void> = [];
  const heldAnswers: Array<{ res: http.ServerResponse; status: number; headers: http.IncomingHttpHeaders; body: Buffer }> = [];
  const notifyHeld = (): void => {
    const waiters = heldWaiters;
    heldWaiters = [];
    for (const w of waiters) w();
  };

  const forward = (req: http.IncomingMessage, body: Buffer): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }> =>
    new Promise((resolve, reject) => {
      const out = http.request(
        { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: { ...req.headers, host: upstream.host } },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode ?? 502, headers: res.headers, body: Buffer.concat(chunks) }));
          res.on('error', reject);
        },
      );
      out.on('error', reject);
      out.end(body);
    });

  const answer = (res: http.ServerResponse, status: number, headers: http.IncomingHttpHeaders, body: Buffer): void => {
    const h: Record<string, string> = {};
    for (const [k, v] of Object.entries(headers)) if (typeof v === 'string' && !['content-length', 'transfer-encoding', 'connection'].includes(k)) h[k] = v;
    res.writeHead(status, { ...h, 'content-length': String(body.length) });
    res.end(body);
  };

  const server = http.createServer((req, res) => {
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
      const rule = rules.find((r) => r.path === path && (r.times ?? 1) > 0);
      if (rule) rule.times = (rule.times ?? 1) - 1;
      const action = rule?.action;
      const record = (forwarded: boolean): void => {
        requests.push({ method: req.method ?? 'GET', path, body: parsed, forwarded, ...(action ? { fault: action.kind } : {}) });
      };
      const fail = (error: unknown): void => {
        res.destroy(error instanceof Error ? error : undefined);
      };
      if (action?.kind === 'status') {
        record(false);
        res.writeHead(action.status, { 'content-type': 'application/json', ...(action.headers ?? {}) });
        res.end(action.body ?? '');
        return;
      }
      if (action?.kind === 'drop-before') {
        record(false);
        req.socket.destroy();
        return;
      }
      if (action?.kind === 'hold' && action.forward === false) {
        record(false);
        heldAnswers.push({ res, status: 0, headers: {}, body: Buffer.alloc(0) });
        notifyHeld();
        return;
      }
      const go = (): void => {
        record(true);
        forward(req, raw).then((up) => {
          if (action?.kind === 'drop-after') {
            req.socket.destroy();
          } else if (action?.kind === 'malformed') {
            answer(res, up.status, up.headers, Buffer.from(action.corrupt(up.body.toString('utf8'))));
          } else if (action?.kind === 'hold') {
            heldAnswers.push({ res, ...up });
            notifyHeld();
          } else {
            answer(res, up.status, up.headers, up.body);
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
    inject: (rule) => rules.push({ ...rule }),
    clear: () => void rules.splice(0),
    held: () => (heldAnswers.length > 0 ? Promise.resolve() : new Promise<void>((resolve) => heldWaiters.push(resolve))),
    release: (options) => {
      for (const h of heldAnswers.splice(0)) {
        if (options?.drop || h.status === 0) h.res.socket?.destroy();
        else answer(h.res, h.status, h.headers, h.body);
      }
    },
    placesByTag: () => {
      const counts = new Map<string, number>();
      for (const r of requests) {
        if (r.path !== '/api/Order/place' || !r.forwarded) continue;
        const tag = (r.body as { customTag?: string } | null)?.customTag ?? '(none)';
        counts.set(tag, (counts.get(tag) ?? 0) + 1);
      }
      return counts;
    },
    close: async () => {
      for (const h of heldAnswers.splice(0)) h.res.socket?.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
