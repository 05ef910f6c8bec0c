/**
 * Figure 14: a backtest of tens of millions of one-minute bars read from the bar cache (a `tickline
 * import`, written here at run time into a temporary folder, never committed), `tickline backtest` in a
 * child process with every output: wall time and peak RSS. An import this size streams (data.stream's
 * default above STREAM_AUTO_BARS): the engine takes each stored chunk as it is read, so the bars cost one
 * chunk of memory and what grows is what the run keeps per trade (orders, fills, decisions for the files).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { importSignature } from '../src/adapters/backtest/definition-run.ts';
import { BarCache } from '../src/data/bar-cache.ts';
import { STREAM_AUTO_BARS } from '../src/adapters/backtest/streamed.ts';
import { runCliConfig, type CliRun } from './cli-e2e.ts';
import { CONTRACT, referenceBars } from './reference.ts';

export interface CacheRun extends CliRun {
  readonly bars: number;
  /** Seconds to generate and import the bars (not part of the run). */
  readonly setupSeconds: number;
}

export function runFromCache(bars: number): CacheRun {
  const dir = mkdtempSync(path.join(tmpdir(), 'tickline-bench-cache-'));
  try {
    const started = performance.now();
    // The import is keyed by its source file's size and modification time: this stand-in file is what it
    // was "imported from", so the run reads the cache and never the file.
    const source = path.join(dir, 'bars.csv');
    writeFileSync(source, 't,o,h,l,c,v\n');
    const cache = new BarCache(path.join(dir, 'bars.sqlite'));
    try {
      cache.storeImport(source, importSignature(source, CONTRACT.grid, {}), {
        bars: referenceBars(bars),
        segments: [],
      });
    } finally {
      cache.close();
    }
    const setupSeconds = (performance.now() - started) / 1000;
    const config = path.join(dir, 'cache.yaml');
    writeFileSync(
      config,
      [
        'strategy: { name: sma-cross, params: { fast: 10, slow: 30 } }',
        'contract: ESZ5',
        'data: { source: csv, file: bars.csv, cache: bars.sqlite }',
        'account: { startingBalance: 1000000 }',
        'out: out',
        '',
      ].join('\n'),
    );
    const run = runCliConfig(config, dir);
    if (!run.stdout.includes('(imported)'))
      throw new Error(`the run did not read the import: ${run.stdout.slice(0, 500)}`);
    if (bars > STREAM_AUTO_BARS && !run.stdout.includes('streamed from the bar cache'))
      throw new Error(`the run did not stream the import: ${run.stdout.slice(0, 500)}`);
    return { ...run, bars, setupSeconds };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
