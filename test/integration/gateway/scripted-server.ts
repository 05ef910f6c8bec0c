/**
 * A small HTTP server on 127.0.0.1 (port 0) that answers in the spec's shapes and can be scripted per
 * request: status, body, raw text, delay, a dropped socket, a request left hanging, extra headers. It
 * records every request and counts them per path, so a test can prove how many attempts were made.
 */
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import * as F from './fixtures.ts';

export interface Reply {
  status?: number;
  /** Serialised as JSON. */
  body?: unknown;
  /** Sent as is (malformed JSON, plain text). */
  raw?: string;
  headers?: Record<string, string>;
  delayMs?: number;
  /** Destroy the socket after reading the request, without an answer. */
  destroy?: boolean;
  /** Never answer (the client's timeout must fire). */
  hang?: boolean;
}

export interface Recorded {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: http.IncomingHttpHeaders;
  body: unknown;
}

export type Handler = (request: Recorded, server: ScriptedServer) => Reply;

export class ScriptedServer {
  readonly requests: Recorded[] = [];
  /** Tokens the server accepts; `expireTokens()` empties it. */
  readonly tokens = new Set<string>();
  private readonly scripts = new Map<string, Reply[]>();
  private readonly handlers = new Map<string, Handler>();
  private readonly sockets = new Set<Socket>();
  private issued = 0;
  private server!: http.Server;
  url = '';

  static async start(): Promise<ScriptedServer> {
    const s = new ScriptedServer();
    s.server = http.createServer((req, res) => void s.handle(req, res));
    s.server.on('connection', (socket) => {
      s.sockets.add(socket);
      socket.on('close', () => s.sockets.delete(socket));
    });
    await new Promise<void>((resolve) => s.server.listen(0, '127.0.0.1', resolve));
    s.url = `http://127.0.0.1:${(s.server.address() as AddressInfo).port}`;
    return s;
  }

  /** Queue one-off replies for the next requests to `path` (then the default answers again). */
  script(path: string, ...replies: Reply[]): this {
    this.scripts.set(path, [...(this.scripts.get(path) ?? []), ...replies]);
    return this;
  }

  /** Replace the default answer for `path`. */
  on(path: string, handler: Handler): this {
    this.handlers.set(path, handler);
    return this;
  }

  count(path: string): number {
    return this.requests.filter((r) => r.path === path).length;
  }

  last(path: string): Recorded | undefined {
    return this.requests.filter((r) => r.path === path).at(-1);
  }

  issueToken(): string {
    this.issued += 1;
    const token = `token-${this.issued}-${'s'.repeat(12)}`;
    this.tokens.add(token);
    return token;
  }

  expireTokens(): void {
    this.tokens.clear();
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const url = new URL(req.url ?? '/', 'http://x');
    let body: unknown;
    if (text) {
      try {
        body = JSON.parse(text);
      } catch {
        body = text;
      }
    }
    const recorded: Recorded = {
      method: req.method ?? '',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      headers: req.headers,
      body,
    };
    this.requests.push(recorded);
    const queued = this.scripts.get(url.pathname);
    const reply = queued && queued.length > 0 ? (queued.shift() as Reply) : this.defaultReply(recorded);
    if (reply.delayMs) await new Promise((r) => setTimeout(r, reply.delayMs));
    if (reply.hang) return;
    if (reply.destroy) {
      req.socket.destroy();
      return;
    }
    const payload = reply.raw ?? (reply.body === undefined ? '' : JSON.stringify(reply.body));
    res.writeHead(reply.status ?? 200, {
      'content-type': reply.raw !== undefined ? 'text/plain' : 'application/json',
      ...(reply.headers ?? {}),
    });
    res.end(payload);
  }

  private authorised(r: Recorded): boolean {
    const header = r.headers.authorization;
    return typeof header === 'string' && header.startsWith('Bearer ') && this.tokens.has(header.slice(7));
  }

  private defaultReply(r: Recorded): Reply {
    const custom = this.handlers.get(r.path);
    if (custom) return custom(r, this);
    const b = (r.body ?? {}) as Record<string, unknown>;
    if (r.path === '/api/Auth/loginKey') {
      if (typeof b.userName !== 'string' || typeof b.apiKey !== 'string') {
        return { status: 400, body: { title: 'One or more validation errors occurred.', status: 400 } };
      }
      return { body: { token: this.issueToken(), ...F.ok } };
    }
    if (r.path === '/api/Status/ping') return { raw: 'pong' };
    if (r.path.startsWith('/api/') && !this.authorised(r)) return { status: 401 };
    switch (r.path) {
      case '/api/Auth/validate':
        return { body: { ...F.ok, newToken: this.issueToken() } };
      case '/api/Auth/logout':
        return { body: F.ok };
      case '/api/Order/search':
        return { body: { ...F.ok, orders: [F.order] } };
      case '/api/Order/searchOpen':
        return { body: { ...F.ok, orders: [F.openOrder] } };
      case '/api/Order/place':
        return { body: { ...F.ok, orderId: 9056 } };
      case '/api/Order/cancel':
      case '/api/Order/modify':
      case '/api/Position/closeContract':
      case '/api/Position/partialCloseContract':
        return { body: F.ok };
      case '/api/Contract/available':
      case '/api/Contract/search':
        return { body: { ...F.ok, contracts: [F.contract] } };
      case '/api/Contract/searchById':
        return { body: { ...F.ok, contract: F.contract } };
      case '/api/History/retrieveBars':
        return { body: { ...F.ok, bars: [F.bar] } };
      case '/api/Trade/search':
        return { body: { ...F.ok, trades: [F.trade] } };
      case '/api/Account/search':
        return { body: { ...F.ok, accounts: [F.account] } };
      case '/api/Position/searchOpen':
        return { body: { ...F.ok, positions: [F.position] } };
      case '/AccountTemplate':
        return { body: [F.template] };
      case '/AccountTemplate/create':
        return { body: { ...F.exportOk, template: { ...F.template, ...b, id: 13 } } };
      case '/User/find/username':
      case '/User/find':
        return { body: F.user };
      case '/Register':
        return { body: { userId: 992, loginToken: 'login-token-secret', errorMessage: null, result: 0 } };
      case '/Violations/export':
        return { body: { ...F.exportOk, violations: [F.violation] } };
      case '/DataExport/trades':
        return { body: { ...F.exportOk, data: [F.exportedTrade(1)] } };
      case '/DataExport/accounts':
        return { body: { ...F.exportOk, data: [F.exportedAccount] } };
      case '/DataExport/positions':
        return { body: { ...F.exportOk, data: [F.exportedPosition] } };
      case '/Statistics/admin/daily':
        return { body: [F.dailyStatistics] };
      case '/Statistics/admin/daystats':
        return { body: [F.dayStatistics] };
      case '/TradingAccount/find':
        return { body: F.tradingAccount };
    }
    const templateById = /^\/AccountTemplate\/id\/(\d+)$/.exec(r.path);
    if (templateById) return { body: { ...F.template, id: Number(templateById[1]) } };
    const rule = /^\/AccountTemplateRule\/rules\/(\d+)\/(\d+)$/.exec(r.path);
    if (rule) return { body: F.ruleConfiguration('daily', Number(rule[2]), Number(rule[1])) };
    return { status: 404, body: { message: `no route ${r.method} ${r.path}` } };
  }
}

/** Poll until `check` holds, or fail after `timeoutMs`: never a fixed sleep. */
export async function until(check: () => boolean, timeoutMs = 2_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met before the deadline');
    await new Promise((r) => setTimeout(r, 5));
  }
}
