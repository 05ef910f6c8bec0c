/**
 * Evaluation rule files: the shipped presets in config/evaluations/ (named without the extension, for
 * example `topstep-50k`) or a YAML file of one's own, validated strictly like every config.
 */
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { evaluationPresetSchema, type EvaluationPreset } from '../engine/evaluation-rules.ts';
import { ConfigError, loadConfig } from './config-loader.ts';

/** The shipped presets' folder, found from this file so it does not depend on the working directory. */
export const PRESET_DIR = fileURLToPath(new URL('../../config/evaluations/', import.meta.url));

export function presetNames(): string[] {
  return readdirSync(PRESET_DIR)
    .filter((file) => file.endsWith('.yaml'))
    .map((file) => file.slice(0, -'.yaml'.length))
    .sort();
}

/** A preset name, or a path (with a `/` or a .yaml/.yml ending) taken relative to `baseDir`. */
export function evaluationFile(nameOrPath: string, baseDir: string): string {
  const isPath = nameOrPath.includes('/') || nameOrPath.includes(path.sep) || /\.ya?ml$/i.test(nameOrPath);
  if (isPath) return path.resolve(baseDir, nameOrPath);
  if (!presetNames().includes(nameOrPath)) {
    throw new ConfigError([
      {
        file: nameOrPath,
        line: 0,
        path: '',
        message: `no evaluation preset "${nameOrPath}"; the presets are ${presetNames().join(', ')} (or give a path to a YAML file)`,
      },
    ]);
  }
  return path.join(PRESET_DIR, `${nameOrPath}.yaml`);
}

/** A preset or an evaluation file of one's own: the rules with their source, the date they were read and a note. */
export function loadEvaluationRules(nameOrPath: string, baseDir = process.cwd()): EvaluationPreset {
  return loadConfig(evaluationFile(nameOrPath, baseDir), evaluationPresetSchema);
}
