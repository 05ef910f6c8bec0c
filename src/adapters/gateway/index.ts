/** The gateway client's public surface. */
export * from '../../protocol/codes.ts';
export * from '../../protocol/schemas.ts';
export * from '../../protocol/endpoints.ts';
export * from './gateway-errors.ts';
export { describeIssues, type FieldIssue } from '../../protocol/field-issues.ts';
export { signedBrackets, bracketRefusal, type BracketDistances } from '../../protocol/brackets.ts';
export { Transport, DEFAULT_TIMEOUT_MS, rejection, type TransportOptions, type SendOptions } from './transport.ts';
export {
  RateLimiter,
  SlidingWindowLimiter,
  realClock,
  type Clock,
  type RateBudget,
  type RateLimits,
} from './rate-limiter.ts';
export {
  DEFAULT_RETRY,
  backoffDelay,
  isRetryable,
  parseRetryAfter,
  retryPolicy,
  type RetryOptions,
  type RetryPolicy,
} from './retry.ts';
export { SessionManager, DEFAULT_RENEW_BEFORE_MS, bearer, type SessionOptions } from './auth-session.ts';
export { TradingClient, cleanPrices, type TradingClientOptions, type RetrieveBarsRangeRequest } from './trading.ts';
export { AdminClient, type AdminClientOptions } from './admin-client.ts';
export {
  pageBars,
  assertIncreasing,
  barTime,
  toEpochMs,
  isoOf,
  type BarWindow,
  type FetchBars,
  type PageInfo,
  type PageBarsOptions,
} from './history.ts';
export { assertTradeExportRange, tradeExportWindows, mergeById, type TimeWindow } from './exports.ts';
export {
  classifyRuleViolation,
  violationKind,
  type RuleBreakKind,
  type ViolationKind,
  type RuleSource,
} from './violations.ts';
export {
  MarketHubClient,
  RealtimeSubscriptionError,
  UserHubClient,
  type HubClientOptions,
  type MarketHubOptions,
  type RealtimeState,
  type UserEvent,
  type UserHubOptions,
} from './realtime.ts';
export { GatewayDepth, GatewayQuote, GatewayTrade } from '../../protocol/hub-schemas.ts';
