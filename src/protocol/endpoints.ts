/**
 * The service's endpoints as data: verb, path, where parameters go, request and response schemas, the
 * envelope, the error-code table, the rate bucket and whether a retry is safe. The client sends by this
 * table and the simulator routes by it, so the two cannot disagree about the interface.
 */
import type { z } from 'zod';
import * as C from './codes.ts';
import * as S from './schemas.ts';

export type Interface = 'trading' | 'admin';
/** Where the request's fields travel. `path` fields fill `{name}` segments of the path. */
export type ParamPlacement = 'body' | 'query' | 'path' | 'none';
/**
 * How success and failure are read: `trading` has success/errorCode/errorMessage; `export` has
 * success/errorMessage; `register` uses `result`; `bare` is the record itself; `text` is plain text.
 */
export type EnvelopeKind = 'trading' | 'export' | 'register' | 'bare' | 'text';
/** Rate budgets of gateway-extras.md: retrieveBars has its own, everything else shares one. */
export type RateBucket = 'bars' | 'default';
/**
 * `read` may be retried after a fault; `write` changes order or account state and is never retried
 * blindly (an unknown outcome is reported, so the caller reconciles).
 */
export type Effect = 'read' | 'write';

export interface Endpoint<Req extends z.ZodType = z.ZodType, Res extends z.ZodType = z.ZodType> {
  readonly name: string;
  readonly iface: Interface;
  readonly method: 'GET' | 'POST' | 'PUT';
  readonly path: string;
  readonly params: ParamPlacement;
  readonly request: Req;
  readonly response: Res;
  readonly envelope: EnvelopeKind;
  readonly errorCodes: C.CodeTable;
  readonly bucket: RateBucket;
  readonly effect: Effect;
  /** Trading endpoints other than login carry the session token; admin endpoints carry configured headers. */
  readonly auth: 'none' | 'token' | 'admin';
}

function endpoint<Req extends z.ZodType, Res extends z.ZodType>(e: Endpoint<Req, Res>): Endpoint<Req, Res> {
  return Object.freeze(e);
}

const trading = {
  iface: 'trading',
  method: 'POST',
  params: 'body',
  envelope: 'trading',
  bucket: 'default',
  auth: 'token',
} as const;
const admin = { iface: 'admin', auth: 'admin', bucket: 'default', effect: 'read' } as const;

export const Endpoints = {
  // ---- trading interface (spec 4.1)
  login: endpoint({
    ...trading,
    name: 'Auth/loginKey',
    path: '/api/Auth/loginKey',
    auth: 'none',
    effect: 'read',
    request: S.LoginRequest,
    response: S.TokenResponse,
    errorCodes: C.LoginErrorCode,
  }),
  orderSearch: endpoint({
    ...trading,
    name: 'Order/search',
    path: '/api/Order/search',
    effect: 'read',
    request: S.OrderSearchRequest,
    response: S.OrdersResponse,
    errorCodes: C.AccountSearchErrorCode,
  }),
  orderSearchOpen: endpoint({
    ...trading,
    name: 'Order/searchOpen',
    path: '/api/Order/searchOpen',
    effect: 'read',
    request: S.AccountIdRequest,
    response: S.OpenOrdersResponse,
    errorCodes: C.AccountSearchErrorCode,
  }),
  orderCancel: endpoint({
    ...trading,
    name: 'Order/cancel',
    path: '/api/Order/cancel',
    effect: 'write',
    request: S.CancelRequest,
    response: S.TradingEnvelope,
    errorCodes: C.CancelErrorCode,
  }),
  orderModify: endpoint({
    ...trading,
    name: 'Order/modify',
    path: '/api/Order/modify',
    effect: 'write',
    request: S.ModifyRequest,
    response: S.TradingEnvelope,
    errorCodes: C.ModifyErrorCode,
  }),
  contractAvailable: endpoint({
    ...trading,
    name: 'Contract/available',
    path: '/api/Contract/available',
    effect: 'read',
    request: S.ContractAvailableRequest,
    response: S.ContractsResponse,
    errorCodes: C.GenericErrorCode,
  }),
  contractSearch: endpoint({
    ...trading,
    name: 'Contract/search',
    path: '/api/Contract/search',
    effect: 'read',
    request: S.ContractSearchRequest,
    response: S.ContractsResponse,
    errorCodes: C.GenericErrorCode,
  }),
  retrieveBars: endpoint({
    ...trading,
    name: 'History/retrieveBars',
    path: '/api/History/retrieveBars',
    effect: 'read',
    bucket: 'bars',
    request: S.RetrieveBarsRequest,
    response: S.BarsResponse,
    errorCodes: C.RetrieveBarsErrorCode,
  }),
  tradeSearch: endpoint({
    ...trading,
    name: 'Trade/search',
    path: '/api/Trade/search',
    effect: 'read',
    request: S.TradeSearchRequest,
    response: S.TradesResponse,
    errorCodes: C.AccountSearchErrorCode,
  }),

  // ---- trading interface (gateway-extras.md)
  orderPlace: endpoint({
    ...trading,
    name: 'Order/place',
    path: '/api/Order/place',
    effect: 'write',
    request: S.PlaceOrderRequest,
    response: S.PlaceOrderResponse,
    errorCodes: C.PlaceErrorCode,
  }),
  validate: endpoint({
    ...trading,
    name: 'Auth/validate',
    path: '/api/Auth/validate',
    params: 'none',
    effect: 'read',
    request: S.EmptyRequest,
    response: S.ValidateResponse,
    errorCodes: C.ValidateErrorCode,
  }),
  logout: endpoint({
    ...trading,
    name: 'Auth/logout',
    path: '/api/Auth/logout',
    params: 'none',
    effect: 'write',
    request: S.EmptyRequest,
    response: S.TradingEnvelope,
    errorCodes: C.GenericErrorCode,
  }),
  accountSearch: endpoint({
    ...trading,
    name: 'Account/search',
    path: '/api/Account/search',
    effect: 'read',
    request: S.AccountSearchRequest,
    response: S.AccountsResponse,
    errorCodes: C.GenericErrorCode,
  }),
  positionSearchOpen: endpoint({
    ...trading,
    name: 'Position/searchOpen',
    path: '/api/Position/searchOpen',
    effect: 'read',
    request: S.AccountIdRequest,
    response: S.PositionsResponse,
    errorCodes: C.AccountSearchErrorCode,
  }),
  positionClose: endpoint({
    ...trading,
    name: 'Position/closeContract',
    path: '/api/Position/closeContract',
    effect: 'write',
    request: S.CloseContractRequest,
    response: S.TradingEnvelope,
    errorCodes: C.CloseContractErrorCode,
  }),
  positionPartialClose: endpoint({
    ...trading,
    name: 'Position/partialCloseContract',
    path: '/api/Position/partialCloseContract',
    effect: 'write',
    request: S.PartialCloseContractRequest,
    response: S.TradingEnvelope,
    errorCodes: C.PartialCloseErrorCode,
  }),
  contractById: endpoint({
    ...trading,
    name: 'Contract/searchById',
    path: '/api/Contract/searchById',
    effect: 'read',
    request: S.ContractByIdRequest,
    response: S.ContractResponse,
    errorCodes: C.ContractByIdErrorCode,
  }),
  ping: endpoint({
    ...trading,
    name: 'Status/ping',
    method: 'GET',
    path: '/api/Status/ping',
    params: 'none',
    auth: 'none',
    envelope: 'text',
    effect: 'read',
    request: S.EmptyRequest,
    response: S.EmptyRequest,
    errorCodes: C.GenericErrorCode,
  }),

  // ---- administration interface (spec 4.2)
  templateList: endpoint({
    ...admin,
    name: 'AccountTemplate',
    method: 'GET',
    path: '/AccountTemplate',
    params: 'none',
    envelope: 'bare',
    request: S.EmptyRequest,
    response: S.AccountTemplate.array(),
    errorCodes: C.GenericErrorCode,
  }),
  templateById: endpoint({
    ...admin,
    name: 'AccountTemplate/id',
    method: 'GET',
    path: '/AccountTemplate/id/{accountTemplateId}',
    params: 'path',
    envelope: 'bare',
    request: S.TemplateIdParams,
    response: S.AccountTemplate,
    errorCodes: C.GenericErrorCode,
  }),
  templateCreate: endpoint({
    ...admin,
    name: 'AccountTemplate/create',
    method: 'POST',
    path: '/AccountTemplate/create',
    params: 'body',
    envelope: 'export',
    effect: 'write',
    request: S.TemplateCreateRequest,
    response: S.TemplateCreateResponse,
    errorCodes: C.GenericErrorCode,
  }),
  ruleConfiguration: endpoint({
    ...admin,
    name: 'AccountTemplateRule/rules',
    method: 'GET',
    path: '/AccountTemplateRule/rules/{accountTemplateId}/{ruleId}',
    params: 'path',
    envelope: 'bare',
    request: S.RuleParams,
    response: S.RuleConfiguration,
    errorCodes: C.GenericErrorCode,
  }),
  userFindByName: endpoint({
    ...admin,
    name: 'User/find/username',
    method: 'PUT',
    path: '/User/find/username',
    params: 'query',
    envelope: 'bare',
    request: S.FindUserByNameQuery,
    response: S.User,
    errorCodes: C.GenericErrorCode,
  }),
  userFindByEmail: endpoint({
    ...admin,
    name: 'User/find',
    method: 'PUT',
    path: '/User/find',
    params: 'query',
    envelope: 'bare',
    request: S.FindUserByEmailQuery,
    response: S.User,
    errorCodes: C.GenericErrorCode,
  }),
  register: endpoint({
    ...admin,
    name: 'Register',
    method: 'POST',
    path: '/Register',
    params: 'body',
    envelope: 'register',
    effect: 'write',
    request: S.RegisterRequest,
    response: S.RegisterResponse,
    errorCodes: C.RegisterResult,
  }),
  violationsExport: endpoint({
    ...admin,
    name: 'Violations/export',
    method: 'POST',
    path: '/Violations/export',
    params: 'body',
    envelope: 'export',
    request: S.ViolationsExportRequest,
    response: S.ViolationsExportResponse,
    errorCodes: C.GenericErrorCode,
  }),
  tradesExport: endpoint({
    ...admin,
    name: 'DataExport/trades',
    method: 'POST',
    path: '/DataExport/trades',
    params: 'body',
    envelope: 'export',
    request: S.TradesExportRequest,
    response: S.TradesExportResponse,
    errorCodes: C.GenericErrorCode,
  }),
  accountsExport: endpoint({
    ...admin,
    name: 'DataExport/accounts',
    method: 'POST',
    path: '/DataExport/accounts',
    params: 'body',
    envelope: 'export',
    request: S.AfterExportRequest,
    response: S.AccountsExportResponse,
    errorCodes: C.GenericErrorCode,
  }),
  positionsExport: endpoint({
    ...admin,
    name: 'DataExport/positions',
    method: 'POST',
    path: '/DataExport/positions',
    params: 'body',
    envelope: 'export',
    request: S.AfterExportRequest,
    response: S.PositionsExportResponse,
    errorCodes: C.GenericErrorCode,
  }),
  dailyStatistics: endpoint({
    ...admin,
    name: 'Statistics/admin/daily',
    method: 'POST',
    path: '/Statistics/admin/daily',
    params: 'body',
    envelope: 'bare',
    request: S.StatisticsRequest,
    response: S.DailyStatistics.array(),
    errorCodes: C.GenericErrorCode,
  }),
  dayStatistics: endpoint({
    ...admin,
    name: 'Statistics/admin/daystats',
    method: 'POST',
    path: '/Statistics/admin/daystats',
    params: 'body',
    envelope: 'bare',
    request: S.StatisticsRequest,
    response: S.DayStatistics.array(),
    errorCodes: C.GenericErrorCode,
  }),
  /** Declared POST with an `accountName` parameter, sent in the query string like the example. */
  tradingAccountFind: endpoint({
    ...admin,
    name: 'TradingAccount/find',
    method: 'POST',
    path: '/TradingAccount/find',
    params: 'query',
    envelope: 'bare',
    request: S.TradingAccountFindQuery,
    response: S.TradingAccount,
    errorCodes: C.GenericErrorCode,
  }),
  /** The example's GET form of TradingAccount/find. */
  tradingAccountFindGet: endpoint({
    ...admin,
    name: 'TradingAccount/find (GET)',
    method: 'GET',
    path: '/TradingAccount/find',
    params: 'query',
    envelope: 'bare',
    request: S.TradingAccountFindQuery,
    response: S.TradingAccount,
    errorCodes: C.GenericErrorCode,
  }),
} as const;

export type EndpointKey = keyof typeof Endpoints;
export type RequestOf<K extends EndpointKey> = z.input<(typeof Endpoints)[K]['request']>;
export type ResponseOf<K extends EndpointKey> = z.infer<(typeof Endpoints)[K]['response']>;

/** Limits of spec section 8 and the documented rate budgets of gateway-extras.md. */
export const Limits = {
  tokenLifetimeMs: 24 * 60 * 60 * 1000,
  barsPerRequest: 20_000,
  contractsPerSearch: 20,
  tradesExportRangeMs: 30 * 24 * 60 * 60 * 1000,
  rate: {
    bars: { requests: 30, windowMs: 30_000 },
    default: { requests: 200, windowMs: 60_000 },
  },
} as const;
