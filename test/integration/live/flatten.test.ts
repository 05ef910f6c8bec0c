import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { run } from '../../../src/cli/flatten.ts';
import { OrderSide, OrderType } from '../../../src/protocol/codes.ts';
import { ES, lastTicks, startBench, type Bench } from './live-harness.ts';

let b: Bench;
beforeEach(async () => {
  b = await startBench();
});
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
    const saved = { user: process.env.TICKLINE_USERNAME, key: process.env.TICKLINE_API_KEY };
    process.env.TICKLINE_USERNAME = b.sim.demo.userName;
    process.env.TICKLINE_API_KEY = b.sim.demo.apiKey;
    const write = process.stdout.write.bind(process.stdout);
    let out = '';
    process.stdout.write = ((chunk: string) => ((out += chunk), true)) as typeof process.stdout.write;
    try {
      expect(await run(['--config', configFile, '--url', b.sim.tradingUrl, '--json'])).toBe(0);
      expect(await run(['--config', configFile, '--url', b.sim.tradingUrl])).toBe(0);
    } finally {
      process.stdout.write = write;
      process.env.TICKLINE_USERNAME = saved.user;
      process.env.TICKLINE_API_KEY = saved.key;
      if (saved.user === undefined) delete process.env.TICKLINE_USERNAME;
      if (saved.key === undefined) delete process.env.TICKLINE_API_KEY;
    }
    const [json, words] = out.trim().split('\n');
    expect(JSON.parse(json!)).toMatchObject({ flat: true, closed: [ES] });
    // Run again on a flat account: it says so in words.
    expect(words).toMatch(/^account \S+ is flat \(no open order to cancel, no position to close; \d+ rounds?\)$/);
    expect(await b.truth.searchOpenPositions(accountId)).toEqual([]);
    expect(await b.truth.searchOpenOrders(accountId)).toEqual([]);
  });
});
