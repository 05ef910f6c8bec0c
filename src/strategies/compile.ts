/**
 * A quant's TypeScript strategy compiled once to one JavaScript module (esbuild, the compiler tsx itself
 * runs), so that every lane of a sweep imports plain JavaScript instead of each worker thread loading tsx
 * and compiling the same files again. Files of the quant's own are bundled in; packages (tickline, rxjs,
 * zod, ...) stay imports, resolved from the strategy's folder as Node would and written as absolute file
 * URLs, so the module may live in a temporary folder and still shares the framework's rxjs and zod.
 *
 * A strategy that travels to another machine (a sweep on the queue) goes as a bundle: the quant's files
 * inlined, packages imported by name and tickline's own files by their place in the framework
 * (`tickline-own:engine/intents`), so that the receiving machine compiles it against its own install.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { BuildOptions, Plugin } from 'esbuild';
import { StrategyError } from '../engine/strategy.ts';

export interface CompiledStrategy {
  /** Absolute path of the compiled module (a `.mjs` file, loadable without tsx). */
  readonly file: string;
  /** Remove the compiled module. */
  dispose(): Promise<void>;
}

/**
 * Compile `file` (a `.ts` strategy) into a temporary `.mjs` module whose imports of tickline's own files
 * point into `frameworkTree` (the src/ or dist/ folder the loading threads run).
 */
export async function compileStrategy(file: string, frameworkTree: string): Promise<CompiledStrategy> {
  const code = await bundled(`strategy file ${file}`, {
    entryPoints: [file],
    sourcemap: 'inline',
    plugins: [externalImports(frameworkTree)],
  });
  return writeModule(path.basename(file).replace(/\.[cm]?ts$/, ''), code);
}

/** The tree of tickline's own files this process runs (src/ from the sources, dist/ when compiled). */
const OWN_TREE = fileURLToPath(new URL('../', import.meta.url));

/** How a bundle names a file of tickline's own: its path in the framework, without extension. */
const OWN_PREFIX = 'tickline-own:';

/**
 * `file` (a strategy, TypeScript or JavaScript) as one portable module: the quant's own files inlined,
 * packages imported by name, tickline's own files as `tickline-own:` imports. The same sources give the
 * same text wherever they lie (paths in it are relative to the strategy's folder), so its hash names them.
 */
export async function bundleStrategy(file: string): Promise<string> {
  const absolute = path.resolve(file);
  return bundled(`strategy file ${file}`, {
    entryPoints: [absolute],
    absWorkingDir: path.dirname(absolute),
    legalComments: 'none',
    plugins: [portableImports()],
  });
}

/** A bundle of `bundleStrategy` as a module of this machine: its imports resolved against this install. */
export async function compileBundle(code: string, name: string): Promise<CompiledStrategy> {
  const compiled = await bundled(`strategy bundle ${name}`, {
    stdin: { contents: code, loader: 'js', resolveDir: PACKAGE_ROOT, sourcefile: `${name}.mjs` },
    plugins: [ownImports(OWN_TREE), externalImports(OWN_TREE)],
  });
  return writeModule(name, compiled);
}

async function bundled(
  what: string,
  options: Pick<BuildOptions, 'entryPoints' | 'stdin' | 'absWorkingDir' | 'sourcemap' | 'legalComments' | 'plugins'>,
): Promise<string> {
  try {
    // Loaded when first used: a sweep's pool threads import this module and never compile.
    const { build } = await import('esbuild');
    const output = await build({
      ...options,
      bundle: true,
      format: 'esm',
      platform: 'node',
      target: 'node20',
      write: false,
      logLevel: 'silent',
    });
    return output.outputFiles[0]!.text;
  } catch (error) {
    throw new StrategyError(
      'STRATEGY_INVALID',
      `${what} failed to compile: ${error instanceof Error ? error.message.split('\n').slice(0, 3).join(' ') : String(error)}`,
    );
  }
}

async function writeModule(name: string, code: string): Promise<CompiledStrategy> {
  const dir = await mkdtemp(path.join(tmpdir(), 'tickline-strategy-'));
  const compiled = path.join(dir, `${name}.mjs`);
  await writeFile(compiled, code, 'utf8');
  return { file: compiled, dispose: () => rm(dir, { recursive: true, force: true }) };
}

/** Packages stay imports by name, tickline's own files become `tickline-own:` imports; the rest is bundled. */
function portableImports(): Plugin {
  return keptImports(
    'portable-imports',
    (place) => `${OWN_PREFIX}${place}`,
    (specifier) => specifier,
  );
}

/** `tickline-own:` imports as absolute file URLs into `tree`, the framework this machine runs. */
function ownImports(tree: string): Plugin {
  return {
    name: 'own-imports',
    setup(builder) {
      builder.onResolve({ filter: new RegExp(`^${OWN_PREFIX}`) }, (args) => ({
        path: pathToFileURL(inTree(args.path.slice(OWN_PREFIX.length), tree)).href,
        external: true,
      }));
    },
  };
}

/** Where `file` lies in tickline's own src/ or dist/, without extension; undefined for a file of the quant's. */
function ownPlace(file: string): string | undefined {
  for (const from of ['src', 'dist']) {
    const base = path.join(PACKAGE_ROOT, from) + path.sep;
    if (file.startsWith(base))
      return file
        .slice(base.length)
        .replace(/\.(ts|js)$/, '')
        .split(path.sep)
        .join('/');
  }
  return undefined;
}

/** tickline's own package folder (above src/ when run from the sources, above dist/ when compiled). */
const PACKAGE_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * Imports of packages, and of tickline's own files, kept as imports of absolute file URLs: the engine keeps
 * module state the strategy's indicators share (the bar cursor), so a strategy must never get its own
 * copy of the framework. A tickline file is imported from `frameworkTree` (src/ or dist/), the tree the
 * lanes that load the module run.
 */
function externalImports(frameworkTree: string): Plugin {
  return keptImports(
    'external-imports',
    (place) => pathToFileURL(inTree(place, frameworkTree)).href,
    (_specifier, file) => pathToFileURL(file).href,
  );
}

/**
 * A plugin that bundles the quant's own files and leaves as imports tickline's own files (named by
 * `ownImport` from their place in the framework) and packages (by `packageImport` from the specifier as
 * written and the file it resolves to here).
 */
function keptImports(
  name: string,
  ownImport: (place: string) => string,
  packageImport: (specifier: string, file: string) => string,
): Plugin {
  return {
    name,
    setup(builder) {
      builder.onResolve({ filter: /.*/ }, async (args) => {
        if (args.pluginData === 'resolving' || args.kind === 'entry-point') return undefined;
        const resolved = await builder.resolve(args.path, {
          kind: args.kind,
          resolveDir: args.resolveDir,
          importer: args.importer,
          pluginData: 'resolving',
        });
        if (resolved.errors.length > 0) return { errors: resolved.errors };
        if (resolved.external) return { path: args.path, external: true };
        const own = ownPlace(resolved.path);
        if (own !== undefined) return { path: ownImport(own), external: true };
        if (/^[^./]/.test(args.path)) return { path: packageImport(args.path, resolved.path), external: true };
        return { path: resolved.path };
      });
    },
  };
}

/** The file at `place` (a path without extension) of a framework tree: `.js` in dist/, `.ts` in src/. */
function inTree(place: string, tree: string): string {
  const compiled = tree.endsWith(`${path.sep}dist`) || tree.endsWith(`${path.sep}dist${path.sep}`);
  return path.join(tree, `${place}${compiled ? '.js' : '.ts'}`);
}
