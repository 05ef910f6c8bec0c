/**
 * The backtest definition (`backtest/<name>.yaml`), validated strictly by `loadConfig` (src/cli/config-loader.ts):
 * unknown keys are errors. Money in the account currency, prices in decimals as people write them, times
 * as ISO dates (UTC when no offset is written). Paths written in a definition file are relative to that
 * file (`resolveBacktestPaths`); the defaults (`out/<name>`, the bar cache) are in the working directory.
 */
import path from 'node:path';
import { z } from 'zod';
import { isStrategyFile } from '../../strategies/index.ts';
import { accountConfigSchema } from '../../engine/account-rules.ts';
import { bookModelSchema, spreadModelSchema } from '../../market/quotes.ts';
import { riskConfigSchema } from '../../engine/risk.ts';
import { evaluationChoiceSchema } from '../../engine/evaluation-rules.ts';
import { rootSpecSchema } from '../../market/contract-months.ts';
import { isTimeZone } from '../../data/csv.ts';

export const IsoTime = z.union([z.string(), z.date()]).transform((value, ctx) => {
  if (value instanceof Date) return value.getTime();
  // A bare date or a time without offset is UTC: the data's times are UTC.
  const text = /^\d{4}-\d{2}-\d{2}$/.test(value)
    ? `${value}T00:00:00Z`
    : /[zZ]|[+-]\d{2}:\d{2}$/.test(value)
      ? value
      : `${value}Z`;
  const ms = Date.parse(text);
  if (Number.isNaN(ms)) {
    ctx.addIssue({ code: 'custom', message: `"${value}" is not an ISO 8601 date or time` });
    return z.NEVER;
  }
  return ms;
});

const Unit = z.enum(['second', 'minute', 'hour', 'day', 'week', 'month']);
export const TimeframeConfig = z.strictObject({
  unit: Unit.default('minute'),
  unitNumber: z.number().int().positive().default(1),
});

const Money = z.number().finite().positive();

export const SyntheticDataConfig = z.strictObject({
  source: z.literal('synthetic'),
  seed: z.number().int().nonnegative().default(42),
  /** Trading sessions (Globex days) of one-minute bars. */
  sessions: z.number().int().positive().max(5000).default(10),
  /** The first session is the first one opening (17:00 America/Chicago) at or after this time. */
  start: IsoTime.default(Date.UTC(2025, 0, 5)),
  /** Decimal price of the first bar; the contract's usual level by default. */
  startPrice: z.number().positive().optional(),
});

const ColumnName = z.string().min(1);

export const CsvDataConfig = z.strictObject({
  source: z.literal('csv'),
  file: z.string().min(1),
  /**
   * The file's column names of the bar fields (case-insensitive), when they are not the project's own
   * `t,o,h,l,c,v[,contract]`: `{ time: datetime, open: open, high: high, low: low, close: close, volume: volume }`.
   */
  columns: z
    .strictObject({
      time: ColumnName,
      open: ColumnName,
      high: ColumnName,
      low: ColumnName,
      close: ColumnName,
      volume: ColumnName,
      contract: ColumnName,
    })
    .partial()
    .optional(),
  /** The bar cache `tickline import` stores the parsed file in (DEFAULT_BAR_CACHE by default); read when it holds this file. */
  cache: z.string().min(1).optional(),
  /** IANA time zone of times written without an offset (`America/Chicago`); such times are refused without it. */
  timeZone: z
    .string()
    .refine(isTimeZone, { message: 'not an IANA time zone (America/Chicago, Europe/London, UTC, ...)' })
    .optional(),
  /** The file's bar length; one minute by default. */
  timeframe: TimeframeConfig.default({ unit: 'minute', unitNumber: 1 }),
  /**
   * Stream the bars of the file's import from the bar cache chunk by chunk, so memory grows with the
   * trades and not the bars (src/adapters/backtest/streamed.ts): true always (saying why when it cannot),
   * false never; by default an import above STREAM_AUTO_BARS bars streams when nothing it leaves out was
   * asked for (an evaluation, a per-bar equity.csv).
   */
  stream: z.boolean().optional(),
});

export const GatewayDataConfig = z.strictObject({
  source: z.literal('gateway'),
  /** Live data subscription (true) or the sim one (false). */
  live: z.boolean().default(false),
  /** SQLite bar cache; DEFAULT_BAR_CACHE, the one `fetch-bars` fills, when absent. */
  cache: z.string().min(1).optional(),
  timeframe: TimeframeConfig.default({ unit: 'minute', unitNumber: 1 }),
  /** Base URL of the trading interface; the environment variable TICKLINE_BASE_URL otherwise. */
  baseUrl: z.url().optional(),
});

/** The bar cache of `fetch-bars` and of gateway histories, in the working directory. */
export const DEFAULT_BAR_CACHE = '.cache/bars.sqlite';

export const DataConfig = z.discriminatedUnion('source', [SyntheticDataConfig, CsvDataConfig, GatewayDataConfig]);
export type DataConfig = z.infer<typeof DataConfig>;

export const ContractConfig = z.union([
  /**
   * A root (`ES`: the front month at each date, rolled by `roll`), or a month of the contract calendar by
   * id, name or symbol (`CON.F.US.EP.Z25`, `ESZ25`, `ESZ5`, `F.US.EP`); a one-digit year and a symbol's
   * front month are read at the data's start (`from`, or the synthetic start).
   */
  z.string().min(1),
  z.strictObject({
    id: z.string().min(1),
    name: z.string().min(1),
    symbolId: z.string().min(1).optional(),
    tickSize: z.number().positive(),
    tickValue: z.number().positive(),
  }),
]);

/**
 * The account's rules, in the engine's own schema (src/engine/account-rules.ts), plus the evaluation's profit
 * target: the backtest judges pass or fail with the same floors the risk guard trades against.
 */
export const AccountConfig = accountConfigSchema.extend({
  startingBalance: z.number().finite().positive().default(50_000),
  /** Evaluation target: the account passes when its balance reaches starting balance + profitTarget without a permanent violation. */
  profitTarget: Money.optional(),
});
export type AccountConfig = z.infer<typeof AccountConfig>;

export const FillsConfig = z.strictObject({
  slippageTicks: z.number().int().nonnegative().default(1),
  stopSlippageTicks: z.number().int().nonnegative().default(0),
  /** Money per contract per side; the calendar contract's typical fee when left out. */
  feePerContractPerSide: z.number().nonnegative().optional(),
  sameBar: z.enum(['stop-first', 'target-first', 'nearest-to-open', 'path']).default('stop-first'),
  /**
   * Fill at the touch of a quoted book with this spread (`{ type: fixed, ticks }` or `{ type: volatility,
   * rangeTicksPerTick, ... }`), as the simulator does; absent: fills at the open and at order prices.
   */
  spread: spreadModelSchema.optional(),
  /** Size of each book level (with `spread`). */
  book: bookModelSchema.optional(),
  /** With `spread`: orders larger than a level fill in parts (market orders walk the book). */
  partialFills: z.boolean().default(false),
  /** With `spread`: resting limits wait behind the size shown at their price. */
  queue: z.boolean().default(false),
});

/** The statistics a sweep can rank by (`maxDrawdown` smallest first). */
export const METRICS = [
  'netPnl',
  'returnPct',
  'sharpe',
  'sortino',
  'profitFactor',
  'expectancy',
  'winRate',
  'maxDrawdown',
  'trades',
] as const;
/** How `tickline optimize` picks the parameter sets it runs. */
export const SEARCHES = ['grid', 'random', 'tpe'] as const;

/** `tickline optimize`'s settings; the command's flags override each. */
export const OptimizeConfig = z.strictObject({
  /** Values of each strategy parameter (`--grid key=v1,v2`). */
  grid: z.record(z.string(), z.array(z.union([z.number(), z.string(), z.boolean()])).min(1)).optional(),
  metric: z.enum(METRICS).optional(),
  search: z.enum(SEARCHES).optional(),
  trials: z.number().int().positive().optional(),
  seed: z.number().int().optional(),
  workers: z.number().int().positive().optional(),
  /** The rolling walk-forward (`--folds`, `--train-windows`, `--anchored`). */
  walkForward: z
    .strictObject({
      folds: z.number().int().positive(),
      trainWindows: z.number().int().positive().default(3),
      mode: z.enum(['rolling', 'anchored']).default('rolling'),
    })
    .optional(),
});
export type OptimizeConfig = z.infer<typeof OptimizeConfig>;

/** What a continuous run (`contract: ES`) does at a change of month. */
export const RollConfig = z.strictObject({
  /** `roll`: close in the old month and reopen in the new at the roll bar; `flatten`: only close. */
  mode: z.enum(['roll', 'flatten']).default('roll'),
  /** Business days before expiry the front month moves (data without a contract column, gateway history); the root's own rule by default. */
  daysBeforeExpiry: z.number().int().nonnegative().optional(),
  /**
   * What moves the front month: `calendar` (daysBeforeExpiry, or a file's own contract column when it has
   * one month a row) or `volume` (a CSV file with every month's rows: the front moves after a day on which
   * a later month traded more).
   */
  by: z.enum(['calendar', 'volume']).default('calendar'),
  /** What the strategy's indicators read across rolls: back-adjusted by the roll's price difference or ratio, or real prices. */
  adjust: z.enum(['difference', 'ratio', 'none']).default('difference'),
});

/** Stretches without bars. */
export const GapsConfig = z.strictObject({
  /** A stretch without bars longer than this is a gap: 96 hours (longer than any weekend) by default. */
  longerThanHours: z.number().positive().default(96),
  /** Flatten open positions at the last bar before a gap (the run says so); false leaves them open. */
  flatten: z.boolean().default(true),
});

/** How the result files are written. */
export const OutputsConfig = z.strictObject({
  /**
   * Which rows of the equity curve `equity.csv` holds: each trading day's close (the default: a 10 M-bar run
   * would otherwise write 330 MB nobody reads whole), each trade's exit with the first and last bar, or
   * every bar. The report's drawdown and statistics use every bar whichever is chosen.
   */
  equity: z.enum(['daily', 'per-trade', 'per-bar']).default('daily'),
  /** JSON files on one line (the default), or indented by two spaces to read by eye. */
  json: z.enum(['compact', 'pretty']).default('compact'),
});
export type OutputsConfig = z.infer<typeof OutputsConfig>;

/** The market's hours the guard and `ctx.session` read (docs/backtest.md, Market hours). */
export const MarketConfig = z.strictObject({
  /**
   * `exchange`: the exchange calendar of the contract's root (src/market/exchange-hours.ts): no new risk
   * while the market is closed (MARKET_CLOSED), `risk.flatBeforeClose` applies, `ctx.session` knows the
   * hours. `none`: the market counts as always open (the behaviour before market hours existed).
   */
  hours: z.enum(['exchange', 'none']).default('exchange'),
  /**
   * History outside the years the holiday data covers (2025-2027): `weeklyHours` applies today's regular
   * week without holidays; `throw` refuses to run it.
   */
  beyondCoverage: z.enum(['weeklyHours', 'throw']).default('weeklyHours'),
});
export type MarketConfig = z.infer<typeof MarketConfig>;

export const BacktestConfig = z
  .strictObject({
    /** Names the output folder `out/<name>/`; the config file's name by default. */
    name: z
      .string()
      .regex(/^[A-Za-z0-9._-]+$/, 'letters, digits, dot, dash and underscore only')
      .optional(),
    title: z.string().optional(),
    strategy: z.strictObject({
      /** A built-in strategy (`sma-cross`, `breakout`, `mean-reversion`) or a path to a module. */
      name: z.string().min(1),
      /** Validated by the strategy's own schema. */
      params: z.record(z.string(), z.unknown()).default({}),
    }),
    contract: ContractConfig.default('ESZ5'),
    /** Roots to add to the contract calendar (or to replace one of the same name), in its own schema (src/market/contract-months.ts). */
    roots: z.array(rootSpecSchema).default([]),
    roll: RollConfig.default(RollConfig.parse({})),
    gaps: GapsConfig.default(GapsConfig.parse({})),
    /** Timeframe the strategy trades (aggregated from the data when coarser). */
    timeframe: TimeframeConfig.default({ unit: 'minute', unitNumber: 1 }),
    data: DataConfig,
    from: IsoTime.optional(),
    to: IsoTime.optional(),
    account: AccountConfig.default(AccountConfig.parse({})),
    /**
     * A prop-firm evaluation to judge the run by: a preset of config/evaluations (`topstep-50k`) or a YAML
     * file, relative to this file, or `{ rules: <preset|file>, passLock: flatten | hold | off }`. Its floors,
     * contract cap and hours become the account's rules and the guard's (so account.startingBalance,
     * dailyLossLimit, maximumLossLimit and profitTarget are left out); passLock says what the account does
     * once it meets the pass conditions (default flatten: docs/backtest.md, Pass-lock).
     */
    evaluation: evaluationChoiceSchema.optional(),
    fills: FillsConfig.default(FillsConfig.parse({})),
    market: MarketConfig.default(MarketConfig.parse({})),
    /** The engine's risk-guard settings (src/engine/risk.ts), including the trading day's boundary. */
    risk: riskConfigSchema.default(riskConfigSchema.parse({})),
    /** Output folder; `out/<name>` by default. */
    out: z.string().optional(),
    outputs: OutputsConfig.default(OutputsConfig.parse({})),
    optimize: OptimizeConfig.optional(),
  })
  // A reversed or empty range would only end in "no bars in the chosen range": name the range instead.
  .superRefine((config, ctx) => {
    if (config.from !== undefined && config.to !== undefined && config.from >= config.to)
      ctx.addIssue({
        code: 'custom',
        path: ['to'],
        message: `the range ends before it starts: to (${new Date(config.to).toISOString()}) must be after from (${new Date(config.from).toISOString()})`,
      });
  });
export type BacktestConfig = z.infer<typeof BacktestConfig>;

/**
 * The definition with every relative path it holds (a strategy file, the CSV file, the bar cache, the
 * output folder) made absolute against `baseDir`, the folder of the file it was read from.
 */
export function resolveBacktestPaths(config: BacktestConfig, baseDir: string): BacktestConfig {
  const at = (p: string): string => path.resolve(baseDir, p);
  const data: DataConfig =
    config.data.source === 'csv'
      ? {
          ...config.data,
          file: at(config.data.file),
          ...(config.data.cache === undefined ? {} : { cache: at(config.data.cache) }),
        }
      : config.data.source === 'gateway' && config.data.cache !== undefined
        ? { ...config.data, cache: at(config.data.cache) }
        : config.data;
  return {
    ...config,
    strategy: isStrategyFile(config.strategy.name)
      ? { ...config.strategy, name: at(config.strategy.name) }
      : config.strategy,
    data,
    ...(config.out === undefined ? {} : { out: at(config.out) }),
  };
}
