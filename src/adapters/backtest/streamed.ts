/**
 * A backtest that streams its bars from the bar cache: a `tickline import` is read one stored chunk at a
 * time, each chunk pushed into the engine as it is read and let go, and what the results need of every bar
 * is gathered while the bars pass (the drawdown, the end-of-day equity, where trade times fall among the
 * bars, the chart's candles, the chosen rows of equity.csv). The run's orders, fills, trades and their
 * excursions are kept as columns whose full blocks go to a temporary file (file-spill.ts), so memory grows
 * with neither the bars nor the trades, only a little with the trading days. The figures are those of the
 * whole-history run of the same bars, exactly (test/unit/backtest/streamed.test.ts checks them against it).
 *
 * What streams: a CSV data source whose file has a current import, one contract, the data's own
 * timeframe or a coarser one (aggregated chunk by chunk), `outputs.equity` daily or per-trade. What falls back to the
 * whole history, and why:
 * - a continuous contract (`contract: ES`): the back-adjustment of each month depends on every later
 *   roll, so it needs the whole history before the first bar (a contract column's months under one
 *   traded contract stream: they are spliced as they are, and only marked on the chart);
 * - a timeframe finer than the data's: refused as in a whole run (whose error it then gives);
 * - `outputs.equity: per-bar` when the caller does not say where the outputs go (the CLI does: the rows
 *   are then written to equity.csv while the run streams);
 * - no import of the file (a CSV is parsed whole).
 * A streamed report leaves out the strategy's plots (they read whole columns) and the evaluation (its day
 * paths read every bar), each with a line in the report and in the terminal saying so.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { parseParams, type StrategyModule } from '../../engine/strategy.ts';
import { bucketStart, nominalMs, timeframeLabel } from '../../engine/timeframe.ts';
import type { BarColumns, Timeframe } from '../../engine/types.ts';
import { DEFAULT_MAX_POINTS } from '../../report/html.ts';
import { streamedStatistics } from '../../report/statistics.ts';
import type { DecisionRecord, EquityCurve, ReportInput } from '../../report/report-types.ts';
import type { BacktestOutcome, ExecuteOptions } from './definition-run.ts';
import {
  accountEvaluation,
  BacktestDataError,
  continuityOptions,
  csvOptionsOf,
  fillOptions,
  importSignature,
  reportConfig,
  runReportFields,
  configuredMarketHours,
} from './definition-run.ts';
import { DEFAULT_BAR_CACHE, type BacktestConfig } from './backtest-config.ts';
import type { BacktestContract } from './contract.ts';
import { priceLevelWarning, spacingWarning } from '../../data/data-checks.ts';
import { decisionsCsvRowsIn, type DecisionsCsvRows } from './decisions-csv.ts';
import { runStreamedBacktest, type BacktestRunResult } from './run.ts';
import { RunGathering } from './run-gathering.ts';
import { FileSpill } from './file-spill.ts';
import { BarCache, type ImportInfo } from '../../data/bar-cache.ts';
import { aggregate, concatColumns, sliceByIndex, sliceByTime } from '../../data/columns.ts';

/** Above this many bars an import streams by default (the whole path holds about 130 bytes a bar). */
export const STREAM_AUTO_BARS = 5_000_000;

/** The import a run would stream, or why it runs on the whole history. */
export type StreamChoice =
  | { readonly stream: true; readonly cacheFile: string; readonly file: string; readonly info: ImportInfo }
  | { readonly stream: false; readonly why?: string };

/** Whether a definition streams (see the module comment); `why` is set when it was asked to and cannot. */
export function streamChoice(
  config: BacktestConfig,
  contract: BacktestContract,
  options: ExecuteOptions,
): StreamChoice {
  const data = config.data;
  if (
    data.source !== 'csv' ||
    data.stream === false ||
    options.history !== undefined ||
    options.strategies !== undefined
  )
    return { stream: false };
  const asked = data.stream === true;
  const cwd = options.cwd ?? process.cwd();
  const file = path.resolve(cwd, data.file);
  const cacheFile = path.resolve(cwd, data.cache ?? DEFAULT_BAR_CACHE);
  const cannot = (why: string): StreamChoice =>
    asked ? { stream: false, why: `data.stream: ${why}; the whole history is loaded instead` } : { stream: false };
  if (!existsSync(cacheFile) || !existsSync(file))
    return cannot(`${path.relative(cwd, file)} has no import in the bar cache (run tickline import)`);
  const cache = new BarCache(cacheFile);
  let info: ImportInfo | undefined;
  try {
    info = cache.importInfo(file, importSignature(file, contract.grid, csvOptionsOf(data)));
  } finally {
    cache.close();
  }
  if (info === undefined)
    return cannot(`${path.relative(cwd, file)} has no current import in the bar cache (run tickline import)`);
  if (contract.continuous !== undefined)
    return cannot('a continuous contract needs every roll before the first bar (back-adjustment)');
  // A finer timeframe than the data's is refused by the whole path, with its own error.
  if (nominalMs(config.timeframe) < nominalMs(data.timeframe)) return { stream: false };
  if (config.outputs.equity === 'per-bar' && options.outputDir === undefined)
    return cannot(
      'outputs.equity per-bar is written while the run streams, and this run was not told where its outputs go',
    );
  if (options.recordEquity === false) return cannot('a run without its equity curve has nothing to stream for');
  if (!asked) {
    if (info.count <= STREAM_AUTO_BARS) return { stream: false };
    // Streaming by default must not cost what was asked for: an evaluation reads every bar.
    if ((options.evaluation ?? accountEvaluation(config.account, '')) !== undefined) return { stream: false };
  }
  return { stream: true, cacheFile, file, info };
}

/** The chunks of an import within [from, to), each cut into pieces of at most `pieceBars` (tests use small ones). */
function* importChunks(
  cache: BarCache,
  file: string,
  info: ImportInfo,
  from: number | undefined,
  to: number | undefined,
  pieceBars: number,
): Generator<BarColumns> {
  for (const chunk of cache.importChunks(file, info.count)) {
    const inside = from === undefined && to === undefined ? chunk : sliceByTime(chunk, from, to);
    for (let start = 0; start < inside.time.length; start += pieceBars)
      yield sliceByIndex(inside, start, Math.min(inside.time.length, start + pieceBars));
  }
}

/**
 * Chunks of a coarser timeframe, the same bars `aggregate` makes of the whole history: each chunk's last
 * bucket waits for the next chunk (the bucket may go on there), and the last one is let out at the end.
 * `sample` sees the data's own bars first (the spacing check reads them, not the aggregated ones).
 */
function* aggregated(
  chunks: Iterable<BarColumns>,
  timeframe: Timeframe,
  sample: (bars: BarColumns) => void,
): Generator<BarColumns> {
  let carry: BarColumns | undefined;
  for (const chunk of chunks) {
    sample(chunk);
    const n = chunk.time.length;
    if (n === 0) continue;
    const lastBucket = bucketStart(chunk.time[n - 1]!, timeframe);
    let cut = n;
    while (cut > 0 && bucketStart(chunk.time[cut - 1]!, timeframe) === lastBucket) cut--;
    const ready =
      carry === undefined ? sliceByIndex(chunk, 0, cut) : concatColumns([carry, sliceByIndex(chunk, 0, cut)]);
    const rest = sliceByIndex(chunk, cut, n);
    if (cut === 0) {
      carry = carry === undefined ? copyColumns(rest) : concatColumns([carry, rest]);
      continue;
    }
    carry = copyColumns(rest);
    yield aggregate(ready, timeframe);
  }
  if (carry !== undefined && carry.time.length > 0) yield aggregate(carry, timeframe);
}

function copyColumns(bars: BarColumns): BarColumns {
  return concatColumns([bars]);
}

/** Bars of an import in [from, to) and, when the run's timeframe is coarser, how many it aggregates to. */
function countBars(
  cache: BarCache,
  file: string,
  info: ImportInfo,
  from: number | undefined,
  to: number | undefined,
  timeframe: Timeframe | undefined,
): number {
  if (timeframe === undefined && from === undefined && to === undefined) return info.count;
  return cache.importCountIn(file, from ?? Number.NEGATIVE_INFINITY, to ?? Number.POSITIVE_INFINITY, timeframe);
}

export interface StreamedOptions extends ExecuteOptions {
  readonly strategy: StrategyModule;
  /** Candles the report's chart is cut into (the report's default otherwise); tests make k > 1 on few bars. */
  readonly maxCandles?: number;
}

/** A run that streams its bars (`streamChoice` said it can): the outcome, its statistics computed already. */
export function runStreamedDefinition(
  config: BacktestConfig,
  name: string,
  contract: BacktestContract,
  choice: Extract<StreamChoice, { stream: true }>,
  options: StreamedOptions,
): BacktestOutcome {
  const cache = new BarCache(choice.cacheFile);
  try {
    const run = streamRun(cache, config, contract, choice, options);
    return streamedOutcome(run, config, name, contract, options);
  } finally {
    cache.close();
  }
}

/** What the streamed replay leaves: the run's result and what was gathered from its bars. */
interface StreamedRun {
  readonly result: BacktestRunResult;
  readonly gathering: RunGathering;
  readonly total: number;
  readonly description: string;
  /** Where the file's contract column changes month (the time of the first bar of each). */
  readonly changes: readonly { readonly time: number; readonly contract: string }[];
  readonly fee: number;
  /** The chosen equity.csv rows, or undefined when the gathering wrote them to its `equityFile`. */
  readonly equityRows: EquityCurve | undefined;
  /** decisions.csv written as the decisions came, when the output folder was known. */
  readonly decisionRows: DecisionsCsvRows | undefined;
}

function streamRun(
  cache: BarCache,
  config: BacktestConfig,
  contract: BacktestContract,
  choice: Extract<StreamChoice, { stream: true }>,
  options: StreamedOptions,
): StreamedRun {
  const { info, file } = choice;
  const { from, to } = config;
  const data = config.data as Extract<BacktestConfig['data'], { source: 'csv' }>;
  const coarser = sameTimeframe(config.timeframe, data.timeframe) ? undefined : config.timeframe;
  const total = countBars(cache, file, info, from, to, coarser);
  // Months spliced as they are (one contract traded throughout): only the report marks where they change.
  const segments = info.segments;
  const spliced =
    segments.length > 1
      ? `, ${segments.length} contract months (${segments.map((s) => s.contract).join(', ')}) spliced as they are`
      : '';
  const changes = segments.slice(1).map((s) => ({ time: cache.importTimeAt(file, s.from), contract: s.contract }));
  const description = `${path.relative(options.cwd ?? process.cwd(), file)} (imported), streamed from the bar cache${spliced}`;
  if (total === 0) throw new BacktestDataError(`no bars in the chosen range (${description})`);
  // One file for the run's orders, fills, trades and the trades' excursions, so none grows its memory.
  const spill = new FileSpill();
  const gathering = RunGathering.of(
    config,
    total,
    options.outputDir,
    options.maxCandles ?? DEFAULT_MAX_POINTS,
    true,
    spill,
  );
  const fee = config.fills.feePerContractPerSide ?? contract.feePerSide;
  // As a whole run with its output folder: decisions.csv is written as the decisions come, none kept.
  const decisionRows = decisionsCsvRowsIn(options.outputDir, options.decisions ?? true, contract.grid);
  const pieces = importChunks(cache, file, info, from, to, options.pieceBars ?? Number.POSITIVE_INFINITY);
  const sample = (bars: BarColumns) => gathering.sampleSpacing(bars);
  // A history without segments: the options of its gaps only.
  const continuity = continuityOptions(config, { bars: EMPTY_BARS, timeframe: config.timeframe, description });
  let result: BacktestRunResult;
  try {
    result = runStreamedBacktest({
      contract,
      chunks: coarser === undefined ? sampled(pieces, sample) : aggregated(pieces, coarser, sample),
      total,
      dataTimeframe: config.timeframe,
      timeframe: config.timeframe,
      strategy: options.strategy,
      params: config.strategy.params,
      account: config.account,
      risk: config.risk,
      ...configuredMarketHours(config, contract),
      fills: fillOptions(config.fills, fee),
      recordEquity: true,
      spill,
      ...(options.decisions === undefined ? {} : { recordDecisions: options.decisions }),
      continuity,
      ...(options.logger ? { logger: options.logger } : {}),
      ...(options.onProgress ? { onProgress: options.onProgress } : {}),
      onBars: (bars, equity, records) => gathering.add(bars, equity, records),
      ...(decisionRows === undefined ? {} : { onDecision: (record: DecisionRecord) => decisionRows.add(record) }),
    });
  } catch (error) {
    gathering.rows.discard();
    decisionRows?.discard();
    throw error;
  }
  decisionRows?.finish();
  const equityRows = gathering.rows.finish();
  return {
    result,
    gathering,
    total,
    description,
    changes,
    fee,
    equityRows,
    decisionRows,
  };
}

/** The outcome of a streamed run: its report input (without bars), statistics and warnings. */
function streamedOutcome(
  run: StreamedRun,
  config: BacktestConfig,
  name: string,
  contract: BacktestContract,
  options: StreamedOptions,
): BacktestOutcome {
  const { result, gathering, total, description, changes } = run;
  const strategy = options.strategy;
  const data = config.data as Extract<BacktestConfig['data'], { source: 'csv' }>;
  const warnings: string[] = [];
  const spacing = spacingWarning(
    { time: Float64Array.from(gathering.sample) },
    data.timeframe,
    description.split(',')[0]!,
  );
  if (spacing !== undefined) {
    warnings.push(spacing);
    options.logger?.warn(spacing);
  }
  const level = priceLevelWarning(gathering.closes, contract.grid.tickSize, contract, description.split(',')[0]!);
  if (level !== undefined) {
    warnings.push(level);
    options.logger?.warn(level);
  }
  const params = parseParams(strategy, config.strategy.params) as Record<string, unknown>;
  const notes = leftOut(strategy, params, options.evaluation ?? accountEvaluation(config.account, name), total);
  for (const note of notes) options.logger?.info(note);
  const title = config.title ?? `${name}: ${strategy.name} on ${contract.name} ${timeframeLabel(config.timeframe)}`;
  const span = { first: gathering.first, last: gathering.last, count: total };
  // Trades the run closed after its last bar (the position left open at the end) close on that bar.
  gathering.excursions!.add(EMPTY_BARS, result.tradeList, Number.NaN);
  const report: ReportInput = {
    title,
    ...runReportFields(result, contract),
    bars: EMPTY_BARS,
    strategy: { name: strategy.name, params },
    data: description,
    rolls: changes.filter((r) => r.time >= span.first && r.time <= span.last),
    timeframe: timeframeLabel(config.timeframe),
    overlays: [],
    ...(run.decisionRows === undefined ? {} : { decisionTally: run.decisionRows.tally }),
    config: reportConfig(config, contract, strategy, params, description, span, run.fee),
    streamed: { ...span, chart: gathering.candles.result(contract.grid), excursions: gathering.excursions!.result() },
    notes,
  };
  return {
    name,
    title,
    contract,
    history: { bars: EMPTY_BARS, timeframe: config.timeframe, description, rolls: changes },
    result,
    report,
    statistics: streamedStatistics(report, gathering.figures(), gathering.calendar),
    outputs: config.outputs,
    warnings,
    ...(gathering.equityFile === undefined ? { equityRows: run.equityRows! } : { equityFile: gathering.equityFile }),
    ...(run.decisionRows === undefined ? {} : { decisionsFile: run.decisionRows.file }),
  };
}

function* sampled(chunks: Iterable<BarColumns>, sample: (bars: BarColumns) => void): Generator<BarColumns> {
  for (const chunk of chunks) {
    sample(chunk);
    yield chunk;
  }
}

function sameTimeframe(a: Timeframe, b: Timeframe): boolean {
  return a.unit === b.unit && a.unitNumber === b.unitNumber;
}

const EMPTY_BARS: BarColumns = {
  time: new Float64Array(0),
  open: new Float64Array(0),
  high: new Float64Array(0),
  low: new Float64Array(0),
  close: new Float64Array(0),
  volume: new Float64Array(0),
};

/** The lines saying what a streamed report leaves out, and why. */
function leftOut(strategy: StrategyModule, params: unknown, evaluation: unknown, bars: number): string[] {
  const notes: string[] = [];
  const plots = strategy.plots?.(params) ?? [];
  if (plots.length > 0) {
    notes.push(
      `The strategy's plots (${plots.map((p) => p.name).join(', ')}) are left out of the chart: the run streamed its ${bars} bars from the bar cache and a plot reads whole columns (set data.stream: false to draw them).`,
    );
  }
  if (evaluation !== undefined) {
    notes.push(
      'The evaluation is left out: the run streamed its bars from the bar cache and an evaluation reads every bar (set data.stream: false to run it).',
    );
  }
  return notes;
}
