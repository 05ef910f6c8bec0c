/**
 * Every integer code of the gateway, named once. Values come from spec sections 2 and 7 and from
 * gateway-extras.md; where the two disagree the interface document wins.
 */

export const OrderType = {
  Unknown: 0,
  Limit: 1,
  Market: 2,
  StopLimit: 3,
  Stop: 4,
  TrailingStop: 5,
  JoinBid: 6,
  JoinAsk: 7,
} as const;
export type OrderType = (typeof OrderType)[keyof typeof OrderType];

export const OrderSide = { Bid: 0, Ask: 1 } as const;
export type OrderSide = (typeof OrderSide)[keyof typeof OrderSide];

export const OrderStatus = {
  None: 0,
  Open: 1,
  Filled: 2,
  Cancelled: 3,
  Expired: 4,
  Rejected: 5,
  Pending: 6,
  PendingCancellation: 7,
  Suspended: 8,
} as const;
export type OrderStatus = (typeof OrderStatus)[keyof typeof OrderStatus];

export const PositionType = { Undefined: 0, Long: 1, Short: 2 } as const;
export type PositionType = (typeof PositionType)[keyof typeof PositionType];

export const BarUnit = { Second: 1, Minute: 2, Hour: 3, Day: 4, Week: 5, Month: 6 } as const;
export type BarUnit = (typeof BarUnit)[keyof typeof BarUnit];

/** Trade `side` (trade log): 0 Buy, 1 Sell. */
export const TradeSide = { Buy: 0, Sell: 1 } as const;
export type TradeSide = (typeof TradeSide)[keyof typeof TradeSide];

export const ViolationType = {
  PersonalDailyLossLimit: 3,
  PersonalDailyProfitTarget: 5,
  RuleBreak: 6,
} as const;
export type ViolationType = (typeof ViolationType)[keyof typeof ViolationType];

/** 0 appears on personal-limit violations (spec 2.10). */
export const ViolationDuration = { Personal: 0, Permanent: 1, Temporary: 2 } as const;
export type ViolationDuration = (typeof ViolationDuration)[keyof typeof ViolationDuration];

export const TemplateTag = { Regular: 0, Practice: 1 } as const;
export type TemplateTag = (typeof TemplateTag)[keyof typeof TemplateTag];

export const RegisterResult = { Success: 0, InvalidEmail: 3 } as const;
export type RegisterResult = (typeof RegisterResult)[keyof typeof RegisterResult];

export const InternalTag = { Default: 0, Internal: 1 } as const;
export type InternalTag = (typeof InternalTag)[keyof typeof InternalTag];

// ---- error codes per endpoint (envelope `errorCode`) ----

export const LoginErrorCode = {
  Success: 0,
  UserNotFound: 1,
  PasswordVerificationFailed: 2,
  InvalidCredentials: 3,
  AppNotFound: 4,
  AppVerificationFailed: 5,
  InvalidDevice: 6,
  AgreementsNotSigned: 7,
  UnknownError: 8,
  ApiSubscriptionNotFound: 9,
  ApiKeyAuthenticationDisabled: 10,
} as const;

export const ValidateErrorCode = {
  Success: 0,
  InvalidSession: 1,
  SessionNotFound: 2,
  ExpiredToken: 3,
  UnknownError: 4,
} as const;

export const PlaceErrorCode = {
  Success: 0,
  AccountNotFound: 1,
  OrderRejected: 2,
  InsufficientFunds: 3,
  AccountViolation: 4,
  OutsideTradingHours: 5,
  OrderPending: 6,
  UnknownError: 7,
  ContractNotFound: 8,
  ContractNotActive: 9,
  AccountRejected: 10,
} as const;

export const CancelErrorCode = {
  Success: 0,
  AccountNotFound: 1,
  OrderNotFound: 2,
  Rejected: 3,
  Pending: 4,
  UnknownError: 5,
  AccountRejected: 6,
} as const;

export const ModifyErrorCode = { ...CancelErrorCode, ContractNotFound: 7 } as const;

export const CloseContractErrorCode = {
  Success: 0,
  AccountNotFound: 1,
  PositionNotFound: 2,
  ContractNotFound: 3,
  ContractNotActive: 4,
  OrderRejected: 5,
  OrderPending: 6,
  UnknownError: 7,
  AccountRejected: 8,
} as const;

export const PartialCloseErrorCode = {
  Success: 0,
  AccountNotFound: 1,
  PositionNotFound: 2,
  ContractNotFound: 3,
  ContractNotActive: 4,
  InvalidCloseSize: 5,
  OrderRejected: 6,
  OrderPending: 7,
  UnknownError: 8,
  AccountRejected: 9,
} as const;

export const RetrieveBarsErrorCode = {
  Success: 0,
  ContractNotFound: 1,
  UnitInvalid: 2,
  UnitNumberInvalid: 3,
  LimitInvalid: 4,
} as const;

/** Order/search, Order/searchOpen, Trade/search, Position/searchOpen. */
export const AccountSearchErrorCode = { Success: 0, AccountNotFound: 1 } as const;

export const ContractByIdErrorCode = { Success: 0, ContractNotFound: 1 } as const;

/** Endpoints whose codes are not documented share this table: 0 is success, anything else unnamed. */
export const GenericErrorCode = { Success: 0 } as const;

/** The two documented messages that split cancel's errorCode 6 (spec 7.3). */
export const CancelRejectionMessage = {
  Follower: 'Follower accounts cannot cancel orders',
  Live: 'Live accounts not supported',
} as const;

/** The message of login errorCode 7 (spec 7.2 gives its gist, not its exact words). */
export const AGREEMENTS_NOT_SIGNED_MESSAGE =
  'Please log into the platform and complete the required agreements before using the API.';

export type CodeTable = Readonly<Record<string, number>>;

/** The name a code has in a table, or `Code<N>` for a value the table does not document. */
export function codeName(table: CodeTable, code: number): string {
  for (const [name, value] of Object.entries(table)) if (value === code) return name;
  return `Code${code}`;
}

/**
 * `GatewayDepth.type` (the DomType of the market hub). The gateway does not document its values; these are
 * the ones the published clients of this gateway decode. The simulator sends Ask/Bid levels, the touch as
 * BestAsk/BestBid, and Reset before a full book.
 */
export const DomType = {
  Unknown: 0,
  Ask: 1,
  Bid: 2,
  BestAsk: 3,
  BestBid: 4,
  Trade: 5,
  Reset: 6,
  Low: 7,
  High: 8,
  NewBestBid: 9,
  NewBestAsk: 10,
  Fill: 11,
} as const;
export type DomType = (typeof DomType)[keyof typeof DomType];
