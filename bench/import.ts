/**
 * Figure 12 of `npm run bench`: reading a bar file again. The CSV reader (figure 9) against the same bars
 * read back from a `tickline import` (the bar cache's imported_chunks) and from a Parquet file through
 * DuckDB (the Parquet reader of src/data/parquet.ts). Each read must give the CSV
 * reader's bars exactly.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { BarCache } from '../src/data/bar-cache.ts';
import { readCsvBars } from '../src/data/csv.ts';
import { readParquetBars } from '../src/data/parquet.ts';
import { PriceGrid } from '../src/engine/ticks.ts';
import type { BarColumns } from '../src/engine/types.ts';
import type { GeneratedCsv } from './cli-e2e.ts';

const ES = new PriceGrid(0.25, 12.5);

export interface ReadFigures {
  readonly bars: number;
  /** Median ms of reading the stored import. */
  readonly importMs: number;
  /** Median ms of reading the Parquet file. */
  readonly parquetMs: number;
  readonly parquetBytes: number;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[sorted.length >> 1]!;
}

function sameBars(a: BarColumns, b: BarColumns, what: string): void {
  for (const key of ['time', 'open', 'high', 'low', 'close', 'volume'] as const) {
    if (a[key].length !== b[key].length)
      throw new Error(`${what}: ${b[key].length} bars, the CSV reader ${a[key].length}`);
    for (let i = 0; i < a[key].length; i++)
      if (a[key][i] !== b[key][i]) throw new Error(`${what}: ${key}[${i}] differs from the CSV reader's`);
  }
}

export async function measureFileReads(csv: GeneratedCsv, reps = 3): Promise<ReadFigures> {
  const dir = mkdtempSync(path.join(tmpdir(), 'tickline-bench-read-'));
  try {
    const parsed = readCsvBars(csv.file, ES);
    const cache = new BarCache(path.join(dir, 'bars.sqlite'));
    const importTimes: number[] = [];
    try {
      cache.storeImport(csv.file, 'bench', parsed);
      for (let r = 0; r < reps; r++) {
        const started = performance.now();
        const loaded = cache.loadImport(csv.file, 'bench')!;
        importTimes.push(performance.now() - started);
        if (r === 0) sameBars(parsed.bars, loaded.bars, 'import');
      }
    } finally {
      cache.close();
    }
    const parquet = path.join(dir, 'bars.parquet');
    const { DuckDBInstance } = await import('@duckdb/node-api');
    const instance = await DuckDBInstance.create(':memory:');
    const connection = await instance.connect();
    try {
      await connection.run(
        `COPY (SELECT t::TIMESTAMPTZ AS t, o, h, l, c, v FROM read_csv('${csv.file}', header = true, columns = {'t': 'VARCHAR', 'o': 'DOUBLE', 'h': 'DOUBLE', 'l': 'DOUBLE', 'c': 'DOUBLE', 'v': 'BIGINT'})) TO '${parquet}' (FORMAT parquet)`,
      );
    } finally {
      connection.closeSync();
      instance.closeSync();
    }
    const parquetTimes: number[] = [];
    for (let r = 0; r < reps; r++) {
      const started = performance.now();
      const read = await readParquetBars(parquet, ES);
      parquetTimes.push(performance.now() - started);
      if (r === 0) sameBars(parsed.bars, read.bars, 'Parquet');
    }
    const { size } = await import('node:fs').then((fs) => fs.statSync(parquet));
    return { bars: csv.bars, importMs: median(importTimes), parquetMs: median(parquetTimes), parquetBytes: size };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
