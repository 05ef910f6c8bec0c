/** State survives a restart on the same database file, including a kill -9 between a place and its fill. */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { OrderSide, OrderStatus, OrderType } from '../../../src/protocol/codes.ts';
import {
  ES,
  ISO,
  START,
  accountIds,
  adminClient,
  advanceUntil,
  rawPost,
  startTestSimulator,
  tradingClient,
} from './sim-harness.ts';

const dir = mkdtempSync(path.join(tmpdir(), 'tickline-sim-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('simulator persistence', () => {
  it('keeps orders, trades, accounts, violations, credentials and tokens across a restart', async () => {
    const dbPath = path.join(dir, 'restart.db');
    const first = await startTestSimulator({ dbPath });
    const client = tradingClient(first);
    const ids = await accountIds(client);
    const token = await client.validate();
    const main = ids['T-MAIN']!;
    await client.placeOrder({
      accountId: main,
      contractId: ES,
      type: OrderType.Market,
      side: OrderSide.Bid,
      size: 1,
      customTag: 'persist-1',
    });
    first.clock.advance(60_000);
    const working = await client.placeOrder({
      accountId: main,
      contractId: ES,
      type: OrderType.Limit,
      side: OrderSide.Bid,
      size: 1,
      limitPrice: 1000,
      customTag: 'persist-2',
    });
    await client.placeOrder({
      accountId: ids['T-MAX']!,
      contractId: ES,
      type: OrderType.Market,
      side: OrderSide.Bid,
      size: 2,
    });
    await client.placeOrder({
      accountId: ids['T-MAX']!,
      contractId: ES,
      type: OrderType.Market,
      side: OrderSide.Ask,
      size: 2,
    });
    const admin = adminClient(first);
    const before = {
      orders: await client.searchOrders({ accountId: main, startTimestamp: ISO(START) }),
      trades: await client.searchTrades({ accountId: main, startTimestamp: ISO(START) }),
      positions: await client.searchOpenPositions(main),
      accounts: await client.searchAccounts(false),
      violations: await admin.exportViolations({}),
      now: first.clock.now(),
    };
    expect(before.violations).toHaveLength(1);
    await client.close();
    await admin.close();
    await first.close();

    const second = await startTestSimulator({ dbPath });
    expect(second.demo).toEqual(first.demo);
    expect(second.adminHeaders).toEqual(first.adminHeaders);
    expect(second.clock.now()).toBeGreaterThanOrEqual(before.now);
    const again = tradingClient(second);
    const admin2 = adminClient(second);
    expect(await again.searchOrders({ accountId: main, startTimestamp: ISO(START) })).toEqual(before.orders);
    expect(await again.searchTrades({ accountId: main, startTimestamp: ISO(START) })).toEqual(before.trades);
    expect(await again.searchOpenPositions(main)).toEqual(before.positions);
    expect(await again.searchAccounts(false)).toEqual(before.accounts);
    expect(await admin2.exportViolations({})).toEqual(before.violations);
    expect((await again.searchOpenOrders(main)).map((o) => o.id)).toEqual([working]);
    await expect(
      again.placeOrder({
        accountId: ids['T-MAX']!,
        contractId: ES,
        type: OrderType.Market,
        side: OrderSide.Bid,
        size: 1,
      }),
    ).rejects.toMatchObject({ errorCode: 4 });
    // A token issued before the restart still works.
    const r = await rawPost(
      `${second.tradingUrl}/api/Account/search`,
      { onlyActiveAccounts: false },
      { authorization: `Bearer ${token}` },
    );
    expect(r.status).toBe(200);
    await again.close();
    await admin2.close();
    await second.close();
  });

  it('keeps an order placed just before a kill -9 and fills it after the restart', async () => {
    const dbPath = path.join(dir, 'killed.db');
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', path.join(import.meta.dirname, 'fixtures', 'sim-process.ts'), dbPath],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    try {
      const handle = await new Promise<{ tradingUrl: string }>((resolve, reject) => {
        let buffer = '';
        child.stdout.on('data', (chunk: Buffer) => {
          buffer += chunk.toString();
          const line = buffer.split('\n')[0];
          if (buffer.includes('\n') && line) resolve(JSON.parse(line));
        });
        child.on('exit', (code) => reject(new Error(`simulator process exited with ${code}`)));
      });
      const client = tradingClient(handle);
      const main = (await accountIds(client))['T-MAIN']!;
      const [bar] = await client.retrieveBars({
        contractId: ES,
        live: false,
        startTime: ISO(START - 5000),
        endTime: ISO(START),
        unit: 1,
        unitNumber: 1,
        limit: 1,
        includePartialBar: true,
      });
      const limit = bar!.c - 2;
      const orderId = await client.placeOrder({
        accountId: main,
        contractId: ES,
        type: OrderType.Limit,
        side: OrderSide.Bid,
        size: 1,
        limitPrice: limit,
        customTag: 'before-kill',
      });
      child.kill('SIGKILL');
      await client.close();
      await new Promise((resolve) => child.once('exit', resolve));

      const sim = await startTestSimulator({ dbPath });
      const after = tradingClient(sim);
      const found = await after.findOrderByCustomTag(main, 'before-kill', ISO(START));
      expect(found).toMatchObject({ id: orderId, status: OrderStatus.Open, limitPrice: limit });
      await advanceUntil(sim, async () => (await after.searchOpenOrders(main)).length === 0);
      const filled = await after.findOrderByCustomTag(main, 'before-kill', ISO(START));
      expect(filled).toMatchObject({ status: OrderStatus.Filled });
      expect(filled!.filledPrice!).toBeLessThanOrEqual(limit);
      expect((await after.searchTrades({ accountId: main, startTimestamp: ISO(START) })).map((t) => t.orderId)).toEqual(
        [orderId],
      );
      await after.close();
      await sim.close();
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
});
