/**
 * The worker thread of a parallel CSV read (csv-parallel.ts): reads the parts it takes over from the
 * reading thread, each after the file's header line, into their rows of the shared columns. A failure is
 * an answer too, so the reading thread never waits for a worker that died.
 */
import { closeSync, openSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { readParts, type CsvRangeAnswer, type CsvRangeTask } from './csv-parallel.ts';

const task = workerData as CsvRangeTask;
let answer: CsvRangeAnswer;
try {
  const fd = openSync(task.file, 'r');
  try {
    answer = { ok: true, parts: readParts(fd, 1, task, undefined, true) };
  } finally {
    closeSync(fd);
  }
} catch (error) {
  answer = { ok: false, error: error instanceof Error ? error.message : String(error) };
}
parentPort!.postMessage(answer);
