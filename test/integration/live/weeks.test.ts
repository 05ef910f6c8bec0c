/**
 * Running for weeks (docs/live.md): a paper session on `F.US.EP` driven bar by bar on the simulator's
 * manual clock over many market days, with a strategy that trades every other bar. Leg one starts before
 * Thanksgiving 2026 (the halt at 12:00 CT on the 26th, the early close at 12:15 CT on the 27th, the weekend
 * of 28-29 Nov); leg two starts before the ES December roll (10 Dec 2026, Z26 -> H27), goes through the
 * weekend of 12-13 Dec and past Z26's final settlement (18 Dec, 14:30 UTC), with a session pinned on Z26 on
 * a second account of the same simulator beside it.
 *
 * Checked at the simulator (Order/search on both accounts) and in the journals: every order was created
 * while ES was open by EXCHANGE_CALENDAR, the front month was followed (orders after the roll go to H27),
 * nothing is left in Z26 after the roll, no order reached Z26 at or after its final settlement (the pinned
 * session flattened before it and ended), no anomaly, and the heap sampled once a simulated day (after a
 * forced collection) shows no growth beyond a generous bound. The figures are printed, one line a day.
 */
import { runInNewContext } from 'node:vm';
import { setFlagsFromString } from 'node:v8';
import { afterEach, describe, expect, it } from 'vitest';
import { map } from 'rxjs';
import { z } from 'zod';
import { silentLogger } from '../../../src/engine/log.ts';
import { target } from '../../../src/engine/intents.ts';
import { defineStrategy } from '../../../src/engine/strategy.ts';
import { CALENDAR } from '../../../src/market/contract-months.ts';
import { EXCHANGE_CALENDAR } from '../../../src/market/exchange-hours.ts';
import { TradingClient } from '../../../src/adapters/gateway/trading.ts';
import { liveConfigSchema } from '../../../src/adapters/live/live-config.ts';
import { LiveSession } from '../../../src/adapters/live/trading-session.ts';
import { expiryInstant } from '../../../src/adapters/live/month-follower.ts';
import { signedSize } from '../../../src/adapters/live/reconcile.ts';
import type { Order } from '../../../src/protocol/schemas.ts';
import { startBench, type Bench } from './live-harness.ts';

const Z26 = 'CON.F.US.EP.Z26';
const H27 = 'CON.F.US.EP.H27';
const ROLL = CALENDAR.rollDate('ES', { year: 2026, month: 12 });
const SETTLES = expiryInstant(Z26)!;
/** Thu 17 Dec, 08:00 CT: the pinned session's start, a day before Z26's final settlement. */
const PINNED_FROM = Date.UTC(2026, 11, 17, 14, 0) + 1_000;
const MINUTE = 60_000;
const BAR_MS = 15 * MINUTE;
/** Steps land a second after a bar's end (the poller asks for a bar `closeDelayMs` after it). */
const OFFSET_MS = 1_000;
/** While closed the clock moves in bigger steps (still polling), never past the next open. */
const CLOSED_STEP_MS = 30 * MINUTE;

/** Long for a bar, flat for the next: an order on every bar while the market is open. */
const flipper = defineStrategy({
  name: 'flipper',
  description: 'targets +1 and 0 in turn, a bar each',
  params: z.strictObject({}),
  run: ({ bars }) => bars().pipe(map((_, i) => target(i % 2 === 0 ? 1 : 0))),
});

/** Roomy rules, so a synthetic market's bad week never stops the trading this test is about. */
const TEMPLATE = {
  name: 'WEEKS',
  startingBalance: 1_000_000,
  dailyLossLimit: { limit: 100_000 },
  maximumLossLimit: { limit: 200_000 },
};
const USER = { userName: 'weeks', apiKey: 'weeks-api-key' };
const FOLLOWING = 'WEEKS-FOLLOW';
const PINNED = 'WEEKS-PINNED';

let b: Bench | undefined;
let eyes: TradingClient | undefined;
afterEach(async () => {
  await eyes?.close();
  await b?.close();
  b = undefined;
  eyes = undefined;
});

/** A forced full collection when the runtime allows it (exposed through V8's flag, as `node --expose-gc`). */
const gc: (() => void) | undefined = (() => {
  try {
    setFlagsFromString('--expose-gc');
    return runInNewContext('gc') as () => void;
  } catch {
    return undefined;
  }
})();

async function setUp(startTime: number): Promise<{ bench: Bench; accounts: Record<string, number> }> {
  const bench = await startBench({
    sim: {
      startTime,
      templates: [TEMPLATE],
      users: [
        {
          ...USER,
          accounts: [
            { name: FOLLOWING, template: 'WEEKS' },
            { name: PINNED, template: 'WEEKS' },
          ],
        },
      ],
    },
  });
  b = bench;
  eyes = new TradingClient({ baseUrl: bench.sim.tradingUrl, ...USER, now: bench.now, logger: silentLogger });
  await eyes.login();
  const accounts = Object.fromEntries((await eyes.searchAccounts(true)).map((a) => [a.name, a.id]));
  return { bench, accounts };
}

function start(bench: Bench, contract: string, accountId: number, journal: string): Promise<LiveSession> {
  return LiveSession.start({
    config: liveConfigSchema.parse({
      strategy: { name: 'flipper', id: contract === Z26 ? 'pinned' : 'follower' },
      contracts: [contract],
      timeframe: { unit: 'minute', unitNumber: 15 },
      account: { id: accountId },
      journal: `${bench.dir}/${journal}.sqlite`,
      poll: { openOrdersMs: 5_000, tradesMs: 5_000, positionsMs: 5_000, closeDelayMs: 500, staleAfterMs: 20 * MINUTE },
      gateway: { adminEveryMs: 30 * MINUTE },
      risk: { maxPositionSize: 2 },
    }),
    mode: 'paper',
    tradingUrl: bench.sim.tradingUrl,
    credentials: USER,
    admin: { url: bench.sim.adminUrl, headers: bench.sim.adminHeaders },
    maximumLossVariant: (id) => bench.sim.maximumLossVariant(id),
    strategy: flipper,
    logger: silentLogger,
    now: bench.now,
    client: { timeoutMs: 2_000, retry: { maxAttempts: 3, baseDelayMs: 5, maxDelayMs: 20, maxRetryAfterMs: 50 } },
  });
}

interface Day {
  readonly date: string;
  readonly heapMb: number;
  readonly orders: number;
}

/**
 * Drives the sessions bar by bar until `end`: a step to a second after the next bar's end while ES is
 * open, bigger ones while it is closed; every running session polls at every step. Samples the heap at
 * each UTC midnight.
 */
async function drive(bench: Bench, sessions: readonly LiveSession[], end: number): Promise<Day[]> {
  const days: Day[] = [];
  let day = Math.floor(bench.now() / 86_400_000);
  while (bench.now() < end) {
    const now = bench.now();
    const open = EXCHANGE_CALENDAR.isOpen('ES', now);
    let next = Math.floor(now / BAR_MS) * BAR_MS + BAR_MS + OFFSET_MS;
    if (!open) {
      const opens = EXCHANGE_CALENDAR.nextOpen('ES', now) + OFFSET_MS;
      next = Math.max(next, Math.min(opens, Math.floor(now / BAR_MS) * BAR_MS + CLOSED_STEP_MS + OFFSET_MS));
    }
    bench.sim.clock.advance(Math.min(next, end) - now);
    for (const s of sessions) {
      if (s.expired !== undefined) continue;
      await s.poller.tick();
      await s.executor.idle();
    }

    const today = Math.floor(bench.now() / 86_400_000);
    if (today !== day) {
      day = today;
      gc?.();
      const heapMb = process.memoryUsage().heapUsed / 1e6;
      const orders = sessions.reduce((n, s) => n + s.journal.orders().length, 0);
      const date = new Date(today * 86_400_000).toISOString().slice(0, 10);
      days.push({ date, heapMb, orders });
      console.log(
        `weeks: ${date} heap ${heapMb.toFixed(1)} MB${gc ? ' (after a forced GC)' : ''}, ${orders} orders journaled so far`,
      );
    }
  }
  return days;
}

async function ordersAt(accountId: number, from: number): Promise<Order[]> {
  return (
    (await eyes!.searchOrders({ accountId, startTimestamp: new Date(from - 3_600_000).toISOString() })) as Order[]
  ).sort((x, y) => Date.parse(x.creationTimestamp) - Date.parse(y.creationTimestamp));
}

function expectOpenWhenCreated(orders: readonly Order[]): void {
  const closed = orders.filter((o) => !EXCHANGE_CALENDAR.isOpen('ES', Date.parse(o.creationTimestamp)));
  expect(
    closed.map((o) => `${o.customTag} ${o.contractId} at ${o.creationTimestamp}`),
    'orders created while ES was closed',
  ).toEqual([]);
}

/**
 * No growth trend beyond a generous bound: the last days' heap within 1.5x and 40 MB of the first days'
 * (the first sample, with the start-up, left out), and a least-squares trend under 2 MB a day after a
 * forced collection (about 0.3 measured: the in-memory windows filling, docs/live.md).
 */
function expectBoundedHeap(days: readonly Day[]): void {
  expect(days.length).toBeGreaterThanOrEqual(4);
  const heaps = days.slice(1).map((d) => d.heapMb);
  const text = `heap by day: ${days.map((d) => d.heapMb.toFixed(1)).join(', ')} MB`;
  const slack = gc === undefined ? 80 : 40;
  expect(Math.min(...heaps.slice(-2)), text).toBeLessThan(Math.min(...heaps.slice(0, 2)) * 1.5 + slack);
  const meanX = (heaps.length - 1) / 2;
  const meanY = heaps.reduce((a, b) => a + b, 0) / heaps.length;
  let num = 0;
  let den = 0;
  heaps.forEach((y, x) => {
    num += (x - meanX) * (y - meanY);
    den += (x - meanX) ** 2;
  });
  console.log(`weeks: heap trend ${(num / den).toFixed(2)} MB a day`);
  if (gc !== undefined) expect(num / den, text).toBeLessThan(2);
}

function expectNoAnomaly(s: LiveSession): void {
  expect(s.executor.anomalies).toEqual([]);
  expect(s.journal.entries({ kind: 'anomaly' })).toEqual([]);
}

/**
 * The journal's side of "orders only while open": every order it placed was created while ES was open,
 * and every place it refused was refused because the market was closed (an exit decided on the bar that
 * ends at a close): nothing else was refused.
 */
function expectRefusedOnlyWhileClosed(s: LiveSession): number {
  const closed = s.journal.orders().filter((o) => !EXCHANGE_CALENDAR.isOpen('ES', o.createdAt));
  expect(closed.map((o) => `${o.tag} at ${new Date(o.createdAt).toISOString()}`)).toEqual([]);
  const refused = s.journal.entries({ kind: 'place-refused' });
  for (const e of refused) {
    expect((e.payload as { reason: string }).reason).toMatch(/^the market of CON\.F\.US\.EP\.\w+ is closed at /);
    expect(EXCHANGE_CALENDAR.isOpen('ES', e.time)).toBe(false);
  }
  console.log(`weeks: ${s.journal.orders().length} orders journaled, ${refused.length} refused while closed`);
  return refused.length;
}

async function positions(accountId: number): Promise<Record<string, number>> {
  const open = await eyes!.searchOpenPositions(accountId);
  return Object.fromEntries(open.map((p) => [p.contractId, signedSize(p)]).filter(([, n]) => n !== 0));
}

describe('a paper session for weeks on the simulator clock', () => {
  it('through Thanksgiving: the halt, the early close and the weekend; orders only while open, no anomaly', async () => {
    const startTime = Date.UTC(2026, 10, 25, 14, 0) + OFFSET_MS; // Wed 25 Nov, 08:00 CT
    const end = Date.UTC(2026, 10, 30, 16, 0) + OFFSET_MS; // Mon 30 Nov, 10:00 CT
    const { bench, accounts } = await setUp(startTime);
    const s = await start(bench, 'F.US.EP', accounts[FOLLOWING]!, 'follow');
    const wall = performance.now();
    const days = await drive(bench, [s], end);
    console.log(`weeks: Thanksgiving leg in ${((performance.now() - wall) / 1000).toFixed(1)} s wall`);
    const orders = await ordersAt(accounts[FOLLOWING]!, startTime);
    expect(orders.length).toBeGreaterThan(200);
    expectOpenWhenCreated(orders);
    expect(new Set(orders.map((o) => o.contractId))).toEqual(new Set([Z26]));
    // Orders on every open stretch: before the halt, the evening after it, the 27th's short day, Monday.
    for (const [from, to] of [
      [Date.UTC(2026, 10, 26, 15), Date.UTC(2026, 10, 26, 18)],
      [Date.UTC(2026, 10, 26, 23), Date.UTC(2026, 10, 27, 6)],
      [Date.UTC(2026, 10, 27, 15), Date.UTC(2026, 10, 27, 18, 15)],
      [Date.UTC(2026, 10, 29, 23), Date.UTC(2026, 10, 30, 16)],
    ] as const)
      expect(orders.some((o) => Date.parse(o.creationTimestamp) >= from && Date.parse(o.creationTimestamp) < to)).toBe(
        true,
      );
    expectNoAnomaly(s);
    // The exits decided on the bars that end at the halt and at a close were refused, not sent.
    expect(expectRefusedOnlyWhileClosed(s)).toBeGreaterThan(0);
    expectBoundedHeap(days);
    await s.stop();
  }, 120_000);

  it("through the roll, a weekend and a pinned month's expiry: front month followed, nothing to an expired month", async () => {
    const startTime = Date.UTC(2026, 11, 8, 14, 0) + OFFSET_MS; // Tue 8 Dec, 08:00 CT
    const end = Date.UTC(2026, 11, 19, 6, 0) + OFFSET_MS; // Sat 19 Dec, after Friday's close
    const { bench, accounts } = await setUp(startTime);
    const following = accounts[FOLLOWING]!;
    const pinnedAccount = accounts[PINNED]!;
    const s = await start(bench, 'F.US.EP', following, 'follow');
    const lines: string[] = [];
    s.notices.subscribe((l) => lines.push(l));
    expect(s.routes.route('F.US.EP')).toBe(Z26);
    const wall = performance.now();

    const days = await drive(bench, [s], ROLL + 60 * MINUTE);
    expect(s.routes.route('F.US.EP')).toBe(H27);
    // Nothing left in the old month: no position, no working order, at the roll and to the end.
    const leftInZ26 = async (): Promise<unknown[]> => [
      ...(await eyes!.searchOpenPositions(following)).filter((p) => p.contractId === Z26),
      ...(await eyes!.searchOpenOrders(following)).filter((o) => o.contractId === Z26),
    ];
    expect(await leftInZ26()).toEqual([]);

    // A session pinned on Z26 on the other account, from the day before its final settlement (after the roll
    // date: it stays on its month).
    days.push(...(await drive(bench, [s], PINNED_FROM)));
    const pinned = await start(bench, Z26, pinnedAccount, 'pinned');
    let ended = false;
    void pinned.finished.then(() => (ended = true));
    pinned.notices.subscribe((l) => lines.push(l));
    days.push(...(await drive(bench, [s, pinned], end)));
    expect(pinned.routes.route(Z26)).toBe(Z26);
    console.log(`weeks: roll and expiry leg in ${((performance.now() - wall) / 1000).toFixed(1)} s wall`);
    expect(await leftInZ26()).toEqual([]);

    // The front month followed: Z26 before the roll, H27 from it on (the roll's own reopening included).
    const orders = await ordersAt(following, startTime);
    expectOpenWhenCreated(orders);
    const before = orders.filter((o) => Date.parse(o.creationTimestamp) < ROLL);
    const after = orders.filter((o) => Date.parse(o.creationTimestamp) >= ROLL);
    expect(before.length).toBeGreaterThan(50);
    expect(after.length).toBeGreaterThan(200);
    expect(new Set(before.map((o) => o.contractId))).toEqual(new Set([Z26]));
    // Every order the bot tagged after the roll went to H27; in Z26 only the roll's own close of the position
    // (Position/closeContract, untagged), in the roll's round.
    expect(new Set(after.filter((o) => o.customTag).map((o) => o.contractId))).toEqual(new Set([H27]));
    expect(
      after.filter((o) => o.contractId === Z26).map((o) => [o.customTag ?? null, Date.parse(o.creationTimestamp)]),
    ).toEqual([[null, ROLL + OFFSET_MS]]);
    const rolls = s.journal.entries({ kind: 'roll' }).filter((e) => e.phase === 'after');
    expect(rolls.map((e) => e.payload)).toMatchObject([{ from: Z26, to: H27 }]);
    // Orders on both sides of the weekend of 12-13 Dec.
    for (const [from, to] of [
      [Date.UTC(2026, 11, 11, 14), Date.UTC(2026, 11, 11, 22)],
      [Date.UTC(2026, 11, 13, 23), Date.UTC(2026, 11, 14, 22)],
    ] as const)
      expect(after.some((o) => Date.parse(o.creationTimestamp) >= from && Date.parse(o.creationTimestamp) < to)).toBe(
        true,
      );

    // The pinned month: flattened before its final settlement, ended, nothing sent after.
    expect(ended).toBe(true);
    expect(pinned.expired).toMatchObject({ contractId: Z26, expiresAt: SETTLES });
    expect(await positions(pinnedAccount)).toEqual({});
    const pinnedOrders = await ordersAt(pinnedAccount, PINNED_FROM);
    expectOpenWhenCreated(pinnedOrders);
    expect(pinnedOrders.length).toBeGreaterThan(30);
    expect(new Set(pinnedOrders.map((o) => o.contractId))).toEqual(new Set([Z26]));
    const expiry = pinned.journal.entries({ kind: 'expiry' });
    expect(expiry).toHaveLength(1);
    expect(expiry[0]!.time).toBeLessThan(SETTLES);
    expect(pinnedOrders.filter((o) => Date.parse(o.creationTimestamp) > expiry[0]!.time)).toEqual([]);
    // No order to Z26 at or after its final settlement, from either session.
    expect(
      [...orders, ...pinnedOrders].filter((o) => o.contractId === Z26 && Date.parse(o.creationTimestamp) >= SETTLES),
    ).toEqual([]);
    expect(lines).toEqual([
      expect.stringMatching(/^roll F\.US\.EP: ESZ6 -> ESH7 at 2026-12-10T00:\d\d:01\.000Z: /),
      expect.stringMatching(
        /^ESZ6 \(CON\.F\.US\.EP\.Z26\) expires at 2026-12-18T14:30:00\.000Z: flattened and stopped/,
      ),
    ]);

    for (const session of [s, pinned]) {
      expectNoAnomaly(session);
      expectRefusedOnlyWhileClosed(session);
    }
    expectBoundedHeap(days);
    await s.stop();
    await pinned.stop();
  }, 240_000);
});
