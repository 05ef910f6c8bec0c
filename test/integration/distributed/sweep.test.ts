/**
 * Distributed sweeps end to end: a real redis-server on a loopback port, `tickline worker` child
 * processes, and `tickline optimize --queue` / `tickline sweep` as a user runs them.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import path from 'node:path';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisServer, type RedisServer } from './redis-server.ts';
import { BacktestConfig } from '../../../src/adapters/backtest/backtest-config.ts';
import { gridCombinations, runSweep, type Job } from '../../../src/optimize/grid-sweep.ts';
import { enqueueSweep, QUEUE_NAME, readResults, resultsKey, strategyKey } from '../../../src/optimize/queue.ts';
import { jobId, sweepId, type SweepSpec } from '../../../src/optimize/queue-spec.ts';
import { sweepHistory, sweepSamples } from '../../../src/optimize/sweep-history.ts';
import { sweepSpecOf } from '../../../src/cli/sweep-queue.ts';

const CLI = path.join(import.meta.dirname, 'cli.ts');
/** tsx resolves from the checkout; every path given to the commands is absolute. */
const REPO = path.resolve(import.meta.dirname, '../../..');
const DEADLINE_MS = 90_000;
/** Short, so a killed worker's job is recovered within seconds; longer than one small backtest on a loaded machine. */
const LOCK_SECONDS = '4';
const FAILING_STRATEGY = path.join(import.meta.dirname, 'fixtures', 'failing-strategy.ts');
const GRID = ['--grid', 'fast=3,4,5,6,7,8,9,10', '--grid', 'slow=15,20,25,30'];

let redis: RedisServer;
let dir: string;
let configFile: string;
let localCsv: string;
let localJson: string;

interface Ran {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

function tickline(args: readonly string[]): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', CLI, ...args], {
      cwd: REPO,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('error', reject);
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

async function until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined): Promise<T> {
  const deadline = Date.now() + DEADLINE_MS;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

interface WorkerProcess {
  readonly child: ChildProcess;
  readonly name: string;
  stop(): Promise<void>;
}

/** `tickline worker` with `processes` worker processes (forked by it when more than one). */
async function startWorker(
  url: string,
  processes = 1,
): Promise<WorkerProcess & { stderr(): string; exit: Promise<number | null> }> {
  const args = ['worker', '--queue', url, '--concurrency', String(processes), '--lock-seconds', LOCK_SECONDS];
  const child = spawn(process.execPath, ['--import', 'tsx', CLI, ...args], {
    cwd: REPO,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  await until('the worker to start', () => {
    if (child.exitCode !== null) throw new Error(`worker exited: ${stderr}`);
    return stderr.split('waiting for sweep jobs').length - 1 === processes ? true : undefined;
  });
  return {
    child,
    name: `${hostname()}:${child.pid}`,
    stderr: () => stderr,
    exit,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exit;
    },
  };
}

async function withWorkers<T>(url: string, count: number, body: (workers: WorkerProcess[]) => Promise<T>): Promise<T> {
  const workers = await Promise.all(Array.from({ length: count }, () => startWorker(url)));
  try {
    return await body(workers);
  } finally {
    await Promise.all(workers.map((w) => w.stop()));
  }
}

function writeConfig(file: string, seed: number): void {
  writeFileSync(
    file,
    [
      'strategy:',
      '  name: sma-cross',
      '  params: { fast: 5, slow: 20 }',
      'contract: MESZ5',
      `data: { source: synthetic, seed: ${seed}, sessions: 2, start: '2025-03-02' }`,
      '',
    ].join('\n'),
  );
}

/** A sweep's spec and jobs built as `optimize --queue` builds them. */
async function specFor(seed: number): Promise<{ spec: SweepSpec; jobs: Job[]; config: BacktestConfig }> {
  const config = BacktestConfig.parse({
    strategy: { name: 'sma-cross', params: {} },
    contract: 'MESZ5',
    data: { source: 'synthetic', seed, sessions: 2, start: '2025-03-02' },
  });
  const history = await sweepHistory(config);
  const jobs: Job[] = gridCombinations({ fast: [3, 4, 5, 6, 7, 8, 9, 10], slow: [15, 20, 25, 30] }).map(
    (params, index) => ({ index, params, sample: 'all' }),
  );
  return { spec: (await sweepSpecOf(config, 'k', history, null, jobs)).spec, jobs, config };
}

beforeAll(async () => {
  redis = await startRedisServer();
  dir = mkdtempSync(path.join(tmpdir(), 'tickline-distributed-'));
  configFile = path.join(dir, 'sweep.yaml');
  writeConfig(configFile, 7);
  const local = await tickline([
    'optimize',
    '--config',
    configFile,
    ...GRID,
    '--workers',
    '1',
    '--out',
    path.join(dir, 'local'),
  ]);
  expect(local.stderr).toBe('');
  expect(local.code).toBe(0);
  localCsv = readFileSync(path.join(dir, 'local', 'optimize.csv'), 'utf8');
  localJson = readFileSync(path.join(dir, 'local', 'optimize.json'), 'utf8');
}, 120_000);

afterAll(async () => {
  await redis?.stop();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

describe('distributed sweeps on BullMQ and redis-server', () => {
  it('a 32-point sweep on two worker processes gives the rows and order-list hashes of the local sweep', async () => {
    const url = redis.url(1);
    const ran = await withWorkers(url, 2, () =>
      tickline(['optimize', '--config', configFile, ...GRID, '--queue', url, '--out', path.join(dir, 'queued')]),
    );
    expect(ran.code).toBe(0);
    expect(ran.stdout).toMatch(/32 runs on the queue/);
    const csv = readFileSync(path.join(dir, 'queued', 'optimize.csv'), 'utf8');
    expect(csv.trim().split('\n')).toHaveLength(33);
    expect(csv).toBe(localCsv);
    expect(readFileSync(path.join(dir, 'queued', 'optimize.json'), 'utf8')).toBe(localJson);
    const hashes = csv
      .trim()
      .split('\n')
      .slice(1)
      .map((line) => line.split(',')[14]);
    expect(hashes.every((h) => /^[0-9a-f]{64}$/.test(h ?? ''))).toBe(true);
    expect(new Set(hashes).size).toBeGreaterThan(1);
  }, 180_000);

  it('enqueuing the same sweep twice does not add a job twice', async () => {
    const url = redis.url(2);
    const client = new Redis(url, { maxRetriesPerRequest: null });
    const queue = new Queue(QUEUE_NAME, { connection: client });
    try {
      const { spec } = await specFor(11);
      const view = { metric: 'sharpe', top: 20, grid: {}, heatmap: ['fast'], data: 'synthetic', enqueuedAt: 0 };
      const first = await enqueueSweep(client, queue, spec, view);
      const second = await enqueueSweep(client, queue, spec, view);
      expect(first).toEqual({ id: sweepId(spec), added: 32, total: 32 });
      expect(second).toEqual({ id: first.id, added: 0, total: 32 });
      expect(await queue.getWaitingCount()).toBe(32);
      // The ids are the sweep's and the parameters': another process building the same sweep finds them.
      const waiting = await queue.getWaiting(0, -1);
      expect(new Set(waiting.map((j) => j.id))).toEqual(new Set(spec.jobs.map((job) => jobId(first.id, job))));
    } finally {
      await queue.close();
      client.disconnect();
    }
  });

  it('a worker killed with SIGKILL mid-sweep leaves its job to another: every result exactly once, as in one process', async () => {
    const url = redis.url(3);
    const client = new Redis(url, { maxRetriesPerRequest: null });
    const queue = new Queue(QUEUE_NAME, { connection: client });
    try {
      const { spec, jobs, config } = await specFor(12);
      const view = { metric: 'sharpe', top: 20, grid: {}, heatmap: ['fast'], data: 'synthetic', enqueuedAt: 0 };
      const id = sweepId(spec);
      await withWorkers(url, 2, async ([victim]) => {
        await enqueueSweep(client, queue, spec, view);
        const held = await until('the victim to hold a job', async () =>
          (await queue.getActive()).find((job) => job.processedBy === victim!.name),
        );
        victim!.child.kill('SIGKILL');
        await until('every result', async () =>
          (await client.hlen(resultsKey(id))) === jobs.length ? true : undefined,
        );
        expect(await client.hexists(resultsKey(id), held.id!)).toBe(1);
      });
      const results = await readResults(client, id, spec);
      expect(results.every((r) => r?.summary !== undefined)).toBe(true);
      const history = await sweepHistory(config);
      const local = await runSweep({ config, name: 'k', samples: sweepSamples(history, null) }, jobs, { workers: 1 });
      expect(results).toEqual(local);
    } finally {
      await queue.close();
      client.disconnect();
    }
  }, 180_000);

  it('bars that do not match the enqueued hash fail every job once, with the reason, without retries', async () => {
    const url = redis.url(4);
    const client = new Redis(url, { maxRetriesPerRequest: null });
    const queue = new Queue(QUEUE_NAME, { connection: client });
    try {
      const { spec } = await specFor(13);
      const wrong = { ...spec, barsHash: '0'.repeat(64) };
      const id = sweepId(wrong);
      const view = { metric: 'sharpe', top: 20, grid: {}, heatmap: ['fast'], data: 'synthetic', enqueuedAt: 0 };
      await withWorkers(url, 1, async () => {
        await enqueueSweep(client, queue, wrong, view, { retries: 2 });
        await until('every job to fail', async () =>
          (await client.hlen(resultsKey(id))) === wrong.jobs.length ? true : undefined,
        );
      });
      const results = await readResults(client, id, wrong);
      for (const result of results)
        expect(result?.error).toMatch(
          /the bars of synthetic market, seed 13, .* have sha256 [0-9a-f]{12}, the sweep was enqueued with 000000000000/,
        );
      const failed = await queue.getFailed(0, -1);
      expect(failed).toHaveLength(32);
      expect(failed.every((job) => job.attemptsMade === 1)).toBe(true);
    } finally {
      await queue.close();
      client.disconnect();
    }
  }, 120_000);

  it('--detach returns the sweep id at once; `sweep results` in another process waits and writes the local table', async () => {
    const url = redis.url(5);
    const detached = await tickline(['optimize', '--config', configFile, ...GRID, '--queue', url, '--detach']);
    expect(detached.code).toBe(0);
    const id = detached.stdout.trim();
    expect(id).toMatch(/^[0-9a-f]{16}$/);
    const pending = await tickline(['sweep', 'status', id, '--queue', url]);
    expect(pending.stdout).toMatch(
      new RegExp(`sweep ${id} \\(sweep\\): 0 of 32 runs done, 0 failed, 32 waiting, 0 running`),
    );
    // One `tickline worker` running two worker processes; Ctrl-C (SIGINT) stops them all, exit 0.
    const worker = await startWorker(url, 2);
    const ran = await tickline(['sweep', 'results', id, '--queue', url, '--wait', '--out', path.join(dir, 'detached')]);
    worker.child.kill('SIGINT');
    expect(await worker.exit).toBe(0);
    expect(worker.stderr().split('stopped').length - 1).toBe(2);
    expect(ran.code).toBe(0);
    expect(readFileSync(path.join(dir, 'detached', 'optimize.csv'), 'utf8')).toBe(localCsv);
    const done = await tickline(['sweep', 'status', id, '--queue', url]);
    expect(done.stdout).toMatch(/32 of 32 runs done, 0 failed, 0 waiting, 0 running/);
  }, 180_000);

  it('a strategy file travels as a bundle: it runs where the file is gone; a run whose strategy throws is a failed row at once (a backtest is deterministic: no retry); a bundle that does not match its hash is refused', async () => {
    const url = redis.url(6);
    const client = new Redis(url, { maxRetriesPerRequest: null });
    const queue = new Queue(QUEUE_NAME, { connection: client });
    // A strategy of the quant's that imports a file of its own: both go in the bundle.
    const quant = mkdtempSync(path.join(tmpdir(), 'tickline-quant-'));
    // The quant's project has its packages (rxjs, zod) installed beside it.
    symlinkSync(path.join(REPO, 'node_modules'), path.join(quant, 'node_modules'));
    try {
      const strategy = path.join(quant, 'failing.ts');
      writeFileSync(
        strategy,
        readFileSync(FAILING_STRATEGY, 'utf8')
          .replace(/'\.\.\/\.\.\/\.\.\/\.\.\/src\//g, `'${REPO}/src/`)
          .replace("'the strategy failed on purpose'", 'PURPOSE'),
      );
      writeFileSync(path.join(quant, 'purpose.ts'), "export const PURPOSE = 'the strategy failed on purpose';\n");
      writeFileSync(strategy, `import { PURPOSE } from './purpose.ts';\n${readFileSync(strategy, 'utf8')}`);
      const config = BacktestConfig.parse({
        strategy: { name: strategy, params: {} },
        contract: 'MESZ5',
        data: { source: 'synthetic', seed: 3, sessions: 1, start: '2025-03-02' },
      });
      const history = await sweepHistory(config);
      const jobs: Job[] = [false, true].map((fail, index) => ({ index, params: { fail }, sample: 'all' }));
      const { spec, bundle } = await sweepSpecOf(config, 'failing', history, null, jobs);
      expect(bundle).toContain('the strategy failed on purpose');
      // Another sweep naming a bundle whose stored text is not what its hash says.
      const tampered = { ...spec, name: 'tampered', strategyHash: 'f'.repeat(64) };
      await client.set(strategyKey(tampered.strategyHash), bundle!);
      const view = { metric: 'netPnl', top: 20, grid: {}, heatmap: ['fail'], data: 'synthetic', enqueuedAt: 0 };
      await enqueueSweep(client, queue, spec, view, { retries: 1, bundle });
      await enqueueSweep(client, queue, tampered, view, { retries: 1 });
      await expect(
        enqueueSweep(client, queue, { ...spec, name: 'other' }, view, { bundle: `${bundle}\n` }),
      ).rejects.toThrow(/the strategy bundle has sha256 [0-9a-f]{12}, the sweep names [0-9a-f]{12}/);
      rmSync(quant, { recursive: true, force: true });
      await withWorkers(url, 1, async () => {
        await until('both sweeps', async () =>
          (await client.hlen(resultsKey(sweepId(spec)))) + (await client.hlen(resultsKey(sweepId(tampered)))) === 4
            ? true
            : undefined,
        );
      });
      const [passing, failing] = await readResults(client, sweepId(spec), spec);
      expect(passing!.error).toBeUndefined();
      expect(passing!.summary!.trades).toBeGreaterThanOrEqual(0);
      expect(failing!.error).toMatch(/^strategy 'failing' failed at the bar of \S+: the strategy failed on purpose$/);
      expect(failing!.failedAfter).toBeGreaterThan(0);
      expect(failing!.summary).toBeUndefined();
      // Completed (a failed row is a result), not failed and retried: a completed job leaves the queue.
      expect(await queue.getJob(jobId(sweepId(spec), jobs[1]!))).toBeUndefined();
      for (const result of await readResults(client, sweepId(tampered), tampered))
        expect(result!.error).toMatch(
          /the strategy bundle of .*failing\.ts on the queue has sha256 [0-9a-f]{12}, the sweep was enqueued with ffffffffffff/,
        );
    } finally {
      rmSync(quant, { recursive: true, force: true });
      await queue.close();
      client.disconnect();
    }
  }, 120_000);

  it('`sweep cancel` takes the waiting runs off the queue; enqueuing the sweep again puts them back', async () => {
    const url = redis.url(7);
    const client = new Redis(url, { maxRetriesPerRequest: null });
    const queue = new Queue(QUEUE_NAME, { connection: client });
    try {
      const { spec } = await specFor(14);
      const view = { metric: 'sharpe', top: 20, grid: {}, heatmap: ['fast'], data: 'synthetic', enqueuedAt: 0 };
      const { id } = await enqueueSweep(client, queue, spec, view);
      const cancelled = await tickline(['sweep', 'cancel', id, '--queue', url]);
      expect(cancelled.stdout).toBe(
        `sweep ${id} cancelled: 32 waiting runs taken off the queue; running ones finish\n`,
      );
      expect(await queue.getWaitingCount()).toBe(0);
      const status = await tickline(['sweep', 'status', id, '--queue', url]);
      expect(status.stdout).toMatch(/0 of 32 runs done, 0 failed, 0 waiting, 0 running, cancelled/);
      expect(await enqueueSweep(client, queue, spec, view)).toEqual({ id, added: 32, total: 32 });
      const unknown = await tickline(['sweep', 'status', '0123456789abcdef', '--queue', url]);
      expect(unknown.code).toBe(2);
      expect(unknown.stderr).toBe('sweep: no sweep 0123456789abcdef on this queue\n');
    } finally {
      await queue.close();
      client.disconnect();
    }
  }, 60_000);

  it('a random and a tpe search on the queue give the tables of the same searches in one process; tpe cannot be detached', async () => {
    const url = redis.url(8);
    const searches = [
      ['--search', 'random', '--trials', '12', '--seed', '3'],
      ['--search', 'tpe', '--trials', '10', '--seed', '5', '--walk-forward', '0.6'],
    ];
    await withWorkers(url, 2, async () => {
      for (const [k, args] of searches.entries()) {
        const local = await tickline([
          'optimize',
          '--config',
          configFile,
          ...GRID,
          ...args,
          '--workers',
          '1',
          '--out',
          path.join(dir, `search-local-${k}`),
        ]);
        expect(local.code).toBe(0);
        const queued = await tickline([
          'optimize',
          '--config',
          configFile,
          ...GRID,
          ...args,
          '--queue',
          url,
          '--out',
          path.join(dir, `search-queued-${k}`),
        ]);
        expect(queued.code).toBe(0);
        for (const file of ['optimize.csv', 'optimize.json']) {
          expect(readFileSync(path.join(dir, `search-queued-${k}`, file), 'utf8')).toBe(
            readFileSync(path.join(dir, `search-local-${k}`, file), 'utf8'),
          );
        }
        expect(queued.stdout).toMatch(
          args[1] === 'random' ? /12 runs on the queue, sweep [0-9a-f]{16}/ : /20 runs on the queue in \d+ sweeps/,
        );
      }
      // A detached random search (with another seed, so it is not answered yet) is shown later as the search it was.
      const random = ['--search', 'random', '--trials', '8', '--seed', '9'];
      const local = await tickline([
        'optimize',
        '--config',
        configFile,
        ...GRID,
        ...random,
        '--workers',
        '1',
        '--out',
        path.join(dir, 'search-local-detached'),
      ]);
      const id = (
        await tickline(['optimize', '--config', configFile, ...GRID, ...random, '--queue', url, '--detach'])
      ).stdout.trim();
      const later = await tickline([
        'sweep',
        'results',
        id,
        '--queue',
        url,
        '--wait',
        '--out',
        path.join(dir, 'search-queued-detached'),
      ]);
      expect(later.code).toBe(0);
      expect(later.stdout).toContain('(random search of 32, seed 9)');
      expect(local.stdout).toContain('(random search of 32, seed 9)');
      expect(readFileSync(path.join(dir, 'search-queued-detached', 'optimize.json'), 'utf8')).toBe(
        readFileSync(path.join(dir, 'search-local-detached', 'optimize.json'), 'utf8'),
      );
    });
    const detached = await tickline([
      'optimize',
      '--config',
      configFile,
      ...GRID,
      '--search',
      'tpe',
      '--queue',
      url,
      '--detach',
    ]);
    expect(detached.code).toBe(2);
    expect(detached.stderr).toMatch(/^optimize: --detach cannot leave a tpe search/);
  }, 240_000);

  it('a worker or a sweep whose Redis is unreachable says so in one line, without the password, and exits 2', async () => {
    const ran = await tickline(['worker', '--queue', `redis://127.0.0.1:${redis.port + 1}`, '--concurrency', '1']);
    // Nothing listens there unless another process took the port since: the message names it either way.
    expect(ran.code).toBe(2);
    expect(ran.stderr.trim().split('\n')).toHaveLength(1);
    expect(ran.stderr).toMatch(/^worker: Redis at redis:\/\/127\.0\.0\.1:\d+ is unreachable/);
    const sweep = await tickline([
      'optimize',
      '--config',
      configFile,
      ...GRID,
      '--queue',
      `redis://:hunter22@127.0.0.1:${redis.port + 1}`,
    ]);
    expect(sweep.code).toBe(2);
    expect(sweep.stderr).toMatch(/^optimize: Redis at redis:\/\/:\*\*\*@127\.0\.0\.1:\d+ is unreachable: .*\n$/);
    expect(sweep.stderr).not.toContain('hunter22');
    // Two child processes each wait out a connection timeout: 13 s on a quiet machine.
  }, 60_000);
});
