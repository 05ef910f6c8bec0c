/**
 * A sweep worker of the pool (sweep-pool.ts): runs one job a task, with the history in shared memory.
 * The strategy module and the compiled engine stay loaded between tasks; a failure other than refused
 * parameters rejects the task, and with it the sweep.
 */
import type { History } from '../adapters/backtest/definition-run.ts';
import { sliceByIndex } from '../data/columns.ts';
import {
  runJob,
  SAMPLES,
  type SweepAnswer,
  type SweepContext,
  type SweepTask,
  type WarmUpReport,
} from './grid-sweep.ts';

/**
 * Before its first job a thread runs it a few times on the first bars of its history: V8 compiles the
 * run's code on short runs for less than the first full runs cost it interpreted and half-compiled (on
 * 1 M bars, a thread's first four jobs took 766, 292, 179 and 188 ms cold, 260, 176, 164 and 168 ms after
 * eight runs of 20,000 bars; the thread's CPU over ten jobs 3.06 s cold, 2.69 s warmed).
 */
const WARM_UP_RUNS = 8;
const WARM_UP_BARS = 20_000;

let warmedUp = false;

export default async function runTask(task: SweepTask): Promise<SweepAnswer> {
  const context = withKnownHistories(task);
  if (warmedUp) return { result: await runJob(context, task.job) };
  const warmUp = await warmUpOn({ ...task, context });
  const result = await runJob(context, task.job);
  // A job whose parameters the strategy refuses runs nothing to warm up on: the next job does it.
  if (warmUp === undefined) return { result };
  warmedUp = true;
  return { result, warmUp };
}

/**
 * Histories this thread received, by their key (`historyKeys`): a task's history comes as a new object each
 * time, and the first one received stands for it in every later task. A few are kept (a walk-forward's
 * folds each bring their own), the oldest let go first.
 */
const histories = new Map<string, History>();
const KEPT_HISTORIES = 8;

export function withKnownHistories(task: SweepTask): SweepContext {
  const keys = task.histories;
  if (keys === undefined) return task.context;
  const samples = { ...task.context.samples };
  for (const sample of SAMPLES) {
    const key = keys[sample];
    const history = samples[sample];
    if (key === undefined || history === undefined) continue;
    const known = histories.get(key);
    if (known !== undefined) {
      samples[sample] = known;
      continue;
    }
    histories.set(key, history);
    if (histories.size > KEPT_HISTORIES) histories.delete(histories.keys().next().value!);
  }
  return { ...task.context, samples };
}

/** The warm-up's runs, or undefined when the job's parameters are refused (nothing runs). */
async function warmUpOn(task: SweepTask): Promise<WarmUpReport | undefined> {
  const history = task.context.samples[task.job.sample];
  if (history === undefined || history.bars.time.length < 4 * WARM_UP_BARS) return { runs: 0, bars: 0 };
  const head = { ...history, bars: sliceByIndex(history.bars, 0, WARM_UP_BARS) };
  const context = { ...task.context, samples: { ...task.context.samples, [task.job.sample]: head } };
  for (let k = 0; k < WARM_UP_RUNS; k++) {
    // A warm-up run that fails stops the warm-up and is reported with the answer (this thread has no
    // logger); the job's own run goes over the same first bars and fails there as it would cold.
    let failure: string | undefined;
    try {
      const result = await runJob(context, task.job);
      if (result.error !== undefined && result.failedAfter === undefined) return undefined;
      failure = result.error;
    } catch (error) {
      failure = error instanceof Error ? error.message : String(error);
    }
    if (failure !== undefined) return { runs: k, bars: WARM_UP_BARS, failure };
  }
  return { runs: WARM_UP_RUNS, bars: WARM_UP_BARS };
}
