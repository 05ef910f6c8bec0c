/** The gateway client's public surface. */
export * from './codes.ts';
export * from './schemas.ts';
export * from './endpoints.ts';
export * from './errors.ts';
export { signedBrackets, bracketRefusal, type BracketDistances } from './brackets.ts';
export { Transport, DEFAULT_TIMEOUT_MS, rejection, type TransportOptions, type SendOptions } from './transport.ts';
export { RateLimiter, SlidingWindowLimiter, realClock, type Clock, type RateBudget, type RateLimits } from './rate-limit.ts';
export { DEFAULT_RETRY, backoffDelay, isRetryable, parseRetryAfter, retryPolicy, type RetryOptions, type RetryPolicy } from './retry.ts';
export { SessionManager, DEFAULT_RENEW_BEFORE_MS, bearer, type SessionOptions } from './session.ts';
export { TradingClient, cleanPrices, type TradingClientOptions, type RetrieveBarsRangeRequest } from './trading.ts';
export { AdminClient, type AdminClientOptions } from './admin.ts';
export { pageBars, assertIncreasing, barTime, toEpochMs, isoOf, type BarWindow, type FetchBars, type PageInfo, type PageBarsOptions } from './history.ts';
export { assertTradeExportRange, tradeExportWindows, mergeById, type TimeWindow } from './exports.ts';
export { classifyRuleViolation, violationKind, type RuleBreakKind, type ViolationKind, type RuleSource } from './violations.ts';
export { MarketHubClient, RealtimeSubscriptionError, UserHubClient, type HubClientOptions, type MarketHubOptions, type RealtimeState, type UserEvent, type UserHubOptions } from './realtime.ts';
export { GatewayDepth, GatewayQuote, GatewayTrade } from './hub-schemas.ts';
