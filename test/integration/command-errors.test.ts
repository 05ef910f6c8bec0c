/**
 * The ordinary mistakes of every command that reads a config, made as a user makes them against the built
 * command in a child process: a missing file, bad YAML, an alias bomb, an unknown key, a value of the
 * wrong type, a flag that does not exist. Each is one error line naming the problem, no stack trace, and
 * exit code 2 (nothing was run). A value given on the command line is the command line's, not a line of the file.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, ensureDist } from './built-cli.ts';

const RANGE_STRATEGY = path.join(import.meta.dirname, 'fixtures', 'range-minutes.mjs');

/** A valid config of each family of commands: its mistakes are made by appending to it. */
const BACKTEST = [
  `strategy: { name: '${RANGE_STRATEGY}', params: { rangeMinutes: 15 } }`,
  'contract: MESZ5',
  'data: { source: synthetic, seed: 1, sessions: 1, start: 2025-01-05 }',
  'account: { startingBalance: 50000 }',
];
const TRADING = [
  'strategy: { name: sma-cross, id: errbot }',
  'contracts: [CON.F.US.EP.Z25]',
  'timeframe: { unit: minute }',
  'gateway: { url: "http://127.0.0.1:9" }',
  'journal: journal.sqlite',
  'session: { maxBars: 1 }',
];
const SIM = ['port: 0', 'dbPath: ":memory:"', 'seed: 1'];

interface Command {
  readonly args: readonly string[];
  readonly config: readonly string[];
  /** A line of the config with a value of the wrong type, and the field it names. */
  readonly wrongType: readonly [line: string, field: string];
}

const COMMANDS: Record<string, Command> = {
  backtest: {
    args: ['backtest'],
    config: BACKTEST,
    wrongType: ['fills: { slippageTicks: lots }', 'fills.slippageTicks'],
  },
  optimize: {
    args: ['optimize', '--grid', 'rangeMinutes=10,20'],
    config: BACKTEST,
    wrongType: ['fills: { slippageTicks: lots }', 'fills.slippageTicks'],
  },
  evaluate: {
    args: ['evaluate', '--evaluation', 'topstep-50k'],
    config: BACKTEST.filter((line) => !line.startsWith('account')),
    wrongType: ['fills: { slippageTicks: lots }', 'fills.slippageTicks'],
  },
  import: { args: ['import'], config: BACKTEST, wrongType: ['fills: { slippageTicks: lots }', 'fills.slippageTicks'] },
  paper: { args: ['paper'], config: TRADING, wrongType: ['log: { level: 7 }', 'log.level'] },
  live: { args: ['live', '--confirm-live'], config: TRADING, wrongType: ['log: { level: 7 }', 'log.level'] },
  flatten: { args: ['flatten'], config: TRADING, wrongType: ['log: { level: 7 }', 'log.level'] },
  sim: { args: ['sim'], config: SIM, wrongType: ['historyDays: many', 'historyDays'] },
};

const BILLION_LAUGHS = ['a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]'];
for (const [k, name] of [...'bcdefghi'].entries())
  BILLION_LAUGHS.push(`${name}: &${name} [${Array(9).fill(`*${'abcdefgh'[k]}`).join(', ')}]`);

let dir: string;
beforeAll(ensureDist, 240_000);
beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'tickline-cli-errors-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Run {
  readonly code: number | null;
  readonly output: string;
}

function tickline(args: readonly string[]): Promise<Run> {
  const env: NodeJS.ProcessEnv = { ...process.env };
  // A debug level in the caller's environment would ask for stack traces.
  delete env.TICKLINE_LOG_LEVEL;
  delete env.TICKLINE_USERNAME;
  delete env.TICKLINE_API_KEY;
  const child = spawn(process.execPath, [CLI, ...args], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

let files = 0;
function configFile(lines: readonly string[]): string {
  const file = path.join(dir, `config-${++files}.yaml`);
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

/** The one error line of a run (a bad flag's usage text after it is not an error line), checked as the issue asks. */
function expectOneErrorLine(run: Run, pattern: RegExp): void {
  // A stack frame, `    at fn (file:1:2)`; optimize's usage has a line starting "at random".
  expect(run.output, 'no stack trace').not.toMatch(/^\s+at .*:\d+:\d+\)?$/m);
  const error = run.output.split(/^Usage: tickline /m)[0]!;
  const lines = error.split('\n').filter((line) => line.trim() !== '');
  expect(lines, run.output).toHaveLength(1);
  expect(lines[0]).toMatch(pattern);
  expect(run.code, run.output).toBe(2);
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

// Each case starts a node process that loads the CLI: generous on a busy machine.
describe.each(Object.entries(COMMANDS))(
  '%s: ordinary mistakes are one line and exit 2',
  { timeout: 60_000 },
  (name, command) => {
    const run = (config: string, ...extra: string[]) => tickline([...command.args, '--config', config, ...extra]);

    it('a missing file', async () => {
      const missing = path.join(dir, 'missing.yaml');
      expectOneErrorLine(await run(missing), new RegExp(`^${name}: ${escapeRegExp(missing)}: file not found$`));
    });

    it('bad YAML, at its line', async () => {
      const file = configFile([...command.config, 'note: "unclosed']);
      expectOneErrorLine(
        await run(file),
        new RegExp(`^${name}: ${escapeRegExp(file)}:${command.config.length + 1}: Missing closing "quote`),
      );
    });

    it('an alias bomb, refused as a bad config', async () => {
      const file = configFile(BILLION_LAUGHS);
      expectOneErrorLine(await run(file), new RegExp(`^${name}: ${escapeRegExp(file)}:2: aliases expand too far`));
    });

    it('an unknown key, at its line', async () => {
      const file = configFile([...command.config, 'nonsense: 1']);
      expectOneErrorLine(
        await run(file),
        new RegExp(`^${name}: ${escapeRegExp(file)}:${command.config.length + 1}: nonsense: unknown key "nonsense"$`),
      );
    });

    it('a value of the wrong type, at its line with its field', async () => {
      const [line, field] = command.wrongType;
      const file = configFile([...command.config, line]);
      expectOneErrorLine(
        await run(file),
        new RegExp(`^${name}: ${escapeRegExp(file)}:${command.config.length + 1}: ${escapeRegExp(field)}: `),
      );
    });

    it('a flag that does not exist', async () => {
      const file = configFile(command.config);
      const bad = await run(file, '--nonsense');
      expectOneErrorLine(bad, new RegExp(`^${name}: Unknown option '--nonsense'`));
      expect(bad.output).toContain(`Usage: tickline ${name}`);
    });
  },
);

describe('a value given on the command line', { timeout: 60_000 }, () => {
  it.each([['backtest'], ['optimize'], ['evaluate']])(
    "%s: a --param of the wrong type is reported as the command line's",
    async (name) => {
      const file = configFile(COMMANDS[name]!.config);
      const run = await tickline([...COMMANDS[name]!.args, '--config', file, '--param', 'rangeMinutes=abc']);
      expectOneErrorLine(
        run,
        new RegExp(`^${name}: --param rangeMinutes=abc \\(command line\\): strategy\\.params\\.rangeMinutes: `),
      );
      expect(run.output).not.toContain(file);
    },
  );
});
