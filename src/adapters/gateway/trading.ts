/**
 * The trading interface (spec 4.1 and the extras table): one method per endpoint, typed requests and
 * results, the session token handled by `SessionManager`.
 */
import type { Logger } from '../../engine/log.ts';
import { Endpoints, Limits } from '../../protocol/endpoints.ts';
import type * as S from '../../protocol/schemas.ts';
import type { RateLimits } from './rate-limiter.ts';
import type { RetryOptions } from './retry.ts';
import { SessionManager } from './auth-session.ts';
import { Transport } from './transport.ts';
import { isoOf, pageBars, toEpochMs, type PageInfo } from './history.ts';
import { GatewayError } from './gateway-errors.ts';

export interface TradingClientOptions {
  baseUrl: string;
  userName: string;
  apiKey: string;
  logger?: Logger;
  timeoutMs?: number;
  rateLimits?: RateLimits;
  retry?: RetryOptions;
  /** Epoch ms, for token expiry and the rate limiter. */
  now?: () => number;
  /** How waits happen (backoff, rate budget); tests inject one that advances a fake clock. */
  sleep?: (ms: number) => Promise<void>;
  /** Renew the token this long before its 24-hour expiry (default one hour). */
  renewBeforeMs?: number;
}

export interface RetrieveBarsRangeRequest {
  contractId: string;
  live: boolean;
  unit: number;
  unitNumber: number;
  start: Date | string;
  end: Date | string;
  /** At most 20,000 (the default). */
  pageSize?: number;
  includePartialBar?: boolean;
  onPage?: (info: PageInfo) => void;
}

export class TradingClient {
  private readonly transport: Transport;
  private readonly session: SessionManager;

  constructor(options: TradingClientOptions) {
    this.transport = new Transport({
      baseUrl: options.baseUrl,
      ...(options.logger ? { logger: options.logger } : {}),
      ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
      ...(options.rateLimits ? { rateLimits: options.rateLimits } : {}),
      ...(options.retry ? { retry: options.retry } : {}),
      ...(options.now ? { now: options.now } : {}),
      ...(options.sleep ? { sleep: options.sleep } : {}),
    });
    this.session = new SessionManager(this.transport, {
      userName: options.userName,
      apiKey: options.apiKey,
      ...(options.now ? { now: options.now } : {}),
      ...(options.renewBeforeMs !== undefined ? { renewBeforeMs: options.renewBeforeMs } : {}),
      ...(options.logger ? { logger: options.logger } : {}),
    });
  }

  /** When the held token expires (epoch ms), if one is held. */
  get tokenExpiresAt(): number | undefined {
    return this.session.expiresAt;
  }

  /** A usable session token (held, renewed near expiry, or a fresh login): what the realtime hubs take. */
  token(): Promise<string> {
    return this.session.token();
  }

  /** Log in (Auth/loginKey) and hold the token; later calls reuse it. */
  login(): Promise<string> {
    return this.session.login();
  }

  /** Renew the session (Auth/validate) and hold its `newToken`. */
  validate(): Promise<string> {
    return this.session.validate();
  }

  async logout(): Promise<void> {
    const token = this.session.current;
    if (token === undefined) return;
    await this.session.send(Endpoints.logout, {});
    this.session.forget();
  }

  async searchOrders(req: S.OrderSearchRequest): Promise<S.Order[]> {
    return ((await this.session.send(Endpoints.orderSearch, req)) as { orders: S.Order[] }).orders;
  }

  async searchOpenOrders(accountId: number): Promise<S.OpenOrder[]> {
    return ((await this.session.send(Endpoints.orderSearchOpen, { accountId })) as { orders: S.OpenOrder[] }).orders;
  }

  /**
   * Place an order; one attempt only. On `OUTCOME_UNKNOWN` look the order up by its `customTag`
   * (Order/search) before placing again.
   */
  async placeOrder(req: S.PlaceOrderRequest): Promise<number> {
    const body = { ...req, ...cleanPrices(req) };
    return ((await this.session.send(Endpoints.orderPlace, body)) as { orderId: number }).orderId;
  }

  /**
   * The order placed with `customTag`, if the server has it: how a place with an unknown outcome is
   * reconciled (tags are unique per account). Searches from `since`, which should precede the place.
   */
  async findOrderByCustomTag(accountId: number, customTag: string, since: Date | string): Promise<S.Order | undefined> {
    const startTimestamp = isoOf(toEpochMs(since, 'since', Endpoints.orderSearch.name));
    const orders = await this.searchOrders({ accountId, startTimestamp });
    return orders.find((o) => o.customTag === customTag);
  }

  /** Modify an order; one attempt only. `trailPrice` is an absolute price level (spec 4.1 modify rules). */
  async modifyOrder(req: S.ModifyRequest): Promise<void> {
    await this.session.send(Endpoints.orderModify, { ...req, ...cleanPrices(req) });
  }

  /** Cancel an order; one attempt only. Code 6 throws `CancelAccountRejected` with its reason. */
  async cancelOrder(req: S.CancelRequest): Promise<void> {
    await this.session.send(Endpoints.orderCancel, req);
  }

  async availableContracts(live: boolean): Promise<S.Contract[]> {
    return ((await this.session.send(Endpoints.contractAvailable, { live })) as { contracts: S.Contract[] }).contracts;
  }

  async searchContracts(req: S.ContractSearchRequest): Promise<S.Contract[]> {
    return ((await this.session.send(Endpoints.contractSearch, req)) as { contracts: S.Contract[] }).contracts;
  }

  async contractById(contractId: string): Promise<S.Contract> {
    return ((await this.session.send(Endpoints.contractById, { contractId })) as { contract: S.Contract }).contract;
  }

  /** One History/retrieveBars call; bars in the order the server sent them (newest first in the spec's example). */
  async retrieveBars(req: S.RetrieveBarsRequest): Promise<S.Bar[]> {
    if (typeof req.limit === 'number' && req.limit > Limits.barsPerRequest) {
      throw new GatewayError(
        'RANGE_REFUSED',
        `${Endpoints.retrieveBars.name}: limit ${req.limit} exceeds ${Limits.barsPerRequest} bars per request`,
        {
          endpoint: Endpoints.retrieveBars.name,
          outcome: 'not-sent',
        },
      );
    }
    return ((await this.session.send(Endpoints.retrieveBars, req)) as { bars: S.Bar[] }).bars;
  }

  /** Any range, paged under the per-request limit: oldest first, each bar once, times strictly increasing. */
  async retrieveBarsRange(req: RetrieveBarsRangeRequest): Promise<S.Bar[]> {
    const endpoint = Endpoints.retrieveBars.name;
    const startMs = toEpochMs(req.start, 'start', endpoint);
    const endMs = toEpochMs(req.end, 'end', endpoint);
    return pageBars(
      (window) =>
        this.retrieveBars({
          contractId: req.contractId,
          live: req.live,
          startTime: isoOf(window.startMs),
          endTime: isoOf(window.endMs),
          unit: req.unit,
          unitNumber: req.unitNumber,
          limit: window.limit,
          includePartialBar: req.includePartialBar ?? false,
        }),
      {
        startMs,
        endMs,
        ...(req.pageSize !== undefined ? { pageSize: req.pageSize } : {}),
        ...(req.onPage ? { onPage: req.onPage } : {}),
        endpoint,
      },
    );
  }

  async searchTrades(req: S.TradeSearchRequest): Promise<S.Trade[]> {
    return ((await this.session.send(Endpoints.tradeSearch, req)) as { trades: S.Trade[] }).trades;
  }

  async searchAccounts(onlyActiveAccounts: boolean): Promise<S.Account[]> {
    return ((await this.session.send(Endpoints.accountSearch, { onlyActiveAccounts })) as { accounts: S.Account[] })
      .accounts;
  }

  async searchOpenPositions(accountId: number): Promise<S.Position[]> {
    return ((await this.session.send(Endpoints.positionSearchOpen, { accountId })) as { positions: S.Position[] })
      .positions;
  }

  /** One attempt only, like every write. */
  async closePosition(req: S.CloseContractRequest): Promise<void> {
    await this.session.send(Endpoints.positionClose, req);
  }

  /** One attempt only, like every write. */
  async partialClosePosition(req: S.PartialCloseContractRequest): Promise<void> {
    await this.session.send(Endpoints.positionPartialClose, req);
  }

  /** GET /api/Status/ping, no token: the server's text (`pong`). */
  async ping(): Promise<string> {
    return (await this.transport.send(Endpoints.ping, {})) as string;
  }

  /** Close the connection pool. The session is not logged out (see `logout`). */
  async close(): Promise<void> {
    await this.transport.close();
  }
}

const PRICE_FIELDS = ['limitPrice', 'stopPrice', 'trailPrice'] as const;

/**
 * Prices leave as JSON numbers without float noise (0.1 + 0.2 would otherwise go out as
 * 0.30000000000000004): 15 significant digits hold any price on a tick grid exactly.
 */
export function cleanPrices(
  req: Partial<Record<(typeof PRICE_FIELDS)[number], number | null | undefined>>,
): Record<string, number> {
  const out: Record<string, number> = {};
  for (const field of PRICE_FIELDS) {
    const value = req[field];
    if (typeof value === 'number' && Number.isFinite(value)) out[field] = Number(value.toPrecision(15));
  }
  return out;
}
