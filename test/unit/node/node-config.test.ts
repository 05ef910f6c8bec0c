import { describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { accountSessionConfig, nodeConfigSchema } from '../../../src/node/node-config.ts';
import { planNode } from '../../../src/node/trading-node.ts';
import { RatePlanError } from '../../../src/adapters/live/rate-plan.ts';
import { checkBotParams, loadBotStrategies, loadNodeConfig } from '../../../src/cli/trading-config.ts';
import { ConfigError } from '../../../src/cli/config-loader.ts';

const bot = (id: string, accounts: unknown[], extra: Record<string, unknown> = {}) => ({
  id,
  strategy: 'sma-cross',
  contracts: ['ES'],
  accounts,
  ...extra,
});

describe('node config', () => {
  it('derives each account session: its bots contracts, the finest timeframe, its journal and risk', () => {
    const config = nodeConfigSchema.parse({
      mode: 'paper',
      journals: '/j',
      accounts: [{ name: 'A' }, { name: 'B', risk: { maxPositionSize: 4 } }],
      bots: [
        bot('one', ['A', { name: 'B', size: 2 }], { timeframe: { unit: 'minute', unitNumber: 5 } }),
        bot('two', ['B'], { contracts: ['NQ'], timeframe: { unit: 'minute', unitNumber: 1 } }),
      ],
    });
    const b = accountSessionConfig(config, config.accounts[1]!);
    expect(b.contracts).toEqual(['ES', 'NQ']);
    expect(b.timeframe).toEqual({ unit: 'minute', unitNumber: 1 });
    expect(b.journal).toBe(path.join('/j', 'B.sqlite'));
    expect(b.risk.maxPositionSize).toBe(4);
    expect(b.strategy.id).toBe('node');
    const a = accountSessionConfig(config, config.accounts[0]!);
    expect(a.timeframe).toEqual({ unit: 'minute', unitNumber: 5 });
    expect(a.contracts).toEqual(['ES']);
  });

  it('reports every mistake at once, each at its line', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'tickline-node-'));
    const file = path.join(dir, 'node.yaml');
    writeFileSync(
      file,
      [
        'mode: paper',
        'journals: var',
        'accounts:',
        '  - name: A',
        '  - name: A',
        'bots:',
        '  - id: one',
        '    strategy: sma-cross',
        '    contracts: [ES]',
        '    timeframe: { unit: minute, unitNumber: 2 }',
        '    accounts: [A, C]',
        '  - id: one',
        '    strategy: sma-cross',
        '    contracts: [ES]',
        '    timeframe: { unit: minute, unitNumber: 3 }',
        '    accounts: [A]',
        '  - id: two',
        '    strategy: sma-cross',
        '    contracts: [ES]',
        '    timeframe: { unit: minute, unitNumber: 2 }',
        '    accounts: [A]',
        '    colour: blue',
      ].join('\n'),
    );
    let error: unknown;
    try {
      loadNodeConfig(file);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const text = (error as ConfigError).message;
    expect(text).toContain('node.yaml:5: accounts[1].name: account A is listed twice');
    expect(text).toMatch(/node\.yaml:11: bots\[0\]\.accounts\[1\]: no account named C/);
    expect(text).toMatch(/node\.yaml:12: bots\[1\]\.id: bot id one is used twice/);
    expect(text).toMatch(
      /bots\[1\]\.timeframe: on account A the bars are 2 minutes: 3 minutes is not a whole number of them/,
    );
    expect(text).toMatch(/node\.yaml:\d+: bots\[2\]/);
    expect(text).toContain('colour');
  });

  it('refuses a plan over the user budget with the numbers per endpoint; a node that fits passes', () => {
    const accounts = Array.from({ length: 10 }, (_, i) => ({ name: `EVAL-${i + 1}` }));
    const tooMany = nodeConfigSchema.parse({
      mode: 'paper',
      journals: '/j',
      accounts,
      bots: accounts.map((a, i) => bot(`bot${i}`, [a.name])),
    });
    let error: unknown;
    try {
      planNode(tooMany, new Map());
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(RatePlanError);
    const message = (error as RatePlanError).message;
    // 10 accounts x (positions 21 + openOrders 21 + orders 7 + trades 21 + account 5) = 750 a minute.
    expect(message).toContain('default: 750 scheduled + 80 reserved requests per 60 s exceed 200');
    expect(message).toContain('EVAL-10 positions 21');
    // Ten bots on one contract and timeframe read one bar feed.
    expect((error as RatePlanError).plan.buckets[0].items).toHaveLength(1);

    const slow = { openOrdersMs: 60_000, ordersMs: 60_000, tradesMs: 60_000, positionsMs: 60_000, accountMs: 60_000 };
    const fits = nodeConfigSchema.parse({
      mode: 'paper',
      journals: '/j',
      accounts: accounts.slice(0, 4),
      bots: Array.from({ length: 20 }, (_, i) => bot(`bot${i}`, [accounts[i % 4]!.name])),
      poll: slow,
    });
    const plan = planNode(fits, new Map());
    expect(plan.ok).toBe(true);
    expect(plan.buckets[1].scheduled).toBe(4 * 5 * 2);
  });

  it("reports a bot's unknown strategy and its bad parameters at their lines", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'tickline-node-'));
    const file = path.join(dir, 'node.yaml');
    writeFileSync(
      file,
      [
        'mode: paper',
        'journals: var',
        'accounts: [{ name: A }]',
        'bots:',
        '  - id: two',
        '    strategy: sma-cross',
        '    params: { fast: -3 }',
        '    contracts: [ES]',
        '    accounts: [A]',
        '  - id: one',
        '    strategy: no-such-strategy',
        '    contracts: [ES]',
        '    accounts: [A]',
      ].join('\n'),
    );
    const { config } = loadNodeConfig(file);
    await expect(loadBotStrategies(file, config.bots)).rejects.toThrow(/node\.yaml:11: bots\[1\]\.strategy: /);
    const first = config.bots.slice(0, 1);
    const strategies = await loadBotStrategies(file, first);
    expect(() => checkBotParams(file, first, strategies)).toThrow(/node\.yaml:7: bots\[0\]\.params\.fast/);
  });
});
