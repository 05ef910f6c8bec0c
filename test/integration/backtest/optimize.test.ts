import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { BacktestConfig } from '../../../src/adapters/backtest/backtest-config.ts';
import { loadHistory } from '../../../src/adapters/backtest/definition-run.ts';
import { executeBacktest } from '../../../src/adapters/backtest/execute.ts';
import { resolveContract } from '../../../src/adapters/backtest/contract.ts';
import { sliceByIndex } from '../../../src/data/columns.ts';
import {
  gridCombinations,
  historyKeys,
  rank,
  runJob,
  runsInline,
  runSweep,
  sharedContext,
  splitHistory,
  summarize,
  type Job,
  type WarmUpReport,
  type JobResult,
} from '../../../src/optimize/grid-sweep.ts';
import { SweepPool, SweepPoolError, sweepThreadEntry } from '../../../src/optimize/sweep-pool.ts';
import runTask, { withKnownHistories } from '../../../src/optimize/sweep-worker.ts';
import { CLI, ensureDist } from '../built-cli.ts';

const FAILING_STRATEGY = fileURLToPath(new URL('../distributed/fixtures/failing-strategy.ts', import.meta.url));

const config = BacktestConfig.parse({
  strategy: { name: 'sma-cross', params: { fast: 5, slow: 20 } },
  contract: 'MESZ5',
  data: { source: 'synthetic', seed: 5, sessions: 2, start: '2025-03-02' },
});

describe('parameter sweeps', () => {
  // Built first: which file a pool thread runs is settled once a process, at the first pool.
  beforeAll(ensureDist, 240_000);

  it('enumerate the grid in a stable order and rank by a metric, failures last', () => {
    expect(gridCombinations({ fast: [5, 10], slow: [20, 30] })).toEqual([
      { fast: 5, slow: 20 },
      { fast: 5, slow: 30 },
      { fast: 10, slow: 20 },
      { fast: 10, slow: 30 },
    ]);
    const result = (index: number, netPnl: number | null, maxDrawdown = 0): JobResult => ({
      index,
      params: {},
      sample: 'all',
      ...(netPnl === null
        ? { error: 'refused' }
        : {
            summary: {
              netPnl,
              returnPct: null,
              sharpe: null,
              sortino: null,
              profitFactor: null,
              expectancy: null,
              winRate: null,
              maxDrawdown,
              trades: 1,
              passed: true,
              violations: 0,
              orderListHash: '',
            },
          }),
    });
    const results = [result(0, 5, 30), result(1, null), result(2, 9, 10), result(3, 5, 20)];
    expect(rank(results, 'netPnl').map((r) => r.index)).toEqual([2, 0, 3, 1]);
    expect(rank(results, 'maxDrawdown').map((r) => r.index)).toEqual([2, 3, 0, 1]);
    expect(rank(results, 'sharpe').map((r) => r.index)).toEqual([0, 1, 2, 3]);
  });

  it('give the same results on worker threads as in one thread, in and out of sample', async () => {
    const history = await loadHistory(config, resolveContract(config.contract));
    const [inSample, outSample] = splitHistory(history.bars, 0.6);
    expect(inSample.time.length + outSample.time.length).toBe(history.bars.time.length);
    expect(outSample.time[0]).toBeGreaterThan(inSample.time[inSample.time.length - 1]!);
    const samples = { all: undefined, in: { ...history, bars: inSample }, out: { ...history, bars: outSample } };
    const jobs: Job[] = gridCombinations({ fast: [5, 25], slow: [20] }).flatMap((params, index) => [
      { index, params, sample: 'in' as const },
      { index, params, sample: 'out' as const },
    ]);
    const sequential = await runSweep({ config, name: 't', samples }, jobs, { workers: 1 });
    const parallel = await runSweep({ config, name: 't', samples }, jobs, { workers: 2, forcePool: true });
    expect(parallel).toEqual(sequential);
    expect(sequential[0]!.summary!.trades).toBeGreaterThan(0);
    expect(sequential[0]!.summary!.orderListHash).not.toBe(sequential[1]!.summary!.orderListHash);
    expect(sequential[2]!.error).toMatch(/fast must be shorter than slow/);
  });

  it('give the same results on pool threads that warm up on the first bars before their first job', async () => {
    // Long enough for the warm-up (sweep-worker.ts: a history of at least 80,000 bars).
    const long = BacktestConfig.parse({
      ...config,
      data: { source: 'synthetic', seed: 7, sessions: 64, start: '2025-03-02' },
    });
    const history = await loadHistory(long, resolveContract(long.contract));
    expect(history.bars.time.length).toBeGreaterThan(80_000);
    const context = { config: long, name: 't', samples: { all: history, in: undefined, out: undefined } };
    const jobs: Job[] = gridCombinations({ fast: [5, 30], slow: [20, 40] }).map((params, index) => ({
      index,
      params,
      sample: 'all' as const,
    }));
    const sequential = await runSweep(context, jobs, { workers: 1 });
    const warmUps: WarmUpReport[] = [];
    const parallel = await runSweep(context, jobs, {
      workers: 2,
      forcePool: true,
      onWarmUp: (w) => warmUps.push(w),
    });
    expect(parallel).toEqual(sequential);
    expect(sequential.filter((r) => r.error !== undefined)).toHaveLength(1);
    // Each thread that ran a job warmed up once, before its first job whose parameters were accepted.
    expect(warmUps.length).toBeGreaterThanOrEqual(1);
    expect(warmUps.length).toBeLessThanOrEqual(2);
    for (const w of warmUps) expect(w).toEqual({ runs: 8, bars: 20_000 });
  });

  it('run a built-in strategy on threads of the one-file worker, with the same results as in one thread', async () => {
    const bundle = sweepThreadEntry('sma-cross');
    expect(bundle.pathname).toMatch(/\/dist\/optimize\/sweep-worker-bundle\.js$/);
    expect(sweepThreadEntry('own-strategy.ts').pathname).toMatch(/\/dist\/optimize\/sweep-worker\.js$/);
    // Every module URL the bundle names (each module's own, written relative to the bundle) is a file of dist/.
    const text = readFileSync(bundle, 'utf8');
    const named = [...text.matchAll(/new URL\("([^"]+)", import\.meta\.url\)/g)].map((m) => m[1]!);
    expect(named).toContain('../strategies/compile.js');
    for (const relative of named) expect(existsSync(new URL(relative, bundle)), relative).toBe(true);
    const history = await loadHistory(config, resolveContract(config.contract));
    const context = { config, name: 't', samples: { all: history, in: undefined, out: undefined } };
    const jobs: Job[] = gridCombinations({ fast: [3, 5, 8], slow: [13, 21] }).map((params, index) => ({
      index,
      params,
      sample: 'all' as const,
    }));
    const sequential = await runSweep(context, jobs, { workers: 1 });
    const pool = new SweepPool(2, 'sma-cross');
    try {
      expect(await runSweep(context, jobs, { workers: 2, pool, forcePool: true })).toEqual(sequential);
    } finally {
      await pool.close();
    }
    expect(new Set(sequential.map((r) => r.summary!.orderListHash)).size).toBe(jobs.length);
  });

  it("keep a thread's first copy of each shared history: one key for the same columns, tasks after the first run on it", async () => {
    const history = await loadHistory(config, resolveContract(config.contract));
    const [inSample, outSample] = splitHistory(history.bars, 0.5);
    const context = sharedContext({
      config,
      name: 't',
      samples: { all: history, in: { ...history, bars: inSample }, out: { ...history, bars: outSample } },
    });
    const keys = historyKeys(context);
    expect(new Set(Object.values(keys)).size).toBe(3);
    // The same columns give the same keys, sweep after sweep (a search's batches); other columns other keys.
    expect(historyKeys(sharedContext(context))).toEqual(keys);
    expect(historyKeys(sharedContext({ ...context, samples: { ...context.samples, all: history } })).all).not.toBe(
      keys.all,
    );
    const job: Job = { index: 0, params: {}, sample: 'all' };
    // As a pool thread receives them: copies.
    const first = withKnownHistories(structuredClone({ context, job, histories: keys }));
    const second = withKnownHistories(structuredClone({ context, job, histories: keys }));
    for (const sample of ['all', 'in', 'out'] as const) {
      expect(second.samples[sample]).toBe(first.samples[sample]);
      expect(second.samples[sample]!.bars.time).toEqual(context.samples[sample]!.bars.time);
    }
    // Without keys (an older main thread, a test) each task keeps its own copy.
    const keyless = structuredClone({ context, job });
    expect(withKnownHistories(keyless).samples.all).toBe(keyless.context.samples.all);
    // Eight histories are kept: after eight other keys the first is received anew.
    for (let k = 0; k < 8; k++) withKnownHistories(structuredClone({ context, job, histories: { all: `other-${k}` } }));
    const again = structuredClone({ context, job, histories: keys });
    expect(withKnownHistories(again).samples.all).toBe(again.context.samples.all);
  });

  it('refuse a strategy file on a pool started for a built-in, whose threads could not load it', async () => {
    const pool = new SweepPool(1, 'sma-cross');
    expect(() => pool.checkStrategy('sma-cross')).not.toThrow();
    expect(() => pool.checkStrategy(FAILING_STRATEGY)).toThrow(SweepPoolError);
    expect(() => pool.checkStrategy(FAILING_STRATEGY)).toThrow(/started for the built-in strategy 'sma-cross'/);
    const own = { ...config, strategy: { name: FAILING_STRATEGY, params: {} } };
    const context = { config: own, name: 't', samples: { all: undefined, in: undefined, out: undefined } };
    await expect(
      runSweep(context, [{ index: 0, params: {}, sample: 'all' }], { workers: 2, pool, forcePool: true }),
    ).rejects.toThrow(SweepPoolError);
    // Refused before anything started: no thread, no compiled module.
    expect(pool.started).toBe(false);
    expect(pool.compiledCount).toBe(0);
    const filePool = new SweepPool(1, FAILING_STRATEGY);
    expect(() => filePool.checkStrategy('sma-cross')).not.toThrow();
    expect(() => filePool.checkStrategy(FAILING_STRATEGY)).not.toThrow();
  });

  it("report a pool thread's warm-up that failed with the thread's first answer, and warm up once", async () => {
    const failing = BacktestConfig.parse({
      ...config,
      strategy: { name: FAILING_STRATEGY, params: {} },
      data: { source: 'synthetic', seed: 7, sessions: 64, start: '2025-03-02' },
    });
    const history = await loadHistory(failing, resolveContract(failing.contract));
    const context = { config: failing, name: 't', samples: { all: history, in: undefined, out: undefined } };
    const first = await runTask({ context, job: { index: 0, params: { fail: true }, sample: 'all' } });
    expect(first.warmUp).toEqual({ runs: 0, bars: 20_000, failure: expect.stringMatching(/failed on purpose/) });
    expect(first.result.failedAfter).toBeGreaterThan(0);
    const second = await runTask({ context, job: { index: 1, params: { fail: false }, sample: 'all' } });
    expect(second.warmUp).toBeUndefined();
    expect(second.result.summary!.trades).toBeGreaterThanOrEqual(0);
  });

  it("rank a run by the same figures as its full backtest, computed without the report's tables", async () => {
    const whole = await loadHistory(config, resolveContract(config.contract));
    // The jobs of a thread run one after another in the same room for their equity: the later ones in
    // room an earlier run filled, the last on a shorter history than that room.
    const shorter = { ...whole, bars: sliceByIndex(whole.bars, 0, Math.floor(whole.bars.time.length * 0.6)) };
    for (const [history, params] of [
      [whole, { fast: 5, slow: 20 }],
      [whole, { fast: 3, slow: 40 }],
      [shorter, { fast: 4, slow: 30 }],
    ] as const) {
      const job = await runJob(
        { config, name: 't', samples: { all: history, in: undefined, out: undefined } },
        { index: 0, params, sample: 'all' },
      );
      const full = await executeBacktest({ ...config, strategy: { ...config.strategy, params } }, 't', { history });
      expect(job.summary).toEqual(
        summarize(full.statistics, full.result.passed, full.result.violations.length, full.result.orderListHash),
      );
      expect(full.result.decisions.length).toBeGreaterThan(0);
    }
  });

  it("compile a quant's TypeScript strategy once and give the same rows and hashes on a warm pool, sweep after sweep", async () => {
    const file = fileURLToPath(new URL('./fixtures/sweep-strategy.ts', import.meta.url));
    const own = { ...config, strategy: { ...config.strategy, name: file } };
    const history = await loadHistory(own, resolveContract(own.contract));
    const context = { config: own, name: 'own', samples: { all: history, in: undefined, out: undefined } };
    const jobs: Job[] = gridCombinations({ fast: [3, 5, 8], slow: [13, 21] }).map((params, index) => ({
      index,
      params,
      sample: 'all' as const,
    }));
    const sequential = await runSweep(context, jobs, { workers: 1 });
    const pool = new SweepPool(1, file);
    try {
      const first = await runSweep(context, jobs, { workers: 2, pool, forcePool: true });
      const second = await runSweep(context, [...jobs].reverse(), { workers: 2, pool, forcePool: true });
      expect(first).toEqual(sequential);
      expect(second).toEqual([...sequential].reverse());
    } finally {
      await pool.close();
    }
    expect(new Set(sequential.map((r) => r.summary!.orderListHash)).size).toBe(jobs.length);
  });

  it('run small sweeps in this thread and large ones on the pool', () => {
    const bars = (n: number) => ({ bars: { time: new Float64Array(n) } }) as never;
    const context = (n: number) => ({ config, name: 't', samples: { all: bars(n), in: undefined, out: undefined } });
    const jobs = (n: number): Job[] =>
      Array.from({ length: n }, (_, index) => ({ index, params: {}, sample: 'all' as const }));
    expect(runsInline(context(10_000), jobs(16), 2, undefined)).toBe(true);
    expect(runsInline(context(1_000_000), jobs(16), 2, undefined)).toBe(false);
    expect(runsInline(context(1_000_000), jobs(16), 1, undefined)).toBe(true);
    const warm = { started: true } as SweepPool;
    expect(runsInline(context(100_000), jobs(16), 2, undefined)).toBe(true);
    expect(runsInline(context(100_000), jobs(16), 2, warm)).toBe(false);
  });

  it("run on the pool under node's own V8 flags, which its threads share and refuse to be given", () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'tickline-node-flags-'));
    try {
      const file = path.join(dir, 'opt.yaml');
      // 64 runs of about 40,000 bars: past INLINE_BAR_RUNS, so the sweep starts its pool.
      writeFileSync(
        file,
        'strategy: { name: sma-cross }\ncontract: MESZ5\ndata: { source: synthetic, seed: 9, sessions: 30, start: 2025-03-02 }\n',
      );
      const grid = ['--grid', 'fast=4,6,8,10,12,14,16,18', '--grid', 'slow=20,30,40,50,60,70,80,90'];
      const child = spawnSync(
        process.execPath,
        [
          '--max-old-space-size=1024',
          '--stack-trace-limit=30',
          CLI,
          'optimize',
          '--config',
          file,
          '--workers',
          '2',
          ...grid,
        ],
        { cwd: dir, encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' } },
      );
      expect(child.stderr).toBe('');
      expect(child.status).toBe(0);
      expect(child.stdout).toContain('64 runs on 2 lanes');
      expect(
        readFileSync(path.join(dir, 'out', 'opt', 'optimize.csv'), 'utf8')
          .trim()
          .split('\n'),
      ).toHaveLength(65);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
