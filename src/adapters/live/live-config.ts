/**
 * Configuration of the `paper` and `live` commands (config/paper.yaml, config/live.yaml). Strict: an
 * unknown key is an error. Credentials never live here: they come from the environment
 * (`TICKLINE_USERNAME`, `TICKLINE_API_KEY`, and `TICKLINE_ADMIN_AUTH` for the administration interface).
 */
import path from 'node:path';
import { z } from 'zod';
import { riskConfigSchema } from '../../engine/risk.ts';
import { accountConfigSchema } from '../../engine/account-rules.ts';
import { evaluationChoiceSchema } from '../../engine/evaluation-rules.ts';
import { notifyConfigSchema } from './notify-config.ts';

export { notifyConfigSchema, notifyTargetSchema, type NotifyConfig, type NotifyTarget } from './notify-config.ts';
import { registerSecret } from '../../engine/secrets.ts';
import { isStrategyFile } from '../../strategies/index.ts';
import { TicklineError } from '../../engine/errors.ts';

const barUnit = z.enum(['second', 'minute', 'hour', 'day', 'week', 'month']);
const ms = z.number().int().positive();

export const pollSchema = z.strictObject({
  openOrdersMs: ms.default(3_000),
  ordersMs: ms.default(10_000),
  tradesMs: ms.default(3_000),
  positionsMs: ms.default(3_000),
  accountMs: ms.default(15_000),
  /** Wait after a bar's end before asking for it. */
  closeDelayMs: z.number().int().nonnegative().default(500),
  /** Positions or open orders older than this count as not visible (default 3 × the slower of the two intervals). */
  staleAfterMs: ms.optional(),
  /** Interval of the account-state polls while the realtime hub is connected: the safety net for missed events. */
  realtimeMs: ms.default(30_000),
});

export const liveConfigSchema = z.strictObject({
  strategy: z.strictObject({
    /** A built-in strategy's name, or a path to a module. */
    name: z.string().min(1),
    /** Prefix of every customTag (`<id>-<sequence>`); keep it stable across restarts of one bot. */
    id: z.string().regex(/^[A-Za-z][A-Za-z0-9_.-]*$/, 'letters, digits, _ . and - only, starting with a letter'),
    params: z.record(z.string(), z.unknown()).default({}),
  }),
  /**
   * Contract ids (for example CON.F.US.EP.Z25: a pinned month), or a root or symbol id (`ES`, `F.US.EP`:
   * the front month of each moment, rolled by `roll`); the first is the strategy's primary contract.
   */
  contracts: z.array(z.string().min(1)).min(1),
  timeframe: z.strictObject({ unit: barUnit, unitNumber: z.number().int().positive().default(1) }),
  /** Also emit the forming bar this often (gateway ms); absent: closed bars only. */
  partialEveryMs: ms.optional(),
  account: z.strictObject({ name: z.string().min(1).optional(), id: z.number().int().optional() }).default({}),
  gateway: z
    .strictObject({
      /** Trading interface base URL. Absent in paper mode: the local simulator is started in-process. */
      url: z.url().optional(),
      /** Administration interface URL, for personal limits and rule configurations. */
      adminUrl: z.url().optional(),
      /** Header that carries TICKLINE_ADMIN_AUTH on admin requests. */
      adminAuthHeader: z.string().default('authorization'),
      adminEveryMs: ms.default(60_000),
      timeoutMs: ms.default(10_000),
      /** retrieveBars `live` flag: the live data subscription rather than the sim one. */
      liveData: z.boolean().default(false),
      /** Realtime host (the hubs' base URL, `rtc` beside `api`). The local simulator's is used in paper mode. */
      realtimeUrl: z.url().optional(),
      /** Take orders, trades and positions from the user hub as they happen (polling stays as the safety net). */
      realtime: z.boolean().default(true),
      /**
       * Gateway ms without a quote from a connected market hub (market open, bars advancing) after which
       * its quotes are taken as silent: logged, the guard prices from the bars, the hub is reconnected.
       */
      quoteSilenceMs: ms.default(60_000),
      /**
       * Gateway ms a trade the polls found may go undelivered by a connected user hub before the hub is
       * taken as silent and reconnected.
       */
      userSilenceMs: ms.default(60_000),
    })
    .default({
      adminAuthHeader: 'authorization',
      adminEveryMs: 60_000,
      timeoutMs: 10_000,
      liveData: false,
      realtime: true,
      quoteSilenceMs: 60_000,
      userSilenceMs: 60_000,
    }),
  simulator: z
    .strictObject({
      /** Simulated milliseconds per wall millisecond. */
      speed: z.number().positive().default(60),
      seed: z.number().int().default(1),
      /** Where the simulator keeps its state; default next to the journal. */
      dbPath: z.string().optional(),
      /**
       * The market instant the simulator's clock starts at (ISO 8601 with an offset): rehearse a roll, an
       * expiry, a holiday or a weekend. Default: now. A database that ran later goes on from where it stopped.
       */
      startTime: z.iso.datetime({ offset: true }).optional(),
    })
    .default({ speed: 60, seed: 1 }),
  /**
   * The account's rule limits for the engine's guard (daily loss limit, maximum loss limit and its
   * variant, personal limits). `startingBalance` defaults to the account's balance at start.
   */
  limits: accountConfigSchema.partial().default({}),
  /**
   * A prop-firm evaluation (a preset of config/evaluations, or a YAML file relative to this one), or
   * `{ rules: <preset|file>, passLock: flatten | hold | off }`: its floors become the guard's account limits
   * and its contract cap and hours the guard's, as in a backtest; once the account meets the pass
   * conditions the pass-lock (default flatten) stops new risk.
   */
  evaluation: evaluationChoiceSchema.optional(),
  journal: z.string().min(1),
  /** Where to send notifications, each target with its events (docs/notifications.md); none by default. */
  notify: notifyConfigSchema,
  poll: pollSchema.default(pollSchema.parse({})),
  risk: riskConfigSchema.default(riskConfigSchema.parse({})),
  /**
   * A session on a root or a symbol id (`ES`, `F.US.EP`) follows the front month: the backtest's keys and
   * meanings. A pinned month (`CON.F.US.EP.Z26`) is flattened `expiryMarginMinutes` before its final
   * settlement, and the session then ends (docs/live.md, Rolls).
   */
  roll: z
    .strictObject({
      /** `roll`: close in the old month and reopen the same position in the new; `flatten`: only close. */
      mode: z.enum(['roll', 'flatten']).default('roll'),
      /** Business days before expiry the front month moves; the root's own rule (the gateway's) by default. */
      daysBeforeExpiry: z.number().int().nonnegative().optional(),
      /** Minutes before a pinned month's final settlement at which its position is flattened. */
      expiryMarginMinutes: z.number().int().positive().default(30),
    })
    .default({ mode: 'roll', expiryMarginMinutes: 30 }),
  /**
   * The market's hours the guard, the executor and `ctx.session` read: `exchange`, the exchange calendar of
   * each contract's root (no order while closed); `none`, always open, for a gateway whose market never
   * closes (the local simulator's `marketHours: always`, which `none` also starts in paper).
   */
  market: z.strictObject({ hours: z.enum(['exchange', 'none']).default('exchange') }).default({ hours: 'exchange' }),
  session: z
    .strictObject({
      /** Stop after this many closed bars (a paper session); absent: run until stopped. */
      maxBars: z.number().int().positive().optional(),
      /** Flatten everything when the session ends. */
      flattenOnExit: z.boolean().default(false),
    })
    .default({ flattenOnExit: false }),
  log: z
    .strictObject({
      level: z.enum(['trace', 'debug', 'info', 'warn', 'error']).default('info'),
      /** JSON log lines go here (every level); standard error gets warnings and errors only. Default: beside the journal. */
      file: z.string().min(1).optional(),
    })
    .default({ level: 'info' }),
  execution: z
    .strictObject({
      /**
       * Wall milliseconds during which a place whose outcome is unknown (a timeout after sending) is not
       * taken as lost, however many lookups miss it: its exposure counts and nothing is re-sent. Keep it
       * well above gateway.timeoutMs: a request held by the network can land seconds late.
       */
      unknownOutcomeMs: ms.default(60_000),
      /** When the strategy throws or its stream fails: flatten the account (default) or hold the position. */
      onStrategyError: z.enum(['flatten', 'hold']).default('flatten'),
      /** At a stop, how long the last poll of orders, trades and positions may take (wall ms). */
      finalPollMs: ms.default(5_000),
    })
    .default({ unknownOutcomeMs: 60_000, onStrategyError: 'flatten', finalPollMs: 5_000 }),
});

export type LiveConfig = z.output<typeof liveConfigSchema>;

export interface Credentials {
  readonly userName: string;
  readonly apiKey: string;
}

export class CredentialsError extends TicklineError {
  override readonly name = 'CredentialsError';
  readonly kind = 'environment';
  readonly code = 'CREDENTIALS_MISSING';
}

/** Credentials from the environment, never from a file. */
export function credentialsFromEnv(env: NodeJS.ProcessEnv = process.env): Credentials {
  const userName = env.TICKLINE_USERNAME;
  const apiKey = env.TICKLINE_API_KEY;
  const missing = [userName ? undefined : 'TICKLINE_USERNAME', apiKey ? undefined : 'TICKLINE_API_KEY'].filter(Boolean);
  if (missing.length > 0)
    throw new CredentialsError(
      `set ${missing.join(' and ')} in the environment (credentials are never read from a config file)`,
    );
  registerSecret(apiKey);
  return { userName: userName!, apiKey: apiKey! };
}

/**
 * The config with its paths (the journal, the log file, the simulator's database, a strategy file) made
 * absolute against `baseDir`, the folder of the file it was read from: paths in a config are relative to
 * it. Defaults derived from the journal (the log and the simulator's database beside it) follow it.
 */
export function resolveLivePaths(config: LiveConfig, baseDir: string): LiveConfig {
  const at = (p: string): string => path.resolve(baseDir, p);
  const { dbPath } = config.simulator;
  return {
    ...config,
    strategy: isStrategyFile(config.strategy.name)
      ? { ...config.strategy, name: at(config.strategy.name) }
      : config.strategy,
    journal: at(config.journal),
    log: config.log.file === undefined ? config.log : { ...config.log, file: at(config.log.file) },
    simulator:
      dbPath === undefined || dbPath === ':memory:' ? config.simulator : { ...config.simulator, dbPath: at(dbPath) },
  };
}
