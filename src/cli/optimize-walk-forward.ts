/**
 * `tickline optimize --folds n`: the rolling (or `--anchored`) walk-forward of src/adapters/backtest/
 * walk-forward.ts, printed fold by fold with the stitched out-of-sample statistics, and written to
 * out/<name>/walk-forward.json and walk-forward-equity.csv.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { BacktestConfig } from '../adapters/backtest/backtest-config.ts';
import type { History } from '../adapters/backtest/definition-run.ts';
import type { Grid } from '../optimize/grid-sweep.ts';
import { runWalkForward, type WalkForwardOptions, type WalkForwardResult } from '../optimize/walk-forward.ts';

export interface WalkForwardCommand extends Omit<WalkForwardOptions, 'onResult'> {
  readonly config: BacktestConfig;
  readonly name: string;
  readonly history: History;
  readonly grid: Grid;
}

export async function runWalkForwardCommand(command: WalkForwardCommand): Promise<string> {
  const started = Date.now();
  const result = await runWalkForward(
    { config: command.config, name: command.name },
    command.history,
    command.grid,
    command,
  );
  const seconds = (Date.now() - started) / 1000;
  const outDir = command.config.out ?? path.join('out', command.name);
  await mkdir(outDir, { recursive: true });
  const json = path.join(outDir, 'walk-forward.json');
  const equity = path.join(outDir, 'walk-forward-equity.csv');
  await writeFile(json, `${JSON.stringify(walkForwardJson(command, result), null, 2)}\n`, 'utf8');
  await writeFile(equity, equityCsv(result), 'utf8');
  return `${foldTable(command, result)}\nstitched out-of-sample: net PnL ${result.statistics.netPnl.toFixed(2)}${command.metric === 'netPnl' ? '' : `, ${command.metric} ${show(result.statistics[command.metric])}`}, trades ${result.statistics.trades}, max drawdown ${result.statistics.maxDrawdown.toFixed(2)} (${seconds.toFixed(1)} s)\nresults: ${json}, ${equity}\n`;
}

const show = (v: number | null | undefined) => (v === null || v === undefined ? '-' : v.toFixed(2));
const day = (time: number) => new Date(time).toISOString().slice(0, 16).replace('T', ' ');

function foldTable(command: WalkForwardCommand, result: WalkForwardResult): string {
  const t = command.history.bars.time;
  // netPnl is always shown; as the metric it is not shown twice.
  const extra = command.metric === 'netPnl' ? [] : ['test netPnl'];
  const header = [
    'fold',
    'train',
    'test',
    'chosen',
    `train ${command.metric}`,
    `test ${command.metric}`,
    ...extra,
    'trades',
  ];
  const rows = result.folds.map((f) => [
    String(f.fold.index + 1),
    `${day(t[f.fold.train[0]]!)} .. ${day(t[f.fold.train[1] - 1]!)}`,
    `${day(t[f.fold.test[0]]!)} .. ${day(t[f.fold.test[1] - 1]!)}`,
    f.chosen === undefined
      ? 'none (no run with a value)'
      : Object.entries(f.chosen)
          .map(([k, v]) => `${k}=${String(v)}`)
          .join(' '),
    show(f.training[0]?.summary?.[command.metric]),
    show(f.test?.[command.metric]),
    ...extra.map(() => show(f.test?.netPnl)),
    f.test === undefined ? '-' : String(f.test.trades),
  ]);
  const table = [header, ...rows];
  const widths = header.map((_, c) => Math.max(...table.map((r) => r[c]!.length)));
  const plan = command.plan;
  return `${command.name}: walk-forward, ${plan.folds} ${plan.mode} folds, training on ${plan.trainWindows} test windows${plan.mode === 'anchored' ? ' or more' : ''}, ${command.method} search by ${command.metric}\n${table
    .map((r) =>
      r
        .map((cell, c) => cell.padEnd(widths[c]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n')}`;
}

function walkForwardJson(command: WalkForwardCommand, result: WalkForwardResult): unknown {
  const t = command.history.bars.time;
  return {
    metric: command.metric,
    grid: command.grid,
    search: { method: command.method, trials: command.trials, seed: command.seed },
    plan: command.plan,
    data: command.history.description,
    folds: result.folds.map((f) => ({
      fold: f.fold.index + 1,
      train: {
        from: new Date(t[f.fold.train[0]]!).toISOString(),
        to: new Date(t[f.fold.train[1] - 1]!).toISOString(),
        bars: f.fold.train[1] - f.fold.train[0],
      },
      test: {
        from: new Date(t[f.fold.test[0]]!).toISOString(),
        to: new Date(t[f.fold.test[1] - 1]!).toISOString(),
        bars: f.fold.test[1] - f.fold.test[0],
      },
      chosen: f.chosen ?? null,
      training: f.training.map((r) => ({ params: r.params, summary: r.summary ?? null, error: r.error ?? null })),
      testStatistics: f.test ?? null,
      orderListHash: f.orderListHash ?? null,
    })),
    outOfSample: result.statistics,
  };
}

function equityCsv(result: WalkForwardResult): string {
  const lines = ['time,equity'];
  for (let k = 0; k < result.equity.time.length; k++)
    lines.push(`${new Date(result.equity.time[k]!).toISOString()},${result.equity.equity[k]!.toFixed(2)}`);
  return `${lines.join('\n')}\n`;
}
