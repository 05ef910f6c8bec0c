/**
 * A sweep worker: receives the sweep's context (the history in shared memory) and the jobs, then claims
 * jobs one at a time from the shared counter and answers with each result, until none is left. Any
 * failure other than refused parameters ends the sweep.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { runJob, type SweepWorkerData } from './optimize.ts';

const { context, jobs, claim } = workerData as SweepWorkerData;
const port = parentPort!;
const next = new Int32Array(claim);

try {
  for (let k = Atomics.add(next, 0, 1); k < jobs.length; k = Atomics.add(next, 0, 1)) {
    port.postMessage({ result: await runJob(context, jobs[k]!) });
  }
  port.postMessage({ done: true });
} catch (error) {
  port.postMessage({ error: error instanceof Error ? (error.stack ?? error.message) : String(error) });
}
