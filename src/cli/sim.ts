/**
 * `tickline sim` (`npm run sim`): the gateway simulator on 127.0.0.1, configured by `config/sim.yaml`
 * (strict: unknown keys are errors, reported with file and line) and a few flags. Prints where the two
 * interfaces are and the demo credentials, then serves until Ctrl-C.
 */
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { createLogger } from '../engine/log.ts';
import { rootSpecSchema } from '../market/contract-months.ts';
import { bookModelSchema, spreadModelSchema } from '../market/quotes.ts';
import { MaximumSource, MinimumSource, startSimulator, type SimulatorOptions } from '../sim/index.ts';
import { pendingOptionsSchema } from '../sim/pending.ts';
import { loadConfig } from './config-loader.ts';
import { parseCommandArgs } from './args.ts';
import { ExitCode, UsageError } from './exit.ts';

export const summary = 'Run the local gateway simulator (trading and administration interfaces)';

export const DEFAULT_CONFIG = 'config/sim.yaml';
/** The simulator's state when neither the config nor --db says, in the working directory. */
export const DEFAULT_DB_PATH = '.tickline/sim.db';

const USAGE = `Usage: tickline sim [options]

Starts the gateway simulator on 127.0.0.1 and prints the trading URL, the administration URL with its
header, and the demo user's name and API key. Ctrl-C stops it.

Options:
  --config <file>   Config file (default ${DEFAULT_CONFIG}; built-in defaults when that file is absent)
  --port <n>        Port (overrides the config; 0 picks a free one)
  --db <file>       SQLite state file (overrides the config; ':memory:' keeps nothing)
  --seed <n>        Seed of the synthetic market (used when the database is created)
  --speed <x>       Run the market clock x times faster than real time
  --start <instant> Start the market clock at this ISO 8601 instant (e.g. 2026-12-18T14:00:00Z), to
                    rehearse a roll, an expiry, a holiday or a weekend (overrides the config's startTime)
  --csv <file>      Replay this bar file for every ES month instead of the synthetic market
  -h, --help        This help

Paths in the config file are relative to that file; paths given here, and the default database
${DEFAULT_DB_PATH}, are relative to the working directory.`;

const Budget = z.strictObject({ requests: z.number().int().positive(), windowMs: z.number().int().positive() });
const Limit = z.strictObject({
  limit: z.number().positive(),
  duration: z.union([z.literal(1), z.literal(2)]).optional(),
});
// Which combinations make a variant is the simulator's check (mllVariant), made when the template is created.
const MaximumLossLimit = Limit.extend({
  maximumSource: z.enum(MaximumSource).optional(),
  minimumSource: z.enum(MinimumSource).nullable().optional(),
});
const PendingCount = z.number().int().min(0).optional();

export const SimConfig = z.strictObject({
  port: z.number().int().min(0).max(65535).default(5005),
  host: z.string().default('127.0.0.1'),
  /** DEFAULT_DB_PATH when absent. */
  dbPath: z.string().optional(),
  seed: z.number().int().default(1),
  clock: z.union([z.literal('realtime'), z.strictObject({ speed: z.number().positive() })]).default('realtime'),
  startTime: z.iso.datetime({ offset: true }).optional(),
  market: z
    .discriminatedUnion('source', [
      z.strictObject({ source: z.literal('synthetic') }),
      z.strictObject({ source: z.literal('csv'), path: z.string().min(1), contractId: z.string().optional() }),
    ])
    .default({ source: 'synthetic' }),
  historyDays: z.number().int().min(1).max(365).default(30),
  /** Spread (default: the synthetic market's own, one tick on a replayed file), book levels, partial fills, queue model. */
  fills: z
    .strictObject({
      spread: spreadModelSchema.optional(),
      book: bookModelSchema.optional(),
      partialFills: z.boolean().default(true),
      queue: z.boolean().default(false),
    })
    .default({ partialFills: true, queue: false }),
  /** A seeded share of places and cancels answered pending first. */
  pending: pendingOptionsSchema.optional(),
  /** Roots traded besides the built-in ones, with their specification. */
  roots: z.array(rootSpecSchema).default([]),
  rateLimits: z.strictObject({ bars: Budget.optional(), default: Budget.optional() }).optional(),
  /** The realtime hubs: quote throttle per contract, the slow-consumer bound. */
  realtime: z
    .strictObject({
      quotesPerSecond: z.number().positive().optional(),
      maxBufferedBytes: z.number().int().positive().optional(),
    })
    .optional(),
  templates: z
    .array(
      z.strictObject({
        name: z.string().min(1),
        title: z.string().optional(),
        description: z.string().optional(),
        startingBalance: z.number().positive().optional(),
        margin: z.number().positive().optional(),
        tag: z.union([z.literal(0), z.literal(1)]).optional(),
        dailyLossLimit: Limit.optional(),
        maximumLossLimit: MaximumLossLimit.optional(),
      }),
    )
    .default([]),
  users: z
    .array(
      z.strictObject({
        userName: z.string().min(1),
        apiKey: z.string().min(1),
        email: z.string().optional(),
        firstName: z.string().optional(),
        lastName: z.string().optional(),
        agreementsSigned: z.boolean().optional(),
        subscriptionActive: z.boolean().optional(),
        apiKeyLoginEnabled: z.boolean().optional(),
        accounts: z
          .array(
            z.strictObject({
              name: z.string().min(1),
              template: z.string().optional(),
              live: z.boolean().optional(),
              leader: z.boolean().optional(),
              follower: z.boolean().optional(),
              active: z.boolean().optional(),
              personalDailyLossLimit: z.number().positive().optional(),
              personalDailyProfitTarget: z.number().positive().optional(),
              pendingPlaces: PendingCount,
              pendingCancels: PendingCount,
            }),
          )
          .optional(),
      }),
    )
    .default([]),
});
export type SimConfig = z.infer<typeof SimConfig>;

/** A simulator config file, its paths (the database, a replayed bar file) relative to the file. */
export function loadSimConfig(file: string): SimConfig {
  return resolveSimPaths(loadConfig(file, SimConfig), path.dirname(path.resolve(file)));
}

function resolveSimPaths(config: SimConfig, baseDir: string): SimConfig {
  const dbPath =
    config.dbPath === undefined || config.dbPath === ':memory:' ? config.dbPath : path.resolve(baseDir, config.dbPath);
  const market =
    config.market.source === 'csv'
      ? { ...config.market, path: path.resolve(baseDir, config.market.path) }
      : config.market;
  return { ...config, ...(dbPath === undefined ? {} : { dbPath }), market };
}

/** An instant as `--start` takes it: ISO 8601 with a zone (`Z` or an offset). */
export function parseStartTime(text: string, flag: string): number {
  if (!z.iso.datetime({ offset: true }).safeParse(text).success)
    throw new UsageError(
      `${flag} must be an ISO 8601 instant with a zone, such as 2026-12-18T14:00:00Z, got "${text}"`,
    );
  return Date.parse(text);
}

/** Simulator options from a validated config. */
export function simOptions(config: SimConfig): SimulatorOptions {
  return {
    port: config.port,
    host: config.host,
    dbPath: config.dbPath ?? DEFAULT_DB_PATH,
    seed: config.seed,
    clock: config.clock,
    ...(config.startTime === undefined ? {} : { startTime: Date.parse(config.startTime) }),
    market: config.market,
    historyDays: config.historyDays,
    fills: config.fills,
    ...(config.pending === undefined ? {} : { pending: config.pending }),
    roots: config.roots,
    ...(config.rateLimits === undefined ? {} : { rateLimits: config.rateLimits }),
    ...(config.realtime === undefined ? {} : { realtime: config.realtime }),
    templates: config.templates,
    users: config.users,
  };
}

export async function run(args: string[]): Promise<number> {
  const values = parseCommandArgs(
    args,
    {
      config: { type: 'string' },
      port: { type: 'string' },
      db: { type: 'string' },
      seed: { type: 'string' },
      speed: { type: 'string' },
      csv: { type: 'string' },
      start: { type: 'string' },
    },
    USAGE,
  );
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return ExitCode.Ok;
  }
  const file = values.config ?? DEFAULT_CONFIG;
  const config: SimConfig =
    values.config === undefined && !existsSync(file) ? SimConfig.parse({}) : loadSimConfig(file);
  const options = simOptions(config);
  const integer = (text: string, flag: string, min: number): number => {
    const n = Number(text);
    if (!Number.isInteger(n) || n < min)
      throw new UsageError(`${flag} must be a whole number of at least ${min}, got "${text}"`);
    return n;
  };
  if (values.port !== undefined) options.port = integer(values.port, '--port', 0);
  if (values.db !== undefined) options.dbPath = values.db;
  if (values.seed !== undefined) options.seed = integer(values.seed, '--seed', Number.MIN_SAFE_INTEGER);
  if (values.speed !== undefined) {
    const speed = Number(values.speed);
    if (!(speed > 0)) throw new UsageError(`--speed must be a positive number, got "${values.speed}"`);
    options.clock = { speed };
  }
  if (values.start !== undefined) options.startTime = parseStartTime(values.start, '--start');
  if (values.csv !== undefined) options.market = { source: 'csv', path: values.csv };
  if (options.dbPath && options.dbPath !== ':memory:') mkdirSync(path.dirname(options.dbPath), { recursive: true });

  const logger = createLogger({ name: 'sim' });
  const sim = await startSimulator({ ...options, logger });
  const out = process.stdout;
  out.write(
    [
      'tickline gateway simulator',
      `  trading URL   ${sim.tradingUrl}   (POST ${sim.tradingUrl}/api/Auth/loginKey)`,
      `  realtime      ${sim.realtimeUrl.replace(/^http/, 'ws')}/hubs/user and /hubs/market   (SignalR, JSON protocol, skip negotiation; token as access_token)`,
      `  admin URL     ${sim.adminUrl}`,
      `  admin header  Authorization: ${sim.adminHeaders.authorization}`,
      `  demo user     ${sim.demo.userName}`,
      `  demo API key  ${sim.demo.apiKey}`,
      `  demo account  ${sim.demo.accountName} (id ${sim.demo.accountId})`,
      `  state         ${options.dbPath}`,
      'Press Ctrl-C to stop.',
      '',
    ].join('\n'),
  );
  await new Promise<void>((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  await sim.close();
  out.write('simulator stopped\n');
  return ExitCode.Ok;
}
