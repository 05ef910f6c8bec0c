/**
 * The HTTP face of the simulator (fastify). Routes come from the shared endpoint table and requests are
 * validated with its schemas, so the simulator and the client cannot disagree about a path or a shape.
 * Trading endpoints live at `/api/...`; the administration interface under the `/admin` prefix of the same
 * server, guarded by `Authorization: Bearer <adminKey>`.
 */
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { Endpoints, type Endpoint, type EndpointKey } from '../protocol/endpoints.ts';
import { describeIssues } from '../protocol/field-issues.ts';
import type { z } from 'zod';
import type { Logger } from '../engine/log.ts';
import { AdminNotFound, type SimAdmin } from './admin-service.ts';
import type { SimEngine } from './sim-core.ts';
import { RateLimiter, type RateLimits } from './request-budget.ts';
import type { UserRow } from './store.ts';

export const ADMIN_PREFIX = '/admin';
/** Deepest JSON nesting a request body may have (the gateway's requests are at most three levels deep). */
export const MAX_JSON_DEPTH = 32;
const PREVIEW_CHARS = 64;
/** Request bodies larger than this are refused with HTTP 413. */
export const BODY_LIMIT_BYTES = 1024 * 1024;

export interface ServerDeps {
  engine: SimEngine;
  admin: SimAdmin;
  adminKey: string;
  rateLimits: RateLimits;
  logger: Logger;
  /** Clock of the rate windows: the wall clock by default (real time even when the market clock is manual). */
  wallClock?: () => number;
  /** Called after every handled request (the realtime hubs publish what it changed). */
  onChange?: () => void;
}

interface Call<I> {
  input: I;
  user: UserRow;
  token: string;
}

type Input<K extends EndpointKey> = z.infer<(typeof Endpoints)[K]['request']>;
type Handlers = { [K in EndpointKey]: (call: Call<Input<K>>) => unknown };

export function buildServer(deps: ServerDeps): FastifyInstance {
  const { engine, admin } = deps;
  const limiter = new RateLimiter(deps.rateLimits, deps.wallClock);
  const app = Fastify({ logger: false, bodyLimit: BODY_LIMIT_BYTES, return503OnClosing: true });

  // An empty body reads as `{}` (validate and logout carry none); anything else must be JSON.
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    const text = String(body);
    if (text.trim() === '') return done(null, {});
    if (nestingDepth(text) > MAX_JSON_DEPTH) {
      const failure = new Error(`Malformed JSON body: nested deeper than ${MAX_JSON_DEPTH} levels`) as Error & {
        statusCode: number;
      };
      failure.statusCode = 400;
      return done(failure, undefined);
    }
    try {
      done(null, JSON.parse(text));
    } catch (error) {
      const failure = new Error(`Malformed JSON body: ${(error as Error).message}`) as Error & { statusCode: number };
      failure.statusCode = 400;
      done(failure, undefined);
    }
  });

  app.setErrorHandler((error: Error & { statusCode?: number; code?: string }, request, reply) => {
    const status = error.statusCode ?? 500;
    if (status >= 500) deps.logger.error({ err: error, url: request.url }, 'simulator request failed');
    void reply.code(status).send({ message: status >= 500 ? 'Internal error' : error.message });
  });
  app.setNotFoundHandler((request, reply) => {
    void reply.code(404).send({ message: `No endpoint ${request.method} ${request.url.split('?')[0]}` });
  });

  const handlers: Handlers = {
    login: ({ input }) => engine.login(input.userName, input.apiKey),
    orderSearch: ({ input, user }) => engine.orderSearch(user, input),
    orderSearchOpen: ({ input, user }) => engine.orderSearchOpen(user, input.accountId),
    orderCancel: ({ input, user }) => engine.cancel(user, input),
    orderModify: ({ input, user }) => engine.modify(user, input),
    contractAvailable: () => engine.contractAvailable(),
    contractSearch: ({ input }) => engine.contractSearch(input.searchText),
    retrieveBars: ({ input }) => engine.retrieveBars(input),
    tradeSearch: ({ input, user }) => engine.tradeSearch(user, input),
    orderPlace: ({ input, user }) => engine.place(user, input),
    validate: ({ user }) => engine.validate(user),
    logout: ({ token }) => engine.logout(token),
    accountSearch: ({ input, user }) => engine.accountSearch(user, input.onlyActiveAccounts),
    positionSearchOpen: ({ input, user }) => engine.positionSearchOpen(user, input.accountId),
    positionClose: ({ input, user }) => engine.closePosition(user, input.accountId, input.contractId),
    positionPartialClose: ({ input, user }) =>
      engine.closePosition(user, input.accountId, input.contractId, input.size),
    contractById: ({ input }) => engine.contractById(input.contractId),
    ping: () => 'pong',
    templateList: () => admin.templateList(),
    templateById: ({ input }) => admin.templateById(input.accountTemplateId),
    templateCreate: ({ input }) => admin.templateCreate(input),
    ruleConfiguration: ({ input }) => admin.ruleConfiguration(input.accountTemplateId, input.ruleId),
    userFindByName: ({ input }) => admin.findUserByName(input.userName),
    userFindByEmail: ({ input }) => admin.findUserByEmail(input.email),
    register: ({ input }) => admin.register(input),
    violationsExport: ({ input }) => admin.violationsExport(input),
    tradesExport: ({ input }) => admin.tradesExport(input),
    accountsExport: ({ input }) => admin.accountsExport(input),
    positionsExport: ({ input }) => admin.positionsExport(input),
    dailyStatistics: ({ input }) => admin.dailyStatistics(input),
    dayStatistics: ({ input }) => admin.dayStatistics(input),
    tradingAccountFind: ({ input }) => admin.findTradingAccount(input.accountName),
    tradingAccountFindGet: ({ input }) => admin.findTradingAccount(input.accountName),
  };

  for (const [key, endpoint] of Object.entries(Endpoints) as [EndpointKey, Endpoint][]) {
    const url = (endpoint.iface === 'admin' ? ADMIN_PREFIX : '') + endpoint.path.replace(/\{(\w+)\}/g, ':$1');
    const handler = handlers[key] as (call: Call<unknown>) => unknown;
    app.route({ method: endpoint.method, url, handler: (request, reply) => serve(endpoint, handler, request, reply) });
  }

  function bearer(request: FastifyRequest): string | undefined {
    const header = request.headers.authorization;
    const match = header === undefined ? null : /^Bearer\s+(\S+)$/i.exec(header);
    return match?.[1];
  }

  async function serve(
    endpoint: Endpoint,
    handler: (call: Call<unknown>) => unknown,
    request: FastifyRequest,
    reply: FastifyReply,
  ): Promise<unknown> {
    let user: UserRow | undefined;
    const token = bearer(request);
    if (endpoint.auth === 'admin' && token !== deps.adminKey) {
      return reply
        .code(401)
        .send({ message: 'Administration requests need the header Authorization: Bearer <adminKey>' });
    }
    if (endpoint.auth === 'token') {
      user = token === undefined ? undefined : engine.authenticate(token);
      if (!user) return reply.code(401).send({ message: 'Missing, unknown, revoked or expired session token' });
    }
    const caller =
      endpoint.auth === 'token' ? `token:${token}` : endpoint.auth === 'admin' ? 'admin' : `ip:${request.ip}`;
    const retryAfter = limiter.take(caller, endpoint.bucket);
    if (retryAfter > 0) {
      return reply
        .code(429)
        .header('retry-after', String(retryAfter))
        .send({ message: `Rate limit of ${endpoint.name} exceeded; retry after ${retryAfter} s` });
    }
    const raw =
      endpoint.params === 'body'
        ? (request.body ?? {})
        : endpoint.params === 'query'
          ? request.query
          : endpoint.params === 'path'
            ? request.params
            : {};
    const parsed = endpoint.request.safeParse(raw);
    if (!parsed.success) {
      // The answer names each field and shows a short preview of what came: never the value itself, which
      // may be large (or deep enough to overflow the serialiser).
      const issues = describeIssues(parsed.error, raw).map((i) => ({
        path: i.path,
        message: i.message,
        received: preview(i.received),
      }));
      return reply.code(400).send({
        message: `Invalid ${endpoint.name} request: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`,
        issues,
      });
    }
    if (endpoint.name !== 'Status/ping') engine.step(engine.clock.now());
    let result: unknown;
    try {
      result = handler({ input: parsed.data, user: user as UserRow, token: token ?? '' });
    } catch (error) {
      if (error instanceof AdminNotFound) return reply.code(404).send({ message: error.message });
      deps.logger.error({ err: error, endpoint: endpoint.name }, 'simulator handler failed');
      const unknown = endpoint.errorCodes.UnknownError;
      if (endpoint.envelope === 'trading' && unknown !== undefined) {
        return reply.send({
          success: false,
          errorCode: unknown,
          errorMessage: `Unexpected error: ${(error as Error).message}`,
        });
      }
      throw error;
    }
    deps.onChange?.();
    if (endpoint.envelope === 'text') return reply.type('text/plain; charset=utf-8').send(result);
    const failed = typeof result === 'object' && result !== null && 'success' in result && result.success === false;
    if (!failed) {
      // What leaves the simulator is checked against the shared schema: a drift is a bug here, not in the client.
      const checked = endpoint.response.safeParse(result);
      if (!checked.success) {
        deps.logger.error(
          { endpoint: endpoint.name, issues: describeIssues(checked.error, result) },
          'simulator produced a malformed response',
        );
        return reply.code(500).send({ message: `Simulator produced a malformed ${endpoint.name} response` });
      }
    }
    return reply.send(result);
  }

  return app;
}

/** How deeply a JSON text nests arrays and objects (brackets inside strings do not count). */
export function nestingDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) deepest = Math.max(deepest, ++depth);
    else if (c === 0x7d || c === 0x5d) depth--;
  }
  return deepest;
}

/** A received value as an error answer may show it: its JSON cut to a few dozen characters. */
function preview(value: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? 'undefined';
  } catch {
    text = typeof value;
  }
  return text.length <= PREVIEW_CHARS ? text : `${text.slice(0, PREVIEW_CHARS - 3)}...`;
}
