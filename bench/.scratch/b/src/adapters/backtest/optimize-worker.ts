/**
 * A sweep worker: receives the sweep's context once (the history in shared memory), then runs one job per
 * message and answers with its result. Any failure other than refused parameters ends the sweep.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { runJob, type Job, type SweepContext } from './optimize.ts';

const context = workerData as SweepContext;
const port = parentPort!;

port.on('message', (job: Job) => {
  runJob(context, job).then(
    (result) => port.postMessage({ result }),
    (error: unknown) => port.postMessage({ error: error instanceof Error ? (error.stack ?? error.message) : String(error) }),
  );
});
port.postMessage({ ready: true });
