/** The config of `paper`, `live` and `flatten`: strict, with its paths relative to the file. */
import path from 'node:path';
import { liveConfigSchema, resolveLivePaths, type LiveConfig } from '../adapters/live/config.ts';
import { loadConfig } from './config.ts';

export function loadTradingConfig(file: string): LiveConfig {
  return resolveLivePaths(loadConfig(file, liveConfigSchema), path.dirname(path.resolve(file)));
}
