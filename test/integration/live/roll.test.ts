/**
 * A paper session follows the front month (docs/live.md, Rolls): on the simulator's manual clock started
 * shortly before the ES December 2026 roll (CALENDAR.rollDate of Z26 with the root's own six business days:
 * 10 Dec 2026), a position held in Z26 is rolled into H27 (or flattened), and a session pinned on Z26
 * flattens before the month's final settlement and sends nothing after.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { filter, map, take } from 'rxjs';
import { z } from 'zod';
import { silentLogger } from '../../../src/engine/log.ts';
import { marketOrder, target } from '../../../src/engine/intents.ts';
import { defineStrategy } from '../../../src/engine/strategy.ts';
import { CALENDAR } from '../../../src/market/contract-months.ts';
import { liveConfigSchema } from '../../../src/adapters/live/live-config.ts';
import { LiveSession } from '../../../src/adapters/live/trading-session.ts';
import { expiryInstant } from '../../../src/adapters/live/month-follower.ts';
import { signedSize } from '../../../src/adapters/live/reconcile.ts';
import { market, startBench, type Bench } from './live-harness.ts';

const Z26 = 'CON.F.US.EP.Z26';
const H27 = 'CON.F.US.EP.H27';
const ROLL = CALENDAR.rollDate('ES', { year: 2026, month: 12 });

/** Holds +1 from its first bar; warms up on three bars (so a roll's warm-up is exercised). */
const hold = defineStrategy({
  name: 'hold',
  description: 'targets +1 on every bar',
  params: z.strictObject({}),
  warmup: () => 3,
  run: ({ bars }) => bars().pipe(map(() => target(1))),
});

/** Buys one with protective legs on its first live bar, then holds. */
const bracketed = defineStrategy({
  name: 'bracketed',
  description: 'one bracketed entry',
  params: z.strictObject({}),
  run: ({ bars }) =>
    bars().pipe(
      filter(() => true),
      take(1),
      map(() => marketOrder('buy', 1, { bracket: { stopLossTicks: 400, takeProfitTicks: 400 } })),
    ),
});

let b: Bench | undefined;
afterEach(async () => {
  await b?.close();
  b = undefined;
});

async function start(
  bench: Bench,
  contract: string,
  roll: Record<string, unknown> = {},
  strategy = hold,
): Promise<LiveSession> {
  return LiveSession.start({
    config: liveConfigSchema.parse({
      strategy: { name: 'hold', id: 'holder' },
      contracts: [contract],
      timeframe: { unit: 'minute', unitNumber: 1 },
      account: { id: bench.sim.demo.accountId },
      journal: bench.journalFile,
      poll: { openOrdersMs: 5_000, tradesMs: 5_000, positionsMs: 5_000, closeDelayMs: 500, staleAfterMs: 20_000 },
      risk: { maxPositionSize: 2 },
      roll,
    }),
    mode: 'paper',
    tradingUrl: bench.proxy.url,
    credentials: { userName: bench.sim.demo.userName, apiKey: bench.sim.demo.apiKey },
    strategy,
    logger: silentLogger,
    now: bench.now,
    client: { timeoutMs: 400, retry: { maxAttempts: 3, baseDelayMs: 5, maxDelayMs: 20, maxRetryAfterMs: 50 } },
  });
}

async function runUntil(bench: Bench, s: LiveSession, end: number): Promise<void> {
  while (bench.now() < end) {
    bench.sim.clock.advance(30_000);
    await s.poller.tick();
    await s.executor.idle();
  }
}

async function gatewayPositions(bench: Bench): Promise<Record<string, number>> {
  const positions = await bench.truth.searchOpenPositions(bench.sim.demo.accountId);
  return Object.fromEntries(positions.map((p) => [p.contractId, signedSize(p)]));
}

describe('front-month following', () => {
  it('rolls a position held in Z26 into H27 at the roll date, and orders go to H27 after', async () => {
    expect(new Date(ROLL).toISOString()).toBe('2026-12-10T00:00:00.000Z');
    b = await startBench({ sim: { startTime: ROLL - 20 * 60_000 } });
    const s = await start(b, 'ES');
    const lines: string[] = [];
    s.notices.subscribe((l) => lines.push(l));
    expect(s.routes.route('F.US.EP')).toBe(Z26);
    await runUntil(b, s, ROLL - 5 * 60_000);
    expect(await gatewayPositions(b)).toEqual({ [Z26]: 1 });
    const before = s.journal.orders().length;
    await runUntil(b, s, ROLL + 10 * 60_000);
    expect(s.routes.route('F.US.EP')).toBe(H27);
    expect(await gatewayPositions(b)).toEqual({ [H27]: 1 });
    expect(s.engine.accounting.position('F.US.EP')).toBe(1);
    const after = s.journal.orders().slice(before);
    // Z26 closed at the gateway (Position/closeContract, as the kill switch for that month), H27 opened by an order.
    expect(after.map((o) => o.contractId)).toEqual([H27]);
    expect(s.journal.fills().map((f) => [f.contractId, f.side])).toEqual([
      [Z26, 'buy'],
      [Z26, 'sell'],
      [H27, 'buy'],
    ]);
    const rolls = s.journal.entries({ kind: 'roll' }).filter((e) => e.phase === 'after');
    expect(rolls).toHaveLength(1);
    expect(rolls[0]!.payload).toMatchObject({ from: Z26, to: H27, position: 1, action: 'rolled' });
    // The strategy was warmed up at start on Z26's history and at the roll on H27's.
    expect(s.journal.entries({ kind: 'warm-up' }).map((e) => (e.payload as { month?: string }).month)).toEqual([
      Z26,
      H27,
    ]);
    expect(lines).toEqual([
      expect.stringMatching(/^roll F\.US\.EP: ESZ6 -> ESH7 at .*position \+1 closed in ESZ6 and opened in ESH7$/),
    ]);
    await s.stop();
  }, 60_000);

  it('a position left in Z26 by a bot that was down at the roll is rolled at the first round after a restart', async () => {
    b = await startBench({ sim: { startTime: ROLL - 5 * 60_000 } });
    const s1 = await start(b, 'ES');
    await runUntil(b, s1, ROLL - 2 * 60_000);
    await s1.stop();
    expect(await gatewayPositions(b)).toEqual({ [Z26]: 1 });
    b.sim.clock.advance(10 * 60_000);
    const s2 = await start(b, 'ES');
    expect(s2.routes.route('F.US.EP')).toBe(Z26);
    await runUntil(b, s2, b.now() + 60_000);
    expect(s2.routes.route('F.US.EP')).toBe(H27);
    expect(await gatewayPositions(b)).toEqual({ [H27]: 1 });
    await s2.stop();
  }, 60_000);

  it('a bracketed position is rolled with its protective legs', async () => {
    b = await startBench({ sim: { startTime: ROLL - 5 * 60_000 } });
    const s = await start(b, 'ES', {}, bracketed);
    await runUntil(b, s, ROLL + 2 * 60_000);
    expect(await gatewayPositions(b)).toEqual({ [H27]: 1 });
    const reopened = s.journal.orders().filter((o) => o.contractId === H27);
    expect(reopened).toHaveLength(1);
    expect(reopened[0]!.bracket).toEqual({ stopLossTicks: 400, takeProfitTicks: 400 });
    // The old month's legs were cancelled; the open orders now are the new month's legs.
    const open = await b.truth.searchOpenOrders(b.sim.demo.accountId);
    expect(open.map((o) => o.contractId)).toEqual([H27, H27]);
    await s.stop();
  }, 60_000);

  it('roll.mode flatten ends flat at the roll (the strategy decides again on the next bar)', async () => {
    b = await startBench({ sim: { startTime: ROLL - 10 * 60_000 } });
    const s = await start(b, 'F.US.EP', { mode: 'flatten' });
    await runUntil(b, s, ROLL - 2 * 60_000);
    expect(await gatewayPositions(b)).toEqual({ [Z26]: 1 });
    const rolled = new Promise<string>((resolve) => s.notices.subscribe(resolve));
    await runUntil(b, s, ROLL);
    expect(await rolled).toMatch(/closed in ESZ6 \(roll.mode flatten\)/);
    expect(await gatewayPositions(b)).toEqual({});
    const rolls = s.journal.entries({ kind: 'roll' }).filter((e) => e.phase === 'after');
    expect(rolls[0]!.payload).toMatchObject({ action: 'flattened' });
    expect(s.routes.route('F.US.EP')).toBe(H27);
    // This strategy targets +1 on every bar: its next decision opens in the new month, never in Z26.
    await runUntil(b, s, ROLL + 2 * 60_000);
    expect(await gatewayPositions(b)).toEqual({ [H27]: 1 });
    await s.stop();
  }, 60_000);

  it('a session pinned on Z26 flattens before its final settlement, ends, and sends nothing after', async () => {
    const settles = expiryInstant(Z26)!;
    expect(new Date(settles).toISOString()).toBe('2026-12-18T14:30:00.000Z');
    b = await startBench({ sim: { startTime: settles - 40 * 60_000 } });
    const s = await start(b, Z26);
    let ended = false;
    void s.finished.then(() => (ended = true));
    await runUntil(b, s, settles - 32 * 60_000);
    expect(await gatewayPositions(b)).toEqual({ [Z26]: 1 });
    await runUntil(b, s, settles - 29 * 60_000);
    expect(ended).toBe(true);
    expect(s.expired).toMatchObject({ contractId: Z26 });
    expect(await gatewayPositions(b)).toEqual({});
    const placed = s.journal.orders().length;
    // Even if it were left running past the expiry, nothing more is sent.
    await runUntil(b, s, settles + 10 * 60_000);
    expect(s.journal.orders().length).toBe(placed);
    // The executor's own guard: an order for the expired month is refused with the reason, never sent.
    s.executor.place({ ...market('holder-9999', 'buy'), contractId: Z26 });
    expect(s.journal.orders().length).toBe(placed);
    const refused = s.journal.entries({ kind: 'place-refused' }).map((e) => (e.payload as { reason: string }).reason);
    expect(refused).toEqual([`contract ${Z26} expired at 2026-12-18T14:30:00.000Z`]);
    await s.stop();
  }, 60_000);
});
