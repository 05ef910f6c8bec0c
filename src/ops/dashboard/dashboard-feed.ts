/**
 * What the dashboard reads and steers: `DashboardFeed`, a list of accounts, each a plain-data snapshot,
 * its journal's entries as they are written, its equity points and three actions. The dashboard knows
 * nothing else of a bot, so a one-bot session (session-feed.ts) and the multi-account trading node each
 * provide the same small interface.
 *
 * The snapshot and every answer of the JSON API are zod schemas here: the server validates what it sends
 * (a feed that breaks the shape fails loudly in tests, not silently on a phone), and the types come from them.
 */
import type { Observable } from 'rxjs';
import { z } from 'zod';

/** Who asked for an action: it is journaled with the action. */
export const ACTION_SOURCES = ['dashboard', 'signal', 'command'] as const;
export type ActionSource = (typeof ACTION_SOURCES)[number];

export const DASHBOARD_ACTIONS = ['kill', 'pause', 'resume'] as const;
export type DashboardAction = (typeof DASHBOARD_ACTIONS)[number];

const money = z.number();
/** Epoch ms of the gateway's clock (a paper session's simulator may run faster than the wall). */
const instant = z.number();

export const positionViewSchema = z.object({
  contractId: z.string(),
  /** The contract's readable name (`ESZ6`), or its id. */
  name: z.string(),
  /** Signed: positive long, negative short. */
  size: z.number(),
  /** Prices, not ticks; null when unknown. */
  averagePrice: z.number().nullable(),
  lastPrice: z.number().nullable(),
  openPnl: money,
});

export const orderViewSchema = z.object({
  id: z.string(),
  contractId: z.string(),
  name: z.string(),
  side: z.enum(['buy', 'sell']),
  size: z.number(),
  filledSize: z.number(),
  type: z.string(),
  /** The order's price (limit, stop or trail level) as a price; null for a market order. */
  price: z.number().nullable(),
  state: z.string(),
});

export const LIMIT_NAMES = [
  'dailyLossLimit',
  'maximumLossLimit',
  'personalDailyLossLimit',
  'personalDailyProfitTarget',
] as const;

/**
 * The room left under one limit. For the loss limits `room` is equity above the floor; for the profit
 * target it is the money still to make. `used` is the share of the limit consumed, 0..1 (1 = reached).
 */
export const headroomSchema = z.object({
  limit: z.enum(LIMIT_NAMES),
  label: z.string(),
  /** The limit's amount. */
  amount: money,
  /** The equity level that breaks it (loss limits); null for the personal ones, measured on today's PnL. */
  floor: money.nullable(),
  room: money,
  used: z.number(),
});

export const evaluationViewSchema = z.object({
  name: z.string(),
  profitTarget: money,
  profit: money,
  /** Share of the profit target reached, 0..1 (may exceed 1; negative while losing). */
  targetReached: z.number(),
  tradingDays: z.number().int(),
  minimumTradingDays: z.number().int().nullable(),
  /** Trading days still needed to meet the minimum (0 when met or none). */
  daysLeft: z.number().int(),
  bestDay: money.nullable(),
  /** The best day's share of the profit the consistency rule allows, and whether it holds now. */
  consistencyShare: z.number().nullable(),
  consistent: z.boolean().nullable(),
  targetsMet: z.boolean(),
});

export const hubStateSchema = z.enum(['connecting', 'connected', 'reconnecting', 'disconnected', 'none']);

export const healthViewSchema = z.object({
  /** False while positions or open orders cannot be read (the guard then only reduces). */
  visible: z.boolean(),
  blindReason: z.string().nullable(),
  userHub: hubStateSchema,
  marketHub: hubStateSchema,
  polls: z.array(z.object({ name: z.string(), lastOkAt: instant.nullable(), error: z.string().nullable() })),
  bars: z.array(z.object({ contractId: z.string(), lastBarAt: instant.nullable(), ageMs: z.number().nullable() })),
});

export const calendarViewSchema = z.object({
  contractId: z.string(),
  /** The month traded now (a followed symbol's front month, or the pinned month). */
  month: z.string(),
  open: z.boolean(),
  nextClose: instant.nullable(),
  nextOpen: instant.nullable(),
  /** When the front month moves next, and to which month; or when a pinned month is flattened before expiry. */
  nextRoll: z.object({ at: instant, to: z.string().nullable(), kind: z.enum(['roll', 'expiry']) }).nullable(),
});

export const decisionViewSchema = z.object({
  time: instant,
  strategyId: z.string(),
  accepted: z.boolean(),
  /** The guard's reason code (refusals, adjustments), or null. */
  code: z.string().nullable(),
  /** What was decided on, in words. */
  subject: z.string(),
  message: z.string().nullable(),
});

export const anomalyViewSchema = z.object({ time: instant, tag: z.string().nullable(), message: z.string() });

export const tradingStateViewSchema = z.object({
  state: z.enum(['ACTIVE', 'REDUCING', 'HALTED']),
  reason: z.string(),
  since: instant.nullable(),
  /** Whether `resume` applies now (the bot was paused by an operator). */
  paused: z.boolean(),
});

/** The evaluation's pass-lock once it engaged (null before): the page shows it as a badge on the account. */
export const passLockViewSchema = z.object({ locked: z.boolean(), mode: z.string(), reason: z.string() });

/** One bot (strategy instance) of the account: its own line and whether an operator paused it. */
export const botViewSchema = z.object({
  id: z.string(),
  paused: z.boolean(),
  /** Who paused it and why, while paused. */
  reason: z.string().nullable(),
  netPnl: money,
  trades: z.number(),
  /** Its own signed position per contract (several bots of one account share the gateway's netted one). */
  positions: z.array(z.object({ contractId: z.string(), size: z.number() })),
});

export const accountSnapshotSchema = z.object({
  id: z.string(),
  name: z.string(),
  mode: z.enum(['paper', 'live']),
  strategy: z.string(),
  time: instant,
  tradingDay: z.string(),
  balance: money,
  equity: money,
  dayPnl: money,
  openPnl: money,
  state: tradingStateViewSchema,
  passLock: passLockViewSchema.nullable(),
  bots: z.array(botViewSchema),
  positions: z.array(positionViewSchema),
  orders: z.array(orderViewSchema),
  headroom: z.array(headroomSchema),
  evaluation: evaluationViewSchema.nullable(),
  health: healthViewSchema,
  calendar: z.array(calendarViewSchema),
  /** Latest guard decisions, refusals first, each group newest first. */
  decisions: z.array(decisionViewSchema),
  /** Latest anomalies, newest first. */
  anomalies: z.array(anomalyViewSchema),
});

/** `tradingDay` is the engine's (`YYYY-MM-DD`, the date the day ends on): the page cuts today's curve by it. */
export const equityPointSchema = z.object({ time: instant, equity: money, tradingDay: z.string() });

export const journalEntrySchema = z.object({
  seq: z.number(),
  time: instant,
  kind: z.string(),
  phase: z.enum(['before', 'after', 'event']),
  tag: z.string().nullable(),
  payload: z.unknown(),
});

export const actionResultSchema = z.object({
  account: z.string(),
  action: z.enum(DASHBOARD_ACTIONS),
  ok: z.boolean(),
  /** One line for the operator: what happened, or why nothing did. */
  message: z.string(),
});

export type PositionView = z.infer<typeof positionViewSchema>;
export type OrderView = z.infer<typeof orderViewSchema>;
export type Headroom = z.infer<typeof headroomSchema>;
export type EvaluationView = z.infer<typeof evaluationViewSchema>;
export type HubState = z.infer<typeof hubStateSchema>;
export type HealthView = z.infer<typeof healthViewSchema>;
export type CalendarView = z.infer<typeof calendarViewSchema>;
export type DecisionView = z.infer<typeof decisionViewSchema>;
export type AnomalyView = z.infer<typeof anomalyViewSchema>;
export type PassLockView = z.infer<typeof passLockViewSchema>;
export type AccountSnapshot = z.infer<typeof accountSnapshotSchema>;
export type EquityPoint = z.infer<typeof equityPointSchema>;
export type JournalEntryView = z.infer<typeof journalEntrySchema>;
export type ActionResult = z.infer<typeof actionResultSchema>;

/** One account the dashboard shows and steers. */
export interface DashboardAccount {
  /** Stable and URL-safe: the API names the account by it. */
  readonly id: string;
  /** Everything the page shows of the account now, as plain data (cheap enough to call a few times a second). */
  snapshot(): AccountSnapshot;
  /** Every journal entry of the account as it is written (Journal.recorded). */
  readonly recorded: Observable<JournalEntryView>;
  /** The session's equity, oldest first (the page cuts today's curve from it by `tradingDay`). */
  equity(): readonly EquityPoint[];
  /** Kill switch (cancel, flatten, halt), pause (only reducing orders pass) or resume; journaled with `source`. */
  act(action: DashboardAction, source: ActionSource, bot?: string): Promise<ActionResult>;
}

export interface DashboardFeed {
  accounts(): readonly DashboardAccount[];
}

/** `GET /api/accounts`: the snapshots of every account. */
export const accountsResponseSchema = z.object({ accounts: z.array(accountSnapshotSchema) });
/** `GET /api/accounts/:id/equity`. */
export const equityResponseSchema = z.object({ account: z.string(), points: z.array(equityPointSchema) });
/** `POST /api/actions`: one result per account acted on. */
export const actionsResponseSchema = z.object({ results: z.array(actionResultSchema) });
/** `POST /api/actions` body: `account` is an id or `all`; `confirm` must be true (the page asked). */
export const actionRequestSchema = z.strictObject({
  action: z.enum(DASHBOARD_ACTIONS),
  account: z.string().min(1),
  /** Pause or resume this bot of the account only (a node's account runs several); the whole account without it. */
  bot: z.string().min(1).optional(),
  confirm: z.literal(true),
});
export const errorResponseSchema = z.object({ error: z.string() });

export type ActionRequest = z.infer<typeof actionRequestSchema>;
