/**
 * The worker thread of a parallel CSV read (csv-parallel.ts): takes the second half of what the reading
 * thread has not yet claimed, and reads it, after the file's header line, into its rows of the shared
 * columns. A failure is an answer too, so the reading thread never waits for a worker that died.
 */
import { closeSync, openSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { PriceGrid } from '../engine/ticks.ts';
import { CsvBarsReader, readRange } from './csv.ts';
import { rowsBefore, sharedColumns, takeSplit, type CsvRangeAnswer, type CsvRangeTask } from './csv-parallel.ts';

const task = workerData as CsvRangeTask;
let answer: CsvRangeAnswer;
try {
  const fd = openSync(task.file, 'r');
  try {
    const split = takeSplit(fd, task);
    const from = Math.min(task.capacity, rowsBefore(split, task));
    const room = sharedColumns(task.memory, task.capacity, from, task.capacity);
    const reader = new CsvBarsReader(
      new PriceGrid(task.tickSize, task.tickValue),
      task.displayName,
      undefined,
      task.options,
      room,
    );
    reader.push(Buffer.from(`${task.header}\n`, 'utf8'));
    readRange(fd, reader, split, task.size, 0);
    const { problems } = reader.finish();
    const part = reader.part();
    // More rows than the room: the reader moved them to memory of its own, which the other thread cannot see.
    answer = {
      ok: true,
      from,
      split,
      count: part.count,
      segments: part.segments,
      problems: problems.length,
      inPlace: part.bars.time.buffer === task.memory,
    };
  } finally {
    closeSync(fd);
  }
} catch (error) {
  answer = { ok: false, error: error instanceof Error ? error.message : String(error) };
}
parentPort!.postMessage(answer);
