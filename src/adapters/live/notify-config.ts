/**
 * The `notify:` section of a paper or live config (and of the trading node's, which reuses the schema): a
 * list of targets, each with the events it wants (docs/notifications.md). The delivery lives in
 * src/ops/notify/; the schema lives here, beside the config that holds it, so the config stays one strict
 * schema checked before anything starts.
 *
 * Secrets (a webhook URL that carries its token, a bot token) come from the environment: `urlEnv` and
 * `tokenEnv` name the variable, as the gateway's credentials do. A plain `url` in the file is for a
 * receiver without a secret (a local one); it is still registered for redaction, so it is never logged.
 */
import { z } from 'zod';

/** The events a target can ask for. */
export const NOTIFY_EVENTS = [
  'fills',
  'rejections',
  'breaches',
  'anomalies',
  'tradingState',
  'rolls',
  'passLock',
  'connection',
  'dailySummary',
] as const;
export type NotifyEvent = (typeof NOTIFY_EVENTS)[number];

export const NOTIFY_EVENT_DESCRIPTIONS: Readonly<Record<NotifyEvent, string>> = {
  fills: 'every fill of the account (side, size, price, the order tag)',
  rejections:
    "the guard's refusals: the first of each reason code in a trading day (the daily summary counts them all)",
  breaches: 'an account rule breached (daily or maximum loss limit, personal limits)',
  anomalies:
    "what the executor found wrong (a fill it cannot place, a position that differs), a strategy's or the engine's failure",
  tradingState: 'trading state changes (ACTIVE, REDUCING, HALTED, the kill switch)',
  rolls: "a followed symbol's roll to the next month, a pinned month's expiry",
  passLock: "the evaluation's pass-lock engaging",
  connection: 'the user hub, a market hub or the polls down longer than downAfterMs, and back',
  dailySummary: 'at the end of each trading day (17:00 CT): PnL, balance, fills, refusals, position, state',
};

const ms = z.number().int().positive();
const envName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'an environment variable name');

const common = {
  /** The target's name in logs (never its URL); `<type>-<position>` by default. */
  name: z.string().min(1).optional(),
  /** Every event when left out. */
  events: z.array(z.enum(NOTIFY_EVENTS)).min(1).optional(),
  /** Messages waiting for this target at most; beyond it the oldest waiting one is dropped (logged). */
  queue: z.number().int().positive().max(10_000).default(100),
  /** Attempts per message (a refused, failed or timed-out delivery is tried again with a growing pause). */
  attempts: z.number().int().positive().max(20).default(4),
  /** Wall ms one delivery may take before it counts as failed. */
  timeoutMs: ms.default(10_000),
  /** The session's ms a hub or the polls must be down before `connection` says so. */
  downAfterMs: ms.default(120_000),
};

/** Where a URL comes from: the file (`url`) or an environment variable (`urlEnv`, for a URL with a token). */
const urlSource = {
  url: z.url().optional(),
  urlEnv: envName.optional(),
};

function oneUrl<T extends { url?: string | undefined; urlEnv?: string | undefined }>(
  target: T,
  ctx: z.RefinementCtx,
): void {
  if ((target.url === undefined) === (target.urlEnv === undefined))
    ctx.addIssue({
      code: 'custom',
      path: ['url'],
      message: 'give url or urlEnv (the variable holding the URL), one of them',
    });
}

export const notifyTargetSchema = z.discriminatedUnion('type', [
  /** A generic JSON webhook: POST `{ event, time, account, bot, title, text, data }`. */
  z.strictObject({ type: z.literal('webhook'), ...common, ...urlSource }).superRefine(oneUrl),
  /** A Discord channel webhook: POST `{ content }`. */
  z.strictObject({ type: z.literal('discord'), ...common, ...urlSource }).superRefine(oneUrl),
  /** The Telegram Bot API: POST `<apiUrl>/bot<token>/sendMessage` with `{ chat_id, text }`. */
  z.strictObject({
    type: z.literal('telegram'),
    ...common,
    /** The environment variable holding the bot's token (from @BotFather). */
    tokenEnv: envName.default('TICKLINE_TELEGRAM_TOKEN'),
    /** The chat (a user's id, a group's negative id, or `@channel`). */
    chatId: z.union([z.number().int(), z.string().min(1)]),
    apiUrl: z.url().default('https://api.telegram.org'),
  }),
  /** A local command: run with these arguments (no shell), the webhook's JSON on its standard input. */
  z.strictObject({ type: z.literal('command'), ...common, argv: z.array(z.string().min(1)).min(1) }),
]);

export const notifyConfigSchema = z.array(notifyTargetSchema).default([]);

export type NotifyTarget = z.output<typeof notifyTargetSchema>;

/**
 * The environment variables a target needs that are not set: `[key in the config, variable]`. Here, with
 * the config, and not with the senders: checking a config must not load their HTTP client (undici, 18 MB
 * resident in every `tickline backtest`).
 */
export function missingSecrets(target: NotifyTarget, env: NodeJS.ProcessEnv): Array<[string, string]> {
  if (target.type === 'telegram') return env[target.tokenEnv] ? [] : [['tokenEnv', target.tokenEnv]];
  if ((target.type === 'webhook' || target.type === 'discord') && target.urlEnv !== undefined)
    return env[target.urlEnv] ? [] : [['urlEnv', target.urlEnv]];
  return [];
}
export type NotifyConfig = z.output<typeof notifyConfigSchema>;
