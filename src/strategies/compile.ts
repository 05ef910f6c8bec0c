/**
 * A quant's TypeScript strategy compiled once to one JavaScript module (esbuild, the compiler tsx itself
 * runs), so that every lane of a sweep imports plain JavaScript instead of each worker thread loading tsx
 * and compiling the same files again. Files of the quant's own are bundled in; packages (tickline, rxjs,
 * zod, ...) stay imports, resolved from the strategy's folder as Node would and written as absolute file
 * URLs, so the module may live in a temporary folder and still shares the framework's rxjs and zod.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build, type Plugin } from 'esbuild';
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
  let code: string;
  try {
    const output = await build({
      entryPoints: [file],
      bundle: true,
      format: 'esm',
      platform: 'node',
      target: 'node20',
      write: false,
      sourcemap: 'inline',
      logLevel: 'silent',
      plugins: [externalImports(frameworkTree)],
    });
    code = output.outputFiles[0]!.text;
  } catch (error) {
    throw new StrategyError('STRATEGY_INVALID', `strategy file ${file} failed to compile: ${error instanceof Error ? error.message.split('\n').slice(0, 3).join(' ') : String(error)}`);
  }
  const dir = await mkdtemp(path.join(tmpdir(), 'tickline-strategy-'));
  const compiled = path.join(dir, `${path.basename(file).replace(/\.[cm]?ts$/, '')}.mjs`);
  await writeFile(compiled, code, 'utf8');
  return { file: compiled, dispose: () => rm(dir, { recursive: true, force: true }) };
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
  return {
    name: 'external-imports',
    setup(builder) {
      builder.onResolve({ filter: /.*/ }, async (args) => {
        if (args.pluginData === 'resolving' || args.kind === 'entry-point') return undefined;
        const resolved = await builder.resolve(args.path, { kind: args.kind, resolveDir: args.resolveDir, importer: args.importer, pluginData: 'resolving' });
        if (resolved.errors.length > 0) return { errors: resolved.errors };
        if (resolved.external) return { path: args.path, external: true };
        const own = frameworkFile(resolved.path, frameworkTree);
        if (own !== undefined) return { path: pathToFileURL(own).href, external: true };
        if (/^[^./]/.test(args.path)) return { path: pathToFileURL(resolved.path).href, external: true };
        return { path: resolved.path };
      });
    },
  };
}

/** The file of tickline's own that `file` is, in `tree`; undefined for a file of the quant's. */
function frameworkFile(file: string, tree: string): string | undefined {
  for (const from of ['src', 'dist']) {
    const base = path.join(PACKAGE_ROOT, from) + path.sep;
    if (!file.startsWith(base)) continue;
    const relative = file.slice(base.length);
    const inTree = path.join(tree, relative);
    return tree.endsWith(`${path.sep}dist`) || tree.endsWith(`${path.sep}dist${path.sep}`) ? inTree.replace(/\.ts$/, '.js') : inTree.replace(/\.js$/, '.ts');
  }
  return undefined;
}
