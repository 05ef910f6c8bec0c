/**
 * A large CSV file read on two cores: this thread reads from the start while a worker thread reads the rest
 * (from a line start the worker picks once it runs), both into one block of shared memory sized from the
 * file (the worker's rows are then moved down behind this thread's: no second copy of the bars). Both parts
 * run the same reader; anything unusual (a problem in either part, a part with more rows than its room, a
 * worker's first bar not after this thread's last, a worker that cannot start) reads the whole file again in
 * this thread, which words every problem with its line exactly as a single read does.
 *
 * Where the file is split is decided when the worker starts, not before: a worker takes 50 ms to start on
 * an idle machine and several times that on a busy one, all of it time this thread spends reading. This
 * thread takes the file a step (1 MB) at a time, each step claimed in a shared word before it is read; the
 * worker, once running, halves what is left after the steps claimed so far and sets the split there (one
 * compare-and-swap on the same word), so both finish about together however late the worker started.
 */
import { closeSync, fstatSync, readSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import type { PriceGrid } from '../engine/ticks.ts';
import type { BarColumns } from '../engine/types.ts';
import { workerEntry } from './worker-entry.ts';
import { CsvBarsReader, openCsv, readCsvBars, type ContractSegment, type CsvBars, type CsvOptions } from './csv.ts';

/** Below this size one thread is as fast: a worker takes about 0.1 s to start and load its code. */
export const PARALLEL_CSV_BYTES = 64 << 20;

/** What this thread claims at a time, and reads in one call. */
const STEP_BYTES = 1 << 20;

/**
 * How a parallel read splits the file: the step, and, for tests, how many steps this thread claims before
 * it leaves the split to the worker (which then halves the rest), so that a test can place the split.
 */
export interface CsvSplit {
  readonly stepBytes?: number;
  readonly firstSteps?: number;
}

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
  /** The file's size, and where the line after the header starts. */
  readonly size: number;
  readonly dataStart: number;
  readonly bytesPerLine: number;
  readonly stepBytes: number;
  /** Steps claimed by this thread (>= 0), or the split's step once decided (-step - 1): see `takeSplit`. */
  readonly claims: SharedArrayBuffer;
  /** Six columns of `capacity` rows each; the worker's rows start at the row it picks (`rowsBefore`). */
  readonly memory: SharedArrayBuffer;
  readonly capacity: number;
}

export type CsvRangeAnswer =
  | {
      readonly ok: true;
      /** The worker's first row in the columns, and how many it read (from the byte `split` to the end). */
      readonly from: number;
      readonly split: number;
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
  split: CsvSplit = {},
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
  const stepBytes = Math.max(1, Math.floor(split.stepBytes ?? STEP_BYTES));
  const memory = new SharedArrayBuffer(plan.capacity * COLUMNS.length * 8);
  const claims = new Int32Array(new SharedArrayBuffer(4));
  const second = readInWorker({
    file,
    displayName,
    tickSize: grid.tickSize,
    tickValue: grid.tickValue,
    options,
    header: plan.header,
    size: plan.size,
    dataStart: plan.dataStart,
    bytesPerLine: plan.bytesPerLine,
    stepBytes,
    claims: claims.buffer as SharedArrayBuffer,
    memory,
    capacity: plan.capacity,
  });
  // The whole room: whether this thread's rows stayed below the worker's is checked once both are done.
  const reader = new CsvBarsReader(
    grid,
    displayName,
    undefined,
    options,
    sharedColumns(memory, plan.capacity, 0, plan.capacity),
  );
  let problems: number;
  let alone: boolean;
  try {
    const own = openCsv(file, displayName);
    try {
      alone = await readClaimedSteps(own, reader, claims, plan, stepBytes, split.firstSteps, second.answer);
      problems = reader.finish().problems.length;
    } finally {
      closeSync(own);
    }
  } catch (error) {
    // A header that names no usable columns fails here: the worker's part is not needed.
    void second.stop();
    throw error;
  }
  const first = reader.part();
  const inPlace = first.bars.time.buffer === memory;
  if (alone || problems > 0 || !inPlace) {
    // The worker's part is not needed: this thread claimed every step (the worker, whenever it runs, finds
    // nothing left and writes nothing), or the whole file is read again anyway.
    void second.stop();
    if (!alone || problems > 0 || !inPlace || first.count === 0) return sequential();
    return { bars: sharedColumns(memory, plan.capacity, 0, first.count), segments: first.segments, threads: 1 };
  }
  const other = await second.answer;
  // This thread's rows ran into the worker's room: both may have written over the other's.
  if (!other.ok || !other.inPlace || other.problems > 0 || first.count > other.from) return sequential();
  if (first.count + other.count === 0) return sequential();
  const all = sharedColumns(memory, plan.capacity, 0, plan.capacity);
  if (other.count > 0 && all.time[other.from]! <= reader.lastBarTime) return sequential();
  for (const key of COLUMNS) all[key].copyWithin(first.count, other.from, other.from + other.count);
  const count = first.count + other.count;
  return {
    bars: sharedColumns(memory, plan.capacity, 0, count),
    segments: joinSegments(first.segments, other.segments, first.count),
    threads: other.count > 0 ? 2 : 1,
  };
}

/**
 * This thread's part: the file from its start, a step at a time, each step claimed before it is read, up to
 * the split once the worker has set it (or to the end). True when it read the whole file itself. With
 * `firstSteps` it stops claiming after that many steps and waits for the worker's split.
 */
async function readClaimedSteps(
  fd: number,
  reader: CsvBarsReader,
  claims: Int32Array,
  plan: SplitPlan,
  stepBytes: number,
  firstSteps: number | undefined,
  workerAnswer: Promise<CsvRangeAnswer>,
): Promise<boolean> {
  const chunk = Buffer.allocUnsafe(Math.min(stepBytes, plan.size));
  let position = 0;
  let end: number | undefined;
  for (let step = 0; position < plan.size; step++) {
    if (end === undefined && firstSteps !== undefined && step >= firstSteps) {
      // Tests only: the worker sets the split; a worker that never does answers, and this thread reads on.
      const waiting = (Atomics as unknown as AtomicsWaitAsync).waitAsync(claims, 0, step);
      if (waiting.async) {
        await Promise.race([waiting.value, workerAnswer]);
        Atomics.notify(claims, 0);
      }
    }
    if (end === undefined) {
      const seen = Atomics.compareExchange(claims, 0, step, step + 1);
      if (seen !== step) end = splitAt(fd, -seen - 1, stepBytes, plan);
    }
    const to = Math.min(plan.size, end ?? (step + 1) * stepBytes);
    if (position >= to) break;
    // The split may lie several steps past the last claimed one: read on up to it.
    while (position < to) {
      const read = readSync(fd, chunk, 0, Math.min(chunk.length, to - position), position);
      if (read === 0) break;
      position += read;
      reader.push(chunk.subarray(0, read));
      if (reader.full) return false;
    }
  }
  return end === undefined;
}

/** `Atomics.waitAsync` (Node 16 and later), which this TypeScript's library does not declare. */
interface AtomicsWaitAsync {
  waitAsync(
    array: Int32Array,
    index: number,
    value: number,
  ): { readonly async: false; readonly value: string } | { readonly async: true; readonly value: Promise<string> };
}

/**
 * The worker's side of the split: claims the second half of what this thread has not claimed (or nothing,
 * when this thread has claimed every step), and returns the byte where its part starts (the file's size for
 * nothing). Wakes a waiting test.
 */
export function takeSplit(fd: number, task: CsvRangeTask): number {
  const claims = new Int32Array(task.claims);
  const steps = Math.ceil(task.size / task.stepBytes);
  let seen = Atomics.load(claims, 0);
  for (;;) {
    if (seen < 0) return task.size;
    const step = seen + Math.ceil((steps - seen) / 2);
    const before = Atomics.compareExchange(claims, 0, seen, -step - 1);
    if (before === seen) {
      Atomics.notify(claims, 0);
      return splitAt(fd, step, task.stepBytes, task);
    }
    seen = before;
  }
}

/** The first line start at or after step `step` (never inside the header), or the file's size. */
function splitAt(
  fd: number,
  step: number,
  stepBytes: number,
  plan: { readonly size: number; readonly dataStart: number },
): number {
  const at = step * stepBytes;
  if (at <= plan.dataStart) return plan.dataStart;
  if (at >= plan.size) return plan.size;
  return lineStartAfter(fd, at - 1, plan.size) ?? plan.size;
}

/** The row where the worker's rows start when its part starts at byte `split`: room for this thread's, with a tenth to spare. */
export function rowsBefore(split: number, plan: { readonly dataStart: number; readonly bytesPerLine: number }): number {
  return Math.ceil(((split - plan.dataStart) / plan.bytesPerLine) * 1.1) + 1024;
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
  readonly size: number;
  /** Where the line after the header starts. */
  readonly dataStart: number;
  /** Of the file's first 64 KB, the basis of the room: the worker's rows start at `rowsBefore(split)`. */
  readonly bytesPerLine: number;
  /** Rows of room for the whole file. */
  readonly capacity: number;
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
  const dataStart = headerEnd + 1;
  // Wherever the split falls, the worker's rows start at rowsBefore(split) and need a tenth more than theirs.
  const capacity = rowsBefore(size, { dataStart, bytesPerLine }) + 1024;
  return { header: head.toString('utf8', 0, headerEnd).replace(/\r$/, ''), size, dataStart, bytesPerLine, capacity };
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
