import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { main } from '../../../src/cli/main.ts';
import { ExitCode } from '../../../src/cli/exit.ts';
import { captureOutput } from './capture-output.ts';

let dir: string;
const { out, err } = captureOutput();

beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'tickline-cli-'));
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

function config(name: string, text: string): string {
  const file = path.join(dir, `${name}.yaml`);
  writeFileSync(file, text);
  return file;
}

const BASE = `strategy:
  name: sma-cross
  params: { fast: 5, slow: 20 }
contract: MESZ5
data:
  source: synthetic
  seed: 3
  sessions: 2
  start: 2025-03-02
fills:
  slippageTicks: 1
`;

describe('tickline backtest', () => {
  it('exits 0 when the account passes, writes the results and prints the hash and report path', async () => {
    const file = config('pass', BASE);
    const outDir = path.join(dir, 'out-pass');
    expect(await main(['backtest', '--config', file, '--out', outDir])).toBe(ExitCode.Ok);
    const text = out.join('');
    expect(text).toMatch(/orders sha256: [0-9a-f]{64}/);
    expect(text).toContain(`report: ${path.join(outDir, 'report.html')}`);
    expect(readdirSync(outDir).sort()).toEqual(
      [
        'daily.json',
        'decisions.csv',
        'daystats.json',
        'equity.csv',
        'gaps.json',
        'orders.json',
        'report.html',
        'rolls.json',
        'statistics.json',
        'summary.json',
        'trades.csv',
        'trades.json',
        'violations.json',
      ].sort(),
    );
    const trades = readFileSync(path.join(outDir, 'trades.csv'), 'utf8').split('\n');
    expect(trades[0]).toBe(
      'contractId,side,size,entryTime,exitTime,entryPrice,exitPrice,pnl,fees,net,durationSeconds,maeTicks,mfeTicks,mae,mfe,label',
    );
    expect(trades.length).toBeGreaterThan(3);
  });

  it('gives byte-identical results and the same hash for the same config and data', async () => {
    const file = config('same', BASE);
    const a = path.join(dir, 'a');
    const b = path.join(dir, 'b');
    await main(['backtest', '--config', file, '--out', a]);
    await main(['backtest', '--config', file, '--out', b]);
    const hashes = out.join('').match(/orders sha256: ([0-9a-f]{64})/g)!;
    expect(hashes).toHaveLength(2);
    expect(hashes[0]).toBe(hashes[1]);
    for (const name of readdirSync(a))
      expect(readFileSync(path.join(b, name)), name).toEqual(readFileSync(path.join(a, name)));
    // A different parameter changes the order list.
    await main(['backtest', '--config', file, '--out', path.join(dir, 'c'), '--param', 'fast=6']);
    expect(out.join('').match(/orders sha256: ([0-9a-f]{64})/g)![2]).not.toBe(hashes[0]);
  }, 60_000);

  it('exits 3 when the account breaks a rule, listing the violation', async () => {
    const file = config('break', `${BASE}account:\n  maximumLossLimit: { amount: 25, variant: static }\n`);
    expect(await main(['backtest', '--config', file, '--out', path.join(dir, 'o')])).toBe(ExitCode.RuleBreak);
    expect(out.join('')).toMatch(/Violation\s+\S+ type 6 \(maximumLossLimit, duration 1\)/);
    const violations = JSON.parse(readFileSync(path.join(dir, 'o', 'violations.json'), 'utf8')) as {
      type: number;
      triggeredAt: string;
    }[];
    expect(violations[0]).toMatchObject({ type: 6, rule: 'maximumLossLimit', duration: 1 });
    expect(violations[0]!.triggeredAt).toMatch(/:00\.000Z$/);
  });

  it('exits 2 on config errors, all reported with file and line', async () => {
    const file = config(
      'bad',
      `strategy:\n  name: sma-cross\n  parms: {}\ndata:\n  source: synthetic\n  sessions: -1\nfills:\n  slipage: 2\n`,
    );
    expect(await main(['backtest', '--config', file])).toBe(ExitCode.Usage);
    const text = err.join('');
    expect(text).toContain(`${file}:3: strategy.parms: unknown key "parms"`);
    expect(text).toContain(`${file}:6: data.sessions:`);
    expect(text).toContain(`${file}:8: fills.slipage: unknown key "slipage"`);
  });

  it('exits 2 on a bad parameter override, an unknown strategy, a missing file or bad usage', async () => {
    const file = config('ok', BASE);
    expect(await main(['backtest', '--config', file, '--param', 'fast=abc'])).toBe(ExitCode.Usage);
    // Checked by the strategy's own schema, reported as the command line's: the file's line 3 says fast: 5.
    expect(err.join('')).toContain('--param fast=abc (command line): strategy.params.fast:');
    expect(err.join('')).not.toContain(`${file}:3:`);
    expect(await main(['backtest', '--config', file, '--param', 'fast=30'])).toBe(ExitCode.Usage);
    expect(await main(['backtest', '--config', file, '--strategy', 'no-such-strategy'])).toBe(ExitCode.Usage);
    expect(err.join('')).toContain(
      `--strategy no-such-strategy (command line): strategy.name: unknown strategy 'no-such-strategy'`,
    );
    expect(await main(['backtest', '--config', path.join(dir, 'missing.yaml')])).toBe(ExitCode.Usage);
    expect(await main(['backtest'])).toBe(ExitCode.Usage);
    expect(await main(['backtest', '--bogus'])).toBe(ExitCode.Usage);
    expect(await main(['backtest', '--config', file, '--data', path.join(dir, 'nope.csv')])).toBe(ExitCode.Usage);
  });

  it('--data, --from and --to replace the history and cut it', async () => {
    const file = config('csv', BASE);
    const csv = path.resolve(import.meta.dirname, '../../../../shared/data/es-minute-lean.csv');
    const outDir = path.join(dir, 'csv');
    const code = await main([
      'backtest',
      '--config',
      file,
      '--data',
      csv,
      '--from',
      '2013-10-07T13:30:00Z',
      '--to',
      '2013-10-07T20:00',
      '--out',
      outDir,
    ]);
    expect([ExitCode.Ok, ExitCode.RuleBreak]).toContain(code);
    const summary = JSON.parse(readFileSync(path.join(outDir, 'summary.json'), 'utf8')) as {
      bars: number;
      data: string;
    };
    expect(summary.bars).toBe(390);
    expect(summary.data).toContain('es-minute-lean.csv');
    // equity.csv holds each trading day's close by default: one day here, closing at the cut.
    const equity = readFileSync(path.join(outDir, 'equity.csv'), 'utf8').trim().split('\n');
    expect(equity).toHaveLength(2);
    expect(equity[1]).toMatch(/^2013-10-07T19:59:00.000Z,/);
    const firstTrade = readFileSync(path.join(outDir, 'trades.csv'), 'utf8').trim().split('\n')[1]!.split(',');
    expect(Date.parse(firstTrade[3]!)).toBeGreaterThanOrEqual(Date.parse('2013-10-07T13:30:00Z'));
  });

  it('exits 2 on a reversed range, naming both ends', async () => {
    const file = config('ok', BASE);
    expect(await main(['backtest', '--config', file, '--from', '2014-01-01', '--to', '2013-01-01'])).toBe(
      ExitCode.Usage,
    );
    const said = err.join('');
    expect(said).toContain(
      'the range ends before it starts: to (2013-01-01T00:00:00.000Z) must be after from (2014-01-01T00:00:00.000Z)',
    );
    expect(said).toContain('--to 2013-01-01');
    expect(said).not.toContain('no bars in the chosen range');
  });

  it("warns when the data's prices are far from the contract's usual level (the ES file under contract: CL)", async () => {
    const csv = path.resolve(import.meta.dirname, '../../../../shared/data/es-minute-lean.csv');
    const args = ['--data', csv, '--from', '2013-10-07T13:30:00Z', '--to', '2013-10-07T20:00'];
    const cl = config('cl', BASE.replace('contract: MESZ5', 'contract: CL'));
    expect([ExitCode.Ok, ExitCode.RuleBreak]).toContain(
      await main(['backtest', '--config', cl, ...args, '--out', path.join(dir, 'cl')]),
    );
    expect(out.join('')).toMatch(
      /Warning: .*es-minute-lean\.csv: its prices are around 1,6\d\d, but CL usually trades around 60/,
    );
    out.length = 0;
    const es = config('es', BASE.replace('contract: MESZ5', 'contract: ES'));
    expect([ExitCode.Ok, ExitCode.RuleBreak]).toContain(
      await main(['backtest', '--config', es, ...args, '--out', path.join(dir, 'es')]),
    );
    expect(out.join('')).not.toContain('usually trades around');
  });

  it('prints its usage for --help', async () => {
    expect(await main(['backtest', '--help'])).toBe(ExitCode.Ok);
    expect(out.join('')).toContain('Usage: tickline backtest --config');
  });
});

describe('tickline backtest: a strategy that throws', () => {
  const strategyFile = path.join(import.meta.dirname, 'fixtures', 'throwing-strategy.ts');
  const failing = (style: string, throwAt = 300) =>
    `strategy:\n  name: ${strategyFile}\n  params: { style: ${style}, throwAt: ${throwAt} }\ncontract: MESZ5\ndata:\n  source: synthetic\n  seed: 3\n  sessions: 2\n  start: 2025-03-02\n`;

  it.each(['subscribe', 'piped', 'onBar'])(
    'per-bar (%s): one line naming the strategy, the bar and the error, the outputs of what ran, exit 1',
    async (style) => {
      const outDir = path.join(dir, `out-${style}`);
      expect(await main(['backtest', '--config', config(style, failing(style)), '--out', outDir])).toBe(
        ExitCode.Failure,
      );
      const stderr = err.join('');
      const lines = stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(
        /^backtest: strategy 'throwing' failed at the bar of 2025-03-0\dT\d\d:\d\d:00\.000Z: boom at bar 300 \(stopped after 300 of (\d+) bars; the outputs above cover what ran\)$/,
      );
      const stdout = out.join('');
      // The summary counts the bars that ran, as the last line does.
      expect(stdout).toMatch(/Data {12}synthetic market.*, 300 bars\n/);
      expect(stdout).toMatch(/orders sha256: [0-9a-f]{64}/);
      // Trades every 50 bars until the throw: five orders (the fifth is placed at bar 250, filled at 251).
      const orders = JSON.parse(readFileSync(path.join(outDir, 'orders.json'), 'utf8')) as unknown[];
      expect(orders).toHaveLength(5);
      expect(readdirSync(outDir)).toContain('report.html');
    },
  );

  it('with --verbose the line is followed by the stack of what the strategy threw', async () => {
    const file = config('verbose', failing('piped'));
    expect(await main(['backtest', '--config', file, '--out', path.join(dir, 'o'), '--verbose'])).toBe(
      ExitCode.Failure,
    );
    const stderr = err.join('');
    expect(stderr).toMatch(/boom at bar 300 \(stopped after 300 of \d+ bars/);
    expect(stderr).toContain('Error: boom at bar 300\n    at ');
    expect(stderr).toContain('throwing-strategy.ts');
  });

  it('a chunk pipeline that throws: the same line, and the counts agree with the summary', async () => {
    const outDir = path.join(dir, 'out-chunk');
    expect(await main(['backtest', '--config', config('chunk', failing('chunk')), '--out', outDir])).toBe(
      ExitCode.Failure,
    );
    const line = err.join('').trim();
    expect(line.split('\n')).toHaveLength(1);
    const stopped =
      /^backtest: strategy 'throwing' failed at the bar of \S+: boom at bar 300 \(stopped after (\d+) of (\d+) bars;/.exec(
        line,
      );
    expect(stopped).not.toBeNull();
    expect(out.join('')).toContain(`, ${stopped![1]} bars\n`);
    expect(Number(stopped![1])).toBeGreaterThan(0);
  });
});
