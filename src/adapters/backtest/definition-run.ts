/**
 * A backtest from its definition run over its whole history: load the history (synthetic, CSV or gateway
 * through the cache) and run it. The parts every run of a definition shares (the contract, the fill
 * options, the report's fields) live here too; a streamed run (streamed.ts) uses them, and execute.ts
 * chooses between the two.
 */
import path from 'node:path';
import type { BlockLease } from '../../engine/block-stock.ts';
import type { Logger } from '../../engine/log.ts';
import { silentLogger } from '../../engine/log.ts';
import { parseParams, type StrategyModule } from '../../engine/strategy.ts';
import { bucketStart, nominalMs, timeframeLabel } from '../../engine/timeframe.ts';
import type { BarChunk, BarColumns, Timeframe } from '../../engine/types.ts';
import { sameTimeframe } from '../../engine/resample.ts';
import type {
  DecisionRecord,
  EquityCurve,
  ReportInput,
  ReportOverlay,
  ReportStrategy,
  Statistics,
} from '../../report/report-types.ts';
import { decisionsCsvRowsIn } from './decisions-csv.ts';
import { cents, streamedStatistics, tradeStatistics } from '../../report/statistics.ts';
import { barsPerCandle, candleValues } from '../../report/chart-data.ts';
import { DEFAULT_MAX_POINTS } from '../../report/html.ts';
import { DEFAULT_BAR_CACHE, type BacktestConfig, type DataConfig, type OutputsConfig } from './backtest-config.ts';
import { resolveContract, type BacktestContract } from './contract.ts';
import {
  runBacktest,
  runStreamedBacktest,
  type BacktestRunResult,
  type BacktestStrategy,
  type ContinuityOptions,
} from './run.ts';
import { RunGathering } from './run-gathering.ts';
import {
  alignToBuckets,
  frontMonthSegments,
  frontMonthWindows,
  monthOfLabel,
  segmentsFromLabels,
  shortName,
  volumeRolledHistory,
  type HistorySegment,
} from '../../data/continuous.ts';
import { TradingCalendar } from '../../engine/trading-day.ts';
import { CALENDAR } from '../../market/contract-months.ts';
import { contractRoot, exchangeCalendarFor, rootMarketHours } from '../../market/contract-hours.ts';
import type { MarketHours } from '../../engine/market-hours.ts';
import type { FillModelOptions } from './simulated-venue.ts';
import { DEFAULT_BOOK } from '../../market/quotes.ts';
import { DEFAULT_PASS_LOCK, type EvaluationRules, type EvaluationSource } from '../../engine/evaluation-rules.ts';
import { evaluationPassLock } from '../../engine/pass-lock.ts';
import { evaluateRun, type MonteCarloOptions } from '../../report/evaluation-report.ts';
import { BarCache, type ImportedBars } from '../../data/bar-cache.ts';
import { existsSync, statSync } from 'node:fs';
import type { PriceGrid } from '../../engine/ticks.ts';
import { aggregate, concatColumns, sliceByIndex, sliceByTime } from '../../data/columns.ts';
import { readCsvMonths, type CsvBars, type CsvOptions } from '../../data/csv.ts';
import { loadCsvBars } from '../../data/csv-parallel.ts';
import { isParquetFile, readParquetBars } from '../../data/parquet.ts';
import { priceLevelWarning, spacingWarning } from '../../data/data-checks.ts';
import { loadGatewayBars } from '../../data/gateway-bars.ts';
import { syntheticBars } from '../../data/synthetic-bars.ts';
import { loadStrategy } from '../../strategies/index.ts';
import { TicklineError } from '../../engine/errors.ts';

export class BacktestDataError extends TicklineError {
  override readonly name = 'BacktestDataError';
  readonly kind = 'input';
  readonly code = 'BACKTEST_DATA';
}

export interface History {
  readonly bars: BarColumns;
  readonly timeframe: Timeframe;
  /** One line saying where the bars came from. */
  readonly description: string;
  /** Where the data changes contract month (a CSV's `contract` column): the report marks them. */
  readonly rolls?: readonly { readonly time: number; readonly contract: string }[];
  /** The months of a continuous history (`contract: ES`), each from its first bar's time. */
  readonly segments?: readonly HistorySegment[];
}

export interface HistoryOptions {
  readonly cwd?: string;
  readonly logger?: Logger;
  /** Epoch ms now (the gateway source never caches the bar still forming). */
  readonly now?: number;
  /** Environment for gateway credentials (TICKLINE_USERNAME, TICKLINE_API_KEY, TICKLINE_BASE_URL). */
  readonly env?: NodeJS.ProcessEnv;
}

/**
 * `history` at `timeframe` (not finer than its own): its bars aggregated, and a continuous history's months
 * moved to bucket starts first, so that no aggregated bar holds two months; `history` itself at its own.
 */
export function historyAt(history: History, timeframe: Timeframe): History {
  if (sameTimeframe(history.timeframe, timeframe)) return history;
  const aligned =
    history.segments !== undefined && history.segments.length > 1
      ? alignToBuckets(history.bars, history.segments, timeframe)
      : undefined;
  const source = aligned === undefined ? history : { ...history, bars: aligned.bars, segments: aligned.segments };
  return { ...source, bars: aggregate(source.bars, timeframe), timeframe };
}

/** The bars of a backtest definition, cut to [from, to). */
export async function loadHistory(
  config: BacktestConfig,
  contract: BacktestContract,
  options: HistoryOptions = {},
): Promise<History> {
  const data: DataConfig = config.data;
  const cwd = options.cwd ?? process.cwd();
  const from = config.from;
  const to = config.to;
  switch (data.source) {
    case 'synthetic': {
      if (contract.continuous !== undefined && config.roll.by === 'volume')
        throw new BacktestDataError(
          "roll.by volume reads a CSV file with every month's rows (data.source csv); the synthetic market rolls by the calendar",
        );
      const startPrice = data.startPrice ?? contract.startPrice ?? 1000;
      // The market's sessions are the hours the guard reads (market.hours), so no bar falls in a closure.
      const { marketHours } = configuredMarketHours(config, contract);
      const bars = syntheticBars({
        seed: data.seed,
        grid: contract.grid,
        startPrice,
        start: data.start,
        sessions: data.sessions,
        ...(marketHours === undefined ? {} : { hours: marketHours }),
      });
      const sliced = sliceByTime(bars, from, to);
      const continuous = contract.continuous;
      return {
        bars: sliced,
        timeframe: { unit: 'minute', unitNumber: 1 },
        description: `synthetic market, seed ${data.seed}, ${data.sessions} sessions of 1m bars from ${startPrice}`,
        ...(continuous === undefined
          ? {}
          : {
              segments: frontMonthSegments(sliced, continuous.root, continuous.calendar, config.roll.daysBeforeExpiry),
            }),
      };
    }
    case 'csv': {
      const file = path.resolve(cwd, data.file);
      if (contract.continuous !== undefined && config.roll.by === 'volume')
        return volumeRolledFile(config, data, contract, file, path.relative(cwd, file));
      const cacheFile = path.resolve(cwd, data.cache ?? DEFAULT_BAR_CACHE);
      const imported = readImported(cacheFile, file, contract.grid, csvOptionsOf(data));
      const { bars, segments } =
        imported ?? (await readBarFile(file, contract.grid, path.relative(cwd, file), csvOptionsOf(data)));
      const source = `${path.relative(cwd, file)}${imported ? ' (imported)' : ''}`;
      const continuous = contract.continuous;
      if (continuous !== undefined) {
        const months =
          segments.length > 0
            ? segmentsFromLabels(bars, segments, continuous.root, continuous.calendar)
            : frontMonthSegments(bars, continuous.root, continuous.calendar, config.roll.daysBeforeExpiry);
        const names = months.map((m) => shortName(m.contractId, continuous.calendar)).join(', ');
        const how = segments.length > 0 ? 'by its contract column' : 'by the calendar';
        return {
          bars: sliceByTime(bars, from, to),
          timeframe: data.timeframe,
          description: `${source}, front months ${how} (${names})`,
          segments: months,
        };
      }
      const rolls =
        segments.length > 1
          ? `, ${segments.length} contract months (${segments.map((s) => s.contract).join(', ')}) spliced as they are`
          : '';
      const changes = segments.slice(1).map((s) => ({ time: bars.time[s.from]!, contract: s.contract }));
      return {
        bars: sliceByTime(bars, from, to),
        timeframe: data.timeframe,
        description: `${source}${rolls}`,
        rolls: changes,
      };
    }
    case 'gateway': {
      if (from === undefined || to === undefined) throw new BacktestDataError('data.source gateway needs from and to');
      if (contract.continuous !== undefined && config.roll.by === 'volume')
        throw new BacktestDataError(
          "roll.by volume reads a CSV file with every month's rows (data.source csv); gateway history rolls by the calendar",
        );
      const env = options.env ?? process.env;
      const baseUrl = data.baseUrl ?? env.TICKLINE_BASE_URL;
      const userName = env.TICKLINE_USERNAME;
      const apiKey = env.TICKLINE_API_KEY;
      const continuous = contract.continuous;
      // A root's history is each month's bars over the window it is the front month: fetched month by month.
      const windows = continuous
        ? frontMonthWindows(continuous.root, continuous.calendar, from, to, config.roll.daysBeforeExpiry)
        : [{ contractId: contract.id, name: contract.name, from, to }];
      const label = continuous
        ? `gateway ${contract.name} front months (${windows.map((w) => w.name).join(', ')})`
        : `gateway ${contract.id}`;
      const cache = new BarCache(path.resolve(cwd, data.cache ?? DEFAULT_BAR_CACHE));
      try {
        const keyOf = (contractId: string) => ({ contractId, timeframe: data.timeframe, live: data.live });
        const now = options.now ?? Date.now();
        // A range the cache covers completely is read without credentials or a connection.
        const end = Math.min(to, bucketStart(now, data.timeframe));
        const open = windows.filter((w) => w.from < end).map((w) => ({ ...w, to: Math.min(w.to, end) }));
        if (open.every((w) => cache.missing(keyOf(w.contractId), w.from, w.to).length === 0)) {
          const parts = open.map((w) => cache.load(keyOf(w.contractId), contract.grid, w.from, w.to));
          return gatewayHistory(
            parts,
            open,
            data.timeframe,
            `${label} ${timeframeLabel(data.timeframe)} (all from the cache)`,
            continuous !== undefined,
          );
        }
        const unset = [
          baseUrl ? undefined : 'TICKLINE_BASE_URL (or data.baseUrl)',
          userName ? undefined : 'TICKLINE_USERNAME',
          apiKey ? undefined : 'TICKLINE_API_KEY',
        ].filter(Boolean);
        if (unset.length > 0)
          throw new BacktestDataError(
            `the cache lacks part of the range; to fetch it set ${unset.join(', ')} in the environment`,
          );
        // Imported here, not at the top: the gateway client (undici) costs every optimize worker ~150 ms of
        // start-up, and only this source needs it.
        const { TradingClient } = await import('../gateway/trading.ts');
        const client = new TradingClient({
          baseUrl: baseUrl!,
          userName: userName!,
          apiKey: apiKey!,
          logger: options.logger ?? silentLogger,
        });
        try {
          const parts: BarColumns[] = [];
          let fetched = 0;
          for (const w of windows) {
            const result = await loadGatewayBars(client, cache, {
              ...keyOf(w.contractId),
              grid: contract.grid,
              from: w.from,
              to: w.to,
              now,
            });
            parts.push(result.bars);
            fetched += result.fetched.length;
          }
          return gatewayHistory(
            parts,
            windows,
            data.timeframe,
            `${label} ${timeframeLabel(data.timeframe)} (${fetched} range(s) fetched)`,
            continuous !== undefined,
          );
        } finally {
          await client.close();
        }
      } finally {
        cache.close();
      }
    }
  }
}

/** A root's history from a file of every month's rows, rolled by volume (continuous.ts). */
function volumeRolledFile(
  config: BacktestConfig,
  data: Extract<DataConfig, { source: 'csv' }>,
  contract: BacktestContract,
  file: string,
  displayName: string,
): History {
  const { root, calendar } = contract.continuous!;
  const months = [...readCsvMonths(file, contract.grid, displayName, csvOptionsOf(data))].map(([label, bars]) => {
    const month = monthOfLabel(label, root, calendar, bars.time[0]!);
    return { contractId: calendar.contract(root, month).id, expiry: calendar.expiry(root, month), bars };
  });
  const days = new TradingCalendar(config.risk.tradingDay);
  const rolled = volumeRolledHistory(months, (t) => days.dayOf(t));
  const names = rolled.segments.map((m) => shortName(m.contractId, calendar)).join(', ');
  return {
    bars: sliceByTime(rolled.bars, config.from, config.to),
    timeframe: data.timeframe,
    description: `${displayName}, front months by volume (${names})`,
    segments: rolled.segments,
  };
}

/** A bar file, CSV or (by its `.parquet` extension) Parquet, with the same column map and zone. */
export async function readBarFile(
  file: string,
  grid: PriceGrid,
  displayName: string,
  options: CsvOptions,
): Promise<CsvBars> {
  return isParquetFile(file)
    ? readParquetBars(file, grid, displayName, options)
    : loadCsvBars(file, grid, displayName, options);
}

/** The CSV reader's options from a csv data config. */
export function csvOptionsOf(data: Extract<DataConfig, { source: 'csv' }>): CsvOptions {
  return {
    ...(data.columns === undefined ? {} : { columns: data.columns }),
    ...(data.timeZone === undefined ? {} : { timeZone: data.timeZone }),
  };
}

/**
 * What an import of `file` is valid for: the file as it is now (size, modification time) read with this
 * tick size, column map and zone. Another signature means the import is stale.
 */
export function importSignature(file: string, grid: PriceGrid, options: CsvOptions): string {
  const stat = statSync(file);
  return JSON.stringify({
    size: stat.size,
    mtimeMs: stat.mtimeMs,
    tickNanos: grid.tickNanos,
    columns: options.columns ?? null,
    timeZone: options.timeZone ?? null,
  });
}

/** The file's bars from the cache when `tickline import` stored them with this signature; undefined otherwise. */
function readImported(cacheFile: string, file: string, grid: PriceGrid, options: CsvOptions): ImportedBars | undefined {
  // No cache file, no import: a CSV run must not create one.
  if (!existsSync(cacheFile) || !existsSync(file)) return undefined;
  const cache = new BarCache(cacheFile);
  try {
    return cache.loadImport(file, importSignature(file, grid, options));
  } finally {
    cache.close();
  }
}

/** Gateway bars of consecutive windows as one history; for a root, one segment per window that has bars. */
function gatewayHistory(
  parts: readonly BarColumns[],
  windows: readonly { contractId: string }[],
  timeframe: Timeframe,
  description: string,
  continuous: boolean,
): History {
  const bars = parts.length === 1 ? parts[0]! : concatColumns(parts);
  if (!continuous) return { bars, timeframe, description };
  const segments: HistorySegment[] = [];
  parts.forEach((part, k) => {
    if (part.time.length > 0) segments.push({ start: part.time[0]!, contractId: windows[k]!.contractId });
  });
  return { bars, timeframe, description, segments };
}

export interface BacktestOutcome {
  readonly name: string;
  readonly title: string;
  readonly contract: BacktestContract;
  readonly history: History;
  readonly result: BacktestRunResult;
  readonly report: ReportInput;
  readonly statistics: Statistics;
  /** How the result files are written (config `outputs`). */
  readonly outputs: OutputsConfig;
  /** What looked wrong with the data (its spacing against the timeframe), also logged. */
  readonly warnings: readonly string[];
  /** A streamed run's equity.csv rows (`outputs.equity`), picked as the bars passed; its `result.equity` is empty. */
  readonly equityRows?: EquityCurve;
  /** The equity.csv a streamed per-bar run wrote while it ran (in `ExecuteOptions.outputDir`). */
  readonly equityFile?: string;
  /** The decisions.csv a whole run wrote while it ran (in `ExecuteOptions.outputDir`); its `result.decisions` is empty. */
  readonly decisionsFile?: string;
}

export interface ExecuteOptions extends HistoryOptions {
  /** Preloaded strategy (workers pass theirs); loaded from `config.strategy.name` otherwise. */
  readonly strategy?: StrategyModule;
  /** Preloaded history (the optimizer loads it once). */
  readonly history?: History;
  readonly onProgress?: (done: number, total: number) => void;
  /** Record the per-bar equity curve (needed for drawdown statistics and the report). */
  readonly recordEquity?: boolean;
  /** Where the run's columns and equity points come from (`BacktestRunInput.blocks`). */
  readonly blocks?: BlockLease;
  /**
   * The evaluation to judge the run by (a loaded preset); by default the account's own rules when they
   * have a profit target and a maximum loss limit. Only with the equity curve recorded.
   */
  readonly evaluation?: EvaluationSource;
  /** Paths, seed, horizon and block of the evaluation's Monte Carlo. */
  readonly monteCarlo?: MonteCarloOptions;
  /** Compute the strategy's plots for the report (default true; a sweep's runs write no report). */
  readonly overlays?: boolean;
  /** Keep every risk-guard decision for decisions.csv and the report (default: as `recordEquity`); counts are always kept. */
  readonly decisions?: boolean;
  /**
   * Several strategy instances traded in one engine on the config's contract (a node's account), in place
   * of `config.strategy`: the report then shows each one's line, and leaves out the strategy's plots.
   */
  readonly strategies?: readonly BacktestStrategy[];
  /**
   * The folder the result files will be written to: a streamed run asked for a per-bar equity.csv writes
   * it there row by row while it runs (without it, such a run loads the whole history), and a whole run
   * writes decisions.csv there as its decisions come instead of keeping them.
   */
  readonly outputDir?: string;
  /**
   * Bars per piece handed to the engine by a run that gathers its figures as its bars pass (default: a
   * streamed run's stored chunk whole, a whole run's pieces of 262,144 bars); tests cut them small.
   */
  readonly pieceBars?: number;
}

/** The account's own rules as an evaluation, when it has a target and a maximum loss limit to judge by. */
export function accountEvaluation(account: BacktestConfig['account'], name: string): EvaluationRules | undefined {
  if (account.profitTarget === undefined || account.maximumLossLimit === undefined) return undefined;
  return {
    name: `the account rules of ${name}`,
    startingBalance: account.startingBalance,
    profitTarget: account.profitTarget,
    maximumLossLimit: account.maximumLossLimit,
    ...(account.dailyLossLimit === undefined
      ? {}
      : { dailyLossLimit: { amount: account.dailyLossLimit, breach: 'pausesDay' as const } }),
  };
}

/**
 * The config's contract, a one-digit year or a symbol read at the start of the data (`from`, or the
 * synthetic market's start): the same config names the same month whatever day it runs.
 */
export function configuredContract(config: BacktestConfig): BacktestContract {
  const on = config.from ?? (config.data.source === 'synthetic' ? config.data.start : undefined);
  return resolveContract(config.contract, on, CALENDAR.withRoots(config.roots));
}

/**
 * The contract's market hours as the config's `market` chooses them: the exchange calendar of its root
 * (none for a contract of a root the calendar does not know), or none.
 */
export function configuredMarketHours(
  config: BacktestConfig,
  contract: BacktestContract,
): { marketHours?: MarketHours } {
  if (config.market.hours === 'none') return {};
  const calendar = exchangeCalendarFor(config.market.beyondCoverage);
  const root = contract.continuous?.root.root ?? contractRoot(contract, CALENDAR.withRoots(config.roots));
  if (root === undefined || !calendar.knows(root)) return {};
  return { marketHours: rootMarketHours(root, calendar) };
}

/** Rolls and gaps as the config sets them, with the history's months when it is continuous. */
export function continuityOptions(config: BacktestConfig, history: History): ContinuityOptions {
  return {
    ...(history.segments === undefined ? {} : { segments: history.segments }),
    rollMode: config.roll.mode,
    adjust: config.roll.adjust,
    gapLimitMs: config.gaps.longerThanHours * 3_600_000,
    flattenGaps: config.gaps.flatten,
  };
}

/** The fill model's options from the config: at the touch of a quoted book when a spread is set. */
export function fillOptions(fills: BacktestConfig['fills'], fee: number): FillModelOptions {
  const base = {
    slippageTicks: fills.slippageTicks,
    stopSlippageTicks: fills.stopSlippageTicks,
    feePerContractPerSide: fee,
    sameBar: fills.sameBar,
  };
  if (fills.spread === undefined) return base;
  return {
    ...base,
    touch: {
      spread: fills.spread,
      book: fills.book ?? DEFAULT_BOOK,
      partialFills: fills.partialFills,
      queue: fills.queue,
    },
  };
}

/** A backtest run and its report's input, without the statistics (a sweep computes only those it ranks by). */
export type DefinitionRun = Omit<BacktestOutcome, 'statistics'> & {
  /** Computed already by a run that gathered its figures as its bars passed (and kept no equity curve). */
  readonly statistics?: Statistics;
};

/** Load and run; computes no statistics and writes nothing. */
export async function runDefinition(
  config: BacktestConfig,
  name: string,
  options: ExecuteOptions = {},
): Promise<DefinitionRun> {
  const contract = configuredContract(config);
  const instances = options.strategies;
  const strategy =
    options.strategy ?? instances?.[0]?.strategy ?? (await loadStrategy(config.strategy.name, options.cwd));
  let history = options.history ?? (await loadHistory(config, contract, options));
  if (history.bars.time.length === 0)
    throw new BacktestDataError(`no bars in the chosen range (${history.description})`);
  if (nominalMs(config.timeframe) < nominalMs(history.timeframe)) {
    throw new BacktestDataError(
      `timeframe ${timeframeLabel(config.timeframe)} is finer than the data's ${timeframeLabel(history.timeframe)}`,
    );
  }
  const warnings: string[] = [];
  if (config.data.source !== 'synthetic') {
    const spacing = spacingWarning(history.bars, history.timeframe, history.description.split(',')[0]!);
    if (spacing !== undefined) {
      warnings.push(spacing);
      options.logger?.warn(spacing);
    }
    const level = priceLevelWarning(
      history.bars.close,
      contract.grid.tickSize,
      contract,
      history.description.split(',')[0]!,
    );
    if (level !== undefined) {
      warnings.push(level);
      options.logger?.warn(level);
    }
  }
  history = historyAt(history, config.timeframe);
  const bars = history.bars;
  const fee = config.fills.feePerContractPerSide ?? contract.feePerSide;
  // An evaluation (the definition's or one given) locks the account once it passes, as paper and live do.
  const passLockMode = options.evaluation === undefined ? 'off' : (config.evaluation?.passLock ?? DEFAULT_PASS_LOCK);
  const passLock = options.evaluation === undefined ? undefined : evaluationPassLock(options.evaluation, passLockMode);
  // The parameters the strategy ran with, defaults included (the definition may name none of them).
  const params = parseParams(strategy, config.strategy.params) as Record<string, unknown>;
  const recordsReport = options.recordEquity ?? true;
  // The plots before the run: each one's value a bar (80 MB for 10 M bars) lives only until it is cut to
  // the chart's points, while the run's own records do not yet take room beside it.
  const overlays =
    recordsReport && options.overlays !== false && instances === undefined
      ? strategyOverlays(
          strategy,
          params,
          { ...bars, contractId: contract.id, timeframe: config.timeframe, length: bars.time.length },
          options.logger,
          barsPerCandle(bars.time.length, DEFAULT_MAX_POINTS),
        )
      : [];
  // With the output folder known, decisions.csv is written as the decisions come and no record is kept.
  const decisionRows = decisionsCsvRowsIn(options.outputDir, options.decisions ?? recordsReport, contract.grid);
  const rules = options.evaluation ?? accountEvaluation(config.account, name);
  // Told where the outputs go, a run that keeps nothing else of every bar (no evaluation, one contract's
  // history) gathers what the results need of its equity as its bars pass, piece by piece, and keeps no
  // curve (80 MB for 10 M bars): the figures a streamed run gathers, which are those of the whole curve.
  const gathered =
    options.outputDir !== undefined &&
    recordsReport &&
    instances === undefined &&
    rules === undefined &&
    contract.continuous === undefined &&
    history.segments === undefined
      ? // The report keeps the bars (for the plots): the trades' excursions are read there, after the run.
        RunGathering.of(config, bars.time.length, options.outputDir, DEFAULT_MAX_POINTS, false)
      : undefined;
  let result: BacktestRunResult;
  try {
    const input = {
      contract,
      dataTimeframe: config.timeframe,
      timeframe: config.timeframe,
      strategy,
      params: config.strategy.params,
      ...(instances === undefined ? {} : { strategies: instances }),
      account: config.account,
      risk: config.risk,
      ...configuredMarketHours(config, contract),
      fills: fillOptions(config.fills, fee),
      recordEquity: recordsReport,
      ...(options.blocks === undefined ? {} : { blocks: options.blocks }),
      ...(options.decisions === undefined ? {} : { recordDecisions: options.decisions }),
      continuity: continuityOptions(config, history),
      ...(passLock === undefined ? {} : { passLock }),
      ...(options.logger ? { logger: options.logger } : {}),
      ...(options.onProgress ? { onProgress: options.onProgress } : {}),
      ...(decisionRows === undefined ? {} : { onDecision: (record: DecisionRecord) => decisionRows.add(record) }),
    };
    result =
      gathered === undefined
        ? runBacktest({ ...input, bars })
        : runStreamedBacktest({
            ...input,
            chunks: pieces(bars, options.pieceBars ?? GATHERED_PIECE_BARS),
            total: bars.time.length,
            onBars: (piece, equity, records) => gathered.add(piece, equity, records),
          });
  } catch (error) {
    decisionRows?.discard();
    gathered?.rows.discard();
    throw error;
  }
  decisionRows?.finish();
  const equityRows = gathered?.rows.finish();
  const title =
    config.title ??
    `${name}: ${instances === undefined ? strategy.name : instances.map((s) => s.id).join(', ')} on ${contract.name} ${timeframeLabel(config.timeframe)}`;
  const lines = instances === undefined ? undefined : strategyLines(instances, result, config.timeframe);
  const evaluation =
    rules === undefined || !recordsReport
      ? undefined
      : evaluateRun(
          rules,
          {
            bars,
            equity: result.equity,
            fills: result.fills,
            balance: result.balance,
            tickValue: contract.grid.tickValue,
            startingBalance: result.startingBalance,
            tradingDay: result.riskConfig.tradingDay,
          },
          options.monteCarlo,
          options.evaluation === undefined ? undefined : { mode: passLockMode, engaged: result.passLock ?? null },
        );
  const report: ReportInput = {
    title,
    ...runReportFields(result, contract),
    bars,
    ...(lines === undefined ? { strategy: { name: strategy.name, params } } : { strategies: lines }),
    data: history.description,
    rolls: contract.continuous
      ? result.rolls.map((r) => ({ time: r.time, contract: shortName(r.to, contract.continuous!.calendar) }))
      : (history.rolls ?? []).filter((r) => r.time >= bars.time[0]! && r.time <= bars.time[bars.time.length - 1]!),
    timeframe: timeframeLabel(config.timeframe),
    overlays,
    ...(decisionRows === undefined ? {} : { decisionTally: decisionRows.tally }),
    ...(gathered === undefined
      ? {}
      : {
          streamed: {
            count: bars.time.length,
            first: gathered.first,
            last: gathered.last,
            chart: gathered.candles.result(contract.grid),
          },
        }),
    ...(evaluation === undefined ? {} : { evaluation }),
    config: {
      ...reportConfig(
        config,
        contract,
        strategy,
        params,
        history.description,
        { first: bars.time[0]!, last: bars.time[bars.time.length - 1]!, count: bars.time.length },
        fee,
      ),
      ...(lines === undefined
        ? {}
        : {
            strategy: lines.map((l) => `${l.id} (${l.strategy}${l.size === 1 ? '' : ` x${l.size}`})`).join(', '),
            params: JSON.stringify(Object.fromEntries(lines.map((l) => [l.id, l.params]))),
          }),
    },
  };
  return {
    name,
    title,
    contract,
    history,
    result,
    report,
    outputs: config.outputs,
    warnings,
    ...(decisionRows === undefined ? {} : { decisionsFile: decisionRows.file }),
    ...(gathered === undefined
      ? {}
      : {
          statistics: streamedStatistics(report, gathered.figures(), gathered.calendar),
          ...(equityRows === undefined ? { equityFile: gathered.equityFile! } : { equityRows }),
        }),
  };
}

/** Bars of a whole history handed to a gathered run at a time: its equity points live one piece long. */
const GATHERED_PIECE_BARS = 1 << 18;

function* pieces(bars: BarColumns, size: number): Generator<BarColumns> {
  const n = bars.time.length;
  for (let start = 0; start < n; start += size) yield sliceByIndex(bars, start, Math.min(n, start + size));
}

/** Each instance's own line for the report, its statistics from its own closed trades. */
function strategyLines(
  instances: readonly BacktestStrategy[],
  result: BacktestRunResult,
  base: Timeframe,
): ReportStrategy[] {
  return instances.map((instance, k) => {
    const { snapshot, trades } = result.strategies![k]!;
    const stats = tradeStatistics(trades);
    return {
      id: instance.id,
      strategy: instance.strategy.name,
      params: parseParams(instance.strategy, instance.params) as Record<string, unknown>,
      size: instance.size ?? 1,
      timeframe: timeframeLabel(instance.timeframe ?? base),
      netPnl: cents(snapshot.netPnl),
      realizedPnl: cents(snapshot.realizedPnl),
      unrealizedPnl: cents(snapshot.unrealizedPnl),
      fees: cents(snapshot.fees),
      trades: snapshot.trades,
      winRate: stats.winRate,
      profitFactor: stats.profitFactor,
      position: snapshot.positions.reduce((sum, p) => sum + p.size, 0),
    };
  });
}

/** What a report shows of a run's result, the same for a whole and a streamed history. */
export function runReportFields(result: BacktestRunResult, contract: BacktestContract) {
  return {
    contract: {
      id: contract.id,
      name: contract.name,
      symbolId: contract.symbolId,
      tickSize: contract.grid.tickSize,
      tickValue: contract.grid.tickValue,
    },
    startingBalance: result.startingBalance,
    trades: result.tradeList,
    equity: result.equity,
    violations: result.reportViolations,
    closestApproach: result.closestApproach,
    passed: result.passed,
    verdict: result.verdict,
    orderListHash: result.orderListHash,
    gaps: result.gaps,
    decisions: result.decisions,
    tradingDay: result.riskConfig.tradingDay,
  } satisfies Partial<ReportInput>;
}

/** The report's configuration table. */
export function reportConfig(
  config: BacktestConfig,
  contract: BacktestContract,
  strategy: StrategyModule,
  params: Record<string, unknown>,
  data: string,
  bars: { readonly first: number; readonly last: number; readonly count: number },
  fee: number,
): Record<string, string | number | boolean | null> {
  return {
    strategy: strategy.name,
    params: JSON.stringify(params),
    contract: contract.id,
    timeframe: timeframeLabel(config.timeframe),
    data,
    from: new Date(bars.first).toISOString(),
    to: new Date(bars.last).toISOString(),
    bars: bars.count,
    slippageTicks: config.fills.slippageTicks,
    stopSlippageTicks: config.fills.stopSlippageTicks,
    feePerContractPerSide: fee,
    sameBar: config.fills.sameBar,
    startingBalance: config.account.startingBalance,
    dailyLossLimit: config.account.dailyLossLimit ?? null,
    maximumLossLimit:
      config.account.maximumLossLimit === undefined
        ? null
        : `${config.account.maximumLossLimit.amount} (${config.account.maximumLossLimit.variant})`,
    personalDailyLossLimit: config.account.personalDailyLossLimit ?? null,
    personalDailyProfitTarget: config.account.personalDailyProfitTarget ?? null,
    profitTarget: config.account.profitTarget ?? null,
  };
}

/**
 * The strategy's plots over the run's bars, each kept at one value per `barsPerValue` bars (the chart's
 * candles: `candleValues`). A plot that throws is left out and logged: a drawing bug must not cost the
 * run's results.
 */
export function strategyOverlays(
  strategy: StrategyModule,
  params: unknown,
  bars: BarChunk,
  logger: Logger = silentLogger,
  barsPerValue = 1,
): ReportOverlay[] {
  if (strategy.plots === undefined) return [];
  const overlays: ReportOverlay[] = [];
  for (const plot of strategy.plots(params)) {
    try {
      const computed = plot.values(bars);
      if (computed.length !== bars.length) throw new Error(`${computed.length} values for ${bars.length} bars`);
      const pane = plot.pane ?? 'price';
      if (barsPerValue === 1) {
        const values = computed instanceof Float64Array ? computed : Float64Array.from(computed);
        overlays.push({ name: plot.name, pane, values });
      } else {
        overlays.push({ name: plot.name, pane, values: candleValues(computed, barsPerValue), barsPerValue });
      }
    } catch (error) {
      logger.warn(
        { err: error, plot: plot.name },
        `strategy ${strategy.name}: plot "${plot.name}" failed and is left out of the report`,
      );
    }
  }
  return overlays;
}
