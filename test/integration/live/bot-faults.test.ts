import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { OrderUpdate, VenueEvent } from '../../../src/engine/types.ts';
import {
  agreement,
  ES,
  lastTicks,
  limit,
  market,
  START,
  startBench,
  startBot,
  until,
  type Bench,
  type Bot,
} from './live-harness.ts';

let b: Bench;
let bot: Bot;
let events: VenueEvent[];

beforeEach(async () => {
  b = await startBench();
  bot = startBot(b);
  events = [];
  bot.executor.events.subscribe((e) => events.push(e));
});
afterEach(async () => {
  await bot.stop();
  await b.close();
});

const orderUpdates = (tag: string): OrderUpdate[] =>
  events.filter((e): e is OrderUpdate => e.kind === 'order' && e.orderId === tag);
const placesReceived = (tag: string): number =>
  b.proxy.requests.filter((r) => r.path === '/api/Order/place' && (r.body as { customTag?: string }).customTag === tag)
    .length;

describe('place with an unknown outcome', () => {
  it('answer lost after the simulator filled it: found by customTag, never sent again', async () => {
    b.proxy.inject({ path: '/api/Order/place', action: { kind: 'drop-after' } });
    bot.executor.place(market('t-1', 'buy'));
    await bot.executor.idle();
    expect(bot.journal.order('t-1')?.state).toBe('filled');
    expect(placesReceived('t-1')).toBe(1);
    const searches = b.proxy.requests.filter((r) => r.path === '/api/Order/search');
    expect(searches.length).toBeGreaterThanOrEqual(1);
    // The journal holds the request before it was sent, then the unknown outcome, then the lookup.
    const kinds = bot.journal.entries({ tag: 't-1' }).map((e) => `${e.kind}/${e.phase}`);
    expect(kinds.slice(0, 4)).toEqual(['place/before', 'place/after', 'reported-fill/event', 'lookup/event']);
    await agreement(b, bot);
    expect(events.some((e) => e.kind === 'fill' && e.orderId === 't-1')).toBe(true);
  });

  it('connection dropped before the simulator saw it: unknown while the window lasts, then lost, never re-sent', async () => {
    b.proxy.inject({ path: '/api/Order/place', action: { kind: 'drop-before' } });
    bot.executor.place(market('t-1', 'buy'));
    await bot.executor.idle();
    // One lookup that misses proves nothing: the order stays pending in the engine's eyes.
    expect(bot.journal.order('t-1')?.state).toBe('unknown');
    expect(orderUpdates('t-1').at(-1)?.state).toBe('pending');
    await bot.poller.refreshAccountState();
    expect(bot.journal.order('t-1')?.state).toBe('unknown');
    b.sim.clock.advance(61_000);
    await bot.poller.refreshAccountState();
    await bot.executor.idle();
    expect(bot.journal.order('t-1')?.state).toBe('lost');
    expect(orderUpdates('t-1').at(-1)?.state).toBe('rejected');
    expect(placesReceived('t-1')).toBe(1);
    expect(b.proxy.placesByTag().get('t-1')).toBeUndefined();
    await agreement(b, bot);
  });

  it('connection dropped before the simulator saw it: with no window, lost at the first missing lookup', async () => {
    await bot.stop();
    bot = startBot(b, b.client, { unknownOutcomeMs: 0 });
    bot.executor.events.subscribe((e) => events.push(e));
    b.proxy.inject({ path: '/api/Order/place', action: { kind: 'drop-before' } });
    bot.executor.place(market('t-1', 'buy'));
    await bot.executor.idle();
    expect(bot.journal.order('t-1')?.state).toBe('lost');
    expect(orderUpdates('t-1').at(-1)?.state).toBe('rejected');
    expect(b.proxy.placesByTag().get('t-1')).toBeUndefined();
    await agreement(b, bot);
  });

  it('a 500 on place is an unknown outcome (looked up); a 429 is a rejection (never retried)', async () => {
    await bot.stop();
    bot = startBot(b, b.client, { unknownOutcomeMs: 0 });
    bot.executor.events.subscribe((e) => events.push(e));
    b.proxy.inject({ path: '/api/Order/place', action: { kind: 'status', status: 500, body: 'oops' } });
    bot.executor.place(market('t-1', 'buy'));
    await bot.executor.idle();
    expect(bot.journal.order('t-1')?.state).toBe('lost');
    b.proxy.inject({
      path: '/api/Order/place',
      action: { kind: 'status', status: 429, headers: { 'retry-after': '0' } },
    });
    bot.executor.place(market('t-2', 'buy'));
    await bot.executor.idle();
    expect(bot.journal.order('t-2')?.state).toBe('rejected');
    // The readable line says why, not just `rejected`.
    expect(orderUpdates('t-2').at(-1)).toMatchObject({
      state: 'rejected',
      reason: expect.stringMatching(/^RATE_LIMITED: .*429/),
    });
    expect(placesReceived('t-1')).toBe(1);
    expect(placesReceived('t-2')).toBe(1);
    await agreement(b, bot);
  });

  it('a timeout whose request lands late inside the window: stays unknown, then found; no anomaly', async () => {
    b.proxy.inject({ path: '/api/Order/place', action: { kind: 'delay', delayMs: 700 } });
    bot.executor.place(market('t-1', 'buy'));
    await bot.executor.idle();
    expect(bot.journal.order('t-1')?.state).toBe('unknown');
    await until(() => b.proxy.placesByTag().get('t-1') === 1, 3_000, 'the delayed place to reach the simulator');
    await until(async () => (await b.truth.searchOpenPositions(b.sim.demo.accountId)).length === 1, 3_000, 'the fill');
    await bot.poller.refreshAccountState();
    await bot.executor.idle();
    expect(bot.journal.order('t-1')?.state).toBe('filled');
    expect(orderUpdates('t-1').some((u) => u.state === 'rejected')).toBe(false);
    expect(bot.executor.anomalies.filter((a) => a.tag === 't-1')).toEqual([]);
    await agreement(b, bot);
  });

  it('a timeout whose request lands after the window: lost, then adopted when the gateway shows it, reported as an anomaly', async () => {
    await bot.stop();
    bot = startBot(b, b.client, { unknownOutcomeMs: 0 });
    bot.executor.events.subscribe((e) => events.push(e));
    b.proxy.inject({ path: '/api/Order/place', action: { kind: 'delay', delayMs: 700 } });
    bot.executor.place(market('t-1', 'buy'));
    await bot.executor.idle();
    expect(bot.journal.order('t-1')?.state).toBe('lost');
    await until(() => b.proxy.placesByTag().get('t-1') === 1, 3_000, 'the delayed place to reach the simulator');
    await until(async () => (await b.truth.searchOpenPositions(b.sim.demo.accountId)).length === 1, 3_000, 'the fill');
    await bot.poller.refreshAccountState();
    await bot.executor.idle();
    expect(bot.journal.order('t-1')?.state).toBe('filled');
    expect(bot.executor.anomalies.some((a) => a.tag === 't-1' && /reappeared/.test(a.message))).toBe(true);
    expect(orderUpdates('t-1').some((u) => u.adopted === true)).toBe(true);
    await agreement(b, bot);
  });

  it('a place that cannot be journaled or priced is not sent', async () => {
    bot.executor.place({ ...market('t-1', 'buy'), contractId: 'CON.F.US.NOPE.Z25' });
    await bot.executor.idle();
    expect(orderUpdates('t-1').at(-1)).toMatchObject({ state: 'rejected' });
    expect(bot.journal.order('t-1')).toBeUndefined();
    expect(b.proxy.requests.filter((r) => r.path === '/api/Order/place')).toEqual([]);
  });

  it('a customTag already journaled is refused without a request', async () => {
    bot.executor.place(market('t-1', 'buy'));
    await bot.executor.idle();
    bot.executor.place(market('t-1', 'buy'));
    await bot.executor.idle();
    expect(placesReceived('t-1')).toBe(1);
    expect(bot.executor.anomalies.some((a) => a.tag === 't-1')).toBe(true);
    await agreement(b, bot);
  });
});

describe('cancels and fills', () => {
  it('a cancel whose answer is lost is confirmed by Order/search, not re-sent', async () => {
    const px = await lastTicks(b);
    bot.executor.place(limit('t-1', 'buy', px - 40));
    await bot.executor.idle();
    expect(bot.journal.order('t-1')?.state).toBe('working');
    b.proxy.inject({ path: '/api/Order/cancel', action: { kind: 'drop-after' } });
    bot.executor.cancel('t-1');
    await bot.executor.idle();
    await bot.poller.refreshAccountState();
    await bot.executor.idle();
    expect(bot.journal.order('t-1')?.state).toBe('cancelled');
    expect(b.proxy.requests.filter((r) => r.path === '/api/Order/cancel').length).toBe(1);
    await agreement(b, bot);
  });

  it('a cancel that never arrived is sent again only after the order is seen still open', async () => {
    const px = await lastTicks(b);
    bot.executor.place(limit('t-1', 'buy', px - 40));
    await bot.executor.idle();
    b.proxy.inject({ path: '/api/Order/cancel', action: { kind: 'drop-before' } });
    bot.executor.cancel('t-1');
    await bot.executor.idle();
    expect(bot.journal.order('t-1')?.state).toBe('working');
    expect(bot.journal.order('t-1')?.cancelWanted).toBe(true);
    await bot.poller.refreshAccountState();
    await bot.executor.idle();
    await bot.poller.refreshAccountState();
    await bot.executor.idle();
    expect(bot.journal.order('t-1')?.state).toBe('cancelled');
    expect(b.proxy.requests.filter((r) => r.path === '/api/Order/cancel').length).toBe(2);
    await agreement(b, bot);
  });

  it('a cancel that fails because the order filled first ends filled, with its fill counted once', async () => {
    const px = await lastTicks(b);
    // Marketable: the simulator fills it on arrival, so the cancel that follows finds nothing to cancel.
    bot.executor.place(limit('t-1', 'buy', px + 8));
    await bot.executor.idle();
    bot.executor.cancel('t-1');
    await bot.executor.idle();
    await bot.poller.refreshAccountState();
    await bot.poller.refreshAccountState();
    await bot.executor.idle();
    expect(bot.journal.order('t-1')?.state).toBe('filled');
    expect(bot.journal.fills().filter((f) => f.tag === 't-1').length).toBe(1);
    expect(events.filter((e) => e.kind === 'fill').length).toBe(1);
    await agreement(b, bot);
  });
});

describe('modify', () => {
  it('an accepted modify changes the order; one whose answer is lost is settled by what Order/search shows', async () => {
    const px = await lastTicks(b);
    bot.executor.place(limit('t-1', 'buy', px - 40));
    await bot.executor.idle();
    bot.executor.modify({ orderId: 't-1', limitPrice: px - 44 });
    await bot.executor.idle();
    expect(bot.journal.order('t-1')?.spec).toEqual({ type: 'limit', limitPrice: px - 44 });
    expect(orderUpdates('t-1').at(-1)?.order).toEqual({ type: 'limit', limitPrice: px - 44 });

    b.proxy.inject({ path: '/api/Order/modify', action: { kind: 'drop-after' } });
    bot.executor.modify({ orderId: 't-1', limitPrice: px - 48, size: 2 });
    await bot.executor.idle();
    expect(bot.journal.order('t-1')?.spec).toEqual({ type: 'limit', limitPrice: px - 44 });
    expect(b.proxy.requests.filter((r) => r.path === '/api/Order/modify').length).toBe(2);
    await bot.poller.refreshAccountState();
    expect(bot.journal.order('t-1')?.spec).toEqual({ type: 'limit', limitPrice: px - 48 });
    expect(bot.journal.order('t-1')?.size).toBe(2);
    expect(orderUpdates('t-1').at(-1)).toMatchObject({ size: 2, order: { type: 'limit', limitPrice: px - 48 } });
    await agreement(b, bot);
  });

  it('a modify of an order that is not working is refused without a request', async () => {
    bot.executor.modify({ orderId: 'nope', limitPrice: 1 });
    await bot.executor.idle();
    expect(b.proxy.requests.filter((r) => r.path === '/api/Order/modify')).toEqual([]);
    expect(bot.journal.entries({ kind: 'modify-refused' }).length).toBe(1);
  });
});

describe('brackets', () => {
  it('bracket legs the gateway creates reach the engine as venue orders, and their fills and OCO cancel keep positions right', async () => {
    bot.executor.place({ ...market('t-1', 'buy'), bracket: { stopLossTicks: 6, takeProfitTicks: 6 } });
    await bot.executor.idle();
    await bot.poller.refreshAccountState();
    const legs = (): OrderUpdate[] =>
      events.filter((e): e is OrderUpdate => e.kind === 'order' && e.orderId.startsWith('venue-'));
    const working = legs().filter((u) => u.state === 'working');
    expect(working.map((u) => u.order.type).sort()).toEqual(['limit', 'stop']);
    expect(working.every((u) => u.side === 'sell' && u.size === 1)).toBe(true);
    const accountId = b.sim.demo.accountId;
    for (let i = 0; i < 200 && (await b.truth.searchOpenPositions(accountId)).length > 0; i++)
      b.sim.clock.advance(30_000);
    expect(await b.truth.searchOpenPositions(accountId)).toEqual([]);
    await bot.poller.refreshAccountState();
    await bot.executor.idle();
    const final = new Map(legs().map((u) => [u.orderId, u.state]));
    expect([...final.values()].sort()).toEqual(['cancelled', 'filled']);
    expect(events.filter((e) => e.kind === 'fill').length).toBe(2);
    await agreement(b, bot);
  });
});

describe('read faults and visibility', () => {
  it('401 mid-run logs in again transparently; 429 backs off and retries; positions stay visible', async () => {
    b.proxy.inject({ path: '/api/Order/searchOpen', action: { kind: 'status', status: 401 } });
    b.proxy.inject({
      path: '/api/Position/searchOpen',
      action: { kind: 'status', status: 429, headers: { 'retry-after': '0' } },
    });
    const logins = (): number => b.proxy.requests.filter((r) => r.path === '/api/Auth/loginKey').length;
    await b.client.login();
    const before = logins();
    await bot.poller.tick();
    expect(logins()).toBe(before + 1);
    expect(bot.poller.visibility).toBeUndefined();
    expect(b.proxy.requests.filter((r) => r.path === '/api/Position/searchOpen').length).toBe(2);
  });

  it('5xx and malformed positions stop opening risk until positions can be seen again', async () => {
    const reasons: Array<string | undefined> = [];
    bot.executor.events.subscribe(() => undefined);
    b.proxy.inject({ path: '/api/Position/searchOpen', action: { kind: 'status', status: 503 }, times: 3 });
    await bot.poller.tick();
    reasons.push(bot.poller.visibility);
    expect(bot.poller.visibility).toMatch(/positions/);
    bot.executor.setBlind(bot.poller.visibility);
    bot.executor.place(market('t-1', 'buy'));
    expect(orderUpdates('t-1').at(-1)?.state).toBe('rejected');
    expect(b.proxy.placesByTag().get('t-1')).toBeUndefined();

    b.sim.clock.advance(5_000);
    b.proxy.inject({
      path: '/api/Position/searchOpen',
      action: { kind: 'malformed', corrupt: (body) => body.replace('"positions":', '"positionz":') },
      times: 3,
    });
    await bot.poller.tick();
    expect(bot.poller.visibility).toMatch(/malformed/);

    b.proxy.clear();
    b.sim.clock.advance(5_000);
    await bot.poller.tick();
    expect(bot.poller.visibility).toBeUndefined();
    bot.executor.setBlind(undefined);
    bot.executor.place(market('t-2', 'buy'));
    await bot.executor.idle();
    // Accepted is not filled: the fill is believed once Order/search and Trade/search show it.
    expect(bot.journal.order('t-2')?.state).toBe('working');
    await bot.poller.refreshAccountState();
    expect(bot.journal.order('t-2')?.state).toBe('filled');
    await agreement(b, bot);
  });

  it('bars: every closed bar once, oldest first, in ticks; bars missed by a failed poll arrive together in one chunk', async () => {
    const chunks: Array<{ times: number[]; closes: number[] }> = [];
    bot.poller
      .bars(ES, { unit: 'minute', unitNumber: 1 })
      .subscribe((ch) => chunks.push({ times: [...ch.time], closes: [...ch.close] }));
    for (let i = 0; i < 6; i++) {
      b.sim.clock.advance(60_000);
      if (i === 2)
        b.proxy.inject({ path: '/api/History/retrieveBars', action: { kind: 'status', status: 500 }, times: 3 });
      await bot.poller.tick();
    }
    const times = chunks.flatMap((c) => c.times);
    expect(new Set(times).size).toBe(times.length);
    expect([...times].sort((x, y) => x - y)).toEqual(times);
    expect(times.every((t) => t % 60_000 === 0 && t >= 1)).toBe(true);
    // Six bars closed after the start; the failed poll's bar arrives in one chunk with the next one.
    expect(times.length).toBe(6);
    expect(chunks.map((c) => c.times.length)).toEqual([1, 1, 2, 1, 1]);
    expect(chunks.every((c) => c.closes.every(Number.isInteger))).toBe(true);
  });

  it('partial bars: the forming bar is re-sent while it changes, flagged partial, and closed once', async () => {
    const { Poller } = await import('../../../src/adapters/live/poller.ts');
    const { silentLogger } = await import('../../../src/engine/log.ts');
    const tf = { unit: 'minute' as const, unitNumber: 5 };
    const poller = new Poller({
      client: b.client,
      executor: bot.executor,
      journal: bot.journal,
      venueEvents: bot.executor.events,
      accountId: b.sim.demo.accountId,
      contracts: b.contracts,
      intervals: { openOrdersMs: 5_000, ordersMs: 10_000, tradesMs: 5_000, positionsMs: 5_000, accountMs: 15_000 },
      subscriptions: [{ contractId: ES, timeframe: tf, partialEveryMs: 60_000 }],
      logger: silentLogger,
      now: b.now,
    });
    const seen: Array<{ t: number; partial: boolean }> = [];
    poller.bars(ES, tf).subscribe((ch) => seen.push({ t: ch.time[0]!, partial: ch.partial === true }));
    for (let i = 0; i < 11; i++) {
      b.sim.clock.advance(60_000);
      await poller.tick();
    }
    poller.stop();
    const closed = seen.filter((x) => !x.partial).map((x) => x.t);
    expect(closed).toEqual([START, START + 5 * 60_000]);
    expect(seen.filter((x) => x.partial).length).toBeGreaterThan(3);
    // A partial update never comes for a bar that was already emitted closed.
    seen.forEach((x, i) => {
      if (x.partial) expect(seen.slice(0, i).some((y) => !y.partial && y.t >= x.t)).toBe(false);
    });
  });
});
