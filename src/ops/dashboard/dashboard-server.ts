/**
 * The dashboard's HTTP server (fastify): one page, a small JSON API and a stream of server-sent events,
 * all behind the access token (access.ts). Live updates follow the journal: every entry an account's
 * journal writes goes to every open page at once (`entry`), and the account's snapshot follows within
 * `coalesceMs` (one snapshot for a burst of entries), plus one every `refreshMs` so ages and clocks move
 * on a quiet market.
 *
 * Binds 127.0.0.1 unless told otherwise: the page can flatten an account.
 */
import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Subscription } from 'rxjs';
import type { z } from 'zod';
import { TicklineError, type ErrorKind } from '../../engine/errors.ts';
import type { Logger } from '../../engine/log.ts';
import { scrubSecrets } from '../../engine/secrets.ts';
import { cookieFor, newAccessToken, presentedTokens, tokenMatches } from './access.ts';
import {
  accountSnapshotSchema,
  accountsResponseSchema,
  actionRequestSchema,
  actionsResponseSchema,
  equityResponseSchema,
  errorResponseSchema,
  type ActionResult,
  type DashboardAccount,
  type DashboardFeed,
} from './dashboard-feed.ts';
import { dashboardPage } from './dashboard-page.ts';
import { SSE_KEEPALIVE, sseFrame } from './sse.ts';

export class DashboardError extends TicklineError {
  override readonly name = 'DashboardError';
  readonly kind: ErrorKind;
  constructor(
    readonly code: 'DASHBOARD_ADDRESS' | 'DASHBOARD_LISTEN',
    message: string,
  ) {
    super(message);
    // A malformed --dashboard value is the user's to fix; a port that cannot be bound is the machine's.
    this.kind = code === 'DASHBOARD_ADDRESS' ? 'usage' : 'environment';
  }
}

export interface DashboardOptions {
  readonly feed: DashboardFeed;
  /** Default 127.0.0.1. */
  readonly host?: string;
  /** Default 0: a free port. */
  readonly port?: number;
  /** Default: a new random token (registered as a secret). */
  readonly token?: string;
  readonly logger: Logger;
  /** A snapshot follows a burst of journal entries this much later (wall ms). Default 50. */
  readonly coalesceMs?: number;
  /** Every open page gets fresh snapshots this often (wall ms). Default 1000. */
  readonly refreshMs?: number;
}

export interface Dashboard {
  /** The page's address with the token: what the operator opens. Holds the secret: print it, never log it. */
  readonly url: string;
  /** `http://host:port`, without the token. */
  readonly origin: string;
  readonly token: string;
  close(): Promise<void>;
}

/** `host:port`, `:port`, `port` or `host` (a free port) into its parts; a one-line error naming what was wrong. */
export function parseDashboardAddress(text: string): { host: string; port: number } {
  const trimmed = text.trim();
  const match = /^(?:\[([0-9a-fA-F:]+)\]|([^:\s]*))(?::(\d+))?$/.exec(trimmed);
  const bare = /^\d+$/.test(trimmed);
  if (match === null && !bare)
    throw new DashboardError('DASHBOARD_ADDRESS', `--dashboard '${text}' is not host:port (e.g. 127.0.0.1:8787)`);
  const host = bare ? '' : (match![1] ?? match![2] ?? '');
  const portText = bare ? trimmed : match![3];
  const port = portText === undefined ? 0 : Number(portText);
  if (!Number.isInteger(port) || port < 0 || port > 65_535)
    throw new DashboardError('DASHBOARD_ADDRESS', `--dashboard port '${portText}' is not a port number (0-65535)`);
  return { host: host === '' ? '127.0.0.1' : host, port };
}

function sameOrigin(request: FastifyRequest): boolean {
  const origin = request.headers.origin;
  if (origin === undefined) return true;
  // An unreadable Origin is no origin of ours.
  if (!URL.canParse(origin)) return false;
  const host = new URL(origin).host;
  const forwarded = request.headers['x-forwarded-host'];
  const hosts = [request.headers.host, ...(typeof forwarded === 'string' ? forwarded.split(',') : [])];
  return hosts.some((h) => h !== undefined && h.trim() === host);
}

function send<S extends z.ZodType>(reply: FastifyReply, schema: S, value: z.infer<S>, status = 200): FastifyReply {
  // What leaves is what the schema says: a feed that breaks the shape fails here, not on the page.
  return reply
    .code(status)
    .type('application/json; charset=utf-8')
    .send(scrubSecrets(JSON.stringify(schema.parse(value))));
}

const MAX_BUFFERED_BYTES = 4 * 1024 * 1024;

/** Open pages and what they are sent. */
class Broadcaster {
  private readonly clients = new Set<ServerResponse>();
  private readonly pending = new Map<string, NodeJS.Timeout>();
  private readonly watched = new Map<string, Subscription>();
  private readonly refresh: NodeJS.Timeout;

  constructor(
    private readonly feed: DashboardFeed,
    private readonly logger: Logger,
    private readonly coalesceMs: number,
    refreshMs: number,
  ) {
    this.watch();
    this.refresh = setInterval(() => {
      this.watch();
      if (this.clients.size === 0) return;
      for (const account of this.feed.accounts()) this.sendSnapshot(account);
      this.write(SSE_KEEPALIVE);
    }, refreshMs);
    this.refresh.unref();
  }

  /** Follows the journal of every account the feed lists (a node may add accounts while it runs). */
  private watch(): void {
    for (const account of this.feed.accounts()) {
      if (this.watched.has(account.id)) continue;
      this.watched.set(
        account.id,
        account.recorded.subscribe({
          next: (entry) => {
            if (this.clients.size === 0) return;
            this.write(sseFrame('entry', { account: account.id, entry }, entry.seq));
            this.scheduleSnapshot(account);
          },
          error: (error: unknown) =>
            this.logger.error({ err: error, account: account.id }, 'dashboard: journal stream failed'),
        }),
      );
    }
  }

  private scheduleSnapshot(account: DashboardAccount): void {
    if (this.pending.has(account.id)) return;
    const timer = setTimeout(() => {
      this.pending.delete(account.id);
      this.sendSnapshot(account);
    }, this.coalesceMs);
    this.pending.set(account.id, timer);
  }

  private snapshotFrame(account: DashboardAccount): string | undefined {
    try {
      return sseFrame('snapshot', accountSnapshotSchema.parse(account.snapshot()));
    } catch (error) {
      this.logger.error({ err: error, account: account.id }, 'dashboard: snapshot failed');
      return undefined;
    }
  }

  private sendSnapshot(account: DashboardAccount): void {
    const frame = this.snapshotFrame(account);
    if (frame !== undefined) this.write(frame);
  }

  private queued: string[] = [];
  private flushing: NodeJS.Immediate | undefined;

  /**
   * Frames written in one turn of the event loop leave in one socket write: a fill journals several
   * entries in one transaction, and the socket write, not the framing, is what an entry costs (bench 16).
   */
  private write(frame: string): void {
    this.queued.push(scrubSecrets(frame));
    this.flushing ??= setImmediate(() => {
      this.flushing = undefined;
      const text = this.queued.join('');
      this.queued = [];
      for (const client of this.clients) {
        // A reader that stopped reading (a phone asleep on a stalled connection) is dropped rather than
        // buffered without end: its browser reconnects and starts again from fresh snapshots.
        if (client.writableLength > MAX_BUFFERED_BYTES) {
          this.logger.warn({ buffered: client.writableLength }, 'dashboard: a page stopped reading; dropped');
          this.clients.delete(client);
          client.destroy();
        } else client.write(text);
      }
    });
  }

  add(client: ServerResponse): void {
    this.clients.add(client);
    // The page starts from the snapshots now; entries follow as they are written.
    for (const account of this.feed.accounts()) {
      const frame = this.snapshotFrame(account);
      if (frame !== undefined) client.write(scrubSecrets(frame));
    }
    client.on('close', () => this.clients.delete(client));
  }

  get size(): number {
    return this.clients.size;
  }

  close(): void {
    clearInterval(this.refresh);
    if (this.flushing !== undefined) clearImmediate(this.flushing);
    for (const timer of this.pending.values()) clearTimeout(timer);
    for (const s of this.watched.values()) s.unsubscribe();
    for (const client of this.clients) client.end();
    this.clients.clear();
  }
}

export async function startDashboard(options: DashboardOptions): Promise<Dashboard> {
  const { feed, logger } = options;
  const host = options.host ?? '127.0.0.1';
  const token = options.token ?? newAccessToken();
  const app: FastifyInstance = Fastify({ logger: false, bodyLimit: 16_384, return503OnClosing: true });
  const broadcaster = new Broadcaster(feed, logger, options.coalesceMs ?? 50, options.refreshMs ?? 1_000);

  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    reply.header('cache-control', 'no-store');
    reply.header('x-content-type-options', 'nosniff');
    reply.header('referrer-policy', 'no-referrer');
    if (presentedTokens(request).some((t) => tokenMatches(token, t))) return;
    // Nothing but the refusal: no page, no figures, not even which accounts exist.
    return send(reply, errorResponseSchema, { error: 'unauthorized' }, 401);
  });

  app.get('/', async (request, reply) => {
    const query = request.query as { token?: unknown };
    if (typeof query.token === 'string') {
      // The token moves to a cookie and out of the address bar (and the browser's history).
      return reply.header('set-cookie', cookieFor(token)).redirect('/', 303);
    }
    const nonce = randomBytes(16).toString('base64');
    return reply
      .header(
        'content-security-policy',
        `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'unsafe-inline'; connect-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'`,
      )
      .type('text/html; charset=utf-8')
      .send(dashboardPage(nonce));
  });

  app.get('/api/accounts', async (_request, reply) =>
    send(reply, accountsResponseSchema, { accounts: feed.accounts().map((a) => a.snapshot()) }),
  );

  app.get('/api/accounts/:id/equity', async (request, reply) => {
    const id = (request.params as { id: string }).id;
    const account = feed.accounts().find((a) => a.id === id);
    if (account === undefined) return send(reply, errorResponseSchema, { error: `no account ${id}` }, 404);
    return send(reply, equityResponseSchema, { account: id, points: [...account.equity()] });
  });

  app.get('/api/events', (request, reply) => {
    reply.hijack();
    const raw = reply.raw;
    raw.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    raw.write('retry: 2000\n\n');
    broadcaster.add(raw);
    request.raw.on('close', () => raw.end());
  });

  app.post('/api/actions', async (request, reply) => {
    // Same origin only, besides the SameSite=Strict cookie and the JSON body (a cross-site form can send
    // neither). The host is compared, not the scheme: behind an HTTPS tunnel the page's origin is https.
    if (!sameOrigin(request)) return send(reply, errorResponseSchema, { error: 'cross-origin action refused' }, 403);
    const parsed = actionRequestSchema.safeParse(request.body);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      return send(
        reply,
        errorResponseSchema,
        { error: `bad action: ${issue?.path.join('.') || 'body'}: ${issue?.message ?? 'invalid'}` },
        400,
      );
    }
    const { action, account, bot } = parsed.data;
    const targets = account === 'all' ? feed.accounts() : feed.accounts().filter((a) => a.id === account);
    if (targets.length === 0) return send(reply, errorResponseSchema, { error: `no account ${account}` }, 404);
    logger.warn({ action, account, ...(bot === undefined ? {} : { bot }), source: 'dashboard' }, 'dashboard action');
    // Every account at once: a kill for all must not wait for one slow gateway to flatten the next.
    const results = await Promise.all(
      targets.map((target) =>
        target.act(action, 'dashboard', bot).catch((error: unknown): ActionResult => {
          logger.error({ err: error, action, account: target.id }, 'dashboard action failed');
          return {
            account: target.id,
            action,
            ok: false,
            message: `${action} failed: ${error instanceof Error ? error.message : String(error)}`,
          };
        }),
      ),
    );
    return send(reply, actionsResponseSchema, { results });
  });

  try {
    await app.listen({ host, port: options.port ?? 0 });
  } catch (error) {
    broadcaster.close();
    throw new DashboardError(
      'DASHBOARD_LISTEN',
      `dashboard cannot listen on ${host}:${options.port ?? 0}: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  const address = app.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : (options.port ?? 0);
  const shownHost = host.includes(':') ? `[${host}]` : host === '0.0.0.0' ? '127.0.0.1' : host;
  const origin = `http://${shownHost}:${port}`;
  logger.info({ origin }, 'dashboard listening');
  return {
    url: `${origin}/?token=${token}`,
    origin,
    token,
    close: async () => {
      broadcaster.close();
      await app.close();
    },
  };
}
