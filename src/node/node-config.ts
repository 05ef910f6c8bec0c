/**
 * The trading node's configuration (`tickline run --config node.yaml`): several bots on several accounts
 * of one user, in one process. A bot is a strategy with its parameters, an id (the prefix of its
 * customTags), its contracts, its timeframe and the accounts it trades, each with a size multiplier. An
 * account has its own journal, limits, evaluation and risk settings. What the node shares (the gateway,
 * the simulator, the poll intervals, the roll, the market's hours) is set once, with the keys and meanings
 * of the paper and live config (docs/live.md); `backtest` runs the same file on history.
 *
 * Strict as every config: unknown keys are errors, and every error is reported at once.
 */
import path from 'node:path';
import { z } from 'zod';
import { accountConfigSchema } from '../engine/account-rules.ts';
import { riskConfigSchema } from '../engine/risk.ts';
import { nominalMs } from '../engine/timeframe.ts';
import type { Timeframe } from '../engine/types.ts';
import { liveConfigSchema, type LiveConfig } from '../adapters/live/live-config.ts';
import {
  ContractConfig,
  DataConfig,
  IsoTime,
  FillsConfig,
  GapsConfig,
  MarketConfig,
  OutputsConfig,
  TimeframeConfig,
} from '../adapters/backtest/backtest-config.ts';
import { isStrategyFile } from '../strategies/index.ts';

const live = liveConfigSchema.shape;

// The paper and live config's strategy id: a customTag prefix.
const idSchema = live.strategy.shape.id;

export const nodeAccountSchema = z.strictObject({
  /** The account's name at the gateway. */
  name: z.string().min(1),
  /** Its journal; `<journals>/<name>.sqlite` by default. One journal per account, bound to it. */
  journal: z.string().min(1).optional(),
  /** Rule limits for the account's guard, as the paper and live config's `limits`. */
  limits: accountConfigSchema.partial().default({}),
  /**
   * A prop-firm evaluation (preset or file) whose floors, contract cap and hours the account's guard applies,
   * or `{ rules, passLock: flatten | hold | off }` for what the account does once it passed (docs/live.md).
   */
  evaluation: live.evaluation,
  /** The account's guard settings; the node's `risk` by default. */
  risk: riskConfigSchema.optional(),
});

const botAccountSchema = z.union([
  z.string().min(1),
  z.strictObject({ name: z.string().min(1), size: z.number().int().positive().default(1) }),
]);

export const nodeBotSchema = z.strictObject({
  /** Prefix of every customTag of the bot (`<id>-<sequence>`): keep it stable across restarts. */
  id: idSchema,
  /** A built-in strategy's name, or a path to a module (relative to this file). */
  strategy: z.string().min(1),
  params: z.record(z.string(), z.unknown()).default({}),
  /** Pinned months, or roots and symbol ids that follow the front month; the first is the bot's primary. */
  contracts: z.array(z.string().min(1)).min(1),
  timeframe: TimeframeConfig.default({ unit: 'minute', unitNumber: 1 }),
  /** The accounts it trades: a name, or `{ name, size }` to multiply every order on that account. */
  accounts: z.array(botAccountSchema).min(1),
});

/** The node's history run (`tickline backtest --config node.yaml`). */
export const nodeBacktestSchema = z.strictObject({
  /**
   * The contract whose history is replayed for every bot, in the backtest's terms (docs/backtest.md). By
   * default the bots' own: a root or symbol id (`ES`, `F.US.EP`) the root's front month at each date,
   * rolled as live follows it; a pinned month (`CON.F.US.EP.Z26`) that month.
   */
  contract: ContractConfig.optional(),
  data: DataConfig,
  from: IsoTime.optional(),
  to: IsoTime.optional(),
  fills: FillsConfig.default(FillsConfig.parse({})),
  gaps: GapsConfig.default(GapsConfig.parse({})),
  market: MarketConfig.default(MarketConfig.parse({})),
  outputs: OutputsConfig.default(OutputsConfig.parse({})),
  /** Output folder; `out/<config name>` by default. */
  out: z.string().optional(),
  /** Each account's starting balance where neither its limits nor its evaluation set one (default 50,000). */
  startingBalance: z.number().positive().default(50_000),
});

export const nodeConfigSchema = z
  .strictObject({
    /** Prefix of the node's own orders (kill switch, breach flatten, flat-by): `<id>-risk-<sequence>`. */
    id: idSchema.default('node'),
    /** `paper` trades simulated accounts only, `live` real ones only. */
    mode: z.enum(['paper', 'live']),
    accounts: z.array(nodeAccountSchema).min(1),
    bots: z.array(nodeBotSchema).min(1),
    /** The folder of the accounts' journals (and of the node's log and local simulator database). */
    journals: z.string().min(1),
    gateway: live.gateway,
    simulator: live.simulator,
    partialEveryMs: live.partialEveryMs,
    poll: live.poll,
    risk: live.risk,
    roll: live.roll,
    market: live.market,
    session: live.session,
    log: live.log,
    execution: live.execution,
    /** Notification targets (docs/notifications.md): each account's events, named by its account. */
    notify: live.notify,
    backtest: nodeBacktestSchema.optional(),
  })
  .superRefine((config, ctx) => {
    const names = new Set<string>();
    config.accounts.forEach((account, i) => {
      if (names.has(account.name))
        ctx.addIssue({
          code: 'custom',
          path: ['accounts', i, 'name'],
          message: `account ${account.name} is listed twice`,
        });
      names.add(account.name);
    });
    const ids = new Set<string>([`${config.id}-risk`]);
    config.bots.forEach((bot, i) => {
      if (ids.has(bot.id))
        ctx.addIssue({
          code: 'custom',
          path: ['bots', i, 'id'],
          message:
            bot.id === `${config.id}-risk`
              ? `${bot.id} is the node's own order prefix; choose another bot id`
              : `bot id ${bot.id} is used twice: each bot's customTags need their own prefix`,
        });
      ids.add(bot.id);
      const on = new Set<string>();
      bot.accounts.forEach((ref, j) => {
        const name = typeof ref === 'string' ? ref : ref.name;
        if (!names.has(name))
          ctx.addIssue({
            code: 'custom',
            path: ['bots', i, 'accounts', j],
            message: `no account named ${name} in accounts (${[...names].join(', ')})`,
          });
        if (on.has(name))
          ctx.addIssue({
            code: 'custom',
            path: ['bots', i, 'accounts', j],
            message: `account ${name} is listed twice for this bot`,
          });
        on.add(name);
      });
    });
    for (const account of config.accounts) {
      const bots = config.bots.filter((b) => botAccounts(b).some((a) => a.name === account.name));
      const base = baseTimeframe(bots.map((b) => b.timeframe));
      bots.forEach((bot) => {
        if (base !== undefined && nominalMs(bot.timeframe) % nominalMs(base) !== 0)
          ctx.addIssue({
            code: 'custom',
            path: ['bots', config.bots.indexOf(bot), 'timeframe'],
            message: `on account ${account.name} the bars are ${label(base)}: ${label(bot.timeframe)} is not a whole number of them`,
          });
      });
    }
  });

export type NodeConfig = z.output<typeof nodeConfigSchema>;
export type NodeBot = NodeConfig['bots'][number];
export type NodeAccount = NodeConfig['accounts'][number];

function label(tf: Timeframe): string {
  return `${tf.unitNumber} ${tf.unit}${tf.unitNumber === 1 ? '' : 's'}`;
}

/** A bot's accounts with their size multipliers. */
export function botAccounts(bot: NodeBot): { name: string; size: number }[] {
  return bot.accounts.map((ref) => (typeof ref === 'string' ? { name: ref, size: 1 } : ref));
}

/** The bars an account's engine is fed: the finest of its bots' timeframes. */
export function baseTimeframe(timeframes: readonly Timeframe[]): Timeframe | undefined {
  let base: Timeframe | undefined;
  for (const tf of timeframes) if (base === undefined || nominalMs(tf) < nominalMs(base)) base = tf;
  return base;
}

/** The bots of one account, each with its size there, in the config's order. */
export function accountBots(config: NodeConfig, account: string): { bot: NodeBot; size: number }[] {
  const out: { bot: NodeBot; size: number }[] = [];
  for (const bot of config.bots) {
    const on = botAccounts(bot).find((a) => a.name === account);
    if (on !== undefined) out.push({ bot, size: on.size });
  }
  return out;
}

export function accountJournal(config: NodeConfig, account: NodeAccount): string {
  return account.journal ?? path.join(config.journals, `${account.name.replace(/[^A-Za-z0-9._-]/g, '_')}.sqlite`);
}

/**
 * One account's session config, in the paper and live config's terms: the union of its bots' contracts (the
 * first bot's primary first), the finest of their timeframes, its journal, limits, evaluation and risk, and the
 * node's shared settings. Its `strategy` names the node's bots (its id is the prefix of the node's own orders).
 */
export function accountSessionConfig(config: NodeConfig, account: NodeAccount): LiveConfig {
  const bots = accountBots(config, account.name).map((b) => b.bot);
  const contracts = [...new Set(bots.flatMap((b) => b.contracts))];
  const timeframe = baseTimeframe(bots.map((b) => b.timeframe)) ?? { unit: 'minute' as const, unitNumber: 1 };
  return {
    // What the journal and the dashboard name the session by: its bots (each has its own module and id).
    strategy: { name: bots.map((b) => b.id).join(', ') || 'none', id: config.id, params: {} },
    contracts,
    timeframe,
    ...(config.partialEveryMs === undefined ? {} : { partialEveryMs: config.partialEveryMs }),
    account: { name: account.name },
    gateway: config.gateway,
    simulator: config.simulator,
    limits: account.limits,
    ...(account.evaluation === undefined ? {} : { evaluation: account.evaluation }),
    journal: accountJournal(config, account),
    poll: config.poll,
    risk: account.risk ?? config.risk,
    roll: config.roll,
    market: config.market,
    session: config.session,
    log: config.log,
    execution: config.execution,
    notify: config.notify,
  };
}

/** The node's log file: `log.file`, or `node.log` in the journals' folder. */
export function nodeLogFile(config: NodeConfig): string {
  return config.log.file ?? path.join(config.journals, 'node.log');
}

/** Every relative path made absolute against the config file's folder. */
export function resolveNodePaths(config: NodeConfig, baseDir: string): NodeConfig {
  const at = (p: string): string => path.resolve(baseDir, p);
  const { dbPath } = config.simulator;
  const backtest = config.backtest;
  return {
    ...config,
    journals: at(config.journals),
    accounts: config.accounts.map((a) => (a.journal === undefined ? a : { ...a, journal: at(a.journal) })),
    bots: config.bots.map((b) => (isStrategyFile(b.strategy) ? { ...b, strategy: at(b.strategy) } : b)),
    log: config.log.file === undefined ? config.log : { ...config.log, file: at(config.log.file) },
    simulator:
      dbPath === undefined || dbPath === ':memory:' ? config.simulator : { ...config.simulator, dbPath: at(dbPath) },
    ...(backtest === undefined
      ? {}
      : {
          backtest: {
            ...backtest,
            data:
              backtest.data.source === 'csv'
                ? {
                    ...backtest.data,
                    file: at(backtest.data.file),
                    ...(backtest.data.cache === undefined ? {} : { cache: at(backtest.data.cache) }),
                  }
                : backtest.data,
            ...(backtest.out === undefined ? {} : { out: at(backtest.out) }),
          },
        }),
  };
}
