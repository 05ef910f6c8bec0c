/**
 * tickline as a quant gets it: `npm pack`, a new project that installs the tarball, `tickline init`, then
 * the project's own type check, tests and backtest, and a plain `node` script on `tickline/backtest`.
 * Offline, from the packages this checkout already has: npm installs the tarball with an empty cache
 * into a project whose node_modules links every installed package (npm fails if the tarball needs
 * anything else); the project's own tools (TypeScript, vitest) come from a node_modules beside it, a link
 * to this checkout's, and must be the versions its package.json names.
 */
import { execFile } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureDist, REPO } from '../built-cli.ts';

const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const MINUTES = 60_000;

interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** The environment of a fresh shell: nothing of the npm script this test may run under. */
function cleanEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1' };
  for (const key of Object.keys(env)) if (key.toLowerCase().startsWith('npm_')) delete env[key];
  return env;
}

function run(command: string, args: readonly string[], cwd: string): Promise<Run> {
  return new Promise((resolve) => {
    execFile(command, args, { cwd, env: cleanEnv(), maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : 1;
      resolve({ code, stdout, stderr });
    });
  });
}

async function ok(command: string, args: readonly string[], cwd: string): Promise<Run> {
  const result = await run(command, args, cwd);
  if (result.code !== 0)
    throw new Error(`${command} ${args.join(' ')} exited ${result.code}\n${result.stdout}\n${result.stderr}`);
  return result;
}

/** Every package installed in this checkout, linked into `project`'s node_modules where it is missing. */
function linkInstalledPackages(project: string): void {
  const from = path.join(REPO, 'node_modules');
  const to = path.join(project, 'node_modules');
  mkdirSync(to, { recursive: true });
  const names = readdirSync(from)
    .filter((name) => !name.startsWith('.'))
    .flatMap((name) =>
      name.startsWith('@') ? readdirSync(path.join(from, name)).map((scoped) => `${name}/${scoped}`) : [name],
    );
  for (const name of names) {
    if (existsSync(path.join(to, name))) continue;
    mkdirSync(path.dirname(path.join(to, name)), { recursive: true });
    symlinkSync(path.join(from, name), path.join(to, name), 'dir');
  }
}

/**
 * The project's development tools in a node_modules beside it (`npm run` puts ../node_modules/.bin on the
 * PATH, and Node resolves from there too), and nothing else, so no dependency tickline forgot to declare
 * is found there.
 */
function linkTools(names: readonly string[]): void {
  const modules = path.join(dir, 'node_modules');
  mkdirSync(path.join(modules, '.bin'), { recursive: true });
  for (const name of names) {
    const source = path.join(REPO, 'node_modules', name);
    mkdirSync(path.dirname(path.join(modules, name)), { recursive: true });
    symlinkSync(source, path.join(modules, name), 'dir');
    const { bin } = JSON.parse(readFileSync(path.join(source, 'package.json'), 'utf8')) as {
      bin?: string | Record<string, string>;
    };
    const bins = typeof bin === 'string' ? { [name]: bin } : (bin ?? {});
    for (const [command, file] of Object.entries(bins))
      symlinkSync(path.join(source, file), path.join(modules, '.bin', command));
  }
}

/** Where Node finds `name` from the project: its own node_modules, else the one beside it. */
function installedVersion(name: string): string {
  const own = path.join(project, 'node_modules', name, 'package.json');
  const file = existsSync(own) ? own : path.join(dir, 'node_modules', name, 'package.json');
  return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
}

let dir: string;
let project: string;
let tarball: string;
let packed: string[];

beforeAll(async () => {
  await ensureDist();
  dir = mkdtempSync(path.join(os.tmpdir(), 'tickline-package-'));
  const pack = await ok(NPM, ['pack', '--ignore-scripts', '--json', '--pack-destination', dir], REPO);
  const [info] = JSON.parse(pack.stdout) as { filename: string; files: { path: string }[] }[];
  tarball = path.join(dir, info!.filename);
  packed = info!.files.map((f) => f.path);

  project = path.join(dir, 'my-bot');
  mkdirSync(project);
  writeFileSync(
    path.join(project, 'package.json'),
    `${JSON.stringify({ name: 'my-bot', version: '0.0.0', private: true }, null, 2)}\n`,
  );
  linkInstalledPackages(project);
  const cache = path.join(dir, 'npm-cache');
  await ok(
    NPM,
    ['install', tarball, '--offline', '--cache', cache, '--ignore-scripts', '--no-audit', '--no-fund'],
    project,
  );
  await ok(path.join(project, 'node_modules', '.bin', 'tickline'), ['init'], project);
  const { devDependencies } = JSON.parse(readFileSync(path.join(project, 'package.json'), 'utf8')) as {
    devDependencies: Record<string, string>;
  };
  linkTools(Object.keys(devDependencies));
}, 6 * MINUTES);

afterAll(() => {
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

describe('the packed tarball', () => {
  it('holds dist, bin, the README, the LICENSE and the default configs: no sources, tests, benches or docs', () => {
    expect(packed).toEqual(
      expect.arrayContaining([
        'package.json',
        'README.md',
        'LICENSE',
        'bin/tickline.js',
        'backtest/default.yaml',
        'config/paper.yaml',
        'config/live.yaml',
        'config/sim.yaml',
      ]),
    );
    const pkg = JSON.parse(readFileSync(path.join(REPO, 'package.json'), 'utf8')) as {
      exports: Record<string, string | { types: string; default: string }>;
    };
    for (const target of Object.values(pkg.exports)) {
      for (const file of typeof target === 'string'
        ? [target]
        : [target.types, target.default, `${target.default}.map`])
        expect(packed, file).toContain(file.replace(/^\.\//, ''));
    }
    const tops = new Set(packed.map((file) => file.split('/')[0]));
    expect([...tops].sort()).toEqual(['LICENSE', 'README.md', 'backtest', 'bin', 'config', 'dist', 'package.json']);
    expect(
      packed.filter(
        (file) =>
          /(^|\/)(test|bench|src|docs)\//.test(file) || /\.test\.|tsbuildinfo|\.ts$/.test(file.replace(/\.d\.ts$/, '')),
      ),
    ).toEqual([]);
  });

  it('installs as a package: not private, compiled JavaScript and declarations, no path of this machine inside', () => {
    const installed = path.join(project, 'node_modules', 'tickline');
    const pkg = JSON.parse(readFileSync(path.join(installed, 'package.json'), 'utf8')) as Record<string, unknown>;
    expect(pkg.private).toBeUndefined();
    expect(pkg.peerDependencies).toMatchObject({ rxjs: expect.any(String), zod: expect.any(String) });
    const leaks = packed.filter((file) => readFileSync(path.join(installed, file), 'utf8').includes(REPO));
    expect(leaks).toEqual([]);
  });
});

describe('a project made by tickline init in the tarball-installed package', () => {
  it('has the scripts, tickline from the tarball, and the versions of everything else that are installed here', () => {
    const pkg = JSON.parse(readFileSync(path.join(project, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
      dependencies: Record<string, string>;
      devDependencies: Record<string, string>;
    };
    expect(Object.keys(pkg.scripts).sort()).toEqual(['backtest', 'optimize', 'paper', 'test']);
    expect(Object.keys(pkg.dependencies).sort()).toEqual(['rxjs', 'tickline', 'zod']);
    expect(pkg.dependencies.tickline).toBe(`file:../${path.basename(tarball)}`);
    const wanted = { ...pkg.dependencies, ...pkg.devDependencies };
    delete wanted.tickline;
    expect(Object.keys(wanted).sort()).toEqual(['@types/node', 'rxjs', 'typescript', 'vitest', 'zod']);
    for (const [name, version] of Object.entries(wanted)) expect(installedVersion(name), name).toBe(version);
  });

  it(
    'npm test: tsc --noEmit (strict, skipLibCheck false: tickline declarations included) and its vitest test pass',
    async () => {
      const tsconfig = JSON.parse(readFileSync(path.join(project, 'tsconfig.json'), 'utf8')) as {
        compilerOptions: Record<string, unknown>;
      };
      expect(tsconfig.compilerOptions).toMatchObject({ strict: true, skipLibCheck: false });
      const result = await ok(NPM, ['test'], project);
      // The example strategy's two tests and the per-bar example's one.
      expect(result.stdout).toMatch(/Tests\s+3 passed/);
    },
    4 * MINUTES,
  );

  it(
    'npm run backtest: the example strategy on the synthetic market, report written',
    async () => {
      const result = await ok(NPM, ['run', 'backtest'], project);
      expect(result.stdout).toMatch(/orders sha256: [0-9a-f]{64}/);
      expect(existsSync(path.join(project, 'out', 'backtest', 'report.html'))).toBe(true);
    },
    2 * MINUTES,
  );

  it(
    'a plain node script imports tickline/backtest, no tsx: the same run twice gives the same orders',
    async () => {
      writeFileSync(
        path.join(project, 'plain.mjs'),
        `import { BacktestConfig, executeBacktest } from 'tickline/backtest';
const config = BacktestConfig.parse({ strategy: { name: 'sma-cross', params: { fast: 5, slow: 20 } }, contract: 'MESZ5', data: { source: 'synthetic', sessions: 2 } });
const a = await executeBacktest(config, 'plain');
const b = await executeBacktest(config, 'plain');
console.log(JSON.stringify({ bars: a.result.bars, trades: a.result.trades.length, same: a.result.orderListHash === b.result.orderListHash }));
`,
      );
      const result = await ok(process.execPath, ['plain.mjs'], project);
      const printed = JSON.parse(result.stdout) as { bars: number; trades: number; same: boolean };
      expect(printed.bars).toBeGreaterThan(0);
      expect(printed.trades).toBeGreaterThan(0);
      expect(printed.same).toBe(true);
    },
    MINUTES,
  );

  it(
    'a .ts strategy in a folder whose package.json says commonjs loads as an ES module from the command line',
    async () => {
      const folder = path.join(project, 'legacy');
      mkdirSync(folder);
      writeFileSync(path.join(folder, 'package.json'), '{ "type": "commonjs" }\n');
      writeFileSync(
        path.join(folder, 'strategy.ts'),
        readFileSync(path.join(project, 'strategies', 'example.ts'), 'utf8').replace(
          "name: 'example'",
          "name: 'legacy-example'",
        ),
      );
      const tickline = path.join(project, 'node_modules', '.bin', 'tickline');
      const result = await ok(
        tickline,
        ['backtest', '--config', 'backtest.yaml', '--strategy', 'legacy/strategy.ts', '--out', 'out/legacy'],
        project,
      );
      expect(result.stdout).toMatch(/orders sha256: [0-9a-f]{64}/);
      const summary = JSON.parse(readFileSync(path.join(project, 'out', 'legacy', 'summary.json'), 'utf8')) as {
        title: string;
      };
      expect(summary.title).toContain('legacy-example');
    },
    MINUTES,
  );
});
