/**
 * The tree's architecture, checked: each room of src/ has a layer, and a file may import only from its own
 * room or from a room of a lower layer (docs/architecture.md draws it). No file imports another in a cycle
 * of imports that run; a cycle of type imports only is erased at compile time and allowed (the simulator's
 * context, whose parts reach each other through it, is one).
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { importCycles, readImportGraph } from './import-graph.ts';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** Room -> layer. A room imports only rooms of a strictly lower layer (and itself). */
const LAYERS: Readonly<Record<string, number>> = {
  engine: 0,
  protocol: 1,
  market: 1,
  data: 2,
  strategies: 2,
  report: 2,
  'adapters/gateway': 3,
  'adapters/backtest': 4,
  'adapters/live': 4,
  optimize: 5,
  sim: 5,
  node: 5,
  ops: 5,
  cli: 6,
};

function roomOf(file: string): string {
  const parts = file.split('/');
  return parts[1] === 'adapters' ? `adapters/${parts[2]}` : parts[1]!;
}

const graph = readImportGraph(ROOT);

describe('the tree reads as its architecture', () => {
  it('puts every source file in a room with a layer', () => {
    const roomless = graph.files.filter((file) => LAYERS[roomOf(file)] === undefined);
    expect(roomless).toEqual([]);
  });

  it('has no import upward or sideways between rooms', () => {
    const wrong: string[] = [];
    for (const [file, targets] of graph.imports) {
      const from = roomOf(file);
      for (const target of targets) {
        const to = roomOf(target);
        if (to !== from && !(LAYERS[to]! < LAYERS[from]!))
          wrong.push(`${file} -> ${target} (${from} ${LAYERS[from]} -> ${to} ${LAYERS[to]})`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('lets nothing in the protocol or the engine import another room', () => {
    const outward = [...graph.imports].flatMap(([file, targets]) =>
      ['engine', 'protocol'].includes(roomOf(file))
        ? targets.filter((t) => roomOf(t) !== roomOf(file)).map((t) => `${file} -> ${t}`)
        : [],
    );
    expect(outward).toEqual([]);
  });

  it('has no cycle of imports that run', () => {
    expect(importCycles(graph, graph.valueImports)).toEqual([]);
  });

  it('finds a cycle where there is one (the check can fail)', () => {
    const files = ['src/a.ts', 'src/b.ts', 'src/c.ts', 'src/d.ts'];
    const edges = new Map([
      ['src/a.ts', ['src/b.ts']],
      ['src/b.ts', ['src/c.ts']],
      ['src/c.ts', ['src/a.ts']],
      ['src/d.ts', ['src/d.ts']],
    ]);
    expect(
      importCycles({ files, imports: edges, valueImports: edges, staticImports: edges, staticPackages: new Map() }),
    ).toEqual([['src/a.ts', 'src/b.ts', 'src/c.ts'], ['src/d.ts']]);
  });

  it('tells a type-only import from one that runs', () => {
    // report-types.ts names evaluation-report.ts's result type only; statistics.ts calls validate.ts.
    expect(graph.imports.get('src/report/report-types.ts')).toContain('src/report/evaluation-report.ts');
    expect(graph.valueImports.get('src/report/report-types.ts')).not.toContain('src/report/evaluation-report.ts');
    expect(graph.valueImports.get('src/report/statistics.ts')).toContain('src/report/validate.ts');
  });
});

describe('names say which', () => {
  it('gives no two source files one name (room surfaces, index.ts, aside)', () => {
    const byName = new Map<string, string[]>();
    for (const file of graph.files) {
      const name = file.slice(file.lastIndexOf('/') + 1);
      if (name === 'index.ts') continue;
      byName.set(name, [...(byName.get(name) ?? []), file]);
    }
    expect([...byName.values()].filter((files) => files.length > 1)).toEqual([]);
  });
});
