/**
 * Tests that run `bin/tickline.js` as a user does run the compiled dist/. `ensureDist()` builds it when a
 * source is newer than the last build (after an edit, a checkout or a merge), as `npm run build` does (the
 * compiled modules, then the one-file sweep worker), one build at a time across the test workers, so no
 * test runs stale JavaScript and none reads a half-written dist/.
 */
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, statSync, utimesSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

export const REPO = path.resolve(import.meta.dirname, '../..');
export const CLI = path.join(REPO, 'bin', 'tickline.js');

const BUILD_INFO = path.join(REPO, 'dist', '.tsbuildinfo');
const LOCK = path.join(REPO, '.cache', 'dist-build.lock');
const LOCK_WAIT_MS = 240_000;
/** A lock older than this was left by a killed run. */
const STALE_LOCK_MS = 600_000;

export async function ensureDist(): Promise<void> {
  await acquireLock();
  try {
    if (!distIsStale()) return;
    const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
    const build = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: REPO, encoding: 'utf8' });
    if (build.status !== 0) throw new Error(`npm run build failed:\n${build.stdout}${build.stderr}`);
    // tsc leaves its build info untouched when no file changed in content; the time marks this check as done.
    const now = new Date();
    utimesSync(BUILD_INFO, now, now);
    // Then the one-file sweep worker, from the new dist/ (package.json's build does the same).
    const bundle = spawnSync(process.execPath, [path.join(REPO, 'scripts', 'bundle-sweep-worker.mjs')], {
      cwd: REPO,
      encoding: 'utf8',
    });
    if (bundle.status !== 0) throw new Error(`bundling the sweep worker failed:\n${bundle.stdout}${bundle.stderr}`);
  } finally {
    rmSync(LOCK, { recursive: true, force: true });
  }
}

function distIsStale(): boolean {
  if (!existsSync(BUILD_INFO)) return true;
  const built = statSync(BUILD_INFO).mtimeMs;
  const inputs = ['package.json', 'tsconfig.json', 'tsconfig.build.json'].map((file) => path.join(REPO, file));
  return inputs.some((file) => statSync(file).mtimeMs > built) || newestIn(path.join(REPO, 'src')) > built;
}

function newestIn(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestIn(full) : statSync(full).mtimeMs);
  }
  return newest;
}

async function acquireLock(): Promise<void> {
  mkdirSync(path.dirname(LOCK), { recursive: true });
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      mkdirSync(LOCK);
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    if (Date.now() - lockTime() > STALE_LOCK_MS) rmSync(LOCK, { recursive: true, force: true });
    if (Date.now() > deadline) throw new Error(`another test run has held ${LOCK} for ${LOCK_WAIT_MS / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function lockTime(): number {
  try {
    return statSync(LOCK).mtimeMs;
  } catch {
    return Date.now();
  }
}

/** The built CLI started as a child process, its output kept whole as it comes. */
export interface CliChild {
  readonly child: ChildProcessWithoutNullStreams;
  readonly out: () => string;
  readonly err: () => string;
  /** The exit code (null when a signal ended it). */
  readonly exited: Promise<number | null>;
}

export function startCli(args: readonly string[], cwd: string): CliChild {
  const child = spawn(process.execPath, [CLI, ...args], { cwd, stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, out: () => out, err: () => err, exited };
}

/** The dashboard a CLI child printed (`dashboard: <url>`): its origin and access token, once it is there. */
export async function printedDashboard(cli: CliChild, ms: number): Promise<{ origin: string; token: string }> {
  const pattern = /dashboard: (http:\/\/127\.0\.0\.1:\d+)\/\?token=(\S+)/;
  const deadline = Date.now() + ms;
  for (;;) {
    const found = pattern.exec(cli.out());
    if (found !== null) return { origin: found[1]!, token: found[2]! };
    if (Date.now() > deadline) throw new Error(`no dashboard URL after ${ms} ms; stderr: ${cli.err().slice(-2000)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
