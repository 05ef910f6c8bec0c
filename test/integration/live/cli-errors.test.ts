/**
 * Ordinary mistakes, as a user makes them, against the real command in a child process: each is one line
 * on standard error naming the problem (no stack trace), with exit 2 for usage, configuration,
 * credentials and environment, and 1 for a failure while running. The checks a config alone decides
 * (strategy parameters, the poll plan) come before any request: an unreachable gateway URL proves it.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Journal } from '../../../src/adapters/live/journal.ts';
import { startSimulator, type SimHandle } from '../../../src/sim/index.ts';
import { ensureDist } from '../built-cli.ts';

const REPO = path.resolve(import.meta.dirname, '../../..');
const UNREACHABLE = 'http://127.0.0.1:9';
let dir: string;
let sim: SimHandle;

beforeAll(ensureDist, 240_000);
beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'tickline-cli-errors-'));
  sim = await startSimulator({ clock: 'manual', historyDays: 1 });
});
afterAll(async () => {
  await sim.close();
  rmSync(dir, { recursive: true, force: true });
});

interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

function tickline(args: string[], env: Record<string, string | undefined> = {}): Promise<Run> {
  const childEnv: NodeJS.ProcessEnv = {
    ...process.env,
    TICKLINE_LOG_LEVEL: 'fatal',
    TICKLINE_USERNAME: sim.demo.userName,
    TICKLINE_API_KEY: sim.demo.apiKey,
    ...env,
  };
  for (const [key, value] of Object.entries(env)) if (value === undefined) delete childEnv[key];
  const child = spawn(process.execPath, [path.join(REPO, 'bin/tickline.js'), ...args], {
    cwd: dir,
    env: childEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

let configs = 0;
function paperConfig(
  overrides: { url?: string; journal?: string; extra?: string; params?: string; account?: string } = {},
): string {
  const file = path.join(dir, `paper-${++configs}.yaml`);
  writeFileSync(
    file,
    [
      `strategy: { name: sma-cross, id: errbot, params: ${overrides.params ?? '{ fast: 2, slow: 4 }'} }`,
      'contracts: [CON.F.US.EP.Z25]',
      'timeframe: { unit: minute }',
      `gateway: { url: '${overrides.url ?? sim.tradingUrl}', timeoutMs: 2000 }`,
      `account: ${overrides.account ?? '{}'}`,
      `journal: ${overrides.journal ?? `journal-${configs}.sqlite`}`,
      'session: { maxBars: 1 }',
      'log: { level: error }',
      overrides.extra ?? '',
    ].join('\n'),
  );
  return file;
}

function expectOneLine(run: Run, code: number, pattern: RegExp): void {
  const lines = run.stderr.trim().split('\n');
  expect(run.stderr, 'no stack trace').not.toMatch(/\n\s+at /);
  expect(lines, run.stderr).toHaveLength(1);
  expect(lines[0]).toMatch(pattern);
  expect(run.code, run.stderr).toBe(code);
}

// Each case starts a node process that compiles the CLI: generous on a busy machine.
describe('CLI errors: one line, the right exit code', { timeout: 90_000 }, () => {
  it('missing credentials', async () => {
    const run = await tickline(['paper', '--config', paperConfig()], {
      TICKLINE_USERNAME: undefined,
      TICKLINE_API_KEY: undefined,
    });
    expectOneLine(run, 2, /^paper: .*TICKLINE_USERNAME and TICKLINE_API_KEY/);
  });

  it('a wrong API key', async () => {
    const run = await tickline(['paper', '--config', paperConfig()], { TICKLINE_API_KEY: 'not-the-key-at-all' });
    expectOneLine(run, 2, /^paper: Auth\/loginKey failed: .*check TICKLINE_USERNAME and TICKLINE_API_KEY/);
    expect(run.stderr).not.toContain('not-the-key-at-all');
  });

  it('an unknown account', async () => {
    const run = await tickline(['paper', '--config', paperConfig({ account: '{ name: NOPE-123 }' })]);
    expectOneLine(run, 2, /^paper: no active account matches .*NOPE-123/);
  });

  it('an unreachable gateway', async () => {
    const run = await tickline(['paper', '--config', paperConfig({ url: UNREACHABLE })]);
    expectOneLine(run, 2, /^paper: .*(reachable|connect)/i);
  });

  it('a journal path that is a folder', async () => {
    mkdirSync(path.join(dir, 'a-folder'), { recursive: true });
    const run = await tickline(['paper', '--config', paperConfig({ journal: 'a-folder' })]);
    expectOneLine(run, 2, /^paper: journal .*a-folder cannot be (opened|used)/);
  });

  it('a journal of another account', async () => {
    const file = path.join(dir, 'other-account.sqlite');
    const j = Journal.open(file);
    j.setMeta('accountId', '987654');
    j.close();
    const run = await tickline([
      'paper',
      '--config',
      paperConfig({ journal: 'other-account.sqlite', account: `{ id: ${sim.demo.accountId} }` }),
    ]);
    expectOneLine(run, 2, /^paper: journal .* belongs to account 987654/);
  });

  it('a bad strategy parameter is refused before any request', async () => {
    const run = await tickline([
      'paper',
      '--config',
      paperConfig({ url: UNREACHABLE, params: '{ fast: 2, slow: 4, nonsense: 1 }' }),
    ]);
    expectOneLine(run, 2, /^paper: strategy 'sma-cross' parameters: /);
  });

  it('a poll plan over the rate budget is refused before any request', async () => {
    const run = await tickline([
      'paper',
      '--config',
      paperConfig({
        url: UNREACHABLE,
        extra: 'poll: { openOrdersMs: 100, ordersMs: 100, tradesMs: 100, positionsMs: 100 }',
      }),
    ]);
    expectOneLine(run, 2, /^paper: poll schedule exceeds the gateway's rate budget/);
  });

  it('--verbose adds the stack trace', async () => {
    const run = await tickline(['paper', '--config', paperConfig({ url: UNREACHABLE }), '--verbose']);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/\n\s+at /);
  });

  it('a strategy that throws during a backtest: one line, exit 1, the outputs of what ran written', async () => {
    const strategy = path.join(import.meta.dirname, 'fixtures/throws-at-fifty.mjs');
    const config = path.join(dir, 'bt.yaml');
    writeFileSync(
      config,
      [
        `strategy: { name: '${strategy}' }`,
        'contract: MESZ5',
        'timeframe: { unit: minute }',
        'data: { source: synthetic, seed: 1, sessions: 1, start: 2025-01-05 }',
        'account: { startingBalance: 50000 }',
        'out: bt-out',
      ].join('\n'),
    );
    const run = await tickline(['backtest', '--config', config]);
    expectOneLine(run, 1, /^backtest: strategy 'thrower' failed at the bar of .*: boom at fifty \(stopped after/);
    expect(readdirSync(path.join(dir, 'bt-out'))).toContain('report.html');
  });
});
