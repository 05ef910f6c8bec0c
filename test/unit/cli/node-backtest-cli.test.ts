import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../../../src/cli/main.ts';
import { ExitCode } from '../../../src/cli/exit.ts';
import type { NodeSummary } from '../../../src/node/portfolio-backtest.ts';
import { captureOutput } from './capture-output.ts';

const { out, err } = captureOutput();
const NODE_YAML = path.resolve(import.meta.dirname, '../../../config/node.yaml');

describe('tickline backtest --config node.yaml', () => {
  it('runs the shipped node on its synthetic history: a table per account and strategy, each account its files', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'tickline-nodebt-cli-'));
    const code = await main(['backtest', '--config', NODE_YAML, '--out', path.join(dir, 'a')]);
    const summary = JSON.parse(readFileSync(path.join(dir, 'a', 'node-summary.json'), 'utf8')) as NodeSummary;
    // Exit codes as a single backtest's, over every account.
    expect(code).toBe(summary.accounts.every((a) => a.passed) ? ExitCode.Ok : ExitCode.RuleBreak);
    expect(err.join('')).toBe('');
    const text = out.join('');
    expect(summary.accounts.map((a) => [a.account, a.strategies.map((s) => `${s.id} x${s.size}`)])).toEqual([
      ['EVAL-1', ['trend x1', 'revert x1']],
      ['EVAL-2', ['trend x2', 'breakout x1']],
    ]);
    for (const a of summary.accounts) {
      expect(text).toContain(a.account);
      expect(text).toContain(`${a.account}: orders sha256 ${a.orderListHash}`);
      for (const file of [
        'report.html',
        'orders.json',
        'trades.csv',
        'decisions.csv',
        'strategies.json',
        'evaluation.json',
      ])
        expect(existsSync(path.join(dir, 'a', a.account, file))).toBe(true);
      // The strategies' lines sum to the account.
      expect(a.strategies.reduce((sum, s) => sum + s.netPnl, 0)).toBeCloseTo(a.netPnl, 1);
    }
    expect(text).toMatch(/^ {2}trend x2 +sma-cross/m);
    // The same file gives the same bytes.
    await main(['backtest', '--config', NODE_YAML, '--out', path.join(dir, 'b')]);
    for (const file of ['node-summary.json', 'EVAL-1/orders.json', 'EVAL-2/statistics.json'])
      expect(readFileSync(path.join(dir, 'b', file), 'utf8')).toBe(readFileSync(path.join(dir, 'a', file), 'utf8'));
  });

  it("optimize sweeps one bot's parameters alone on one of its accounts (--bot, --account)", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'tickline-nodebt-cli-'));
    const args = ['optimize', '--config', NODE_YAML, '--grid', 'fast=3,5', '--grid', 'slow=20', '--workers', '1'];
    expect(await main([...args, '--bot', 'trend', '--account', 'EVAL-2', '--out', dir])).toBe(ExitCode.Ok);
    expect(out.join('')).toMatch(/^node-trend: 2 parameter sets/m);
    const rows = JSON.parse(readFileSync(path.join(dir, 'optimize.json'), 'utf8')) as unknown;
    expect(JSON.stringify(rows)).toContain('"fast":5');
    err.length = 0;
    expect(await main(args)).toBe(ExitCode.Usage);
    expect(err.join('')).toBe(
      'optimize: a node config: name the bot whose parameters to sweep with --bot (trend, revert, breakout)\n',
    );
    err.length = 0;
    expect(await main([...args, '--bot', 'revert', '--account', 'EVAL-2'])).toBe(ExitCode.Usage);
    expect(err.join('')).toBe('optimize: --account EVAL-2: bot revert does not trade it (EVAL-1)\n');
  });

  it('says in one line why a node config cannot be backtested (exit 2)', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'tickline-nodebt-cli-'));
    const file = path.join(dir, 'node.yaml');
    writeFileSync(
      file,
      [
        'mode: paper',
        'journals: var',
        'accounts: [{ name: A }]',
        'bots:',
        '  - { id: es, strategy: sma-cross, contracts: [ES], accounts: [A] }',
        '  - { id: cl, strategy: breakout, contracts: [CL], accounts: [A] }',
        'backtest: { data: { source: synthetic } }',
        '',
      ].join('\n'),
    );
    expect(await main(['backtest', '--config', file])).toBe(ExitCode.Usage);
    expect(err.join('')).toBe(
      `backtest: ${file}:6: bots[1].contracts: a node backtest replays one contract's history: bot cl trades CL but es trades ES; backtest them in separate node files\n`,
    );
    err.length = 0;
    expect(await main(['backtest', '--config', file, '--param', 'fast=3'])).toBe(ExitCode.Usage);
    expect(err.join('')).toMatch(/^backtest: --param: not for a node config .*only --out is\n$/);
  });
});
