import { describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import {
  ConfigError,
  loadConfig,
  parseConfig,
  parseConfigDocument,
  parseScalar,
  readConfigDocument,
  setConfigValue,
  validateDocument,
} from '../../../src/cli/config-loader.ts';

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
    const issues = issuesOf(() =>
      parseConfig('name: a\ndata:\n  file: x.csv\n  form: 2020\nparams: { fast: 5, slow: 20 }\n', 'a.yaml', Schema),
    );
    expect(issues).toEqual([{ file: 'a.yaml', line: 4, path: 'data.form', message: 'unknown key "form"' }]);
  });

  it('reports every error at once, in line order, each with file, line and field', () => {
    const text = [
      'name: 7',
      'data:',
      '  file: x.csv',
      'params:',
      '  fast: -1',
      '  slow: 2.5',
      'fees: [1, -2]',
      'extra: true',
      '',
    ].join('\n');
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
    const issues = issuesOf(() =>
      parseConfig('name: a\ndata:\n  from: "2020"\nparams: { fast: 5, slow: 20 }\n', 'c.yaml', Schema),
    );
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
    expect(new ConfigError([{ file: 'gone.yaml', line: 0, path: '', message: 'file not found' }]).message).toBe(
      'gone.yaml: file not found',
    );
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

  it('refuses an alias bomb as a config issue at the first alias, not as a crash', () => {
    const rows = ['a: &a [x, x, x, x, x, x, x, x, x]'];
    for (const [k, name] of ['b', 'c', 'd', 'e', 'f', 'g', 'h', 'i'].entries())
      rows.push(`${name}: &${name} [${Array(9).fill(`*${'abcdefgh'[k]}`).join(', ')}]`);
    const issues = issuesOf(() => parseConfig(rows.join('\n'), 'bomb.yaml', z.unknown()));
    expect(issues).toEqual([
      { file: 'bomb.yaml', line: 2, path: '', message: expect.stringContaining('billion laughs') },
    ]);
  });

  it('reports an alias without its anchor at its line', () => {
    const issues = issuesOf(() => parseConfig('name: a\nparams: *p\n', 'u.yaml', Schema));
    expect(issues).toEqual([{ file: 'u.yaml', line: 2, path: '', message: 'alias *p before its anchor &p' }]);
  });

  it("reports a value from the command line as the flag's, not at a line of the file", () => {
    const doc = parseConfigDocument('name: a\ndata:\n  file: x.csv\nparams: { fast: 5, slow: 20 }\n', 'f.yaml');
    setConfigValue(doc, ['params', 'fast'], parseScalar('abc'), '--param fast=abc');
    setConfigValue(doc, ['params', 'nonsense'], parseScalar('1'), '--param nonsense=1');
    const issues = issuesOf(() => validateDocument(doc, Schema));
    expect(issues.map((i) => [i.line, i.origin, i.path])).toEqual([
      [0, '--param fast=abc', 'params.fast'],
      [0, '--param nonsense=1', 'params.nonsense'],
    ]);
    expect(new ConfigError(issues).message).toMatch(/^--param fast=abc \(command line\): params\.fast: /);
    expect(new ConfigError(issues).message).not.toContain('f.yaml');
  });

  it('says where the file leaves no map for a value given on the command line', () => {
    const doc = parseConfigDocument('name: a\nparams: fast\n', 'g.yaml');
    const issues = issuesOf(() => setConfigValue(doc, ['params', 'slow'], 30, '--param slow=30'));
    expect(issues).toEqual([
      { file: 'g.yaml', line: 2, path: 'params', message: 'expected a map, to hold --param slow=30' },
    ]);
  });

  it('reads a command-line alias as its text', () => {
    expect(parseScalar('*x')).toBe('*x');
    expect(parseScalar('[*x]')).toBe('[*x]');
  });

  it('names a file that cannot be read, with the reason, as an issue of the file', () => {
    const issues = issuesOf(() => readConfigDocument(tmpdir()));
    expect(issues).toMatchObject([{ file: tmpdir(), line: 0, path: '', message: expect.stringContaining('EISDIR') }]);
  });
});
