/**
 * Maximum loss limit variants in the simulator (floors from the engine's RuleBook), over HTTP with the
 * project's clients, on a replayed ES path written by the test: 5000 → 5010 → 5001 on 3 November 2025,
 * then 5001 → 5010 → 5001 after the 23:00 UTC trading day boundary (17:00 Chicago, CST).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AdminClient } from '../../../src/adapters/gateway/admin-client.ts';
import type { TradingClient } from '../../../src/adapters/gateway/trading.ts';
import { OrderSide, OrderType, PlaceErrorCode, ViolationDuration, ViolationType } from '../../../src/protocol/codes.ts';
import { MaximumSource, MinimumSource, type SimHandle } from '../../../src/sim/index.ts';
import { ES, TRADER, openSession, type Session } from './sim-harness.ts';

const START = Date.UTC(2025, 10, 3, 14, 0);
const MINUTE = 60_000;
/** (minute after START, ES price) corners of the replayed path; straight lines in between. */
const PATH: ReadonlyArray<readonly [number, number]> = [
  [0, 5000],
  [10, 5000],
  [20, 5010],
  [30, 5010],
  [39, 5001],
  [540, 5001],
  [549, 5010],
  [560, 5010],
  [569, 5001],
  [720, 5001],
];
const LIMIT = 400;
const FEE = 1.4; // ES, per contract and side
const POINT = 50; // ES dollars per point

function priceAt(minute: number): number {
  const k = PATH.findIndex(([m]) => m >= minute);
  const [m1, p1] = PATH[k]!;
  if (k === 0 || m1 === minute) return p1;
  const [m0, p0] = PATH[k - 1]!;
  return Math.round(p0 + ((p1 - p0) * (minute - m0)) / (m1 - m0));
}

function writePath(file: string): void {
  const lines = ['t,o,h,l,c,v'];
  for (let m = 0; m < 720; m++) {
    const o = priceAt(m);
    const c = priceAt(m + 1);
    lines.push(`${new Date(START + m * MINUTE).toISOString()},${o},${Math.max(o, c)},${Math.min(o, c)},${c},100`);
  }
  writeFileSync(file, `${lines.join('\n')}\n`);
}

const mll = (maximumSource: MaximumSource, minimumSource: MinimumSource | null = null) => ({
  limit: LIMIT,
  duration: 1 as const,
  maximumSource,
  minimumSource,
});

describe('simulator maximum loss limit variants', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'tickline-sim-trail-'));
  let sim: SimHandle;
  let client: TradingClient;
  let admin: AdminClient;
  let ids: Record<string, number>;
  let session: Session;

  beforeAll(async () => {
    const file = path.join(dir, 'es-path.csv');
    writePath(file);
    session = await openSession({
      market: { source: 'csv', path: file },
      // The floors here are pinned on whole-point moves: no spread (bid = ask = last), so fills are the path's prices.
      fills: { spread: { type: 'fixed', ticks: 0 } },
      startTime: START,
      templates: [
        {
          name: 'MLL-STATIC',
          startingBalance: 50_000,
          margin: 50_000,
          maximumLossLimit: mll(MaximumSource.StartingBalance),
        },
        {
          name: 'MLL-INTRADAY',
          startingBalance: 50_000,
          margin: 50_000,
          maximumLossLimit: mll(MaximumSource.HighestIntradayEquity),
        },
        {
          name: 'MLL-EOD',
          startingBalance: 50_000,
          margin: 50_000,
          maximumLossLimit: mll(MaximumSource.HighestEndOfDayBalance),
        },
        {
          name: 'MLL-LOCK',
          startingBalance: 50_000,
          margin: 50_000,
          maximumLossLimit: mll(MaximumSource.HighestEndOfDayBalance, MinimumSource.StartingBalance),
        },
      ],
      users: [
        {
          ...TRADER,
          accounts: [
            { name: 'V-STATIC', template: 'MLL-STATIC' },
            { name: 'V-INTRADAY', template: 'MLL-INTRADAY' },
            { name: 'V-EOD', template: 'MLL-EOD' },
            { name: 'V-LOCK', template: 'MLL-LOCK' },
          ],
        },
      ],
    });
    ({ sim, client, admin, ids } = session);
  });
  afterAll(async () => {
    await session.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const moveTo = (minute: number) => sim.clock.advance(START + minute * MINUTE - sim.clock.now());
  const order = (name: string, side: number) => ({
    accountId: ids[name]!,
    contractId: ES,
    type: OrderType.Market,
    side,
    size: 1,
  });
  const violationsOf = async (name: string) =>
    (await admin.exportViolations({})).filter((v) => v.accountId === ids[name]);
  const floorOf = async (name: string) => (await admin.findTradingAccount(name)).drawDownLimit;
  async function mllRuleId(template: string): Promise<number> {
    const { id } = (await admin.listTemplates()).find((t) => t.name === template)!;
    for (let ruleId = 1; ruleId < 50; ruleId++) {
      const rule = await admin.ruleConfiguration(id, ruleId).catch(() => undefined);
      if (rule?.configuration.maximumLossLimit) return ruleId;
    }
    throw new Error(`no maximum loss limit rule on ${template}`);
  }

  it('reports the sources of each rule configuration', async () => {
    const { id } = (await admin.listTemplates()).find((t) => t.name === 'MLL-LOCK')!;
    const rule = await admin.ruleConfiguration(id, await mllRuleId('MLL-LOCK'));
    expect(rule.configuration.maximumLossLimit).toMatchObject({ limit: LIMIT, maximumSource: 1, minimumSource: 0 });
  });

  it('breaks a trailing intraday maximum loss limit on a pullback from the high, where a static one holds', async () => {
    for (const name of ['V-STATIC', 'V-INTRADAY', 'V-EOD', 'V-LOCK'])
      await client.placeOrder(order(name, OrderSide.Bid));
    moveTo(25);
    // The end-of-day accounts bank the rise at 5010 (+10 points) and stay flat for the rest of the day.
    for (const name of ['V-EOD', 'V-LOCK']) await client.closePosition({ accountId: ids[name]!, contractId: ES });
    moveTo(45);

    const [violation, ...more] = await violationsOf('V-INTRADAY');
    expect(more).toEqual([]);
    const highEquity = 50_000 - FEE + 10 * POINT;
    expect(violation).toMatchObject({
      type: ViolationType.RuleBreak,
      duration: ViolationDuration.Permanent,
      ruleId: await mllRuleId('MLL-INTRADAY'),
    });
    expect(violation!.minimumBalance).toBeCloseTo(highEquity - LIMIT, 2);
    expect(await client.searchOpenPositions(ids['V-INTRADAY']!)).toEqual([]);
    expect((await client.searchAccounts(false)).find((a) => a.name === 'V-INTRADAY')?.canTrade).toBe(false);
    await expect(client.placeOrder(order('V-INTRADAY', OrderSide.Bid))).rejects.toMatchObject({
      errorCode: PlaceErrorCode.AccountViolation,
      errorMessage: expect.stringMatching(/permanently/),
    });
    expect((await admin.findTradingAccount('V-INTRADAY')).status).toBe(2);

    // Same position, same path, static floor at 49,600: nothing broken.
    expect(await violationsOf('V-STATIC')).toEqual([]);
    expect(await floorOf('V-STATIC')).toBe(50_000 - LIMIT);
    expect(await client.searchOpenPositions(ids['V-STATIC']!)).toEqual([expect.objectContaining({ size: 1 })]);
  });

  it('raises the end-of-day floors at the trading day boundary, and the locked one stops at the starting balance', async () => {
    const banked = 50_000 + 10 * POINT - 2 * FEE;
    moveTo(539); // 22:59 UTC: still 3 November's trading day in CST
    expect(await floorOf('V-EOD')).toBe(50_000 - LIMIT);
    moveTo(541); // 23:01 UTC: 4 November's trading day
    expect(await floorOf('V-EOD')).toBeCloseTo(banked - LIMIT, 2);
    expect(await floorOf('V-LOCK')).toBe(50_000);

    moveTo(560); // 5010
    for (const name of ['V-EOD', 'V-LOCK']) await client.placeOrder(order(name, OrderSide.Bid));
    moveTo(575); // back to 5001: equity = banked - fee - 9 points, under the trailing floor, over the locked one
    const [violation] = await violationsOf('V-EOD');
    expect(violation).toMatchObject({
      type: ViolationType.RuleBreak,
      duration: ViolationDuration.Permanent,
      ruleId: await mllRuleId('MLL-EOD'),
    });
    expect(violation!.minimumBalance).toBeCloseTo(banked - LIMIT, 2);
    await expect(client.placeOrder(order('V-EOD', OrderSide.Bid))).rejects.toMatchObject({
      errorCode: PlaceErrorCode.AccountViolation,
    });
    expect(await violationsOf('V-LOCK')).toEqual([]);
    expect(await client.searchOpenPositions(ids['V-LOCK']!)).toEqual([expect.objectContaining({ size: 1 })]);
  });
});
