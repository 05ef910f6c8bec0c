/**
 * The worker thread of a parallel CSV read (csv-parallel.ts): reads the byte range it is given, after the
 * file's header line, into its rows of the shared columns. A failure is an answer too, so the reading
 * thread never waits for a worker that died.
 */
import { closeSync, openSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { PriceGrid } from '../engine/ticks.ts';
import { CsvBarsReader, readRange } from './csv.ts';
import { sharedColumns, type CsvRangeAnswer, type CsvRangeTask } from './csv-parallel.ts';

const task = workerData as CsvRangeTask;
let answer: CsvRangeAnswer;
try {
  const room = sharedColumns(task.memory, task.capacity, task.from, task.capacity);
  const reader = new CsvBarsReader(
    new PriceGrid(task.tickSize, task.tickValue),
    task.displayName,
    undefined,
    task.options,
    room,
  );
  reader.push(Buffer.from(`${task.header}\n`, 'utf8'));
  const fd = openSync(task.file, 'r');
  try {
    readRange(fd, reader, task.start, task.end, 0);
  } finally {
    closeSync(fd);
  }
  const { problems } = reader.finish();
  const part = reader.part();
  // More rows than the room: the reader moved them to memory of its own, which the other thread cannot see.
  answer = {
    ok: true,
    count: part.count,
    segments: part.segments,
    problems: problems.length,
    inPlace: part.bars.time.buffer === task.memory,
  };
} catch (error) {
  answer = { ok: false, error: error instanceof Error ? error.message : String(error) };
}
parentPort!.postMessage(answer);
