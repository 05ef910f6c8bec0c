/**
 * Wire shapes of the whole service, one zod schema per resource (spec section 2, extras) and per request
 * body (spec section 4). The client parses responses with them, the simulator parses requests with them:
 * no wire shape is written twice. Objects strip unknown keys, so extra fields a server adds are tolerated.
 */
import { z } from 'zod';

/**
 * ISO 8601 as the gateway's .NET parser reads it: a time with a mandatory offset (`Z` or `±hh:mm`), seconds
 * optional, any number of fractional digits (Go clients send 9; digits below a millisecond are dropped
 * here), or a date alone (midnight UTC). A time without an offset is refused: its zone would be a guess.
 */
const ISO_WITH_OFFSET = /^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:\d{2}))?$/;

export const DateTime = z
  .string()
  .regex(ISO_WITH_OFFSET, 'expected an ISO 8601 datetime with an offset (Z or +hh:mm), or a date')
  .refine((s) => !Number.isNaN(parseDateTime(s)), 'not a real calendar datetime');

/** Epoch ms of a wire datetime (see `DateTime`); NaN when it is not one. */
export function parseDateTime(text: string): number {
  if (!ISO_WITH_OFFSET.test(text)) return Number.NaN;
  // Keep at most three fractional digits: the rest is below a millisecond.
  const ms = Date.parse(text.replace(/(\.\d{3})\d+/, '$1'));
  if (Number.isNaN(ms)) return ms;
  // Date.parse rolls 2025-02-30 over into March: a calendar date must come back as written.
  const offset = /([+-])(\d{2}):(\d{2})$/.exec(text);
  const offsetMs = offset ? (offset[1] === '-' ? -1 : 1) * (Number(offset[2]) * 60 + Number(offset[3])) * 60_000 : 0;
  return new Date(ms + offsetMs).toISOString().slice(0, 10) === text.slice(0, 10) ? ms : Number.NaN;
}

/** A decimal on the wire: a JSON number (servers may send up to 9 decimal places). */
export const Decimal = z.number().finite();
export const Int = z.number().int();

// ---------------------------------------------------------------- envelopes (2.1)

export const TradingEnvelope = z.object({
  success: z.boolean(),
  errorCode: Int,
  errorMessage: z.string().nullable(),
});
export type TradingEnvelope = z.infer<typeof TradingEnvelope>;

export const ExportEnvelope = z.object({
  success: z.boolean(),
  errorMessage: z.string().nullable(),
});
export type ExportEnvelope = z.infer<typeof ExportEnvelope>;

// ---------------------------------------------------------------- resources

/** 2.2 */
export const TokenResponse = TradingEnvelope.extend({ token: z.string().nullable() });
export type TokenResponse = z.infer<typeof TokenResponse>;

/** 2.3 as found by Order/search (`symbolId`, `fillVolume`, `customTag` are search-result only). */
export const Order = z.object({
  id: Int,
  accountId: Int,
  contractId: z.string(),
  symbolId: z.string().optional(),
  creationTimestamp: DateTime,
  updateTimestamp: DateTime,
  status: Int,
  type: Int,
  side: Int,
  size: Int,
  limitPrice: Decimal.nullable(),
  stopPrice: Decimal.nullable(),
  fillVolume: Int.optional(),
  filledPrice: Decimal.nullable(),
  customTag: z.string().nullable().optional(),
});
export type Order = z.infer<typeof Order>;

/** 2.3, the open-orders result. */
export const OpenOrder = Order.pick({
  id: true,
  accountId: true,
  contractId: true,
  creationTimestamp: true,
  updateTimestamp: true,
  status: true,
  type: true,
  side: true,
  size: true,
  limitPrice: true,
  stopPrice: true,
  filledPrice: true,
});
export type OpenOrder = z.infer<typeof OpenOrder>;

/** 2.4 */
export const Contract = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  tickSize: Decimal.positive(),
  tickValue: Decimal.positive(),
  activeContract: z.boolean(),
  symbolId: z.string(),
});
export type Contract = z.infer<typeof Contract>;

/** 2.5 */
export const Bar = z.object({
  t: DateTime,
  o: Decimal,
  h: Decimal,
  l: Decimal,
  c: Decimal,
  v: Int,
});
export type Bar = z.infer<typeof Bar>;

/** 2.6 */
export const Trade = z.object({
  id: Int,
  accountId: Int,
  contractId: z.string(),
  creationTimestamp: DateTime,
  price: Decimal,
  profitAndLoss: Decimal.nullable(),
  fees: Decimal,
  side: Int,
  size: Int,
  voided: z.boolean(),
  orderId: Int,
});
export type Trade = z.infer<typeof Trade>;

/** 2.7 */
export const AccountTemplate = z.object({
  id: Int,
  name: z.string(),
  title: z.string(),
  titleColor: z.string().nullable(),
  description: z.string(),
  notes: z.string().nullable(),
  startingBalance: Decimal,
  margin: Decimal,
  isActive: z.boolean(),
  tag: Int,
});
export type AccountTemplate = z.infer<typeof AccountTemplate>;

/** 2.8 (the element shape of `roles` is not shown). */
export const User = z.object({
  userName: z.string(),
  email: z.string(),
  userId: Int,
  firstName: z.string(),
  lastName: z.string(),
  hasSignedAgreements: z.boolean(),
  createdAt: DateTime,
  roles: z.array(z.unknown()),
});
export type User = z.infer<typeof User>;

/** 2.9 */
export const RegisterResponse = z.object({
  userId: Int.nullable(),
  loginToken: z.string().nullable(),
  errorMessage: z.string().nullable(),
  result: Int,
});
export type RegisterResponse = z.infer<typeof RegisterResponse>;

/** 2.10 */
export const Violation = z.object({
  id: Int,
  accountId: Int,
  type: Int,
  duration: Int,
  createdAt: DateTime,
  triggeredAt: DateTime,
  expiresAt: DateTime,
  balance: Decimal,
  realizedPnl: Decimal,
  unrealizedPnl: Decimal,
  violationBalance: Decimal,
  violationTotalDayPnl: Decimal,
  minimumBalance: Decimal,
  dailyLossLimit: Decimal,
  personalDailyLossLimit: Decimal.nullable(),
  personalDailyProfitTarget: Decimal.nullable(),
  voided: z.boolean(),
  accountName: z.string(),
  accountType: Int,
  ruleId: Int.nullable(),
  customViolation: z.unknown().nullable(),
});
export type Violation = z.infer<typeof Violation>;

/** 2.11 */
export const DailyLossLimitRule = z.object({
  source: Int,
  percentage: Decimal.nullable(),
  limit: Decimal,
  disableBalanceSource: z.boolean().nullable(),
  disableCheckSource: z.boolean().nullable(),
  disablePercentage: z.boolean().nullable(),
  disableLimit: z.boolean().nullable(),
  disableMinimumBalanceSource: z.boolean().nullable(),
  disableMaximumBalanceSource: z.boolean().nullable(),
});
export type DailyLossLimitRule = z.infer<typeof DailyLossLimitRule>;

export const MaximumLossLimitRule = z.object({
  source: Int,
  percentage: Decimal.nullable(),
  limit: Decimal,
  minimumSource: Int.nullable(),
  maximumSource: Int,
  maximumSourceSpecifiedBalance: Decimal.nullable(),
});
export type MaximumLossLimitRule = z.infer<typeof MaximumLossLimitRule>;

export const RuleConfiguration = z.object({
  accountTemplateId: Int,
  ruleId: Int,
  configuration: z.object({
    violationStatus: Int,
    violationDuration: Int,
    liquidateFollowers: z.unknown().nullable(),
    dailyLossLimit: DailyLossLimitRule.nullable(),
    maximumLossLimit: MaximumLossLimitRule.nullable(),
    marginScale: z.unknown().nullable(),
  }),
});
export type RuleConfiguration = z.infer<typeof RuleConfiguration>;

/** 2.12 */
export const ExportedTrade = z.object({
  id: Int,
  contractGroupId: z.string(),
  contractGroupName: z.string(),
  contractId: z.string(),
  contractName: z.string(),
  tradeDay: DateTime,
  createdAt: DateTime,
  tradeDuration: z.unknown().nullable(),
  price: Decimal,
  fees: Decimal,
  action: Int,
  lots: Int,
  status: Int,
  pairedTradeId: Int.nullable(),
  pnl: Decimal,
  tradingAccountId: Int,
  orderId: Int,
  enteredAt: DateTime,
  exitedAt: DateTime.nullable(),
  entryPrice: Decimal,
  exitPrice: Decimal.nullable(),
  voided: z.boolean(),
  orderCreationDisposition: Int,
});
export type ExportedTrade = z.infer<typeof ExportedTrade>;

/** 2.13 */
export const ExportedAccount = z.object({
  id: Int,
  accountName: z.string(),
  nickname: z.string().nullable(),
  balance: Decimal,
  unrealizedPnl: Decimal,
  highestUnrealizedBalance: Decimal,
  highestRealizedBalance: Decimal,
  realizedDayPnl: Decimal,
  status: Int,
  lockoutExpiration: DateTime.nullable(),
  tradeLimitExpiration: DateTime.nullable(),
  dailyTradeLimit: Int,
  weeklyTradeLimit: Int,
  latestTradeDateTime: DateTime,
  ineligible: z.boolean(),
  maximumLossLimit: Decimal,
  dailyLossLimit: Decimal,
  updatedAt: DateTime,
});
export type ExportedAccount = z.infer<typeof ExportedAccount>;

/** 2.14 */
export const ExportedPosition = z.object({
  id: Int,
  symbolId: z.string(),
  openPnl: Decimal,
  positionSize: Int,
  averagePrice: Decimal,
  contract: z.string(),
  contractGroup: z.string(),
  timestamp: DateTime,
});
export type ExportedPosition = z.infer<typeof ExportedPosition>;

/** 2.15 */
export const TradingAccount = z.object({
  accountName: z.string(),
  userId: Int,
  startingBalance: Decimal,
  balance: Decimal,
  status: Int,
  marketDataLevel: Int,
  accountId: Int,
  winRate: Decimal,
  profitAndLoss: Decimal,
  startDate: DateTime,
  closedDate: DateTime,
  dailyLoss: Decimal,
  maximumLoss: Decimal,
  drawDownLimit: Decimal,
  maxPositions: Int,
  type: Int,
  startOfDayBalance: Decimal,
  combineName: z.string(),
  platformId: Int,
  platformAccountId: z.string(),
  maxMargin: Decimal,
  realizedDayPnl: Decimal,
  updatedAt: DateTime,
  personalDailyLossLimit: Decimal,
  personalDailyLossLimitAction: Int,
  personalDailyProfitTarget: Decimal,
  personalDailyProfitTargetAction: Int,
  totalProfit: Decimal,
  totalLoss: Decimal,
  totalTrades: Int,
  dailyTrades: Int,
  isFollower: z.boolean(),
  isLeader: z.boolean(),
  openPnl: Decimal,
});
export type TradingAccount = z.infer<typeof TradingAccount>;

/** 2.17 */
export const DayStatistics = z.object({
  tradeDate: DateTime,
  totalPnL: Decimal,
  totalTrades: Int,
  winningTrades: Int,
  losingTrades: Int,
  neutralTrades: Int,
  winRate: Decimal,
  totalFees: Decimal,
});
export type DayStatistics = z.infer<typeof DayStatistics>;

/** 2.16 */
export const DailyStatistics = DayStatistics.extend({
  tradeDay: DateTime,
  balance: Decimal,
  products: z.array(z.object({ tradeDay: DateTime, symbolId: z.string(), totalTradedContracts: Int })),
});
export type DailyStatistics = z.infer<typeof DailyStatistics>;

/** Account/search (extras). */
export const Account = z.object({
  id: Int,
  name: z.string(),
  balance: Decimal,
  canTrade: z.boolean(),
  isVisible: z.boolean(),
  simulated: z.boolean(),
});
export type Account = z.infer<typeof Account>;

/** Position/searchOpen (extras). */
export const Position = z.object({
  id: Int,
  accountId: Int,
  contractId: z.string(),
  creationTimestamp: DateTime,
  type: Int,
  size: Int,
  averagePrice: Decimal,
});
export type Position = z.infer<typeof Position>;

// ---------------------------------------------------------------- request bodies (section 4, extras)

export const LoginRequest = z.object({ userName: z.string().min(1), apiKey: z.string().min(1) });
export type LoginRequest = z.infer<typeof LoginRequest>;

export const OrderSearchRequest = z.object({
  accountId: Int,
  startTimestamp: DateTime,
  endTimestamp: DateTime.nullable().optional(),
});
export type OrderSearchRequest = z.infer<typeof OrderSearchRequest>;

export const AccountIdRequest = z.object({ accountId: Int });
export type AccountIdRequest = z.infer<typeof AccountIdRequest>;

export const CancelRequest = z.object({ accountId: Int, orderId: Int });
export type CancelRequest = z.infer<typeof CancelRequest>;

export const ModifyRequest = z.object({
  accountId: Int,
  orderId: Int,
  size: Int.nullable().optional(),
  limitPrice: Decimal.nullable().optional(),
  stopPrice: Decimal.nullable().optional(),
  trailPrice: Decimal.nullable().optional(),
});
export type ModifyRequest = z.infer<typeof ModifyRequest>;

export const ContractAvailableRequest = z.object({ live: z.boolean() });
export type ContractAvailableRequest = z.infer<typeof ContractAvailableRequest>;

export const ContractSearchRequest = z.object({ searchText: z.string(), live: z.boolean() });
export type ContractSearchRequest = z.infer<typeof ContractSearchRequest>;

/**
 * `contractId` is declared integer but the example sends a contract id string (spec 4.1); both are
 * accepted, and the client sends the Contract `id` string.
 */
export const RetrieveBarsRequest = z.object({
  contractId: z.union([z.string(), Int]),
  live: z.boolean(),
  startTime: DateTime,
  endTime: DateTime,
  unit: Int,
  unitNumber: Int,
  limit: Int,
  includePartialBar: z.boolean(),
});
export type RetrieveBarsRequest = z.infer<typeof RetrieveBarsRequest>;

export const TradeSearchRequest = OrderSearchRequest;
export type TradeSearchRequest = OrderSearchRequest;

/** Bracket `ticks` are signed offsets from the entry's fill price: negative below it, positive above (extras). */
export const Bracket = z.object({ ticks: Int, type: Int });
export type Bracket = z.infer<typeof Bracket>;

export const PlaceOrderRequest = z.object({
  accountId: Int,
  contractId: z.string(),
  type: Int,
  side: Int,
  size: Int,
  limitPrice: Decimal.nullable().optional(),
  stopPrice: Decimal.nullable().optional(),
  trailPrice: Decimal.nullable().optional(),
  customTag: z.string().nullable().optional(),
  stopLossBracket: Bracket.nullable().optional(),
  takeProfitBracket: Bracket.nullable().optional(),
});
export type PlaceOrderRequest = z.infer<typeof PlaceOrderRequest>;

export const AccountSearchRequest = z.object({ onlyActiveAccounts: z.boolean() });
export type AccountSearchRequest = z.infer<typeof AccountSearchRequest>;

export const CloseContractRequest = z.object({ accountId: Int, contractId: z.string() });
export type CloseContractRequest = z.infer<typeof CloseContractRequest>;

export const PartialCloseContractRequest = CloseContractRequest.extend({ size: Int });
export type PartialCloseContractRequest = z.infer<typeof PartialCloseContractRequest>;

export const ContractByIdRequest = z.object({ contractId: z.string() });
export type ContractByIdRequest = z.infer<typeof ContractByIdRequest>;

export const EmptyRequest = z.object({});
export type EmptyRequest = z.infer<typeof EmptyRequest>;

// administration interface

export const TemplateCreateRequest = z.object({
  title: z.string(),
  name: z.string(),
  description: z.string(),
  notes: z.string().nullable().optional(),
  startingBalance: Decimal.optional(),
  margin: Decimal.optional(),
  titleColor: z.string().nullable().optional(),
  tag: Int,
});
export type TemplateCreateRequest = z.infer<typeof TemplateCreateRequest>;

export const TemplateIdParams = z.object({ accountTemplateId: z.coerce.number().int() });
export type TemplateIdParams = z.infer<typeof TemplateIdParams>;

export const RuleParams = z.object({
  accountTemplateId: z.coerce.number().int(),
  ruleId: z.coerce.number().int(),
});
export type RuleParams = z.infer<typeof RuleParams>;

export const FindUserByNameQuery = z.object({ userName: z.string().min(1) });
export type FindUserByNameQuery = z.infer<typeof FindUserByNameQuery>;

export const FindUserByEmailQuery = z.object({ email: z.string().min(1) });
export type FindUserByEmailQuery = z.infer<typeof FindUserByEmailQuery>;

/** Each field is "required and nullable": the key is sent, its value may be null. */
export const RegisterRequest = z.object({
  password: z.string().nullable(),
  email: z.string().nullable(),
  userName: z.string().nullable(),
  firstName: z.string().nullable(),
  lastName: z.string().nullable(),
  screenName: z.string().nullable(),
  internalTag: Int.nullable(),
});
export type RegisterRequest = z.infer<typeof RegisterRequest>;

export const ViolationsExportRequest = z.object({
  startTime: DateTime.optional(),
  endTime: DateTime.nullable().optional(),
});
export type ViolationsExportRequest = z.infer<typeof ViolationsExportRequest>;

export const TradesExportRequest = z.object({ from: DateTime, to: DateTime });
export type TradesExportRequest = z.infer<typeof TradesExportRequest>;

export const AfterExportRequest = z.object({ after: DateTime.nullable().optional() });
export type AfterExportRequest = z.infer<typeof AfterExportRequest>;

export const StatisticsRequest = z.object({
  tradingAccountId: Int,
  startTradeDay: DateTime.optional(),
  endTradeDay: DateTime.optional(),
});
export type StatisticsRequest = z.infer<typeof StatisticsRequest>;

export const TradingAccountFindQuery = z.object({ accountName: z.string().min(1) });
export type TradingAccountFindQuery = z.infer<typeof TradingAccountFindQuery>;

// ---------------------------------------------------------------- response bodies

export const OrdersResponse = TradingEnvelope.extend({ orders: z.array(Order) });
export const OpenOrdersResponse = TradingEnvelope.extend({ orders: z.array(OpenOrder) });
export const ContractsResponse = TradingEnvelope.extend({ contracts: z.array(Contract) });
export const ContractResponse = TradingEnvelope.extend({ contract: Contract });
export const BarsResponse = TradingEnvelope.extend({ bars: z.array(Bar) });
export const TradesResponse = TradingEnvelope.extend({ trades: z.array(Trade) });
export const PlaceOrderResponse = TradingEnvelope.extend({ orderId: Int });
export const ValidateResponse = TradingEnvelope.extend({ newToken: z.string() });
export const AccountsResponse = TradingEnvelope.extend({ accounts: z.array(Account) });
export const PositionsResponse = TradingEnvelope.extend({ positions: z.array(Position) });

export const TemplateCreateResponse = ExportEnvelope.extend({ template: AccountTemplate });
export const ViolationsExportResponse = ExportEnvelope.extend({ violations: z.array(Violation) });
export const TradesExportResponse = ExportEnvelope.extend({ data: z.array(ExportedTrade) });
export const AccountsExportResponse = ExportEnvelope.extend({ data: z.array(ExportedAccount) });
export const PositionsExportResponse = ExportEnvelope.extend({ data: z.array(ExportedPosition) });
