/**
 * The one strict config loader of every command: YAML parsed with positions, validated by a zod schema
 * (use `z.strictObject` so unknown keys are errors), and EVERY problem reported at once, each naming the
 * file, the line and the field path. A config that fails to load never runs anything (exit code 2).
 */
import { readFileSync } from 'node:fs';
import { isMap, isPair, isScalar, isSeq, LineCounter, parseDocument, type Document, type Node } from 'yaml';
import { z } from 'zod';

export interface ConfigIssue {
  readonly file: string;
  /** 1-based line of the offending node (or of the nearest enclosing node that exists). */
  readonly line: number;
  /** Dotted field path, `[i]` for list items; empty for the document itself. */
  readonly path: string;
  readonly message: string;
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  readonly code = 'CONFIG_INVALID';
  constructor(readonly issues: readonly ConfigIssue[]) {
    super(issues.map(formatIssue).join('\n'));
  }
}

/** `file:line: path: message`; an issue of the whole file (line 0: not found, unreadable) is `file: message`. */
export function formatIssue(issue: ConfigIssue): string {
  const where = issue.line > 0 ? `${issue.file}:${issue.line}` : issue.file;
  return issue.path === '' ? `${where}: ${issue.message}` : `${where}: ${issue.path}: ${issue.message}`;
}

export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else out += out === '' ? String(key) : `.${String(key)}`;
  }
  return out;
}

/** Read and validate a YAML config file. Throws `ConfigError` with every issue, or the file system's error. */
export function loadConfig<S extends z.ZodType>(file: string, schema: S): z.infer<S> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'file not found' : (error as Error).message;
    throw new ConfigError([{ file, line: 0, path: '', message: reason }]);
  }
  return parseConfig(text, file, schema);
}

/** Validate YAML text; `file` only names the source in issues. */
export function parseConfig<S extends z.ZodType>(text: string, file: string, schema: S): z.infer<S> {
  return validateDocument(parseConfigDocument(text, file), schema);
}

/** A parsed YAML document with its line table, for callers that change values (command-line overrides) before validating. */
export interface ConfigDocument {
  readonly file: string;
  readonly doc: Document.Parsed;
  readonly lines: LineCounter;
}

/** Parse YAML with positions; syntax errors are reported all at once as a `ConfigError`. */
export function parseConfigDocument(text: string, file: string): ConfigDocument {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
  if (doc.errors.length > 0) {
    throw new ConfigError(
      doc.errors.map((e) => ({ file, line: lines.linePos(e.pos[0]).line, path: '', message: e.message.split('\n')[0] ?? e.message })),
    );
  }
  return { file, doc, lines };
}

/**
 * Set a value at a path, creating maps as needed (for overrides such as `--param fast=5`). The new node
 * has no position, so an issue about it is reported at the line of its nearest existing parent.
 */
export function setConfigValue(config: ConfigDocument, path: readonly (string | number)[], value: unknown): void {
  if (config.doc.contents === null) config.doc.contents = config.doc.createNode({}) as never;
  config.doc.setIn(path, value);
}

export function validateDocument<S extends z.ZodType>(config: ConfigDocument, schema: S): z.infer<S> {
  const data: unknown = config.doc.toJS() ?? {};
  return validateAt(config, [], schema, data);
}

/**
 * Validate `value`, found at `at` in the document, with another schema (a strategy's parameters, for
 * example): issues are reported at the lines of the document's fields, like the document's own.
 */
export function validateAt<S extends z.ZodType>(config: ConfigDocument, at: readonly (string | number)[], schema: S, value: unknown): z.infer<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  throw new ConfigError(issuesOf(config, result.error.issues, at));
}

/** An issue about the field at `path` of the document (for checks a schema cannot express). */
export function configIssue(config: ConfigDocument, path: readonly (string | number)[], message: string): ConfigIssue {
  return { file: config.file, line: nodeLine(config, path), path: formatPath(path), message };
}

function issuesOf(config: ConfigDocument, zodIssues: readonly z.core.$ZodIssue[], at: readonly PropertyKey[]): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  for (const issue of zodIssues) {
    const path = [...at, ...issue.path];
    if (issue.code === 'unrecognized_keys') {
      // One issue per unknown key, each at the key's own line, so a typo is found at a glance.
      for (const key of issue.keys) {
        issues.push({ file: config.file, line: keyLine(config, path, key), path: formatPath([...path, key]), message: `unknown key "${key}"` });
      }
      continue;
    }
    // zod says "expected object, received undefined" for a key that is not there at all.
    const missing = issue.code === 'invalid_type' && !config.doc.hasIn(path as unknown[]);
    const message = missing ? `required, missing (expected ${issue.expected})` : issue.message;
    issues.push({ file: config.file, line: nodeLine(config, path), path: formatPath(path), message });
  }
  issues.sort((a, b) => a.line - b.line || a.path.localeCompare(b.path));
  return issues;
}

/**
 * Line of the field at `path`: its key's line in the parent map (where a person looks for it), or the item's
 * line in a list; a missing field is reported at its nearest existing ancestor.
 */
function nodeLine(config: ConfigDocument, path: readonly PropertyKey[]): number {
  for (let depth = path.length; depth > 0; depth--) {
    const parent = depth === 1 ? config.doc.contents : config.doc.getIn(path.slice(0, depth - 1) as unknown[], true);
    const key = path[depth - 1];
    if (isMap(parent)) {
      const line = pairKeyLine(config, parent.items, String(key));
      if (line !== undefined) return line;
    } else if (isSeq(parent) && typeof key === 'number') {
      const item = parent.items[key] as Node | undefined;
      if (item && (isMap(item) || isSeq(item) || isScalar(item)) && item.range) return config.lines.linePos(item.range[0]).line;
    }
  }
  const root = config.doc.contents;
  return root && root.range ? config.lines.linePos(root.range[0]).line : 1;
}

function pairKeyLine(config: ConfigDocument, items: readonly unknown[], key: string): number | undefined {
  for (const pair of items) {
    if (isPair(pair) && isScalar(pair.key) && String(pair.key.value) === key && pair.key.range) {
      return config.lines.linePos(pair.key.range[0]).line;
    }
  }
  return undefined;
}

function keyLine(config: ConfigDocument, mapPath: readonly PropertyKey[], key: string): number {
  const map = mapPath.length === 0 ? config.doc.contents : config.doc.getIn(mapPath as unknown[], true);
  return (isMap(map) ? pairKeyLine(config, map.items, key) : undefined) ?? nodeLine(config, mapPath);
}

/** Read a command-line value the way YAML would (`5` is a number, `true` a boolean, `a,b` a string). */
export function parseScalar(text: string): unknown {
  const doc = parseDocument(text);
  return doc.errors.length > 0 ? text : doc.toJS();
}
