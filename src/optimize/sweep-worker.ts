/**
 * A sweep worker of the pool (sweep-pool.ts): runs one job a task, with the history in shared memory.
 * The strategy module and the compiled engine stay loaded between tasks; a failure other than refused
 * parameters rejects the task, and with it the sweep.
 */
import { runJob, type SweepTask } from './grid-sweep.ts';
import type { JobResult } from './grid-sweep.ts';

export default function runTask(task: SweepTask): Promise<JobResult> {
  return runJob(task.context, task.job);
}
