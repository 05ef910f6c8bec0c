/**
 * The `paper` command as a user runs it: a child process on the in-process simulator (accelerated
 * clock), SIGUSR2 for the kill switch, then Ctrl-C (SIGINT). The journal must end consistent: nothing
 * unresolved, the kill switch's before/after recorded, the session closed.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Journal } from '../../../src/adapters/live/journal.ts';
import { until } from './live-harness.ts';
import { ensureDist } from '../built-cli.ts';

const REPO = path.resolve(import.meta.dirname, '../../..');
let dir: string;
beforeAll(ensureDist, 240_000);
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'tickline-paper-cli-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

// The market keeps the exchange hours: the session starts at an open instant (a Tuesday, 09:00 CT), not the wall clock's.
const CONFIG = `
strategy: { name: sma-cross, id: clibot, params: { fast: 2, slow: 4, size: 1 } }
contracts: [F.US.EP]
timeframe: { unit: minute }
simulator: { speed: 240, seed: 3, startTime: '2026-11-24T15:00:00Z' }
journal: journal.sqlite
poll: { openOrdersMs: 30000, ordersMs: 60000, tradesMs: 30000, positionsMs: 30000, accountMs: 120000, closeDelayMs: 1000, staleAfterMs: 600000 }
log: { level: warn }
`;

function fills(file: string): number {
  // Read beside the running bot, which holds the journal's lock.
  const j = Journal.open(file, { lock: false });
  try {
    return j.fills().length;
  } finally {
    j.close();
  }
}

describe('tickline paper', () => {
  it('trades on the local simulator, flattens on SIGUSR2, and stops cleanly on SIGINT', async () => {
    const configFile = path.join(dir, 'paper.yaml');
    writeFileSync(configFile, CONFIG);
    const journalFile = path.join(dir, 'journal.sqlite');
    const child = spawn(process.execPath, [path.join(REPO, 'bin/tickline.js'), 'paper', '--config', configFile], {
      cwd: dir,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      await until(() => out.includes('paper session on account'), 25_000, `the session to start (${err})`);
      await until(() => fills(journalFile) > 0, 20_000, 'a first fill');
      child.kill('SIGUSR2');
      await until(() => out.includes('kill switch:'), 10_000, 'the kill switch report');
      expect(out).toMatch(/kill switch: account \S+ is flat \(/);
      // The operator reads what happened: orders placed and fills, in words, on standard output.
      expect(out).toMatch(/ placed {4}clibot-\d+ (buy|sell) \d+ /);
      expect(out).toMatch(/ filled {4}clibot-\d+ (buy|sell) \d+ .* @ [0-9.]+ \| position /);
      child.kill('SIGINT');
      expect(await exited).toBe(130);
    } finally {
      child.kill('SIGKILL');
    }
    const j = Journal.open(journalFile);
    try {
      expect(j.orders({ states: ['submitting', 'unknown'] })).toEqual([]);
      const kinds = j.entries().map((e) => `${e.kind}/${e.phase}`);
      expect(kinds).toContain('warm-up/event');
      expect(kinds).toContain('kill-switch/before');
      expect(kinds).toContain('kill-switch/after');
      expect(kinds.at(-1)).toBe('session/after');
      expect(j.positionsFromFills().size).toBe(0);
    } finally {
      j.close();
    }
  }, 60_000);

  it('a clean stop (session.maxBars reached) prints no warning or stack trace on standard error and exits 0', async () => {
    const configFile = path.join(dir, 'clean.yaml');
    writeFileSync(configFile, `${CONFIG}session: { maxBars: 3 }\n`);
    const { code, out, err } = await runPaper(configFile);
    expect(code, err).toBe(0);
    expect(out).toMatch(/session ended: /);
    // The hubs' unsubscriptions cancelled by the closing connection are expected at a stop, not warnings.
    // (A loaded machine may log a catch-up of bars while running; nothing about the stop is a warning.)
    const warnings = err
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { level: number; msg: string; part?: string })
      .filter((line) => line.level >= 40);
    expect(err).not.toMatch(/Invocation canceled/);
    expect(err).not.toMatch(/"stack"|\n\s+at /);
    expect(
      warnings.filter(
        (w) =>
          w.part === 'realtime' ||
          w.part === 'market-hub' ||
          /hub|subscri|\bclos(e|ing)\b|\bstop|final poll|interrupt/i.test(w.msg),
      ),
    ).toEqual([]);
  }, 60_000);

  it('a session in which the gateway rejected every order says so at the end and exits 1', async () => {
    const configFile = path.join(dir, 'rejected.yaml');
    // 500 contracts need far more margin than the demo account has: the simulator rejects every place.
    writeFileSync(configFile, `${CONFIG.replace('size: 1 }', 'size: 500 }')}session: { maxBars: 8 }\n`);
    const { code, out, err } = await runPaper(configFile);
    expect(code, err).toBe(1);
    // The lines of a followed symbol name the symbol: its month changes at each roll.
    expect(out).toMatch(/ rejected {2}clibot-1 (buy|sell) 500 F\.US\.EP \(front month\) market: .*InsufficientFunds/);
    expect(out).toMatch(/\nevery order of the session was rejected \(\d+\); the first: .*InsufficientFunds/);
    expect(err).toMatch(/paper: every order of the session was rejected/);
  }, 60_000);

  it('a strategy that throws: halted, the account flattened (onStrategyError: flatten), a final status line, exit 1', async () => {
    const configFile = path.join(dir, 'throws.yaml');
    const strategy = path.join(import.meta.dirname, 'fixtures/opens-then-throws.mjs');
    writeFileSync(
      configFile,
      CONFIG.replace(
        'strategy: { name: sma-cross, id: clibot, params: { fast: 2, slow: 4, size: 1 } }',
        `strategy: { name: '${strategy}', id: thrower }`,
      ),
    );
    const child = spawn(process.execPath, [path.join(REPO, 'bin/tickline.js'), 'paper', '--config', configFile], {
      cwd: dir,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
    expect(code, err).toBe(1);
    expect(out).toMatch(/filled {4}thrower-1 buy 1 /);
    expect(out).toMatch(/session ended: .*position flat/);
    expect(err).toMatch(
      /paper: strategy 'thrower' failed at the bar of .*: strategy bug on the third bar; the account was flattened/,
    );
    expect(err).not.toMatch(/\n\s+at /);
    const j = Journal.open(path.join(dir, 'journal.sqlite'));
    try {
      const kinds = j.entries().map((e) => e.kind);
      expect(kinds).toContain('strategy-error');
      expect(kinds).toContain('kill-switch');
      expect(j.positionsFromFills().size).toBe(0);
    } finally {
      j.close();
    }
  }, 60_000);
});

/** Runs `tickline paper` to its end and collects its exit code and outputs. */
async function runPaper(configFile: string): Promise<{ code: number | null; out: string; err: string }> {
  const child = spawn(process.execPath, [path.join(REPO, 'bin/tickline.js'), 'paper', '--config', configFile], {
    cwd: path.dirname(configFile),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
  return { code, out, err };
}
