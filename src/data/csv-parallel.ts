/**
 * A large CSV file read on two cores: this thread and a worker thread read parts of it into one block of
 * shared memory sized from the file, each part's rows at a row estimated from where the part starts (then
 * moved down behind the previous part's: no second copy of the bars). Every part runs the same reader;
 * anything unusual (a problem in any part, a part with more rows than its room, a part whose first bar is
 * not after the previous part's last, a worker that cannot start) reads the whole file again in this
 * thread, which words every problem with its line exactly as a single read does.
 *
 * The file is taken a step (1 MB) at a time, each step claimed in shared words before it is read, and a
 * thread with nothing left takes the second half of what the other has not yet claimed: the worker, once
 * it runs (50 ms after it is started on an idle machine, several times that on a busy one), takes half of
 * this thread's rest, and whichever thread a busy host slows down later has its rest shared again. Both
 * then finish about together however the host shares its cores, at the cost of a part (its room and its
 * move) per hand-over.
 */
import { closeSync, fstatSync, readSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { PriceGrid } from '../engine/ticks.ts';
import type { BarColumns } from '../engine/types.ts';
import { threadExecArgv, workerEntry } from './worker-entry.ts';
import { CsvBarsReader, openCsv, readCsvBars, type ContractSegment, type CsvBars, type CsvOptions } from './csv.ts';

/** Below this size one thread is as fast: a worker takes about 0.1 s to start and load its code. */
export const PARALLEL_CSV_BYTES = 64 << 20;

/** What a thread claims at a time, and reads in one call. */
const STEP_BYTES = 1 << 20;

/**
 * How a parallel read splits the file: the step, and, for tests, a split set before either thread starts:
 * this thread keeps `firstSteps` steps and half of the rest and takes nothing of the worker's (which may
 * still take some of this thread's), so that a test knows what the worker reads first.
 */
export interface CsvSplit {
  readonly stepBytes?: number;
  readonly firstSteps?: number;
}

const COLUMNS = ['time', 'open', 'high', 'low', 'close', 'volume'] as const;

/** What the worker needs to read parts of the file, and where their rows go. */
export interface CsvRangeTask extends PartContext {
  readonly file: string;
}

/** What either thread needs to read a part. */
export interface PartContext {
  readonly displayName: string;
  readonly tickSize: number;
  readonly tickValue: number;
  readonly options: CsvOptions;
  /** The file's first line, without its line break. */
  readonly header: string;
  /** The file's size, where the line after the header starts, and its bytes per line (of its first 64 KB). */
  readonly size: number;
  readonly dataStart: number;
  readonly bytesPerLine: number;
  readonly stepBytes: number;
  /** The claims of both threads (`takeWork`). */
  readonly claims: SharedArrayBuffer;
  /** Six columns of `capacity` rows each. */
  readonly memory: SharedArrayBuffer;
  readonly capacity: number;
}

/** One part as read: bytes from `start`, rows from row `from` of the shared columns. */
export interface PartRead {
  readonly start: number;
  readonly from: number;
  readonly count: number;
  readonly segments: readonly ContractSegment[];
  readonly problems: number;
  /** False when the part had more rows than its room and its reader moved them to memory of its own. */
  readonly inPlace: boolean;
}

export type CsvRangeAnswer =
  | { readonly ok: true; readonly parts: readonly PartRead[] }
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
  const claims = newClaims(Math.ceil(plan.size / stepBytes), split.firstSteps);
  const context: PartContext = {
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
  };
  const second = readInWorker({ ...context, file });
  // This thread's first part reads the header from the file and has the whole room: whether its rows
  // stayed below the next part's is checked once every part is read.
  const reader = new CsvBarsReader(
    grid,
    displayName,
    undefined,
    options,
    sharedColumns(memory, plan.capacity, 0, plan.capacity),
  );
  let own: readonly PartRead[];
  try {
    const fd = openCsv(file, displayName);
    try {
      own = readParts(fd, 0, context, reader, split.firstSteps === undefined);
    } finally {
      closeSync(fd);
    }
  } catch (error) {
    // A header that names no usable columns fails here: the worker's parts are not needed.
    void second.stop();
    throw error;
  }
  const failed = own.some((part) => part.problems > 0 || !part.inPlace);
  // This thread has taken every step: a worker that never took a part never will, and is not waited for.
  if (failed || Atomics.load(claims, limitAt(1)) === 0) {
    void second.stop();
    return failed ? sequential() : joinParts(memory, plan.capacity, own, 1, sequential);
  }
  const other = await second.answer;
  if (!other.ok) return sequential();
  const threads = other.parts.some((part) => part.count > 0) ? 2 : 1;
  return joinParts(memory, plan.capacity, [...own, ...other.parts], threads, sequential);
}

/**
 * The parts' rows moved down into one run of rows, in the file's order, with their contract changes; the
 * whole file read again (`sequential`) when a part had problems or more rows than its room, or when a
 * part's first bar is not after the previous part's last.
 */
export function joinParts(
  memory: SharedArrayBuffer,
  capacity: number,
  read: readonly PartRead[],
  threads: 1 | 2,
  sequential: () => LoadedCsvBars,
): LoadedCsvBars {
  if (read.some((part) => part.problems > 0 || !part.inPlace)) return sequential();
  // An empty part may start where the next one does, with the same room.
  const parts = read.filter((part) => part.count > 0).sort((a, b) => a.start - b.start);
  for (let k = 0; k + 1 < parts.length; k++)
    if (parts[k]!.from + parts[k]!.count > parts[k + 1]!.from) return sequential();
  const all = sharedColumns(memory, capacity, 0, capacity);
  let count = 0;
  let lastTime = Number.NEGATIVE_INFINITY;
  let segments: ContractSegment[] = [];
  for (const part of parts) {
    if (all.time[part.from]! <= lastTime) return sequential();
    lastTime = all.time[part.from + part.count - 1]!;
    // The rows below are read: the move goes down (count <= from) and ends below the next part's room.
    if (part.from !== count) for (const key of COLUMNS) all[key].copyWithin(count, part.from, part.from + part.count);
    segments = joinSegments(segments, part.segments, count);
    count += part.count;
  }
  if (count === 0) return sequential();
  return { bars: sharedColumns(memory, capacity, 0, count), segments, threads };
}

/*
 * The claims: a lock word, then for each thread (0 this one, 1 the worker) the next step it will read and
 * the step where its part ends (it reads its part's last line on past that step's start). A part is a run
 * of steps [next, end); taking over a thread's rest lowers its end.
 */
const LOCK = 0;
const nextAt = (thread: 0 | 1) => 1 + 2 * thread;
const limitAt = (thread: 0 | 1) => 2 + 2 * thread;

/** Claims for a file of `steps` steps: all of them this thread's, or split as a test's `firstSteps` says. */
export function newClaims(steps: number, firstSteps?: number): Int32Array {
  const claims = new Int32Array(new SharedArrayBuffer(5 * 4));
  if (firstSteps === undefined) {
    claims[limitAt(0)] = steps;
    return claims;
  }
  const split = Math.min(steps, firstSteps + Math.ceil((steps - Math.min(steps, firstSteps)) / 2));
  claims[limitAt(0)] = split;
  claims[nextAt(1)] = split;
  claims[limitAt(1)] = steps;
  return claims;
}

/** What a thread reads next: a step of its part; or, its part read up to `end`, a new part from `from`; or nothing more. */
export type Take =
  | { readonly kind: 'step'; readonly step: number }
  | { readonly kind: 'part'; readonly end: number; readonly from: number }
  | { readonly kind: 'done'; readonly end: number };

/**
 * The next step of `thread`'s part, or, when its part is all claimed, the second half of the other's rest
 * (unless `takeOver` is false), of which it claims the first step at once.
 */
export function takeWork(claims: Int32Array, thread: 0 | 1, takeOver = true): Take {
  lock(claims);
  try {
    const next = claims[nextAt(thread)]!;
    const end = claims[limitAt(thread)]!;
    if (next < end) {
      claims[nextAt(thread)] = next + 1;
      return { kind: 'step', step: next };
    }
    const other = thread === 0 ? 1 : 0;
    const otherNext = claims[nextAt(other)]!;
    const otherEnd = claims[limitAt(other)]!;
    // The other keeps at least the step after its last claimed one: a part of one step is not worth a move.
    const from = otherNext + Math.ceil((otherEnd - otherNext) / 2);
    if (!takeOver || from >= otherEnd) return { kind: 'done', end };
    claims[limitAt(other)] = from;
    claims[nextAt(thread)] = from + 1;
    claims[limitAt(thread)] = otherEnd;
    return { kind: 'part', end, from };
  } finally {
    Atomics.store(claims, LOCK, 0);
    Atomics.notify(claims, LOCK, 1);
  }
}

function lock(claims: Int32Array): void {
  // Held for a few instructions: spin, and only sleep (1 ms at most) when the holder is not running.
  for (let spins = 0; Atomics.compareExchange(claims, LOCK, 0, 1) !== 0; spins++)
    if (spins > 100) Atomics.wait(claims, LOCK, 1, 1);
}

/**
 * One thread's reading: step after step of its part, then of each part it takes over, until nothing is
 * left to take. `first`, this thread's reader of the file from its start (rows from row 0); the worker
 * starts with no part.
 */
export function readParts(
  fd: number,
  thread: 0 | 1,
  context: PartContext,
  first: CsvBarsReader | undefined,
  takeOver: boolean,
): PartRead[] {
  const claims = new Int32Array(context.claims);
  const grid = new PriceGrid(context.tickSize, context.tickValue);
  const headerLine = Buffer.from(`${context.header}\n`, 'utf8');
  const chunk = Buffer.allocUnsafe(Math.min(context.stepBytes, context.size));
  const parts: PartRead[] = [];
  let reader = first;
  let start = 0;
  let from = 0;
  let position = 0;
  const readTo = (to: number) => {
    while (position < to) {
      const read = readSync(fd, chunk, 0, Math.min(chunk.length, to - position), position);
      if (read === 0) break;
      position += read;
      reader!.push(chunk.subarray(0, read));
    }
  };
  const begin = (step: number) => {
    start = lineStartFrom(fd, step * context.stepBytes, context);
    from = Math.min(context.capacity, rowsBefore(start, context));
    const room = sharedColumns(context.memory, context.capacity, from, context.capacity);
    reader = new CsvBarsReader(grid, context.displayName, undefined, context.options, room);
    reader.push(headerLine);
    position = start;
  };
  const finish = (end: number) => {
    readTo(lineStartFrom(fd, end * context.stepBytes, context));
    const { problems } = reader!.finish();
    const part = reader!.part();
    const inPlace = part.bars.time.buffer === context.memory;
    parts.push({ start, from, count: part.count, segments: part.segments, problems: problems.length, inPlace });
    reader = undefined;
  };
  for (;;) {
    const take = takeWork(claims, thread, takeOver);
    if (take.kind === 'step') {
      if (reader === undefined) begin(take.step);
      readTo(Math.min(context.size, (take.step + 1) * context.stepBytes));
      // The whole file is read again anyway: the rest of the steps are left unclaimed.
      if (reader!.full) {
        finish(take.step + 1);
        return parts;
      }
      continue;
    }
    if (reader !== undefined) finish(take.end);
    if (take.kind === 'done') return parts;
    begin(take.from);
    readTo(Math.min(context.size, (take.from + 1) * context.stepBytes));
  }
}

/** The first line start at or after byte `at` (never inside the header), or the file's size. */
function lineStartFrom(fd: number, at: number, plan: { readonly size: number; readonly dataStart: number }): number {
  if (at <= plan.dataStart) return plan.dataStart;
  if (at >= plan.size) return plan.size;
  return lineStartAfter(fd, at - 1, plan.size) ?? plan.size;
}

/** The row where a part's rows start when it starts at byte `start`: room for the rows before, with a tenth to spare. */
export function rowsBefore(start: number, plan: { readonly dataStart: number; readonly bytesPerLine: number }): number {
  return Math.ceil(((start - plan.dataStart) / plan.bytesPerLine) * 1.1) + 1024;
}

/** A part's contract changes after the previous parts', its first one dropped when it only continues the month. */
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
  /** Of the file's first 64 KB, the basis of the room: a part's rows start at `rowsBefore(start)`. */
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
  // Wherever a part starts, its rows start at rowsBefore(start) and need a tenth more than theirs.
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
      worker = new Worker(workerEntry(import.meta.url, 'csv-worker'), {
        workerData: task,
        execArgv: threadExecArgv(process.execArgv),
      });
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
