/**
 * `tickline worker --queue redis://host:port`: take sweep jobs from the queue and run them until Ctrl-C.
 * One worker process per core by default (a backtest is CPU-bound and holds its thread), each running one
 * job at a time; Ctrl-C lets each finish its running job, then they leave.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { availableParallelism, hostname } from 'node:os';
import { connectQueue } from '../optimize/queue.ts';
import { QUEUE_URL_ENV, queueUrlFrom, redactUrl } from '../optimize/queue-url.ts';
import { DEFAULT_LOCK_MS, startSweepWorker } from '../optimize/queue-worker.ts';
import { parseCommandArgs } from './args.ts';
import { EXIT_CODE_OF_KIND, ExitCode, UsageError } from './exit.ts';

export const summary = 'Run sweep jobs from a Redis queue (BullMQ) for `optimize --queue`, on any machine';

const USAGE = `Usage: tickline worker --queue <redis-url> [options]

Takes the jobs of distributed sweeps (\`tickline optimize --queue ...\`) from the queue, runs each
backtest with the bars and strategy named by the sweep (checked by hash) and stores its result.

Options:
  --queue <redis-url>     redis://[:password@]host:port[/db], rediss://... for TLS (required;
                          or the environment variable TICKLINE_QUEUE_URL, kept out of ps)
  --concurrency <n>       Worker processes, each running one job at a time (default: the cores)
  --lock-seconds <s>      A job whose worker is silent this long is given to another worker;
                          must exceed the longest backtest (default ${DEFAULT_LOCK_MS / 1000})
  -h, --help              This help

Ctrl-C lets the running jobs finish, then exits. Exit codes: 0 stopped, 2 bad arguments or Redis
unreachable at start, 1 failure.`;

export async function run(args: string[]): Promise<number> {
  const values = parseCommandArgs(
    args,
    { queue: { type: 'string' }, concurrency: { type: 'string' }, 'lock-seconds': { type: 'string' } },
    USAGE,
  );
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return ExitCode.Ok;
  }
  const url = queueUrlFrom(values.queue);
  if (url === undefined) throw new UsageError(`--queue (or ${QUEUE_URL_ENV}) is required\n\n${USAGE}`);
  const concurrency = values.concurrency === undefined ? availableParallelism() : Number(values.concurrency);
  if (!Number.isInteger(concurrency) || concurrency < 1)
    throw new UsageError('--concurrency must be a positive whole number');
  const lockSeconds = values['lock-seconds'] === undefined ? DEFAULT_LOCK_MS / 1000 : Number(values['lock-seconds']);
  if (!(lockSeconds > 0)) throw new UsageError('--lock-seconds must be a positive number of seconds');
  const lockMs = Math.round(lockSeconds * 1000);
  if (concurrency === 1) return runOneWorker(url, lockMs);
  // Reachable before any process is started: an unreachable Redis is one error, not one per process.
  (await connectQueue(url)).disconnect();
  return runWorkerProcesses(url, concurrency, lockMs);
}

/** Resolves when SIGINT or SIGTERM arrives. */
function stopSignal(): { stopped: Promise<NodeJS.Signals>; release(): void } {
  let release = () => undefined as undefined;
  const stopped = new Promise<NodeJS.Signals>((resolve) => {
    const onSignal = (signal: NodeJS.Signals) => resolve(signal);
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
    release = () => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    };
  });
  return { stopped, release };
}

async function runOneWorker(url: string, lockMs: number): Promise<number> {
  const redis = await connectQueue(url);
  const name = `${hostname()}:${process.pid}`;
  const signal = stopSignal();
  try {
    const worker = await startSweepWorker(redis, {
      name,
      lockMs,
      onJob: ({ id, error }) => {
        if (error !== undefined) process.stderr.write(`worker ${name}: job ${id} failed: ${error.split('\n')[0]}\n`);
      },
    });
    process.stderr.write(`worker ${name}: waiting for sweep jobs on ${redactUrl(url)}\n`);
    await signal.stopped;
    await worker.close();
    process.stderr.write(`worker ${name}: stopped\n`);
    return ExitCode.Ok;
  } finally {
    signal.release();
    redis.disconnect();
  }
}

/** One child process per worker, all stopped together; a child that dies is reported, the others go on. */
async function runWorkerProcesses(url: string, count: number, lockMs: number): Promise<number> {
  const entry = process.argv[1]!;
  // The URL goes by the environment: a password in it stays out of the children's command lines.
  const childArgs = ['worker', '--concurrency', '1', '--lock-seconds', String(lockMs / 1000)];
  const env = { ...process.env, [QUEUE_URL_ENV]: url };
  let stopping = false;
  const children: ChildProcess[] = Array.from({ length: count }, () =>
    fork(entry, childArgs, { execArgv: process.execArgv, stdio: 'inherit', env }),
  );
  const exits = children.map(
    (child) =>
      new Promise<number>((resolve) =>
        child.once('exit', (code, signal) => {
          if (!stopping)
            process.stderr.write(
              `worker: process ${child.pid} exited (${signal ?? `code ${code}`}); its job goes to another worker\n`,
            );
          resolve(code ?? 1);
        }),
      ),
  );
  const signal = stopSignal();
  void signal.stopped.then((received) => {
    stopping = true;
    // A terminal's Ctrl-C reaches the children too; a signal sent to this process alone is passed on.
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill(received);
  });
  try {
    const codes = await Promise.all(exits);
    return codes.every((code) => code === 0) ? ExitCode.Ok : EXIT_CODE_OF_KIND.runtime;
  } finally {
    signal.release();
  }
}
