/**
 * `tickline init [dir]`: scaffolds a quant's project (see init-files.ts). Never overwrites: a file that
 * is already there is kept, and an existing package.json only gains the scripts and dependencies it
 * lacks, so init also adds tickline to a project that exists.
 */
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseCommandLine } from './args.ts';
import { ExitCode, UsageError } from './exit.ts';
import { PACKAGE_ROOT, ownPackage } from './own-package.ts';
import {
  SCRIPTS,
  allowScripts,
  dependencies,
  devDependencies,
  packageJson,
  projectFiles,
  type ScaffoldVersions,
} from './init-files.ts';

export const summary =
  'Scaffold a project for your own strategies: example strategy, its test, backtest and paper configs';

const USAGE = `Usage: tickline init [dir]

Creates (or completes) a project in dir (default: the working directory): package.json with tickline,
rxjs and zod and the scripts backtest, optimize, paper and test; tsconfig.json (strict); strategies/
with an example strategy and its unit test; backtest.yaml on the synthetic market; paper.yaml;
.gitignore; README.md. Existing files are kept; an existing package.json gains only what it lacks.

Then: cd dir && npm install && npm run backtest

Options:
  -h, --help   This help`;

export async function run(args: string[]): Promise<number> {
  const { values, positionals } = parseCommandLine(args, {}, USAGE, 1);
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return ExitCode.Ok;
  }
  const target = path.resolve(positionals[0] ?? '.');
  if (existsSync(target) && !statSync(target).isDirectory())
    throw new UsageError(`${target} exists and is not a folder`);
  mkdirSync(target, { recursive: true });
  const versions = scaffoldVersions(target);
  const lines = [writePackageJson(target, versions)];
  for (const [file, text] of Object.entries(projectFiles(projectName(target))))
    lines.push(writeNew(target, file, text));
  const cd = positionals[0] === undefined ? '' : `cd ${positionals[0]} && `;
  process.stdout.write(`${lines.join('\n')}\n\nNext: ${cd}npm install && npm run backtest\n`);
  return ExitCode.Ok;
}

/**
 * From a checkout (the sources are beside dist/), the project depends on that folder; `install-links`
 * (.npmrc) makes npm install a packed copy of it, as from the registry, so the project has one rxjs and
 * one zod, its own, shared with tickline.
 */
export function scaffoldVersions(target: string): ScaffoldVersions {
  const own = ownPackage();
  const fromCheckout = existsSync(path.join(PACKAGE_ROOT, 'src', 'cli', 'main.ts'));
  const dev = (name: string): string => {
    const version = own.devDependencies[name];
    if (version === undefined) throw new Error(`tickline's package.json has no devDependency ${name}`);
    return version;
  };
  return {
    tickline: fromCheckout ? `file:${path.relative(target, PACKAGE_ROOT) || '.'}` : `^${own.version}`,
    rxjs: dev('rxjs'),
    zod: dev('zod'),
    typescript: dev('typescript'),
    vitest: dev('vitest'),
    typesNode: dev('@types/node'),
  };
}

function writePackageJson(target: string, versions: ScaffoldVersions): string {
  const file = path.join(target, 'package.json');
  const links = versions.tickline.startsWith('file:') ? [writeNew(target, '.npmrc', 'install-links=true\n')] : [];
  if (!existsSync(file)) {
    writeFileSync(file, `${JSON.stringify(packageJson(projectName(target), versions), null, 2)}\n`);
    return ['created package.json', ...links].join('\n');
  }
  let pkg: Record<string, unknown>;
  try {
    pkg = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  } catch (error) {
    throw new UsageError(`${file}: not valid JSON (${(error as Error).message})`);
  }
  const added: string[] = [];
  if (pkg.type === undefined) {
    pkg.type = 'module';
    added.push('type: module');
  }
  const installed = { ...(pkg.devDependencies as object | undefined), ...(pkg.dependencies as object | undefined) };
  const scripts = addMissing(pkg, 'scripts', SCRIPTS, () => true);
  const deps = addMissing(pkg, 'dependencies', dependencies(versions), (name) => !(name in installed));
  const devDeps = addMissing(pkg, 'devDependencies', devDependencies(versions), (name) => !(name in installed));
  const allowed = addMissing(pkg, 'allowScripts', allowScripts(versions), () => true);
  if (scripts.length > 0) added.push(`scripts ${scripts.join(', ')}`);
  if (deps.length + devDeps.length > 0) added.push(`dependencies ${[...deps, ...devDeps].join(', ')}`);
  if (allowed.length > 0) added.push(`allowScripts ${allowed.join(', ')}`);
  if (added.length === 0) return ['kept package.json (it has everything)', ...links].join('\n');
  writeFileSync(file, `${JSON.stringify(pkg, null, 2)}\n`);
  return [`updated package.json: added ${added.join('; ')}`, ...links].join('\n');
}

/** Adds the entries of `wanted` that `pkg[field]` lacks (and `accept` allows); returns their names. */
function addMissing<T>(
  pkg: Record<string, unknown>,
  field: string,
  wanted: Readonly<Record<string, T>>,
  accept: (name: string) => boolean,
): string[] {
  const current = { ...(pkg[field] as Record<string, T> | undefined) };
  const added = Object.keys(wanted).filter((name) => !(name in current) && accept(name));
  if (added.length > 0) pkg[field] = { ...current, ...Object.fromEntries(added.map((name) => [name, wanted[name]!])) };
  return added;
}

function writeNew(target: string, file: string, text: string): string {
  const full = path.join(target, file);
  if (existsSync(full)) return `kept ${file} (already there)`;
  mkdirSync(path.dirname(full), { recursive: true });
  writeFileSync(full, text);
  return `created ${file}`;
}

/** The folder's name as an npm package name. */
function projectName(target: string): string {
  const name = path
    .basename(target)
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^[._-]+|-+$/g, '');
  return name === '' ? 'trading-strategies' : name;
}
