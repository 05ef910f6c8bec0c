/**
 * The whole command from outside: a generated one-minute CSV (written at run time into a temporary folder,
 * never committed), `tickline backtest` in a child process with every output, wall time and peak RSS;
 * `tickline optimize` on it, as issue 30 states its sweep figure; and the CSV reader alone in this process.
 */
import { spawnSync } from 'node:child_process';
import { createWriteStream, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadCsvBars } from '../src/data/csv-parallel.ts';
import { PriceGrid } from '../src/engine/ticks.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const ES = new PriceGrid(0.25, 12.5);

export interface GeneratedCsv {
  readonly dir: string;
  readonly file: string;
  readonly bars: number;
  dispose(): void;
}

/** A seeded random walk of one-minute ES bars, about 60 bytes a line, written as a stream. */
export async function writeMinuteCsv(bars: number, seed = 17): Promise<GeneratedCsv> {
  const dir = mkdtempSync(path.join(tmpdir(), 'tickline-bench-csv-'));
  const file = path.join(dir, `bars-${bars}.csv`);
  const out = createWriteStream(file);
  let state = seed >>> 0;
  const random = () => (state = (Math.imul(state, 1_664_525) + 1_013_904_223) >>> 0) / 4_294_967_296;
  let time = Date.UTC(2000, 0, 3);
  let price = 8000;
  let block = 't,o,h,l,c,v\n';
  for (let i = 0; i < bars; i++) {
    const open = price;
    const close = Math.max(400, open + Math.round((random() - 0.5) * 8));
    const high = Math.max(open, close) + Math.floor(random() * 3);
    const low = Math.min(open, close) - Math.floor(random() * 3);
    price = close;
    block += `${new Date(time).toISOString().slice(0, 19)}Z,${ES.toPrice(open)},${ES.toPrice(high)},${ES.toPrice(low)},${ES.toPrice(close)},${1 + Math.floor(random() * 500)}\n`;
    time += 60_000;
    if (block.length > 1 << 20) {
      if (!out.write(block)) await once(out, 'drain');
      block = '';
    }
  }
  out.end(block);
  await once(out, 'finish');
  return { dir, file, bars, dispose: () => rmSync(dir, { recursive: true, force: true }) };
}

export interface CliRun {
  readonly wallMs: number;
  readonly maxRssKiB: number;
  readonly exitCode: number;
  readonly stdout: string;
}

/** `tickline backtest` on the file with the reference strategy and every output; exit 0 or 3 (rule break) is a run. */
export function runCliBacktest(csv: GeneratedCsv): CliRun {
  return runCliConfig(referenceConfig(csv, 'e2e.yaml', 'out'), csv.dir);
}

/** A definition of the reference strategy on the file, written beside it as `name`, its outputs in `out`. */
function referenceConfig(csv: GeneratedCsv, name: string, out: string): string {
  const config = path.join(csv.dir, name);
  writeFileSync(
    config,
    [
      'strategy: { name: sma-cross, params: { fast: 10, slow: 30 } }',
      'contract: ESZ5',
      `data: { source: csv, file: ${path.basename(csv.file)} }`,
      'account: { startingBalance: 1000000 }',
      `out: ${out}`,
      '',
    ].join('\n'),
  );
  return config;
}

export interface CliSweep {
  readonly wallMs: number;
  /** The sweep's rows (out/optimize.csv), the same whatever the lanes. */
  readonly rows: string;
}

/**
 * `tickline optimize` over `grid` on the file, in a child process on `workers` lanes, timed from outside:
 * the process's start, the file's read, the pool's start and the outputs included.
 */
export function runCliOptimize(
  csv: GeneratedCsv,
  grid: Readonly<Record<string, readonly number[]>>,
  workers: number,
): CliSweep {
  const config = referenceConfig(csv, 'optimize.yaml', 'sweep-out');
  const gridFlags = Object.entries(grid).flatMap(([name, values]) => ['--grid', `${name}=${values.join(',')}`]);
  const started = performance.now();
  const child = spawnSync(
    process.execPath,
    [path.join(ROOT, 'bin/tickline.js'), 'optimize', '--config', config, ...gridFlags, '--workers', String(workers)],
    { cwd: csv.dir, encoding: 'utf8', maxBuffer: 64 << 20 },
  );
  const wallMs = performance.now() - started;
  if (child.status !== 0)
    throw new Error(`tickline optimize failed (exit ${child.status}): ${(child.stderr ?? '').slice(-2000)}`);
  return { wallMs, rows: readFileSync(path.join(csv.dir, 'sweep-out', 'optimize.csv'), 'utf8') };
}

/** `tickline backtest --config <config>` in a child process, timed from outside, with its peak RSS. */
export function runCliConfig(config: string, cwd: string): CliRun {
  const started = performance.now();
  const child = spawnSync(
    process.execPath,
    [
      '--require',
      path.join(import.meta.dirname, 'report-rss.cjs'),
      path.join(ROOT, 'bin/tickline.js'),
      'backtest',
      '--config',
      config,
    ],
    {
      cwd,
      encoding: 'utf8',
      maxBuffer: 64 << 20,
    },
  );
  const wallMs = performance.now() - started;
  const rss = /MAXRSS_KIB (\d+)/.exec(child.stderr ?? '');
  if (rss === null || (child.status !== 0 && child.status !== 3))
    throw new Error(`tickline backtest failed (exit ${child.status}): ${(child.stderr ?? '').slice(-2000)}`);
  return { wallMs, maxRssKiB: Number(rss[1]), exitCode: child.status!, stdout: child.stdout ?? '' };
}

/** The CSV reader alone, as the command reads a file (on two cores when it is large): median bars/s over `reps` reads. */
export async function measureCsvParse(csv: GeneratedCsv, reps = 3): Promise<{ barsPerSecond: number; ms: number }> {
  const times: number[] = [];
  for (let r = 0; r < reps; r++) {
    const started = performance.now();
    const { bars } = await loadCsvBars(csv.file, ES);
    times.push(performance.now() - started);
    if (bars.time.length !== csv.bars) throw new Error(`read ${bars.time.length} bars, wrote ${csv.bars}`);
  }
  times.sort((a, b) => a - b);
  const ms = times[Math.floor(times.length / 2)]!;
  return { barsPerSecond: (csv.bars / ms) * 1000, ms };
}
