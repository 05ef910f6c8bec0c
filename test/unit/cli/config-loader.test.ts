import { describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { ConfigError, loadConfig, parseConfig, parseConfigDocument, parseScalar, setConfigValue, validateDocument } from '../../../src/cli/config-loader.ts';

const Schema = z.strictObject({
  name: z.string(),
  data: z.strictObject({ file: z.string(), from: z.string().optional() }),
  params: z.strictObject({ fast: z.number().int().positive(), slow: z.number().int().positive() }),
  fees: z.array(z.number().nonnegative()).default([]),
});

function issuesOf(fn: () => unknown): ConfigError['issues'] {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).issues;
  }
  throw new Error('expected a ConfigError');
}

describe('strict YAML config loader', () => {
  it('returns the parsed, defaulted value of a valid file', () => {
    const value = parseConfig('name: a\ndata:\n  file: x.csv\nparams: { fast: 5, slow: 20 }\n', 'a.yaml', Schema);
    expect(value).toEqual({ name: 'a', data: { file: 'x.csv' }, params: { fast: 5, slow: 20 }, fees: [] });
  });

  it('reports an unknown key at its own line with its path', () => {
    const issues = issuesOf(() => parseConfig('name: a\ndata:\n  file: x.csv\n  form: 2020\nparams: { fast: 5, slow: 20 }\n', 'a.yaml', Schema));
    expect(issues).toEqual([{ file: 'a.yaml', line: 4, path: 'data.form', message: 'unknown key "form"' }]);
  });

  it('reports every error at once, in line order, each with file, line and field', () => {
    const text = ['name: 7', 'data:', '  file: x.csv', 'params:', '  fast: -1', '  slow: 2.5', 'fees: [1, -2]', 'extra: true', ''].join('\n');
    const issues = issuesOf(() => parseConfig(text, 'b.yaml', Schema));
    expect(issues.map((i) => [i.line, i.path])).toEqual([
      [1, 'name'],
      [5, 'params.fast'],
      [6, 'params.slow'],
      [7, 'fees[1]'],
      [8, 'extra'],
    ]);
    expect(issues.every((i) => i.file === 'b.yaml' && i.message.length > 0)).toBe(true);
    expect(new ConfigError(issues).message).toContain('b.yaml:5: params.fast:');
  });

  it('reports a missing key at the line of its parent', () => {
    const issues = issuesOf(() => parseConfig('name: a\ndata:\n  from: "2020"\nparams: { fast: 5, slow: 20 }\n', 'c.yaml', Schema));
    expect(issues).toMatchObject([{ line: 2, path: 'data.file', message: 'required, missing (expected string)' }]);
  });

  it('tells a key that is missing from one set to null', () => {
    const issues = issuesOf(() => parseConfig('name: ~\ndata:\n  file: x.csv\n', 'n.yaml', Schema));
    expect(issues.map((i) => [i.path, i.message])).toEqual([
      ['name', 'Invalid input: expected string, received null'],
      ['params', 'required, missing (expected object)'],
    ]);
  });

  it('prints an issue of the whole file without a line', () => {
    expect(new ConfigError([{ file: 'gone.yaml', line: 0, path: '', message: 'file not found' }]).message).toBe('gone.yaml: file not found');
  });

  it('reports YAML syntax errors and duplicate keys with their lines', () => {
    const issues = issuesOf(() => parseConfig('name: a\nname: b\ndata: [\n', 'd.yaml', Schema));
    expect(issues.length).toBeGreaterThanOrEqual(2);
    expect(issues[0]!.line).toBe(2);
  });

  it('names a missing file as an issue', () => {
    const issues = issuesOf(() => loadConfig(path.join(tmpdir(), 'no-such-tickline.yaml'), Schema));
    expect(issues[0]!.message).toBe('file not found');
  });

  it('loads a file from disk and applies overrides before validation', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'tickline-config-'));
    const file = path.join(dir, 'e.yaml');
    writeFileSync(file, 'name: a\ndata:\n  file: x.csv\nparams: { fast: 5, slow: 20 }\n');
    expect(loadConfig(file, Schema).params.fast).toBe(5);
    const doc = parseConfigDocument('name: a\ndata:\n  file: x.csv\nparams: { fast: 5, slow: 20 }\n', file);
    setConfigValue(doc, ['params', 'fast'], parseScalar('8'));
    setConfigValue(doc, ['params', 'slow'], parseScalar('abc'));
    const issues = issuesOf(() => validateDocument(doc, Schema));
    expect(issues).toMatchObject([{ path: 'params.slow', line: 4 }]);
    setConfigValue(doc, ['params', 'slow'], parseScalar('30'));
    expect(validateDocument(doc, Schema).params).toEqual({ fast: 8, slow: 30 });
  });
});
