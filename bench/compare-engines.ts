/**
 * The same backtests through two checkouts of tickline, every result file compared byte for byte: that a
 * speed change altered no output (issue 30). The order list hash may differ where the two use different
 * hash layouts; every other byte must agree, and the hash is compared as text with the other's value put in.
 *
 * node --import tsx bench/compare-engines.ts --other /path/to/other/checkout [--config backtest/x.yaml ...]
 * Exit 0 when every file agrees; 1 with the first difference of each file otherwise.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    other: { type: 'string' },
    config: { type: 'string', multiple: true },
    // Extra YAML merged into every definition (e.g. `--with fills.spread` variants are not covered here).
  },
});
if (values.other === undefined) throw new Error('--other <checkout> is required');
const here = path.resolve(import.meta.dirname, '..');
const trees = [path.resolve(values.other), here];
const configs = values.config ?? [
  'backtest/default.yaml',
  'backtest/es-sma-cross.yaml',
  'backtest/es-breakout.yaml',
  'backtest/es-mean-reversion.yaml',
];

interface Tree {
  readonly executeBacktest: (
    config: unknown,
    name: string,
    options?: object,
  ) => Promise<{ result: { orderListHash: string } }>;
  readonly writeBacktestOutputs: (dir: string, outcome: unknown) => Promise<unknown>;
  readonly loadConfig: (file: string, schema: unknown) => unknown;
  readonly resolveBacktestPaths: (config: unknown, baseDir: string) => unknown;
  readonly BacktestConfig: unknown;
}

async function load(root: string): Promise<Tree> {
  const backtest = await import(path.join(root, 'src/adapters/backtest/execute.ts'));
  const files = await import(path.join(root, 'src/adapters/backtest/result-files.ts'));
  const config = await import(path.join(root, 'src/adapters/backtest/backtest-config.ts'));
  const loader = await import(path.join(root, 'src/cli/config-loader.ts'));
  return {
    executeBacktest: backtest.executeBacktest,
    writeBacktestOutputs: files.writeBacktestOutputs,
    loadConfig: loader.loadConfig,
    resolveBacktestPaths: config.resolveBacktestPaths,
    BacktestConfig: config.BacktestConfig,
  };
}

const loaded = await Promise.all(trees.map(load));
const out = mkdtempSync(path.join(os.tmpdir(), 'tickline-compare-'));
let differences = 0;
for (const file of configs) {
  const absolute = path.resolve(here, file);
  const hashes: string[] = [];
  const dirs: string[] = [];
  for (const [k, tree] of loaded.entries()) {
    const config = tree.resolveBacktestPaths(tree.loadConfig(absolute, tree.BacktestConfig), path.dirname(absolute));
    const outcome = await tree.executeBacktest(config, path.basename(file, '.yaml'), { cwd: path.dirname(absolute) });
    const dir = path.join(out, `${k}-${path.basename(file, '.yaml')}`);
    await tree.writeBacktestOutputs(dir, outcome);
    hashes.push(outcome.result.orderListHash);
    dirs.push(dir);
  }
  const names = readdirSync(dirs[1]!).sort();
  const same: string[] = [];
  for (const name of names) {
    const other = readFileSync(path.join(dirs[0]!, name), 'utf8').replaceAll(hashes[0]!, hashes[1]!);
    const mine = readFileSync(path.join(dirs[1]!, name), 'utf8');
    if (other === mine) {
      same.push(name);
      continue;
    }
    differences++;
    let at = 0;
    while (at < mine.length && mine[at] === other[at]) at++;
    console.log(
      `${file}: ${name} differs at character ${at}: ...${other.slice(at, at + 80)} | ...${mine.slice(at, at + 80)}`,
    );
  }
  console.log(
    `${file}: ${same.length} of ${names.length} files identical (${same.join(', ')}); hash ${hashes[0]} -> ${hashes[1]}`,
  );
}
rmSync(out, { recursive: true, force: true });
process.exitCode = differences === 0 ? 0 : 1;
