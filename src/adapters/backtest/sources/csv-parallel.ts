/**
 * A large CSV file read on two cores: this thread reads the first half while a worker thread reads the
 * second (from the first line that starts past the middle), and the worker's columns are appended to
 * this thread's. Both halves run the same reader; anything unusual (a problem in either half, a second
 * half whose first bar is not after the first half's last, a worker that cannot start) reads the whole
 * file again in this thread, which words every problem with its line exactly as a single read does.
 */
import { closeSync, fstatSync, readSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import type { PriceGrid } from '../../../engine/ticks.ts';
import type { BarColumns } from '../../../engine/types.ts';
import { workerEntry } from '../worker-entry.ts';
import { CsvBarsReader, openCsv, readCsvBars, readRange, type ContractSegment, type CsvBars, type CsvOptions } from './csv.ts';

/** Below this size one thread is as fast: a worker takes about 0.1 s to start and load its code. */
export const PARALLEL_CSV_BYTES = 64 << 20;

/** What the worker reads. */
export interface CsvRangeTask {
  readonly file: string;
  readonly displayName: string;
  readonly tickSize: number;
  readonly tickValue: number;
  readonly options: CsvOptions;
  /** The file's first line, without its line break. */
  readonly header: string;
  readonly start: number;
  readonly end: number;
}

export type CsvRangeAnswer =
  | { readonly ok: true; readonly bars: BarColumns; readonly count: number; readonly segments: readonly ContractSegment[]; readonly problems: number }
  | { readonly ok: false; readonly error: string };

/** The bars of a file and how many threads read them (1 for a small file, or after anything unusual). */
export interface LoadedCsvBars extends CsvBars {
  readonly threads: 1 | 2;
}

/** The bars of a CSV file: read on two cores when it is at least `parallelFrom` bytes, else as `readCsvBars`. */
export async function loadCsvBars(file: string, grid: PriceGrid, displayName = file, options: CsvOptions = {}, parallelFrom = PARALLEL_CSV_BYTES): Promise<LoadedCsvBars> {
  const fd = openCsv(file, displayName);
  let halves: { header: string; split: number; size: number } | undefined;
  try {
    halves = splitAfterHeader(fd, fstatSync(fd).size, parallelFrom);
  } finally {
    closeSync(fd);
  }
  if (halves === undefined) return { ...readCsvBars(file, grid, displayName, options), threads: 1 };
  const task: CsvRangeTask = { file, displayName, tickSize: grid.tickSize, tickValue: grid.tickValue, options, header: halves.header, start: halves.split, end: halves.size };
  const second = readInWorker(task);
  const reader = new CsvBarsReader(grid, displayName, undefined, options);
  let problems: number;
  try {
    const own = openCsv(file, displayName);
    try {
      readRange(own, reader, 0, halves.split, halves.size);
      problems = reader.finish().problems.length;
    } finally {
      closeSync(own);
    }
  } catch (error) {
    // A header that names no usable columns fails here: the worker's half is not needed.
    void second.stop();
    throw error;
  }
  const other = await second.answer;
  if (problems > 0 || !other.ok || other.problems > 0 || (other.count > 0 && other.bars.time[0]! <= reader.lastBarTime)) {
    return { ...readCsvBars(file, grid, displayName, options), threads: 1 };
  }
  reader.append(other);
  return { ...reader.end(), threads: 2 };
}

/**
 * The header line and where the second half starts (just after the first line break at or past the
 * middle); undefined when the file is too small to split or has no line break to split at.
 */
function splitAfterHeader(fd: number, size: number, parallelFrom: number): { header: string; split: number; size: number } | undefined {
  if (size < parallelFrom) return undefined;
  const head = Buffer.allocUnsafe(Math.min(size, 1 << 16));
  const headBytes = readSync(fd, head, 0, head.length, 0);
  const headerEnd = head.subarray(0, headBytes).indexOf(10);
  if (headerEnd < 0) return undefined;
  const window = Buffer.allocUnsafe(1 << 16);
  for (let at = Math.max(headerEnd + 1, Math.floor(size / 2)); at < size; at += window.length) {
    const read = readSync(fd, window, 0, Math.min(window.length, size - at), at);
    const nl = window.subarray(0, read).indexOf(10);
    if (nl >= 0) {
      const split = at + nl + 1;
      return split < size ? { header: head.toString('utf8', 0, headerEnd).replace(/\r$/, ''), split, size } : undefined;
    }
  }
  return undefined;
}

/** The worker's answer (a worker that fails to start or exits without one answers `ok: false`), and a way to stop it. */
function readInWorker(task: CsvRangeTask): { readonly answer: Promise<CsvRangeAnswer>; stop(): Promise<unknown> } {
  let worker: Worker | undefined;
  const answer = new Promise<CsvRangeAnswer>((resolve) => {
    try {
      worker = new Worker(workerEntry(import.meta.url, 'csv-worker'), { workerData: task });
    } catch (error) {
      resolve({ ok: false, error: (error as Error).message });
      return;
    }
    worker.once('message', (reply: CsvRangeAnswer) => resolve(reply));
    worker.once('error', (error) => resolve({ ok: false, error: error.message }));
    worker.once('exit', (code) => resolve({ ok: false, error: `the CSV worker exited (${code}) without an answer` }));
  });
  return { answer, stop: async () => worker?.terminate() };
}
