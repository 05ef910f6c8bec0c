import { describe, expect, it } from 'vitest';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { type ConfigError, loadConfig, parseConfig } from '../../../src/cli/config-loader.ts';
import { BacktestConfig } from '../../../src/adapters/backtest/backtest-config.ts';

const REPO = path.resolve(import.meta.dirname, '../../..');

describe('backtest definitions', () => {
  it('every shipped backtest/*.yaml is valid', () => {
    const files = readdirSync(path.join(REPO, 'backtest')).filter((f) => f.endsWith('.yaml'));
    expect(files).toEqual(
      expect.arrayContaining(['default.yaml', 'es-sma-cross.yaml', 'es-breakout.yaml', 'es-mean-reversion.yaml']),
    );
    for (const file of files)
      expect(() => loadConfig(path.join(REPO, 'backtest', file), BacktestConfig), file).not.toThrow();
  });

  it('applies defaults: synthetic market, 50K account, one tick of slippage, stop-first', () => {
    const config = parseConfig(
      'strategy: { name: sma-cross }\ndata: { source: synthetic }\n',
      'x.yaml',
      BacktestConfig,
    );
    expect(config.data).toMatchObject({ source: 'synthetic', seed: 42, sessions: 10 });
    expect(config.account.startingBalance).toBe(50_000);
    expect(config.fills).toEqual({
      slippageTicks: 1,
      stopSlippageTicks: 0,
      sameBar: 'stop-first',
      partialFills: false,
      queue: false,
    });
    expect(config.timeframe).toEqual({ unit: 'minute', unitNumber: 1 });
    expect(config.from).toBeUndefined();
  });

  it('reads dates as UTC and reports every problem of a source, the account and the range with its line', () => {
    const config = parseConfig(
      'strategy: { name: x }\ndata: { source: csv, file: a.csv }\nfrom: 2024-01-02\nto: 2024-01-03T10:30\n',
      'x.yaml',
      BacktestConfig,
    );
    expect([config.from, config.to]).toEqual([Date.UTC(2024, 0, 2), Date.UTC(2024, 0, 3, 10, 30)]);
    const text = [
      'strategy: { name: sma-cross }',
      'data:',
      '  source: csv',
      '  file: a.csv',
      '  seed: 3',
      'account:',
      '  maximumLossLimit: { amount: 10, variant: nope }',
      'from: yesterday',
      '',
    ].join('\n');
    try {
      parseConfig(text, 'x.yaml', BacktestConfig);
      expect.unreachable();
    } catch (error) {
      expect((error as ConfigError).issues.map((i) => [i.line, i.path])).toEqual([
        [5, 'data.seed'],
        [7, 'account.maximumLossLimit.variant'],
        [8, 'from'],
      ]);
    }
    expect(() => parseConfig('strategy: { name: x }\ndata:\n  source: xyz\n', 'x.yaml', BacktestConfig)).toThrow(
      /x\.yaml:3: data\.source:/,
    );
  });
});
