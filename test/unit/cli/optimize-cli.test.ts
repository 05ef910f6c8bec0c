import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { main } from '../../../src/cli/main.ts';
import { ExitCode } from '../../../src/cli/exit.ts';
import { captureOutput } from './capture-output.ts';

let dir: string;
const { out, err } = captureOutput();

beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'tickline-optimize-'));
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('tickline optimize', () => {
  it('runs the grid, prints the table sorted by the metric and writes every row', async () => {
    const file = path.join(dir, 'opt.yaml');
    writeFileSync(
      file,
      'strategy: { name: sma-cross }\ncontract: MESZ5\ndata: { source: synthetic, seed: 9, sessions: 2, start: 2025-03-02 }\n',
    );
    const outDir = path.join(dir, 'out');
    const code = await main([
      'optimize',
      '--config',
      file,
      '--grid',
      'fast=4,8,40',
      '--grid',
      'slow=20',
      '--metric',
      'netPnl',
      '--workers',
      '1',
      '--walk-forward',
      '0.5',
      '--out',
      outDir,
    ]);
    expect(code).toBe(ExitCode.Ok);
    const text = out.join('');
    expect(text).toContain('3 parameter sets, walk-forward 50% in-sample, sorted by netPnl');
    expect(text).toMatch(/#3 not run: .*fast must be shorter than slow/);
    const rows = readFileSync(path.join(outDir, 'optimize.csv'), 'utf8').trim().split('\n');
    expect(rows).toHaveLength(4);
    const netPnl = rows.slice(1, 3).map((r) => Number(r.split(',')[3]));
    expect(netPnl[0]).toBeGreaterThanOrEqual(netPnl[1]!);
    const json = JSON.parse(readFileSync(path.join(outDir, 'optimize.json'), 'utf8')) as {
      rows: { inSample: unknown; outOfSample: unknown }[];
    };
    expect(json.rows[0]!.inSample).not.toBeNull();
    expect(json.rows[0]!.outOfSample).not.toBeNull();
  });

  it('exits 2 on bad usage', async () => {
    const file = path.join(dir, 'opt.yaml');
    writeFileSync(file, 'strategy: { name: sma-cross }\ndata: { source: synthetic, sessions: 1 }\n');
    expect(await main(['optimize', '--config', file])).toBe(ExitCode.Usage);
    expect(await main(['optimize', '--config', file, '--grid', 'fast=5', '--metric', 'luck'])).toBe(ExitCode.Usage);
    expect(await main(['optimize', '--config', file, '--grid', 'fast=5', '--walk-forward', '1.5'])).toBe(
      ExitCode.Usage,
    );
    expect(await main(['optimize', '--config', file, '--grid', 'fast='])).toBe(ExitCode.Usage);
    expect(await main(['optimize', '--config', file, '--grid', 'fast=5', '--search', 'hunch'])).toBe(ExitCode.Usage);
    expect(await main(['optimize', '--config', file, '--grid', 'fast=5', '--search', 'tpe', '--trials', '0'])).toBe(
      ExitCode.Usage,
    );
    expect(await main(['optimize', '--help'])).toBe(ExitCode.Ok);
  });

  it('exits 2 on a grid value that does not parse for its parameter, naming it, before any run', async () => {
    const file = path.join(dir, 'opt.yaml');
    writeFileSync(file, 'strategy: { name: sma-cross }\ndata: { source: synthetic, sessions: 1 }\n');
    err.length = 0;
    expect(await main(['optimize', '--config', file, '--grid', 'fast=5,10,x', '--workers', '1'])).toBe(ExitCode.Usage);
    expect(err.join('')).toContain(`--grid fast: "x" is not a valid fast for strategy 'sma-cross'`);
    expect(out.join('')).not.toContain('not run');
    err.length = 0;
    expect(await main(['optimize', '--config', file, '--grid', 'fast=5,2.5', '--workers', '1'])).toBe(ExitCode.Usage);
    expect(err.join('')).toContain('--grid fast: 2.5 is not a valid fast');
    err.length = 0;
    expect(await main(['optimize', '--config', file, '--grid', 'stopLossTicks=8,12', '--workers', '1'])).toBe(
      ExitCode.Usage,
    );
    expect(err.join('')).toContain("--grid stopLossTicks: strategy 'sma-cross' has no parameter stopLossTicks");
    // In the definition's optimize.grid, the same.
    writeFileSync(
      file,
      'strategy: { name: sma-cross }\ndata: { source: synthetic, sessions: 1 }\noptimize: { grid: { fast: [5, x] } }\n',
    );
    err.length = 0;
    expect(await main(['optimize', '--config', file, '--workers', '1'])).toBe(ExitCode.Usage);
    expect(err.join('')).toContain('optimize.grid fast: "x" is not a valid fast');
  });

  it('searches part of the grid with tpe, the same rows for the same seed', async () => {
    const file = path.join(dir, 'opt.yaml');
    writeFileSync(
      file,
      'strategy: { name: sma-cross }\ncontract: MESZ5\ndata: { source: synthetic, seed: 9, sessions: 2, start: 2025-03-02 }\n',
    );
    const csv = async (seed: string, outDir: string, workers = '1') => {
      const args = [
        'optimize',
        '--config',
        file,
        '--grid',
        'fast=3,4,5,6,7,8',
        '--grid',
        'slow=20,25,30',
        '--search',
        'tpe',
        '--trials',
        '7',
        '--seed',
        seed,
        '--workers',
        workers,
        '--out',
        outDir,
      ];
      expect(await main(args)).toBe(ExitCode.Ok);
      return readFileSync(path.join(outDir, 'optimize.csv'), 'utf8');
    };
    const first = await csv('3', path.join(dir, 'a'));
    expect(first.trim().split('\n')).toHaveLength(8);
    expect(await csv('3', path.join(dir, 'b'))).toBe(first);
    // The points searched do not depend on the lanes: a pool thread gives the same rows.
    expect(await csv('3', path.join(dir, 'c'), '2')).toBe(first);
    expect(out.join('')).toContain('7 parameter sets (tpe search of 18, seed 3)');
  });

  it('runs a rolling walk-forward fold by fold and writes the stitched out-of-sample equity', async () => {
    const file = path.join(dir, 'opt.yaml');
    writeFileSync(
      file,
      'strategy: { name: sma-cross }\ncontract: MESZ5\ndata: { source: synthetic, seed: 9, sessions: 4, start: 2025-03-02 }\n',
    );
    const outDir = path.join(dir, 'wf');
    const code = await main([
      'optimize',
      '--config',
      file,
      '--grid',
      'fast=3,5,8',
      '--grid',
      'slow=13,21',
      '--folds',
      '3',
      '--train-windows',
      '2',
      '--metric',
      'netPnl',
      '--workers',
      '1',
      '--out',
      outDir,
    ]);
    expect(code).toBe(ExitCode.Ok);
    expect(out.join('')).toContain('walk-forward, 3 rolling folds, training on 2 test windows');
    const json = JSON.parse(readFileSync(path.join(outDir, 'walk-forward.json'), 'utf8')) as {
      folds: { train: { to: string }; test: { from: string }; testStatistics: { endingEquity: number } }[];
    };
    expect(json.folds).toHaveLength(3);
    for (const fold of json.folds) expect(fold.train.to < fold.test.from).toBe(true);
    const equity = readFileSync(path.join(outDir, 'walk-forward-equity.csv'), 'utf8').trim().split('\n');
    expect(equity[0]).toBe('time,equity');
    // Each fold continues from where the previous one ended, open positions marked to market.
    const gains = json.folds.reduce((sum, f) => sum + f.testStatistics.endingEquity - 50_000, 0);
    expect(Number(equity[equity.length - 1]!.split(',')[1]) - 50_000).toBeCloseTo(gains, 1);
    expect(
      await main(['optimize', '--config', file, '--grid', 'fast=3', '--folds', '2', '--walk-forward', '0.5']),
    ).toBe(ExitCode.Usage);
    expect(await main(['optimize', '--config', file, '--grid', 'fast=3', '--folds', '100000'])).toBe(ExitCode.Usage);
  });

  it("takes its settings from the definition's optimize section, the flags overriding them", async () => {
    const file = path.join(dir, 'opt.yaml');
    writeFileSync(
      file,
      'strategy: { name: sma-cross }\ncontract: MESZ5\ndata: { source: synthetic, seed: 9, sessions: 4, start: 2025-03-02 }\n' +
        'optimize:\n  grid: { fast: [3, 5, 8], slow: [13, 21] }\n  metric: netPnl\n  search: random\n  trials: 4\n  seed: 5\n  workers: 1\n  walkForward: { folds: 2, trainWindows: 2 }\n',
    );
    expect(await main(['optimize', '--config', file, '--out', path.join(dir, 'a')])).toBe(ExitCode.Ok);
    expect(out.join('')).toContain(
      'walk-forward, 2 rolling folds, training on 2 test windows, random search by netPnl',
    );
    const json = JSON.parse(readFileSync(path.join(dir, 'a', 'walk-forward.json'), 'utf8')) as {
      folds: { training: unknown[] }[];
      search: { seed: number };
    };
    expect(json.folds[0]!.training).toHaveLength(4);
    expect(
      await main(['optimize', '--config', file, '--anchored', '--trials', '2', '--out', path.join(dir, 'b')]),
    ).toBe(ExitCode.Ok);
    const anchored = JSON.parse(readFileSync(path.join(dir, 'b', 'walk-forward.json'), 'utf8')) as {
      plan: { mode: string };
      folds: { training: unknown[] }[];
    };
    expect(anchored.plan.mode).toBe('anchored');
    expect(anchored.folds[0]!.training).toHaveLength(2);
    writeFileSync(
      file,
      'strategy: { name: sma-cross }\ndata: { source: synthetic, sessions: 1 }\noptimize: { search: hunch, folds: 2 }\n',
    );
    expect(await main(['optimize', '--config', file, '--grid', 'fast=3'])).toBe(ExitCode.Usage);
    expect(err.join('')).toMatch(/optimize/);
  });
});

describe('tickline optimize: a run whose strategy throws', () => {
  it('is a failed row with the error; the other runs complete; exit 1', async () => {
    const strategyFile = path.join(import.meta.dirname, 'fixtures', 'throwing-strategy.ts');
    const file = path.join(dir, 'opt.yaml');
    writeFileSync(
      file,
      `strategy: { name: ${strategyFile}, params: { style: piped } }\ncontract: MESZ5\ndata: { source: synthetic, seed: 9, sessions: 2, start: 2025-03-02 }\n`,
    );
    const outDir = path.join(dir, 'out');
    const code = await main([
      'optimize',
      '--config',
      file,
      '--grid',
      'throwAt=0,300,0',
      '--grid',
      'every=50,70',
      '--workers',
      '1',
      '--out',
      outDir,
    ]);
    expect(code).toBe(ExitCode.Failure);
    const text = out.join('');
    expect(text).toMatch(/#\d+ failed after 300 bars: strategy 'throwing' failed at the bar of \S+: boom at bar 300/);
    const json = JSON.parse(readFileSync(path.join(outDir, 'optimize.json'), 'utf8')) as {
      rows: { params: { throwAt: number }; inSample: unknown; error: string | null }[];
    };
    expect(json.rows).toHaveLength(6);
    for (const row of json.rows) {
      if (row.params.throwAt === 300) {
        expect(row.inSample).toBeNull();
        expect(row.error).toContain('boom at bar 300');
      } else {
        expect(row.inSample).not.toBeNull();
        expect(row.error).toBeNull();
      }
    }
  });
});
