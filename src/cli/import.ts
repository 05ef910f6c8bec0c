/**
 * `tickline import`: parse a backtest definition's CSV file once (its column map, time zone and the
 * contract's tick grid) and store the bars in the local bar cache. Backtests, sweeps and evaluations of
 * that file then read the stored columns instead of parsing the text again, until the file (size or
 * modification time) or the way it is read changes.
 */
import path from 'node:path';
import { configuredContract, csvOptionsOf, importSignature, readBarFile } from '../adapters/backtest/definition-run.ts';
import { DEFAULT_BAR_CACHE } from '../adapters/backtest/backtest-config.ts';
import { BarCache } from '../data/bar-cache.ts';
import { parseCommandArgs } from './args.ts';
import { BACKTEST_FLAGS, backtestArgs, loadBacktestConfig } from './backtest.ts';
import { ExitCode, UsageError } from './exit.ts';

export const summary = "Parse a backtest's CSV or Parquet file once into the local bar cache";

const USAGE = `Usage: tickline import --config <backtest.yaml> [--data <file.csv>] [--cache <file>]

Reads the definition's CSV or Parquet file (data.source: csv, with data.columns and data.timeZone, prices on the
contract's tick grid) and stores its bars in the bar cache (data.cache, ${DEFAULT_BAR_CACHE} by default,
or --cache). Later runs of a definition naming the same file read the stored bars: the run's data line
says "(imported)". A changed file, column map, zone or tick size is parsed again as usual.

Exit codes: 0 imported, 2 bad config, arguments or data.`;

export async function run(args: string[]): Promise<number> {
  const values = parseCommandArgs(
    args,
    { config: BACKTEST_FLAGS.config, data: BACKTEST_FLAGS.data, cache: { type: 'string' } },
    USAGE,
  );
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return ExitCode.Ok;
  }
  const { config } = await loadBacktestConfig(backtestArgs({ config: values.config, data: values.data }, USAGE));
  if (config.data.source !== 'csv')
    throw new UsageError(`import reads CSV files: ${values.config} has data.source ${config.data.source}`);
  const contract = configuredContract(config);
  const file = config.data.file;
  const options = csvOptionsOf(config.data);
  const started = Date.now();
  const parsed = await readBarFile(file, contract.grid, path.relative(process.cwd(), file), options);
  const cacheFile =
    values.cache !== undefined ? path.resolve(values.cache) : path.resolve(config.data.cache ?? DEFAULT_BAR_CACHE);
  const cache = new BarCache(cacheFile);
  try {
    cache.storeImport(file, importSignature(file, contract.grid, options), parsed);
  } finally {
    cache.close();
  }
  const n = parsed.bars.time.length;
  const months =
    parsed.segments.length > 0
      ? `, ${parsed.segments.length} contract month(s) (${parsed.segments.map((s) => s.contract).join(', ')})`
      : '';
  process.stdout.write(
    `${path.relative(process.cwd(), file)}: ${n} bars from ${new Date(parsed.bars.time[0]!).toISOString()} to ${new Date(parsed.bars.time[n - 1]!).toISOString()}${months} imported in ${Date.now() - started} ms -> ${cacheFile}\n`,
  );
  return ExitCode.Ok;
}
