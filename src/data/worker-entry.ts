/**
 * Which file a worker thread runs for one of tickline's worker modules: the compiled JavaScript of dist/
 * (a worker loads it in a fraction of the time TypeScript through tsx takes), or, in a checkout run from its
 * sources without an up-to-date build, a `.mjs` beside the module that registers tsx first (Node 20 ignores
 * `--import tsx` in a worker's execArgv).
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';

const SOURCES = new URL('../', import.meta.url);
const COMPILED = new URL('../../dist/', import.meta.url);

/** The entry of worker module `name` that sits beside the module at `caller` (its `import.meta.url`). */
export function workerEntry(caller: string, name: string): URL {
  if (!caller.endsWith('.ts')) return new URL(`./${name}.js`, caller);
  const source = new URL(`./${name}.ts`, caller);
  const compiled = new URL(path.posix.relative(SOURCES.pathname, source.pathname).replace(/\.ts$/, '.js'), COMPILED);
  if (existsSync(compiled) && builtAfterSources()) return compiled;
  return new URL(`./${name}.mjs`, caller);
}

/**
 * The one-file build of worker module `name` (`<name>-bundle.js` beside its compiled module, which `npm
 * run build` writes after compiling), when dist/ is what runs and the bundle is as new as the build; else
 * `workerEntry(caller, name)`. Only a worker that loads no module of tickline's from outside itself can
 * run it (see scripts/bundle-sweep-worker.mjs).
 */
export function bundledWorkerEntry(caller: string, name: string): URL {
  const entry = workerEntry(caller, name);
  if (!entry.pathname.endsWith('.js')) return entry;
  const bundle = new URL(`./${name}-bundle.js`, entry);
  if (!existsSync(bundle)) return entry;
  const buildInfo = new URL('.tsbuildinfo', COMPILED);
  // An installed package ships no build information: its dist/ and bundle were made together.
  if (existsSync(buildInfo) && statSync(bundle).mtimeMs < statSync(buildInfo).mtimeMs) return entry;
  return bundle;
}

/**
 * dist/ was built after the last change of any source file: a worker must run the same code as this
 * thread, or its part of the work could differ from what this thread would have done.
 */
function builtAfterSources(): boolean {
  // Once a process: every pool, its strategy compilation and every parallel CSV read ask, and the answer
  // is a walk over every source file.
  builtAfter ??= (() => {
    const buildInfo = new URL('.tsbuildinfo', COMPILED);
    if (!existsSync(buildInfo)) return false;
    return newestMtime(fileURLToPath(SOURCES)) <= statSync(buildInfo).mtimeMs;
  })();
  return builtAfter;
}

let builtAfter: boolean | undefined;

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    const time = entry.isDirectory() ? newestMtime(full) : statSync(full).mtimeMs;
    if (time > newest) newest = time;
  }
  return newest;
}

/**
 * The flags a worker thread of tickline's starts with: this process's, without tsx's (`--import tsx`,
 * `--require .../tsx/...`), which a thread would otherwise inherit, and without those a worker thread
 * refuses. A thread runs compiled JavaScript, or registers tsx itself (the `.mjs` entry); tsx's hooks on
 * every module it loaded made a cold 64-run sweep run from the sources (the bench, the tests) 7% slower
 * than the same sweep from the command line. `new Worker` throws on V8's flags (`--max-old-space-size`, the
 * inlining budget of src/cli/compiler-budget.ts) and on the process's own (`--title`), so a sweep under
 * `node --max-old-space-size=8192 bin/tickline.js optimize` failed; a thread shares V8's settings and the
 * process anyway. `accepts` says whether a thread takes a flag (with its value).
 */
export function threadExecArgv(
  execArgv: readonly string[],
  accepts: (flag: readonly string[]) => boolean = workerAccepts,
): string[] {
  const kept: string[] = [];
  for (let k = 0; k < execArgv.length; k++) {
    const flag = execArgv[k]!;
    const eq = flag.indexOf('=');
    const name = eq < 0 ? flag : flag.slice(0, eq);
    // A value given as the next argument (execArgv holds node's options only, each a dash first).
    const next = execArgv[k + 1];
    const separate = eq < 0 && next !== undefined && !next.startsWith('-');
    const value = eq < 0 ? next : flag.slice(eq + 1);
    if (LOADER_FLAGS.has(name) && value !== undefined && isTsx(value)) {
      if (eq < 0) k++;
      continue;
    }
    const group = separate ? [flag, next] : [flag];
    if (separate) k++;
    // The loaders' flags are a thread's own; any other is tried on a thread that runs nothing.
    if (LOADER_FLAGS.has(name) || accepts(group)) kept.push(...group);
  }
  return kept;
}

/** Whether a worker thread starts with `flag` (and its value), tried once a process on an empty thread. */
function workerAccepts(flag: readonly string[]): boolean {
  const key = flag.join('\0');
  let accepted = tried.get(key);
  if (accepted === undefined) {
    try {
      const probe = new Worker('', { eval: true, execArgv: [...flag], stdout: true, stderr: true });
      void probe.terminate();
      accepted = true;
    } catch (error) {
      if ((error as { code?: unknown }).code !== 'ERR_WORKER_INVALID_EXEC_ARGV') throw error;
      accepted = false;
    }
    tried.set(key, accepted);
  }
  return accepted;
}

const tried = new Map<string, boolean>();

const LOADER_FLAGS = new Set(['--import', '--require', '-r', '--loader', '--experimental-loader']);

function isTsx(module: string): boolean {
  return module === 'tsx' || module.startsWith('tsx/') || /[\\/]node_modules[\\/]tsx[\\/]/.test(module);
}
