import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { run } from '../../../src/cli/flatten.ts';
import { OrderSide, OrderType } from '../../../src/protocol/codes.ts';
import { ES, lastTicks, startBench, type Bench } from './live-harness.ts';

let b: Bench;
beforeEach(async () => {
  b = await startBench({ sim: { demoAccounts: [{ name: 'NODE-A' }, { name: 'NODE-B' }] } });
});

/** `tickline flatten` with the simulator's demo credentials in the environment, its standard output kept. */
async function flatten(args: string[]): Promise<{ code: number; out: string }> {
  const saved = { user: process.env.TICKLINE_USERNAME, key: process.env.TICKLINE_API_KEY };
  process.env.TICKLINE_USERNAME = b.sim.demo.userName;
  process.env.TICKLINE_API_KEY = b.sim.demo.apiKey;
  const write = process.stdout.write.bind(process.stdout);
  let out = '';
  process.stdout.write = ((chunk: string) => ((out += chunk), true)) as typeof process.stdout.write;
  try {
    return { code: await run(args), out };
  } finally {
    process.stdout.write = write;
    process.env.TICKLINE_USERNAME = saved.user;
    process.env.TICKLINE_API_KEY = saved.key;
    if (saved.user === undefined) delete process.env.TICKLINE_USERNAME;
    if (saved.key === undefined) delete process.env.TICKLINE_API_KEY;
  }
}
afterEach(async () => {
  await b.close();
});

describe('tickline flatten', () => {
  it('cancels every open order and closes every position, then reports the account flat', async () => {
    const accountId = b.sim.demo.accountId;
    const grid = b.contracts.get(ES)!.grid;
    await b.truth.placeOrder({ accountId, contractId: ES, type: OrderType.Market, side: OrderSide.Bid, size: 2 });
    await b.truth.placeOrder({
      accountId,
      contractId: ES,
      type: OrderType.Limit,
      side: OrderSide.Bid,
      size: 1,
      limitPrice: grid.toPrice((await lastTicks(b)) - 40),
    });
    expect((await b.truth.searchOpenPositions(accountId)).length).toBe(1);
    expect((await b.truth.searchOpenOrders(accountId)).length).toBe(1);

    const configFile = path.join(b.dir, 'live.yaml');
    writeFileSync(
      configFile,
      `strategy: { name: sma-cross, id: x }\ncontracts: [${ES}]\ntimeframe: { unit: minute }\naccount: { id: ${accountId} }\njournal: ${path.join(b.dir, 'none.sqlite')}\nlog: { level: error }\n`,
    );
    const first = await flatten(['--config', configFile, '--url', b.sim.tradingUrl, '--json']);
    const second = await flatten(['--config', configFile, '--url', b.sim.tradingUrl]);
    expect([first.code, second.code]).toEqual([0, 0]);
    const out = first.out + second.out;
    const [json, words] = out.trim().split('\n');
    expect(JSON.parse(json!)).toMatchObject({ flat: true, closed: [ES] });
    // Run again on a flat account: it says so in words.
    expect(words).toMatch(/^account \S+ is flat \(no open order to cancel, no position to close; \d+ rounds?\)$/);
    expect(await b.truth.searchOpenPositions(accountId)).toEqual([]);
    expect(await b.truth.searchOpenOrders(accountId)).toEqual([]);
  });

  it('flattens one account of a node config (--account), then all of them (--all); the others are left alone', async () => {
    const ids = new Map((await b.truth.searchAccounts(true)).map((a) => [a.name, a.id]));
    for (const name of ['NODE-A', 'NODE-B'])
      await b.truth.placeOrder({
        accountId: ids.get(name)!,
        contractId: ES,
        type: OrderType.Market,
        side: OrderSide.Bid,
        size: 1,
      });
    const configFile = path.join(b.dir, 'node.yaml');
    writeFileSync(
      configFile,
      [
        'mode: paper',
        `journals: ${b.dir}`,
        'accounts: [{ name: NODE-A }, { name: NODE-B }]',
        `bots: [{ id: one, strategy: sma-cross, contracts: [${ES}], accounts: [NODE-A, NODE-B] }]`,
        'log: { level: error }',
      ].join('\n'),
    );
    const open = async (name: string) => (await b.truth.searchOpenPositions(ids.get(name)!)).length;
    const one = await flatten(['--config', configFile, '--url', b.sim.tradingUrl, '--account', 'NODE-A']);
    expect(one.code).toBe(0);
    expect(one.out).toMatch(/NODE-A/);
    expect([await open('NODE-A'), await open('NODE-B')]).toEqual([0, 1]);
    const all = await flatten(['--config', configFile, '--url', b.sim.tradingUrl, '--all']);
    expect(all.code).toBe(0);
    expect(all.out.trim().split('\n')).toHaveLength(2);
    expect([await open('NODE-A'), await open('NODE-B')]).toEqual([0, 0]);
    await expect(flatten(['--config', configFile, '--url', b.sim.tradingUrl])).rejects.toThrow(
      /a node config needs --account <name> or --all \(its accounts: NODE-A, NODE-B\)/,
    );
    await expect(flatten(['--config', configFile, '--url', b.sim.tradingUrl, '--account', 'NODE-C'])).rejects.toThrow(
      /no account named NODE-C/,
    );
  });
});
