/**
 * What a command loads before it does anything: every module a command's file imports statically is read,
 * compiled and run at its start. The queue's client (BullMQ with ioredis) took a quarter of a second of
 * `tickline optimize`'s start, which a sweep in this process never uses; it loads when `--queue` is given.
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadedWith, readImportGraph } from './import-graph.ts';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const graph = readImportGraph(ROOT);
const QUEUE_CLIENT = ['bullmq', 'ioredis'];

describe('what a command loads at its start', () => {
  it('loads no queue client for a sweep in this process', () => {
    const { packages } = loadedWith(graph, 'src/cli/optimize.ts');
    expect(QUEUE_CLIENT.filter((name) => packages.has(name))).toEqual([]);
    // The sweep's own machinery is there: the check follows the imports that load.
    expect(packages.has('tinypool')).toBe(true);
  });

  it('loads the queue client where the command is the queue (the check can fail)', () => {
    for (const command of ['src/cli/worker.ts', 'src/cli/sweep.ts'])
      expect(QUEUE_CLIENT.filter((name) => loadedWith(graph, command).packages.has(name))).toEqual(QUEUE_CLIENT);
  });

  it('follows static imports only, not an import() that loads when it runs', () => {
    const { files } = loadedWith(graph, 'src/cli/main.ts');
    expect(files.has('src/cli/main.ts')).toBe(true);
    // main.ts loads each command with import() once it knows which one runs.
    expect(files.has('src/cli/optimize.ts')).toBe(false);
    expect(graph.valueImports.get('src/cli/main.ts')).toContain('src/cli/optimize.ts');
  });
});
