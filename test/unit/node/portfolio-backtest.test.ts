import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { EMPTY, mergeMap, of } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { BacktestConfig } from '../../../src/adapters/backtest/backtest-config.ts';
import { runDefinition } from '../../../src/adapters/backtest/definition-run.ts';
import { ConfigError } from '../../../src/cli/config-loader.ts';
import { loadNodeBacktestConfig } from '../../../src/cli/trading-config.ts';
import { target } from '../../../src/engine/intents.ts';
import { defineStrategy, type StrategyModule } from '../../../src/engine/strategy.ts';
import { TradingCalendar } from '../../../src/engine/trading-day.ts';
import { nodeConfigSchema } from '../../../src/node/node-config.ts';
import { nodeSummary, runNodeBacktest } from '../../../src/node/portfolio-backtest.ts';
import breakout from '../../../src/strategies/breakout.ts';
import smaCross from '../../../src/strategies/sma-cross.ts';

const synthetic = { source: 'synthetic', seed: 11, sessions: 4, start: '2025-03-02' } as const;

function node(raw: Record<string, unknown>) {
  return nodeConfigSchema.parse({ mode: 'paper', journals: '/tmp/unused', ...raw });
}

const runNode = (config: ReturnType<typeof node>, strategies: Record<string, StrategyModule>) =>
  runNodeBacktest({ config, name: 'test', sessions: new Map(), strategies: new Map(Object.entries(strategies)) });

/** The single-strategy backtest of one definition, as `tickline backtest` runs it. */
const single = (definition: Record<string, unknown>, strategy: StrategyModule) =>
  runDefinition(BacktestConfig.parse({ contract: 'ES', data: synthetic, ...definition }), 'single', { strategy });

/** Holds `side` from the close of bar `from` (counted from 0) to the close of bar `to`. */
const scripted = defineStrategy({
  name: 'scripted',
  params: z.strictObject({ from: z.number(), to: z.number(), side: z.number() }),
  run: (ctx) => {
    let i = -1;
    return ctx.barRecords().pipe(
      mergeMap(() => {
        i++;
        return i === ctx.params.from ? of(target(ctx.params.side)) : i === ctx.params.to ? of(target(0)) : EMPTY;
      }),
    );
  },
});
describe('a node backtest', () => {
  it('equals the sum of its parts where they do not interact: each account as its one strategy alone', async () => {
    const config = node({
      accounts: [{ name: 'A', limits: { dailyLossLimit: 600 } }, { name: 'B' }],
      bots: [
        // Named as the strategies, so the order ids (and the order list hash) are those of a single run.
        {
          id: 'sma-cross',
          strategy: 'sma-cross',
          params: { fast: 3, slow: 8 },
          contracts: ['F.US.EP'],
          accounts: ['A'],
        },
        {
          id: 'breakout',
          strategy: 'breakout',
          contracts: ['F.US.EP'],
          timeframe: { unit: 'minute', unitNumber: 5 },
          accounts: ['B'],
        },
      ],
      backtest: { data: synthetic },
    });
    const result = await runNode(config, { 'sma-cross': smaCross, breakout });
    const [a, b] = result.accounts;
    const aloneA = await single(
      { strategy: { name: 'sma-cross', params: { fast: 3, slow: 8 } }, account: { dailyLossLimit: 600 } },
      smaCross,
    );
    const aloneB = await single(
      { strategy: { name: 'breakout' }, timeframe: { unit: 'minute', unitNumber: 5 } },
      breakout,
    );
    for (const [part, alone] of [
      [a!, aloneA],
      [b!, aloneB],
    ] as const) {
      expect(part.outcome.result.fills.length).toBeGreaterThan(4);
      expect(part.outcome.result.fills).toEqual(alone.result.fills);
      expect(part.outcome.result.orderListHash).toBe(alone.result.orderListHash);
      expect(part.outcome.result.trades).toEqual(alone.result.trades);
      expect(part.outcome.result.endingEquity).toBe(alone.result.endingEquity);
      expect(part.outcome.result.violations).toEqual(alone.result.violations);
      // Its one strategy's line is the whole account.
      const line = part.outcome.result.strategies![0]!;
      expect(line.snapshot.netPnl).toBeCloseTo(alone.result.endingEquity - alone.result.startingBalance, 6);
      expect(line.trades).toEqual(alone.result.trades);
    }
    expect(result.history.bars.time.length).toBe(aloneA.history.bars.time.length);
  });

  it('where two strategies share one contract of one account, differs only by the netting (by hand)', async () => {
    // Bar i opens at 100 + i (points): a target decided at bar i's close fills at bar i + 1's open.
    const dir = mkdtempSync(path.join(os.tmpdir(), 'tickline-nodebt-'));
    const file = path.join(dir, 'bars.csv');
    const start = Date.UTC(2025, 2, 4, 15, 0);
    const rows = ['t,o,h,l,c,v'];
    for (let i = 0; i < 16; i++) {
      const open = 100 + i;
      rows.push(`${new Date(start + i * 60_000).toISOString()},${open},${open + 1},${open - 1},${open + 0.5},10`);
    }
    writeFileSync(file, `${rows.join('\n')}\n`);
    const backtest = {
      contract: { id: 'X', name: 'X', tickSize: 0.25, tickValue: 12.5 },
      data: { source: 'csv', file },
      market: { hours: 'none' },
      fills: { slippageTicks: 0, feePerContractPerSide: 1 },
    };
    const bots = {
      a: { id: 'a', strategy: 'scripted', params: { from: 3, to: 8, side: 1 }, contracts: ['X'], accounts: ['N'] },
      b: { id: 'b', strategy: 'scripted', params: { from: 5, to: 10, side: -1 }, contracts: ['X'], accounts: ['N'] },
    };
    const run = async (list: unknown[]) =>
      (await runNode(node({ accounts: [{ name: 'N' }], bots: list, backtest }), { a: scripted, b: scripted }))
        .accounts[0]!.outcome;
    const both = await run([bots.a, bots.b]);
    const aAlone = await run([bots.a]);
    const bAlone = await run([bots.b]);

    // A buys at 104 and sells at 109; B sells at 106 and buys back at 111: the account's fills are theirs.
    expect(both.result.fills.map((f) => [f.orderId, f.side, f.size, f.price])).toEqual([
      ['a-1', 'buy', 1, 104 * 4],
      ['b-1', 'sell', 1, 106 * 4],
      ['a-2', 'sell', 1, 109 * 4],
      ['b-2', 'buy', 1, 111 * 4],
    ]);
    // Each line is its own: +5 points ($250) for A, -5 points for B, $2 of fees each; alone, the same.
    const [lineA, lineB] = both.result.strategies!;
    expect(lineA!.snapshot).toMatchObject({ realizedPnl: 250, fees: 2, netPnl: 248, trades: 1 });
    expect(lineB!.snapshot).toMatchObject({ realizedPnl: -250, fees: 2, netPnl: -252, trades: 1 });
    expect(lineA!.snapshot.netPnl).toBe(aAlone.result.strategies![0]!.snapshot.netPnl);
    expect(lineB!.snapshot.netPnl).toBe(bAlone.result.strategies![0]!.snapshot.netPnl);
    expect(aAlone.result.fills.map((f) => f.price)).toEqual([104 * 4, 109 * 4]);
    expect(bAlone.result.fills.map((f) => f.price)).toEqual([106 * 4, 111 * 4]);
    // The netting: the account never holds more than one contract, so its round turns are the crossings,
    // long 104 to 106 (+$100) and short 109 to 111 (-$100); their sum is the lines' sum.
    expect(both.result.trades.map((t) => [t.size, t.pnl])).toEqual([
      [1, 100],
      [1, -100],
    ]);
    expect(both.result.endingBalance - both.result.startingBalance).toBe(-4);
    expect(lineA!.snapshot.netPnl + lineB!.snapshot.netPnl).toBe(-4);
    expect(both.report.strategies!.map((s) => [s.id, s.netPnl, s.trades, s.winRate])).toEqual([
      ['a', 248, 1, 1],
      ['b', -252, 1, 0],
    ]);
  });

  it('closes every line before a gap in the data, at the last close (by hand)', async () => {
    // Bar i opens at 100 + i and closes half a point up; five days pass between bars 12 and 13.
    const dir = mkdtempSync(path.join(os.tmpdir(), 'tickline-nodebt-'));
    const file = path.join(dir, 'bars.csv');
    const rows = ['t,o,h,l,c,v'];
    for (let i = 0; i < 16; i++) {
      const t = Date.UTC(2025, 2, 4, 15, i) + (i > 12 ? 5 * 86_400_000 : 0);
      rows.push(`${new Date(t).toISOString()},${100 + i},${101 + i},${99 + i},${100.5 + i},10`);
    }
    writeFileSync(file, `${rows.join('\n')}\n`);
    const config = node({
      accounts: [{ name: 'N' }],
      bots: [
        { id: 'a', strategy: 'scripted', params: { from: 3, to: 99, side: 1 }, contracts: ['X'], accounts: ['N'] },
        { id: 'b', strategy: 'scripted', params: { from: 5, to: 99, side: -2 }, contracts: ['X'], accounts: ['N'] },
      ],
      backtest: {
        contract: { id: 'X', name: 'X', tickSize: 0.25, tickValue: 12.5 },
        data: { source: 'csv', file },
        market: { hours: 'none' },
        fills: { slippageTicks: 0, feePerContractPerSide: 0 },
      },
    });
    const { result } = (await runNode(config, { a: scripted, b: scripted })).accounts[0]!.outcome;
    expect(result.gaps.map((g) => g.flattened)).toEqual([-1]);
    expect(result.fills.map((f) => [f.orderId, f.side, f.size, f.price / 4])).toEqual([
      ['a-1', 'buy', 1, 104],
      ['b-1', 'sell', 2, 106],
      ['risk-1', 'buy', 1, 112.5],
    ]);
    // A: long 104 to 112.5 (+$425); B: short 2 from 106 to 112.5 (-$650); the account's -1 closed once.
    expect(result.strategies!.map((s) => [s.id, s.snapshot.realizedPnl, s.snapshot.positions[0]!.size])).toEqual([
      ['a', 425, 0],
      ['b', -650, 0],
    ]);
    expect(result.realizedPnl).toBe(-225);
  });

  it("keeps each strategy's line across a roll: each reopens under its own id in the new month", async () => {
    // ESH5 rolls to ESM5 on 2025-03-13; long 1 and short 2 are held across it.
    const config = node({
      accounts: [{ name: 'N' }],
      bots: [
        { id: 'up', strategy: 'scripted', params: { from: 10, to: 1e9, side: 1 }, contracts: ['ES'], accounts: ['N'] },
        { id: 'dn', strategy: 'scripted', params: { from: 20, to: 1e9, side: -2 }, contracts: ['ES'], accounts: ['N'] },
      ],
      backtest: { data: { ...synthetic, start: '2025-03-09', sessions: 5 }, market: { hours: 'none' } },
    });
    const { result } = (await runNode(config, { up: scripted, dn: scripted })).accounts[0]!.outcome;
    expect(result.rolls.map((r) => [r.from, r.to, r.position, r.action])).toEqual([
      ['CON.F.US.EP.H25', 'CON.F.US.EP.M25', -1, 'rolled'],
    ]);
    const rollTime = result.rolls[0]!.time;
    expect(result.fills.filter((f) => f.time >= rollTime).map((f) => [f.orderId, f.side, f.size])).toEqual([
      // The account closed in the old month at its last close (the engine's own flatten), then each line reopened.
      ['risk-1', 'buy', 1],
      ['up-roll1', 'buy', 1],
      ['dn-roll1', 'sell', 2],
    ]);
    expect(result.strategies!.map((s) => [s.id, s.snapshot.positions[0]!.size])).toEqual([
      ['up', 1],
      ['dn', -2],
    ]);
    expect(result.openPosition).toBe(-1);
    // Each line closed in the old month at the roll, at the account's price: one trade each, labelled H25.
    expect(result.strategies!.map((s) => s.trades.map((t) => [t.contractId, t.size]))).toEqual([
      [['CON.F.US.EP.H25', 1]],
      [['CON.F.US.EP.H25', 2]],
    ]);
  });

  it('runs each account under its own rules: a daily-loss breach on one stops that account only', async () => {
    const copy = {
      id: 'sma-cross',
      strategy: 'sma-cross',
      params: { fast: 3, slow: 8 },
      contracts: ['F.US.EP'],
      accounts: ['TIGHT', 'LOOSE'],
    };
    const config = node({
      accounts: [{ name: 'TIGHT', limits: { dailyLossLimit: 150 } }, { name: 'LOOSE' }],
      bots: [copy],
      backtest: { data: synthetic },
    });
    const result = await runNode(config, { 'sma-cross': smaCross });
    const [tight, loose] = result.accounts.map((a) => a.outcome.result);
    expect(tight!.violations.length).toBeGreaterThan(0);
    expect(tight!.violations.every((v) => v.rule === 'dailyLossLimit')).toBe(true);
    expect(loose!.violations).toEqual([]);
    // The loose account traded on as if the other did not exist.
    const alone = await single({ strategy: { name: 'sma-cross', params: { fast: 3, slow: 8 } } }, smaCross);
    expect(loose!.fills).toEqual(alone.result.fills);
    expect(tight!.fills.length).toBeLessThan(loose!.fills.length);
    // After each breach the tight account only flattens that day.
    const calendar = new TradingCalendar();
    for (const v of tight!.violations) {
      const at = Date.parse(v.triggeredAt);
      expect(tight!.fills.filter((f) => f.time > at && calendar.dayOf(f.time) === v.tradingDay).length).toBeLessThan(2);
    }
    const summary = nodeSummary(result);
    expect(
      summary.accounts.map((a) => [a.account, a.breaches.length > 0, 'STATE_HALTED' in a.strategies[0]!.refused]),
    ).toEqual([
      ['TIGHT', true, true],
      ['LOOSE', false, false],
    ]);
  });
});

describe('a node config to backtest', () => {
  const write = (lines: string[]) => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'tickline-nodebt-'));
    const file = path.join(dir, 'node.yaml');
    writeFileSync(file, `${lines.join('\n')}\n`);
    return file;
  };
  const head = ['mode: paper', 'journals: var', 'accounts:', '  - name: A', 'bots:'];
  const bot = (id: string, contracts: string) => [
    `  - id: ${id}`,
    '    strategy: sma-cross',
    `    contracts: ${contracts}`,
    '    accounts: [A]',
  ];

  it('refuses bots of different contracts in one line, at the bot', () => {
    const file = write([
      ...head,
      ...bot('es', '[F.US.EP]'),
      ...bot('nq', '[NQ]'),
      'backtest:',
      '  data: { source: synthetic }',
    ]);
    let error: unknown;
    try {
      loadNodeBacktestConfig(file);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const { issues } = error as ConfigError;
    expect(issues).toHaveLength(1);
    expect(issues[0]).toMatchObject({ line: 12, path: 'bots[1].contracts' });
    expect((error as ConfigError).message).toBe(
      `${file}:12: bots[1].contracts: a node backtest replays one contract's history: bot nq trades NQ but es trades F.US.EP; backtest them in separate node files`,
    );
  });

  it('names what is missing: the backtest section, a contract the calendar cannot read', () => {
    expect(() => loadNodeBacktestConfig(write([...head, ...bot('es', '[ES]')]))).toThrow(
      /: no backtest section: add backtest: \{ data: \{ source: synthetic \} \}/,
    );
    expect(() =>
      loadNodeBacktestConfig(write([...head, ...bot('x', '[ZZZ]'), 'backtest:', '  data: { source: synthetic }'])),
    ).toThrow(/bots\[0\]\.contracts: unknown contract "ZZZ".*; or set backtest\.contract$/);
  });

  it('reads backtest.contract, and takes F.US.EP bots as the ES front month by default', async () => {
    const config = node({
      accounts: [{ name: 'A' }],
      bots: [{ id: 'b', strategy: 'sma-cross', contracts: ['F.US.EP'], accounts: ['A'] }],
      backtest: { data: { ...synthetic, sessions: 1 } },
    });
    const byDefault = await runNode(config, { b: smaCross });
    expect(byDefault.accounts[0]!.outcome.contract.name).toBe('ES');
    const pinned = await runNode({ ...config, backtest: { ...config.backtest!, contract: 'MESM5' } }, { b: smaCross });
    expect(pinned.accounts[0]!.outcome.contract.id).toBe('CON.F.US.MES.M25');
  });
});
