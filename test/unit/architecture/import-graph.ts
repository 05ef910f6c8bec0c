/**
 * The project's import graph, read from the sources with the TypeScript compiler's parser: `import`,
 * `export … from` and `import()`, each marked as a type-only import (erased at compile time) or not.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

export interface ImportGraph {
  /** Every source file, as a path relative to the project root (`src/engine/runner.ts`). */
  readonly files: readonly string[];
  /** Each file's imports of other project files, relative paths as above. */
  readonly imports: ReadonlyMap<string, readonly string[]>;
  /** The imports that remain in the compiled JavaScript (not `import type`, not only types named). */
  readonly valueImports: ReadonlyMap<string, readonly string[]>;
  /** The value imports that load with the file (not an `import()`, which loads when it runs). */
  readonly staticImports: ReadonlyMap<string, readonly string[]>;
  /** The packages each file loads with it (`bullmq`, `@microsoft/signalr`; not Node's own). */
  readonly staticPackages: ReadonlyMap<string, readonly string[]>;
}

interface ImportRef {
  readonly spec: string;
  readonly typeOnly: boolean;
  /** An `import()`: the module loads when the call runs, not with the file. */
  readonly dynamic?: boolean;
}

/** The module specifiers a file names, each with whether it is erased at compile time. */
function importRefs(file: string, text: string): ImportRef[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const refs: ImportRef[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const clause = node.importClause;
      const named = clause?.namedBindings;
      const typeOnly =
        clause !== undefined &&
        (clause.isTypeOnly ||
          (clause.name === undefined &&
            named !== undefined &&
            ts.isNamedImports(named) &&
            named.elements.length > 0 &&
            named.elements.every((e) => e.isTypeOnly)));
      refs.push({ spec: node.moduleSpecifier.text, typeOnly });
    } else if (
      ts.isExportDeclaration(node) &&
      node.moduleSpecifier !== undefined &&
      ts.isStringLiteral(node.moduleSpecifier)
    ) {
      const clause = node.exportClause;
      const typeOnly =
        node.isTypeOnly ||
        (clause !== undefined &&
          ts.isNamedExports(clause) &&
          clause.elements.length > 0 &&
          clause.elements.every((e) => e.isTypeOnly));
      refs.push({ spec: node.moduleSpecifier.text, typeOnly });
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [argument] = node.arguments;
      if (argument !== undefined && ts.isStringLiteralLike(argument))
        refs.push({ spec: argument.text, typeOnly: false, dynamic: true });
    } else if (
      ts.isImportTypeNode(node) &&
      ts.isLiteralTypeNode(node.argument) &&
      ts.isStringLiteral(node.argument.literal)
    ) {
      refs.push({ spec: node.argument.literal.text, typeOnly: true });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return refs;
}

export function readImportGraph(root: string, folder = 'src'): ImportGraph {
  const files = sourceFiles(path.join(root, folder)).map((file) => path.relative(root, file).split(path.sep).join('/'));
  const known = new Set(files);
  const imports = new Map<string, string[]>();
  const valueImports = new Map<string, string[]>();
  const staticImports = new Map<string, string[]>();
  const staticPackages = new Map<string, string[]>();
  for (const file of files) {
    const all = importRefs(file, readFileSync(path.join(root, file), 'utf8'));
    const refs = all
      .filter((ref) => ref.spec.startsWith('.'))
      .map((ref) => ({
        target: path.posix.normalize(path.posix.join(path.posix.dirname(file), ref.spec)),
        typeOnly: ref.typeOnly,
        dynamic: ref.dynamic === true,
      }))
      .filter((ref) => known.has(ref.target));
    imports.set(file, [...new Set(refs.map((ref) => ref.target))]);
    valueImports.set(file, [...new Set(refs.filter((ref) => !ref.typeOnly).map((ref) => ref.target))]);
    staticImports.set(file, [...new Set(refs.filter((ref) => !ref.typeOnly && !ref.dynamic).map((ref) => ref.target))]);
    const packages = all
      .filter(
        (ref) => !ref.typeOnly && ref.dynamic !== true && !ref.spec.startsWith('.') && !ref.spec.startsWith('node:'),
      )
      .map((ref) => packageOf(ref.spec));
    staticPackages.set(file, [...new Set(packages)]);
  }
  return { files, imports, valueImports, staticImports, staticPackages };
}

/** `@scope/name` or `name` of a bare specifier (`bullmq`, `tsx/esm/api` -> `tsx`). */
function packageOf(spec: string): string {
  const parts = spec.split('/');
  return spec.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!;
}

/** The project files and packages that load with `file`: its static imports, followed to the end. */
export function loadedWith(graph: ImportGraph, file: string): { files: Set<string>; packages: Set<string> } {
  const files = new Set([file]);
  const packages = new Set<string>();
  const queue = [file];
  for (let next = queue.pop(); next !== undefined; next = queue.pop()) {
    for (const name of graph.staticPackages.get(next) ?? []) packages.add(name);
    for (const target of graph.staticImports.get(next) ?? [])
      if (!files.has(target)) {
        files.add(target);
        queue.push(target);
      }
  }
  return { files, packages };
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return /\.(ts|mts)$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [full] : [];
  });
}

/**
 * Strongly connected components of more than one file (or a file importing itself) over `edges`: the
 * import cycles.
 */
export function importCycles(
  graph: ImportGraph,
  edges: ReadonlyMap<string, readonly string[]> = graph.imports,
): string[][] {
  // Tarjan's algorithm, iterative so a deep chain of imports cannot overflow the stack.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const cycles: string[][] = [];
  let next = 0;
  for (const start of graph.files) {
    if (index.has(start)) continue;
    const work: { file: string; edge: number }[] = [{ file: start, edge: 0 }];
    index.set(start, next);
    low.set(start, next++);
    stack.push(start);
    onStack.add(start);
    while (work.length > 0) {
      const frame = work[work.length - 1]!;
      const targets = edges.get(frame.file) ?? [];
      if (frame.edge < targets.length) {
        const target = targets[frame.edge++]!;
        if (!index.has(target)) {
          index.set(target, next);
          low.set(target, next++);
          stack.push(target);
          onStack.add(target);
          work.push({ file: target, edge: 0 });
        } else if (onStack.has(target)) {
          low.set(frame.file, Math.min(low.get(frame.file)!, index.get(target)!));
        }
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent !== undefined) low.set(parent.file, Math.min(low.get(parent.file)!, low.get(frame.file)!));
      if (low.get(frame.file) === index.get(frame.file)) {
        const component: string[] = [];
        let member: string;
        do {
          member = stack.pop()!;
          onStack.delete(member);
          component.push(member);
        } while (member !== frame.file);
        const selfImport = (edges.get(frame.file) ?? []).includes(frame.file);
        if (component.length > 1 || selfImport) cycles.push(component.sort());
      }
    }
  }
  return cycles;
}
