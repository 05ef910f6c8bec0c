import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { main } from '../../../src/cli/main.ts';
import { ExitCode } from '../../../src/cli/exit.ts';
import { loadConfig } from '../../../src/cli/config-loader.ts';
import { BacktestConfig } from '../../../src/adapters/backtest/backtest-config.ts';
import { liveConfigSchema } from '../../../src/adapters/live/live-config.ts';
import { captureOutput } from './capture-output.ts';

const REPO = path.resolve(import.meta.dirname, '../../..');
const own = JSON.parse(readFileSync(path.join(REPO, 'package.json'), 'utf8')) as {
  version: string;
  devDependencies: Record<string, string>;
};

let dir: string;
const { out, err } = captureOutput();

beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'tickline-init-'));
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

const FILES = [
  'package.json',
  '.npmrc',
  'tsconfig.json',
  'strategies/example.ts',
  'strategies/example.test.ts',
  'strategies/per-bar.ts',
  'strategies/per-bar.test.ts',
  'backtest.yaml',
  'paper.yaml',
  '.gitignore',
  'README.md',
];

function readJson(file: string): Record<string, unknown> {
  return JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
}

describe('tickline init', () => {
  it('scaffolds a project whose package.json pins what this release is tested with', async () => {
    const project = path.join(dir, 'My Bot');
    expect(await main(['init', project])).toBe(ExitCode.Ok);
    for (const file of FILES) expect(existsSync(path.join(project, file)), file).toBe(true);
    const pkg = readJson(path.join(project, 'package.json'));
    expect(pkg).toMatchObject({
      name: 'my-bot',
      type: 'module',
      scripts: {
        backtest: 'tickline backtest --config backtest.yaml',
        paper: 'tickline paper --config paper.yaml',
        test: 'tsc --noEmit && vitest run',
      },
      dependencies: { rxjs: own.devDependencies.rxjs, zod: own.devDependencies.zod },
      devDependencies: {
        typescript: own.devDependencies.typescript,
        vitest: own.devDependencies.vitest,
        '@types/node': own.devDependencies['@types/node'],
      },
      allowScripts: { 'better-sqlite3': true, tickline: true },
    });
    expect((pkg.scripts as Record<string, string>).optimize).toMatch(
      /^tickline optimize --config backtest\.yaml --grid /,
    );
    // From a checkout: the checkout itself, installed as a packed copy.
    expect((pkg.dependencies as Record<string, string>).tickline).toBe(`file:${path.relative(project, REPO)}`);
    expect(readFileSync(path.join(project, '.npmrc'), 'utf8')).toBe('install-links=true\n');
    expect(readJson(path.join(project, 'tsconfig.json'))).toMatchObject({
      compilerOptions: { strict: true, skipLibCheck: false },
    });
    expect(readFileSync(path.join(project, 'strategies/example.ts'), 'utf8')).toContain("from 'tickline'");
    expect(readFileSync(path.join(project, 'strategies/example.test.ts'), 'utf8')).toContain(
      "from 'tickline/backtest'",
    );
    expect(out.join('')).toContain(`Next: cd ${project} && npm install && npm run backtest`);
  });

  it('writes configs that the backtest and paper commands accept, with the strategy beside them', async () => {
    expect(await main(['init', dir])).toBe(ExitCode.Ok);
    const backtest = loadConfig(path.join(dir, 'backtest.yaml'), BacktestConfig);
    expect(backtest).toMatchObject({ strategy: { name: './strategies/example.ts' }, data: { source: 'synthetic' } });
    const paper = loadConfig(path.join(dir, 'paper.yaml'), liveConfigSchema);
    expect(paper).toMatchObject({ strategy: { name: './strategies/example.ts' }, journal: 'var/paper.sqlite' });
    expect(paper.gateway.url).toBeUndefined();
  });

  it('never overwrites: a second run keeps every file', async () => {
    expect(await main(['init', dir])).toBe(ExitCode.Ok);
    writeFileSync(path.join(dir, 'backtest.yaml'), '# mine\n');
    out.length = 0;
    expect(await main(['init', dir])).toBe(ExitCode.Ok);
    expect(readFileSync(path.join(dir, 'backtest.yaml'), 'utf8')).toBe('# mine\n');
    expect(out.join('')).toContain('kept package.json (it has everything)');
    expect(out.join('')).toContain('kept backtest.yaml (already there)');
    expect(out.join('')).not.toContain('created');
  });

  it('completes an existing package.json with what it lacks and keeps what it has', async () => {
    writeFileSync(
      path.join(dir, 'package.json'),
      JSON.stringify({
        name: 'desk',
        type: 'commonjs',
        scripts: { test: 'node --test' },
        dependencies: { rxjs: '7.8.1', lodash: '4.17.21' },
      }),
    );
    expect(await main(['init', dir])).toBe(ExitCode.Ok);
    const pkg = readJson(path.join(dir, 'package.json'));
    expect(pkg.name).toBe('desk');
    expect(pkg.type).toBe('commonjs');
    expect(pkg.scripts).toMatchObject({ test: 'node --test', backtest: 'tickline backtest --config backtest.yaml' });
    expect(pkg.dependencies).toMatchObject({ rxjs: '7.8.1', lodash: '4.17.21', zod: own.devDependencies.zod });
    expect(out.join('')).toMatch(
      /updated package\.json: added scripts backtest, optimize, paper; dependencies tickline, zod, @types\/node, typescript, vitest/,
    );
  });

  it('refuses a target that is a file, a broken package.json and extra arguments (exit 2)', async () => {
    writeFileSync(path.join(dir, 'file'), 'x');
    expect(await main(['init', path.join(dir, 'file')])).toBe(ExitCode.Usage);
    expect(err.join('')).toContain('exists and is not a folder');
    mkdirSync(path.join(dir, 'broken'));
    writeFileSync(path.join(dir, 'broken', 'package.json'), '{ nope');
    expect(await main(['init', path.join(dir, 'broken')])).toBe(ExitCode.Usage);
    expect(err.join('')).toContain('package.json: not valid JSON');
    expect(await main(['init', 'a', 'b'])).toBe(ExitCode.Usage);
    expect(err.join('')).toContain("unexpected argument 'b'");
  });

  it('is listed by --help, and --version prints the package version', async () => {
    expect(await main(['--help'])).toBe(ExitCode.Ok);
    expect(out.join('')).toMatch(/^ {2}init {9}Scaffold a project/m);
    out.length = 0;
    expect(await main(['--version'])).toBe(ExitCode.Ok);
    expect(out.join('')).toBe(`${own.version}\n`);
  });
});
