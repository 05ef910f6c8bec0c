/**
 * `tickline sweep status|results|cancel <id> --queue redis://...`: a distributed sweep followed from any
 * process or machine that reaches its Redis, by the id `optimize --queue --detach` printed.
 */
import path from 'node:path';
import { cancelSweep, readResults, readSweep, sweepStatus } from '../optimize/queue.ts';
import { QUEUE_URL_ENV, queueUrlFrom } from '../optimize/queue-url.ts';
import { parseCommandLine } from './args.ts';
import { ExitCode, UsageError } from './exit.ts';
import { sweepExitCode, writeSweepOutputs } from './optimize-report.ts';
import { followSweep, openQueue, storedOutputs } from './sweep-queue.ts';
import { METRICS, type Metric } from '../optimize/grid-sweep.ts';

export const summary = 'Status, results or cancellation of a sweep on a queue (optimize --queue --detach)';

const USAGE = `Usage: tickline sweep status|results|cancel <sweep-id> --queue <redis-url> [options]

  status     Runs done, failed, waiting and running
  results    Print the table and write optimize.csv, optimize.json and sweep.html, as
             \`tickline optimize\` does, from the results stored so far
  cancel     Take the sweep's waiting runs off the queue (running ones finish)

Options:
  --queue <redis-url>  redis://[:password@]host:port[/db], rediss://... for TLS (required;
                       or the environment variable TICKLINE_QUEUE_URL)
  --wait               results: wait until every run has a result (with a progress bar)
  --metric <name>      results: sort key (default: the one given to optimize)
  --top <n>            results: rows to print (default: the one given to optimize)
  --out <dir>          results: output folder (default: the sweep's, out/<name>)
  -h, --help           This help

Exit codes: 0 done, 2 bad arguments, unknown sweep or Redis unreachable, 1 failure.`;

const ACTIONS = ['status', 'results', 'cancel'] as const;

export async function run(args: string[]): Promise<number> {
  const { values, positionals } = parseCommandLine(
    args,
    {
      queue: { type: 'string' },
      wait: { type: 'boolean' },
      metric: { type: 'string' },
      top: { type: 'string' },
      out: { type: 'string' },
    },
    USAGE,
    2,
  );
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return ExitCode.Ok;
  }
  const [action, id] = positionals as [string | undefined, string | undefined];
  if (action === undefined || !(ACTIONS as readonly string[]).includes(action) || id === undefined)
    throw new UsageError(`expected status, results or cancel and a sweep id\n\n${USAGE}`);
  if (!/^[0-9a-f]{16}$/.test(id))
    throw new UsageError(`${id} is not a sweep id (16 hexadecimal digits, as optimize --queue printed)`);
  const url = queueUrlFrom(values.queue);
  if (url === undefined) throw new UsageError(`--queue (or ${QUEUE_URL_ENV}) is required\n\n${USAGE}`);
  if (values.metric !== undefined && !(METRICS as readonly string[]).includes(values.metric))
    throw new UsageError(`--metric must be one of ${METRICS.join(', ')}`);
  const top = values.top === undefined ? undefined : Number(values.top);
  if (top !== undefined && (!Number.isInteger(top) || top < 1))
    throw new UsageError('--top must be a positive whole number');

  const { redis, queue, close } = await openQueue(url);
  try {
    if (action === 'status') {
      const stored = await readSweep(redis, id);
      const s = await sweepStatus(redis, queue, id);
      process.stdout.write(
        `sweep ${id} (${stored.spec.name}): ${s.done} of ${s.total} runs done, ${s.failed} failed, ${s.waiting} waiting, ${s.active} running${s.cancelled ? ', cancelled' : ''}\n`,
      );
      return ExitCode.Ok;
    }
    if (action === 'cancel') {
      const removed = await cancelSweep(redis, queue, id);
      process.stdout.write(`sweep ${id} cancelled: ${removed} waiting runs taken off the queue; running ones finish\n`);
      return ExitCode.Ok;
    }
    const stored = await readSweep(redis, id);
    const all =
      values.wait === true ? await followSweep(redis, url, id, stored.spec) : await readResults(redis, id, stored.spec);
    const results = all.filter((r) => r !== undefined);
    const outputs = storedOutputs(stored, values.out === undefined ? undefined : path.resolve(values.out));
    process.stdout.write(
      await writeSweepOutputs({
        ...outputs,
        ...(values.metric === undefined ? {} : { metric: values.metric as Metric }),
        ...(top === undefined ? {} : { top }),
        results,
        ranOn: `${results.length} of ${all.length} runs done on the queue, sweep ${id}`,
      }),
    );
    return sweepExitCode(results);
  } finally {
    await close();
  }
}
