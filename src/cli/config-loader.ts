/**
 * The one strict config loader of every command: YAML parsed with positions, validated by a zod schema
 * (use `z.strictObject` so unknown keys are errors), and EVERY problem reported at once, each naming the
 * file, the line and the field path. A config that fails to load never runs anything (exit code 2).
 */
import { readFileSync } from 'node:fs';
import { isMap, isPair, isScalar, isSeq, LineCounter, parseDocument, visit, type Document, type Node } from 'yaml';
import type { z } from 'zod';
import { TicklineError } from '../engine/errors.ts';

export interface ConfigIssue {
  readonly file: string;
  /** 1-based line of the offending node (or of the nearest enclosing node that exists). */
  readonly line: number;
  /** Dotted field path, `[i]` for list items; empty for the document itself. */
  readonly path: string;
  readonly message: string;
  /** The command-line flag that gave the value (`--param fast=abc`): the value is not in the file. */
  readonly origin?: string;
}

export class ConfigError extends TicklineError {
  override readonly name = 'ConfigError';
  readonly kind = 'config';
  readonly code = 'CONFIG_INVALID';
  constructor(
    readonly issues: readonly ConfigIssue[],
    options?: ErrorOptions,
  ) {
    super(issues.map(formatIssue).join('\n'), options);
  }
}

/**
 * `file:line: path: message`; an issue of the whole file (line 0: not found, unreadable) is `file: message`;
 * a value from the command line is `--flag value (command line): path: message`.
 */
export function formatIssue(issue: ConfigIssue): string {
  const where =
    issue.origin !== undefined
      ? `${issue.origin} (command line)`
      : issue.line > 0
        ? `${issue.file}:${issue.line}`
        : issue.file;
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

/** Read and validate a YAML config file. Throws `ConfigError` with every issue, a file that cannot be read included. */
export function loadConfig<S extends z.ZodType>(file: string, schema: S): z.infer<S> {
  return validateDocument(readConfigDocument(file), schema);
}

/** Read and parse a config file; one that cannot be read is an issue of the file, as every command says it. */
export function readConfigDocument(file: string): ConfigDocument {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'file not found' : (error as Error).message;
    throw new ConfigError([{ file, line: 0, path: '', message: reason }], { cause: error });
  }
  return parseConfigDocument(text, file);
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
  /** The paths set from the command line, each with its flag; filled by `setConfigValue`. */
  readonly overrides: Override[];
}

interface Override {
  readonly path: readonly (string | number)[];
  readonly origin: string;
}

/** Parse YAML with positions; syntax errors are reported all at once as a `ConfigError`. */
export function parseConfigDocument(text: string, file: string): ConfigDocument {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
  if (doc.errors.length > 0) {
    // An error found at the end of the text (a quote or a bracket never closed) is the last line's, not the one after.
    const lastLine = text.replace(/\n$/, '').split('\n').length;
    throw new ConfigError(
      doc.errors.map((e) => ({
        file,
        line: Math.min(lines.linePos(e.pos[0]).line, lastLine),
        path: '',
        message: e.message.split('\n')[0] ?? e.message,
      })),
    );
  }
  return { file, doc, lines, overrides: [] };
}

/**
 * Set a value at a path, creating maps as needed (for overrides such as `--param fast=5`). With `origin`
 * (the flag and its value), an issue about the value names the flag, not a line of the file; without it
 * the new node has no position, and an issue about it is reported at the line of its nearest existing parent.
 */
export function setConfigValue(
  config: ConfigDocument,
  path: readonly (string | number)[],
  value: unknown,
  origin?: string,
): void {
  if (config.doc.contents === null) config.doc.contents = config.doc.createNode({}) as never;
  try {
    config.doc.setIn(path, value);
  } catch (error) {
    // `strategy: sma-cross` in the file leaves no map to put `--param fast=5` in: the file's line says why.
    throw new ConfigError(
      [configIssue(config, blockingNode(config, path), `expected a map, to hold ${origin ?? formatPath(path)}`)],
      { cause: error },
    );
  }
  if (origin !== undefined) config.overrides.push({ path: [...path], origin });
}

/** The path of the first node on the way to `path` that is not a map (the document itself when it is none). */
function blockingNode(config: ConfigDocument, path: readonly (string | number)[]): (string | number)[] {
  if (!isMap(config.doc.contents)) return [];
  for (let depth = 1; depth < path.length; depth++) {
    const node: unknown = config.doc.getIn(path.slice(0, depth), true);
    if (node !== undefined && !isMap(node)) return path.slice(0, depth);
  }
  return [...path];
}

export function validateDocument<S extends z.ZodType>(config: ConfigDocument, schema: S): z.infer<S> {
  let data: unknown;
  try {
    data = config.doc.toJS() ?? {};
  } catch (error) {
    // The yaml package refuses an alias it cannot resolve, and one whose expansion would be a billion laughs.
    if (error instanceof ReferenceError) throw new ConfigError([aliasIssue(config, error)], { cause: error });
    throw error;
  }
  return validateAt(config, [], schema, data);
}

/** The issue of an alias the document cannot expand, at the line of the first alias (or of the one named). */
function aliasIssue(config: ConfigDocument, error: ReferenceError): ConfigIssue {
  const unresolved = /^Unresolved alias.*: (.+)$/.exec(error.message)?.[1];
  let line = 1;
  visit(config.doc, {
    Alias: (_key, alias) => {
      if (unresolved !== undefined && alias.source !== unresolved) return undefined;
      if (alias.range) line = config.lines.linePos(alias.range[0]).line;
      return visit.BREAK;
    },
  });
  const message =
    unresolved !== undefined
      ? `alias *${unresolved} before its anchor &${unresolved}`
      : 'aliases expand too far: refused as a resource exhaustion ("billion laughs") attack';
  return { file: config.file, line, path: '', message };
}

/**
 * Validate `value`, found at `at` in the document, with another schema (a strategy's parameters, for
 * example): issues are reported at the lines of the document's fields, like the document's own.
 */
export function validateAt<S extends z.ZodType>(
  config: ConfigDocument,
  at: readonly (string | number)[],
  schema: S,
  value: unknown,
): z.infer<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  throw new ConfigError(issuesOf(config, result.error.issues, at));
}

/** An issue about the field at `path` of the document (for checks a schema cannot express). */
export function configIssue(config: ConfigDocument, path: readonly (string | number)[], message: string): ConfigIssue {
  return placed(config, path, { file: config.file, line: nodeLine(config, path), path: formatPath(path), message });
}

/** The issue as the command line's when the value at `path` came from there (the closest flag that set it). */
function placed(config: ConfigDocument, path: readonly PropertyKey[], issue: ConfigIssue): ConfigIssue {
  let origin: Override | undefined;
  for (const override of config.overrides) {
    const within =
      override.path.length <= path.length && override.path.every((key, i) => String(key) === String(path[i]));
    if (within && (origin === undefined || override.path.length >= origin.path.length)) origin = override;
  }
  return origin === undefined ? issue : { ...issue, line: 0, origin: origin.origin };
}

function issuesOf(
  config: ConfigDocument,
  zodIssues: readonly z.core.$ZodIssue[],
  at: readonly PropertyKey[],
): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  for (const issue of zodIssues) {
    const path = [...at, ...issue.path];
    if (issue.code === 'unrecognized_keys') {
      // One issue per unknown key, each at the key's own line, so a typo is found at a glance.
      for (const key of issue.keys) {
        issues.push(
          placed(config, [...path, key], {
            file: config.file,
            line: keyLine(config, path, key),
            path: formatPath([...path, key]),
            message: `unknown key "${key}"`,
          }),
        );
      }
      continue;
    }
    // zod says "expected object, received undefined" for a key that is not there at all.
    const missing = issue.code === 'invalid_type' && !config.doc.hasIn(path as unknown[]);
    const message = missing ? `required, missing (expected ${issue.expected})` : issue.message;
    issues.push(
      placed(config, path, { file: config.file, line: nodeLine(config, path), path: formatPath(path), message }),
    );
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
      if (item && (isMap(item) || isSeq(item) || isScalar(item)) && item.range)
        return config.lines.linePos(item.range[0]).line;
    }
  }
  const root = config.doc.contents;
  return root?.range ? config.lines.linePos(root.range[0]).line : 1;
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
  if (doc.errors.length > 0) return text;
  try {
    return doc.toJS();
  } catch (error) {
    // An alias (`*x`) has no anchor to expand on a command line: the value is the text, as a syntax error's is.
    if (error instanceof ReferenceError) return text;
    throw error;
  }
}
