/**
 * Every error tickline throws descends from TicklineError, so a command decides its exit code by the kind
 * alone. The source is read rather than imported: an error class added anywhere, exported or not, is seen.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import * as engine from 'tickline';
import * as backtest from 'tickline/backtest';
import * as gateway from 'tickline/gateway';
import * as live from 'tickline/live';
import * as sim from 'tickline/sim';

const SRC = path.resolve(import.meta.dirname, '../../../src');
const BUILT_IN_ERRORS = new Set([
  'Error',
  'TypeError',
  'RangeError',
  'SyntaxError',
  'ReferenceError',
  'EvalError',
  'URIError',
  'AggregateError',
]);
const KINDS = ['usage', 'config', 'input', 'environment', 'runtime', 'ruleBreak'];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return /\.[cm]?[jt]s$/.test(entry.name) ? [full] : [];
  });
}

/** Each class of the sources with the class it extends, and the file it is in. */
function classes(): Map<string, { base: string; file: string }> {
  const found = new Map<string, { base: string; file: string }>();
  for (const file of sourceFiles(SRC)) {
    for (const match of readFileSync(file, 'utf8').matchAll(/\bclass\s+(\w+)(?:<[^>{]*>)?\s+extends\s+([\w.]+)/g)) {
      found.set(match[1]!, { base: match[2]!, file: path.relative(SRC, file) });
    }
  }
  return found;
}

describe('TicklineError is the root of every error class', () => {
  it('only TicklineError extends a built-in error; every other error class descends from it', () => {
    const all = classes();
    expect(all.get('TicklineError')).toEqual({ base: 'Error', file: 'engine/errors.ts' });
    const strays: string[] = [];
    for (const [name, { file }] of all) {
      const chain = [name];
      let base = all.get(name)!.base;
      while (all.has(base) && !chain.includes(base)) {
        chain.push(base);
        base = all.get(base)!.base;
      }
      if (BUILT_IN_ERRORS.has(base) && !chain.includes('TicklineError'))
        strays.push(`${file}: ${chain.join(' -> ')} -> ${base}`);
    }
    expect(strays).toEqual([]);
  });

  it('each exported error class is one, with a kind and a code', () => {
    const exported = Object.entries({ ...engine, ...backtest, ...gateway, ...live, ...sim }).filter(
      ([name, value]) => typeof value === 'function' && /^[A-Z]\w*Error$/.test(name) && name !== 'TicklineError',
    );
    expect(exported.length).toBeGreaterThan(10);
    for (const [name, value] of exported)
      expect((value as { prototype: unknown }).prototype, name).toBeInstanceOf(engine.TicklineError);
    expect(new engine.EngineError('INVALID_PERIOD', 'x')).toMatchObject({
      name: 'EngineError',
      code: 'INVALID_PERIOD',
      kind: 'runtime',
    });
    expect(KINDS).toContain(new backtest.CsvBarsError([]).kind);
  });
});
