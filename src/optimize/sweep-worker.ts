/**
 * A sweep worker of the pool (sweep-pool.ts): runs one job a task, with the history in shared memory.
 * The strategy module and the compiled engine stay loaded between tasks; a failure other than refused
 * parameters rejects the task, and with it the sweep.
 */
import { sliceByIndex } from '../data/columns.ts';
import { runJob, type SweepTask } from './grid-sweep.ts';
import type { JobResult } from './grid-sweep.ts';

/**
 * Before its first job a thread runs it a few times on the first bars of its history: V8 compiles the
 * run's code on short runs for less than the first full runs cost it interpreted and half-compiled (on
 * 1 M bars, a thread's first four jobs took 766, 292, 179 and 188 ms cold, 260, 176, 164 and 168 ms after
 * eight runs of 20,000 bars; the thread's CPU over ten jobs 3.06 s cold, 2.69 s warmed).
 */
const WARM_UP_RUNS = 8;
const WARM_UP_BARS = 20_000;

let warmedUp = false;

export default async function runTask(task: SweepTask): Promise<JobResult> {
  if (!warmedUp) {
    warmedUp = true;
    await warmUp(task);
  }
  return runJob(task.context, task.job);
}

async function warmUp(task: SweepTask): Promise<void> {
  const history = task.context.samples[task.job.sample];
  if (history === undefined || history.bars.time.length < 4 * WARM_UP_BARS) return;
  const head = { ...history, bars: sliceByIndex(history.bars, 0, WARM_UP_BARS) };
  const context = { ...task.context, samples: { ...task.context.samples, [task.job.sample]: head } };
  for (let k = 0; k < WARM_UP_RUNS; k++) {
    // A warm-up run that throws is left: the first bars of the job's own run do the same, and that run
    // reports it.
    const result = await runJob(context, task.job).catch(() => undefined);
    if (result === undefined || result.error !== undefined) return;
  }
}
