/**
 * Built-in strategies by name, and `loadStrategy`, which also imports a quant's own module from a
 * `.ts` or `.js` file and checks it is a strategy. The compiled CLI loads TypeScript through tsx, which it
 * registers only when a `.ts` file is asked for.
 */
import { existsSync } from 'node:fs';
import { register } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { StrategyError, isStrategyModule, type StrategyModule } from '../engine/strategy.ts';
import breakout from './breakout.ts';
import meanReversion from './mean-reversion.ts';
import smaCross from './sma-cross.ts';

export const builtinStrategies: Readonly<Record<string, StrategyModule>> = Object.freeze({
  [smaCross.name]: smaCross as StrategyModule,
  [breakout.name]: breakout as StrategyModule,
  [meanReversion.name]: meanReversion as StrategyModule,
});

/** Names of the built-in strategies, sorted. */
export function builtinStrategyNames(): string[] {
  return Object.keys(builtinStrategies).sort();
}

/** A strategy name that is a file (it has a folder separator or a .ts or .js ending), not a built-in. */
export function isStrategyFile(nameOrPath: string): boolean {
  return /[\\/]/.test(nameOrPath) || /\.(c|m)?(t|j)s$/.test(nameOrPath);
}

/**
 * A built-in strategy by name, or the strategy exported (default, or as `strategy`) by a file, resolved
 * against `baseDir` (the working directory by default). Errors are `StrategyError`s with a code.
 */
export async function loadStrategy(nameOrPath: string, baseDir: string = process.cwd()): Promise<StrategyModule> {
  if (!isStrategyFile(nameOrPath)) {
    const builtin = builtinStrategies[nameOrPath];
    if (builtin !== undefined) return builtin;
    throw new StrategyError(
      'STRATEGY_NOT_FOUND',
      `unknown strategy '${nameOrPath}': built-ins are ${builtinStrategyNames().join(', ')}; a file path (ending in .ts or .js) loads your own`,
    );
  }
  const file = path.resolve(baseDir, nameOrPath);
  if (!existsSync(file)) throw new StrategyError('STRATEGY_NOT_FOUND', `strategy file not found: ${file}`);
  let loaded: Record<string, unknown>;
  try {
    if (/\.[cm]?ts$/.test(file)) await enableTypeScript();
    loaded = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  } catch (error) {
    throw new StrategyError(
      'STRATEGY_INVALID',
      `strategy file ${file} failed to load: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  const candidate = loaded.default ?? loaded.strategy;
  if (!isStrategyModule(candidate)) {
    throw new StrategyError(
      'STRATEGY_INVALID',
      `${file} does not export a strategy: export default defineStrategy({ name, params: z.object({...}), run: (ctx) => intents$ })`,
    );
  }
  return candidate;
}

let typeScript: Promise<void> | undefined;

/**
 * Lets this thread import TypeScript files: tsx's loader, then our hooks that make a quant's `.ts` file an
 * ES module whatever its folder's package.json says (typescript-hooks.ts). Run from the sources (tests,
 * the bench), the host (vitest, tsx) already compiles TypeScript and nothing is registered.
 */
function enableTypeScript(): Promise<void> {
  typeScript ??= (async () => {
    if (import.meta.url.endsWith('.ts')) return;
    const tsx = await import('tsx/esm/api');
    tsx.register();
    register(new URL('./typescript-hooks.js', import.meta.url));
  })();
  return typeScript;
}
