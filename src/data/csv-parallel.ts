/**
 * A large CSV file read on two cores: this thread reads the first half while a worker thread reads the
 * second (from the first line that starts past the middle), both into one block of shared memory sized
 * from the file (the second half's rows are then moved down behind the first's: no second copy of the
 * bars). Both halves run the same reader; anything unusual (a problem in either half, a half with more
 * rows than its room, a second half whose first bar is not after the first half's last, a worker that
 * cannot start) reads the whole file again in this thread, which words every problem with its line
 * exactly as a single read does.
 */
import { closeSync, fstatSync, readSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import type { PriceGrid } from '../engine/ticks.ts';
import type { BarColumns } from '../engine/types.ts';
import { workerEntry } from './worker-entry.ts';
import {
  CsvBarsReader,
  openCsv,
  readCsvBars,
  readRange,
  type ContractSegment,
  type CsvBars,
  type CsvOptions,
} from './csv.ts';

/** Below this size one thread is as fast: a worker takes about 0.1 s to start and load its code. */
export const PARALLEL_CSV_BYTES = 64 << 20;

const COLUMNS = ['time', 'open', 'high', 'low', 'close', 'volume'] as const;

/** What the worker reads, and where its rows go. */
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
  /** Six columns of `capacity` rows each; the worker's rows start at row `from`. */
  readonly memory: SharedArrayBuffer;
  readonly capacity: number;
  readonly from: number;
}

export type CsvRangeAnswer =
  | {
      readonly ok: true;
      readonly count: number;
      readonly segments: readonly ContractSegment[];
      readonly problems: number;
      readonly inPlace: boolean;
    }
  | { readonly ok: false; readonly error: string };

/** The bars of a file and how many threads read them (1 for a small file, or after anything unusual). */
export interface LoadedCsvBars extends CsvBars {
  readonly threads: 1 | 2;
}

/** Views of rows [from, to) of the six columns laid out in `memory`. */
export function sharedColumns(memory: SharedArrayBuffer, capacity: number, from: number, to: number): BarColumns {
  const column = (k: number) => new Float64Array(memory, (k * capacity + from) * 8, to - from);
  return { time: column(0), open: column(1), high: column(2), low: column(3), close: column(4), volume: column(5) };
}

/** The bars of a CSV file: read on two cores when it is at least `parallelFrom` bytes, else as `readCsvBars`. */
export async function loadCsvBars(
  file: string,
  grid: PriceGrid,
  displayName = file,
  options: CsvOptions = {},
  parallelFrom = PARALLEL_CSV_BYTES,
): Promise<LoadedCsvBars> {
  const sequential = (): LoadedCsvBars => ({ ...readCsvBars(file, grid, displayName, options), threads: 1 });
  const fd = openCsv(file, displayName);
  let plan: SplitPlan | undefined;
  try {
    plan = splitPlan(fd, fstatSync(fd).size, parallelFrom);
  } finally {
    closeSync(fd);
  }
  if (plan === undefined) return sequential();
  const memory = new SharedArrayBuffer(plan.capacity * COLUMNS.length * 8);
  const second = readInWorker({
    file,
    displayName,
    tickSize: grid.tickSize,
    tickValue: grid.tickValue,
    options,
    header: plan.header,
    start: plan.split,
    end: plan.size,
    memory,
    capacity: plan.capacity,
    from: plan.secondFrom,
  });
  const reader = new CsvBarsReader(
    grid,
    displayName,
    undefined,
    options,
    sharedColumns(memory, plan.capacity, 0, plan.secondFrom),
  );
  let problems: number;
  try {
    const own = openCsv(file, displayName);
    try {
      readRange(own, reader, 0, plan.split, 0);
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
  const first = reader.part();
  const inPlace = first.bars.time.buffer === memory;
  if (problems > 0 || !inPlace || !other.ok || !other.inPlace || other.problems > 0 || first.count + other.count === 0)
    return sequential();
  const all = sharedColumns(memory, plan.capacity, 0, plan.capacity);
  if (other.count > 0 && all.time[plan.secondFrom]! <= reader.lastBarTime) return sequential();
  for (const key of COLUMNS) all[key].copyWithin(first.count, plan.secondFrom, plan.secondFrom + other.count);
  const count = first.count + other.count;
  return {
    bars: sharedColumns(memory, plan.capacity, 0, count),
    segments: joinSegments(first.segments, other.segments, first.count),
    threads: 2,
  };
}

/** The second half's contract changes after the first's, its first one dropped when it only continues the month. */
function joinSegments(
  first: readonly ContractSegment[],
  second: readonly ContractSegment[],
  offset: number,
): ContractSegment[] {
  const out = [...first];
  for (const segment of second) {
    if (out.length > 0 && segment.from === 0 && out[out.length - 1]!.contract === segment.contract) continue;
    out.push({ contract: segment.contract, from: offset + segment.from });
  }
  return out;
}

interface SplitPlan {
  readonly header: string;
  /** Byte where the second half starts (just after the first line break at or past the middle). */
  readonly split: number;
  readonly size: number;
  /** Rows of room for the whole file, and the row where the second half's rows start. */
  readonly capacity: number;
  readonly secondFrom: number;
}

/** Room from the lines of the file's first 64 KB, with a tenth to spare; undefined for a file too small to split. */
function splitPlan(fd: number, size: number, parallelFrom: number): SplitPlan | undefined {
  if (size < parallelFrom) return undefined;
  const head = Buffer.allocUnsafe(Math.min(size, 1 << 16));
  const headBytes = readSync(fd, head, 0, head.length, 0);
  const headerEnd = head.subarray(0, headBytes).indexOf(10);
  const lastInHead = head.subarray(0, headBytes).lastIndexOf(10);
  if (headerEnd < 0 || lastInHead <= headerEnd) return undefined;
  let lines = 0;
  for (let p = headerEnd + 1; p <= lastInHead; p++) if (head[p] === 10) lines++;
  const bytesPerLine = (lastInHead - headerEnd) / lines;
  const middle = Math.max(headerEnd + 1, Math.floor(size / 2));
  // The first line that starts past the middle; when the middle lies in the last line, the last one before it.
  const split = lineStartAfter(fd, middle, size) ?? lineStartBefore(fd, middle, headerEnd + 1);
  if (split === undefined) return undefined;
  const secondFrom = Math.ceil(((split - headerEnd) / bytesPerLine) * 1.1) + 1024;
  const capacity = secondFrom + Math.ceil(((size - split) / bytesPerLine) * 1.1) + 1024;
  return { header: head.toString('utf8', 0, headerEnd).replace(/\r$/, ''), split, size, capacity, secondFrom };
}

/** The start of the first line after byte `from` that has text, or undefined. */
function lineStartAfter(fd: number, from: number, size: number): number | undefined {
  const window = Buffer.allocUnsafe(1 << 16);
  for (let at = from; at < size; at += window.length) {
    const read = readSync(fd, window, 0, Math.min(window.length, size - at), at);
    const nl = window.subarray(0, read).indexOf(10);
    if (nl >= 0) return at + nl + 1 < size ? at + nl + 1 : undefined;
  }
  return undefined;
}

/** The start of the last line beginning after `floor` and before byte `before`, or undefined. */
function lineStartBefore(fd: number, before: number, floor: number): number | undefined {
  const window = Buffer.allocUnsafe(1 << 16);
  for (let end = before; end > floor; end -= window.length) {
    const start = Math.max(floor, end - window.length);
    const read = readSync(fd, window, 0, end - start, start);
    const nl = window.subarray(0, read).lastIndexOf(10);
    if (nl >= 0 && start + nl + 1 > floor) return start + nl + 1;
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
