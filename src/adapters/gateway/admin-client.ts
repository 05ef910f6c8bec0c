/**
 * The administration interface (spec 4.2). How it authenticates is not shown (spec 5.11), so the caller
 * configures the headers every request carries: a bearer token, an API key header, whatever the
 * deployment uses. An HTTP 401 is reported as `UNAUTHORIZED`; there is no login to repeat.
 */
import type { Logger } from '../../engine/log.ts';
import { Endpoints } from '../../protocol/endpoints.ts';
import type * as S from '../../protocol/schemas.ts';
import type { RateLimits } from './rate-limiter.ts';
import type { RetryOptions } from './retry.ts';
import { Transport } from './transport.ts';
import { assertTradeExportRange, mergeById, tradeExportWindows } from './exports.ts';
import { isoOf, toEpochMs } from './history.ts';
import { GatewayError } from './gateway-errors.ts';
import { registerSecret } from '../../engine/secrets.ts';

export interface AdminClientOptions {
  baseUrl: string;
  /** Sent on every request, e.g. `{ authorization: 'Bearer …' }` or `{ 'x-api-key': '…' }`. Never logged. */
  headers?: Record<string, string>;
  logger?: Logger;
  timeoutMs?: number;
  rateLimits?: RateLimits;
  retry?: RetryOptions;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

export class AdminClient {
  private readonly transport: Transport;

  constructor(options: AdminClientOptions) {
    for (const value of Object.values(options.headers ?? {})) {
      registerSecret(value);
      // `Bearer <credential>`: the credential alone may show up elsewhere too.
      registerSecret(/^\S+\s+(\S+)$/.exec(value)?.[1]);
    }
    this.transport = new Transport({
      baseUrl: options.baseUrl,
      ...(options.headers ? { headers: options.headers } : {}),
      ...(options.logger ? { logger: options.logger } : {}),
      ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
      ...(options.rateLimits ? { rateLimits: options.rateLimits } : {}),
      ...(options.retry ? { retry: options.retry } : {}),
      ...(options.now ? { now: options.now } : {}),
      ...(options.sleep ? { sleep: options.sleep } : {}),
    });
  }

  async listTemplates(): Promise<S.AccountTemplate[]> {
    return (await this.transport.send(Endpoints.templateList, {})) as S.AccountTemplate[];
  }

  async templateById(id: number): Promise<S.AccountTemplate> {
    return (await this.transport.send(Endpoints.templateById, { accountTemplateId: id })) as S.AccountTemplate;
  }

  /** Not retried: a second attempt could create a second template. */
  async createTemplate(req: S.TemplateCreateRequest): Promise<S.AccountTemplate> {
    return ((await this.transport.send(Endpoints.templateCreate, req)) as { template: S.AccountTemplate }).template;
  }

  async ruleConfiguration(accountTemplateId: number, ruleId: number): Promise<S.RuleConfiguration> {
    return (await this.transport.send(Endpoints.ruleConfiguration, {
      accountTemplateId,
      ruleId,
    })) as S.RuleConfiguration;
  }

  async findUserByName(userName: string): Promise<S.User> {
    return (await this.transport.send(Endpoints.userFindByName, { userName })) as S.User;
  }

  async findUserByEmail(email: string): Promise<S.User> {
    return (await this.transport.send(Endpoints.userFindByEmail, { email })) as S.User;
  }

  /** Creates a user; a non-zero `result` throws `GatewayRejection` (3 = InvalidEmail). Not retried. */
  async register(req: S.RegisterRequest): Promise<S.RegisterResponse> {
    return (await this.transport.send(Endpoints.register, req)) as S.RegisterResponse;
  }

  async exportViolations(req: S.ViolationsExportRequest = {}): Promise<S.Violation[]> {
    return ((await this.transport.send(Endpoints.violationsExport, req)) as { violations: S.Violation[] }).violations;
  }

  /** At most 30 days: a longer range is refused before sending (`RANGE_REFUSED`). */
  async exportTrades(req: { from: Date | string; to: Date | string }): Promise<S.ExportedTrade[]> {
    const endpoint = Endpoints.tradesExport.name;
    const fromMs = toEpochMs(req.from, 'from', endpoint);
    const toMs = toEpochMs(req.to, 'to', endpoint);
    assertTradeExportRange(fromMs, toMs, endpoint);
    const body = { from: isoOf(fromMs), to: isoOf(toMs) };
    return ((await this.transport.send(Endpoints.tradesExport, body)) as { data: S.ExportedTrade[] }).data;
  }

  /** Any range, as consecutive windows of at most 30 days, merged with each trade `id` once. */
  async exportTradesRange(from: Date | string, to: Date | string): Promise<S.ExportedTrade[]> {
    const endpoint = Endpoints.tradesExport.name;
    const fromMs = toEpochMs(from, 'from', endpoint);
    const toMs = toEpochMs(to, 'to', endpoint);
    if (fromMs > toMs) {
      throw new GatewayError('INVALID_REQUEST', `${endpoint}: from must not be after to`, {
        endpoint,
        outcome: 'not-sent',
      });
    }
    const pages: S.ExportedTrade[][] = [];
    for (const window of tradeExportWindows(fromMs, toMs)) {
      pages.push(await this.exportTrades({ from: new Date(window.fromMs), to: new Date(window.toMs) }));
    }
    return mergeById(pages);
  }

  async exportAccounts(after?: string | null): Promise<S.ExportedAccount[]> {
    const body = after === undefined ? {} : { after };
    return ((await this.transport.send(Endpoints.accountsExport, body)) as { data: S.ExportedAccount[] }).data;
  }

  async exportPositions(after?: string | null): Promise<S.ExportedPosition[]> {
    const body = after === undefined ? {} : { after };
    return ((await this.transport.send(Endpoints.positionsExport, body)) as { data: S.ExportedPosition[] }).data;
  }

  async dailyStatistics(req: S.StatisticsRequest): Promise<S.DailyStatistics[]> {
    return (await this.transport.send(Endpoints.dailyStatistics, req)) as S.DailyStatistics[];
  }

  async dayStatistics(req: S.StatisticsRequest): Promise<S.DayStatistics[]> {
    return (await this.transport.send(Endpoints.dayStatistics, req)) as S.DayStatistics[];
  }

  /** Declared POST with `accountName` in the query; `via: 'GET'` sends the example's GET form. */
  async findTradingAccount(accountName: string, options: { via?: 'POST' | 'GET' } = {}): Promise<S.TradingAccount> {
    const endpoint = options.via === 'GET' ? Endpoints.tradingAccountFindGet : Endpoints.tradingAccountFind;
    return (await this.transport.send(endpoint, { accountName })) as S.TradingAccount;
  }

  async close(): Promise<void> {
    await this.transport.close();
  }
}
