/**
 * A strategy by built-in name (`sma-cross` is `src/strategies/sma-cross.ts`) or by path to a quant's own
 * module (TypeScript through tsx, or JavaScript); its default export, or its only strategy export.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { isStrategyModule, StrategyError, type StrategyModule } from '../../engine/strategy.ts';

const BUILT_IN_DIR = path.resolve(import.meta.dirname, '../../strategies');

export async function loadStrategyModule(nameOrPath: string, cwd = process.cwd()): Promise<StrategyModule> {
  const isPath = nameOrPath.includes('/') || nameOrPath.includes('\\') || /\.[cm]?[jt]s$/.test(nameOrPath);
  let file: string;
  if (isPath) {
    file = path.resolve(cwd, nameOrPath);
  } else {
    if (!/^[a-z0-9-]+$/.test(nameOrPath)) throw new StrategyError('STRATEGY_NOT_FOUND', `"${nameOrPath}" is not a built-in strategy name`);
    file = path.join(BUILT_IN_DIR, `${nameOrPath}.ts`);
  }
  if (!existsSync(file)) {
    throw new StrategyError('STRATEGY_NOT_FOUND', isPath ? `strategy file ${nameOrPath} not found` : `no built-in strategy "${nameOrPath}" (looked for src/strategies/${nameOrPath}.ts)`);
  }
  const module = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  if (isStrategyModule(module.default)) return module.default;
  const found = Object.values(module).filter(isStrategyModule);
  if (found.length === 1) return found[0]!;
  throw new StrategyError('STRATEGY_INVALID', `${nameOrPath} exports ${found.length === 0 ? 'no' : 'several'} strategy modules; export one as default (defineStrategy)`);
}
