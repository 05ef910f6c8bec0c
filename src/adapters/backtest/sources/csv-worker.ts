/**
 * The worker thread of a parallel CSV read (csv-parallel.ts): reads the byte range it is given, after the
 * file's header line, into columns it hands back without a copy (the buffer is transferred). A failure is
 * an answer too, so the reading thread never waits for a worker that died.
 */
import { closeSync, openSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { PriceGrid } from '../../../engine/ticks.ts';
import { CsvBarsReader, readRange } from './csv.ts';
import type { CsvRangeAnswer, CsvRangeTask } from './csv-parallel.ts';

const task = workerData as CsvRangeTask;
let answer: CsvRangeAnswer;
let transfer: ArrayBuffer[] = [];
try {
  const reader = new CsvBarsReader(new PriceGrid(task.tickSize, task.tickValue), task.displayName, undefined, task.options);
  reader.push(Buffer.from(`${task.header}\n`, 'utf8'));
  const fd = openSync(task.file, 'r');
  try {
    readRange(fd, reader, task.start, task.end, task.end - task.start);
  } finally {
    closeSync(fd);
  }
  const { problems } = reader.finish();
  const part = reader.part();
  answer = { ok: true, bars: part.bars, count: part.count, segments: part.segments, problems: problems.length };
  transfer = [part.bars.time.buffer as ArrayBuffer];
} catch (error) {
  answer = { ok: false, error: error instanceof Error ? error.message : String(error) };
}
parentPort!.postMessage(answer, transfer);
