/**
 * docs/api.md shows the files of docs/examples/ as they are; `tsc` (the first half of `npm test`)
 * type-checks them against the package's entry points, and this file runs them. The entry points resolve
 * to the sources through tsconfig "paths" and vitest aliases that must say what package.json "exports" says.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { isStrategyModule } from '../../../src/engine/strategy.ts';
import { CALENDAR } from '../../../src/market/contract-months.ts';

const REPO = path.resolve(import.meta.dirname, '../../..');
const EXAMPLES = path.join(REPO, 'docs', 'examples');

/** `<!-- example: docs/examples/x.ts -->` followed by a ```ts block: the file name and the block. */
function documentedExamples(markdown: string): Map<string, string> {
  const blocks = new Map<string, string>();
  for (const match of markdown.matchAll(/<!-- example: (\S+) -->\n```ts\n([\s\S]*?)```\n/g))
    blocks.set(match[1]!, match[2]!);
  return blocks;
}

describe('docs/api.md', () => {
  it('shows every example file, each exactly as it is', () => {
    const blocks = documentedExamples(readFileSync(path.join(REPO, 'docs', 'api.md'), 'utf8'));
    const files = readdirSync(EXAMPLES)
      .filter((f) => f.endsWith('.ts'))
      .map((f) => `docs/examples/${f}`);
    expect([...blocks.keys()].sort()).toEqual(files.sort());
    for (const [file, block] of blocks) expect(block, file).toBe(readFileSync(path.join(REPO, file), 'utf8'));
  });

  it("docs/live.md's library example is docs/examples/paper.ts, as it is (imports from tickline/live)", () => {
    const blocks = documentedExamples(readFileSync(path.join(REPO, 'docs', 'live.md'), 'utf8'));
    expect([...blocks.keys()]).toEqual(['docs/examples/paper.ts']);
    const block = blocks.get('docs/examples/paper.ts')!;
    expect(block).toBe(readFileSync(path.join(EXAMPLES, 'paper.ts'), 'utf8'));
    expect(block).toContain("from 'tickline/live'");
    expect(block).not.toMatch(/from '\.\/src\//);
  });

  it('resolves the entry points as package.json exports them (tsconfig paths to the sources)', () => {
    const pkg = JSON.parse(readFileSync(path.join(REPO, 'package.json'), 'utf8')) as {
      name: string;
      exports: Record<string, string | { types: string; default: string }>;
    };
    const tsconfig = JSON.parse(
      readFileSync(path.join(REPO, 'tsconfig.json'), 'utf8').replace(/^\s*\/\/.*$/gm, ''),
    ) as { compilerOptions: { paths: Record<string, string[]> } };
    const exported = Object.entries(pkg.exports).filter(
      (entry): entry is [string, { types: string; default: string }] => typeof entry[1] !== 'string',
    );
    const expected = Object.fromEntries(
      exported.map(([subpath, target]) => [
        `${pkg.name}${subpath.slice(1)}`,
        [target.default.replace(/^\.\/dist\//, './src/').replace(/\.js$/, '.ts')],
      ]),
    );
    expect(tsconfig.compilerOptions.paths).toEqual(expected);
    for (const [, [source]] of Object.entries(expected))
      expect(existsSync(path.join(REPO, source!)), source).toBe(true);
    for (const [, target] of exported) expect(target.types).toBe(target.default.replace(/\.js$/, '.d.ts'));
  });
});

describe('the examples run', () => {
  let log: string[];
  beforeEach(() => {
    log = [];
    vi.spyOn(console, 'log').mockImplementation((...args: unknown[]) => void log.push(args.map(String).join(' ')));
  });
  afterEach(() => vi.restoreAllMocks());

  it('strategy.ts defines a strategy', async () => {
    const { default: strategy } = await import('../../../docs/examples/strategy.ts');
    expect(isStrategyModule(strategy)).toBe(true);
    expect(strategy.params.parse({})).toEqual({ period: 14, low: 30, high: 70, size: 1 });
  });

  it('backtest.ts runs it, reads its results and writes the outputs', async () => {
    const { outcome } = await import('../../../docs/examples/backtest.ts');
    expect(outcome.result.bars).toBeGreaterThan(0);
    expect(outcome.result.trades.length).toBeGreaterThan(0);
    const report = log.find((line) => line.startsWith('report: '))!.slice('report: '.length);
    expect(existsSync(report)).toBe(true);
    expect(existsSync(path.join(path.dirname(report), 'summary.json'))).toBe(true);
    rmSync(path.dirname(report), { recursive: true, force: true });
  });

  it('sweep.ts ranks four parameter sets by Sharpe ratio', async () => {
    const { ranked } = await import('../../../docs/examples/sweep.ts');
    expect(ranked.map((r) => r.params)).toHaveLength(4);
    const sharpe = ranked.map((r) => r.summary?.sharpe ?? Number.NEGATIVE_INFINITY);
    expect(sharpe).toEqual([...sharpe].sort((a, b) => b - a));
  });

  it('paper.ts runs a paper session of five bars on the local simulator', async () => {
    await import('../../../docs/examples/paper.ts');
    expect(log.at(-1)).toMatch(/^balance \d/);
  }, 60_000);

  it('simulator.ts trades on the local simulator through the client', async () => {
    await import('../../../docs/examples/simulator.ts');
    expect(log).toHaveLength(1);
    // The simulator lists the months of its clock (wall time here), so the example's contract is one of today's.
    const listed = CALENDAR.contractsOn('ES', Date.now()).map((month) => CALENDAR.contract('ES', month).id);
    expect(listed.some((id) => log[0]!.includes(id))).toBe(true);
  });
});
