/**
 * A paper session as the dashboard's feed: its figures are the simulator's and the journal's (balance,
 * position, working order, the floors of the administration record), its decisions come from the journal
 * with the refusal first, and its actions are journaled with their source: a pause lets only reducing
 * orders through, a resume lifts only a pause, and the kill switch flattens the account at the simulator.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AdminClient } from '../../../src/adapters/gateway/admin-client.ts';
import { signedSize } from '../../../src/adapters/live/reconcile.ts';
import { silentLogger } from '../../../src/engine/log.ts';
import { accountSnapshotSchema } from '../../../src/ops/dashboard/dashboard-feed.ts';
import { PAUSE_REASON, sessionFeed } from '../../../src/ops/dashboard/session-feed.ts';
import { loadEvaluationRules } from '../../../src/cli/evaluations.ts';
import { ES } from '../live/live-harness.ts';
import { PERSONAL_DAILY_LOSS, startDashboardSession, type DashboardBench } from './dashboard-session.ts';

let d: DashboardBench;
beforeEach(async () => {
  d = await startDashboardSession();
});
afterEach(async () => {
  await d.close();
});

describe('a paper session as a dashboard feed', () => {
  it('shows what the simulator and the journal hold, and journals each action with its source', async () => {
    const { b, session } = d;
    const evaluation = loadEvaluationRules('topstep-50k');
    const feed = sessionFeed(session, { evaluation });
    const [account] = feed.accounts();
    expect(account!.id).toBe(String(b.sim.demo.accountId));
    await d.runBars(5);

    const snap = accountSnapshotSchema.parse(account!.snapshot());
    const accountId = b.sim.demo.accountId;
    const simAccount = (await b.truth.searchAccounts(true)).find((a) => a.id === accountId)!;
    const simPositions = await b.truth.searchOpenPositions(accountId);
    const simOrders = await b.truth.searchOpenOrders(accountId);
    expect(snap.balance).toBeCloseTo(simAccount.balance, 6);
    expect(snap.positions.map((p) => [p.contractId, p.size])).toEqual(
      simPositions.map((p) => [p.contractId, signedSize(p)]),
    );
    expect(snap.positions[0]!.size).toBe(1);
    expect(snap.orders).toHaveLength(1);
    expect(simOrders).toHaveLength(1);
    expect(snap.orders[0]).toMatchObject({ side: 'sell', size: 1, type: 'limit', price: simOrders[0]!.limitPrice });
    expect(session.journal.order(snap.orders[0]!.id)?.venueOrderId).toBe(simOrders[0]!.id);

    // The floors are the administration record's; the room is the equity above them.
    const admin = new AdminClient({
      baseUrl: b.sim.adminUrl,
      headers: b.sim.adminHeaders,
      logger: silentLogger,
      now: b.now,
    });
    const record = await admin.findTradingAccount(simAccount.name);
    await admin.close();
    const room = Object.fromEntries(snap.headroom.map((h) => [h.limit, h]));
    expect(Object.keys(room).sort()).toEqual(['dailyLossLimit', 'maximumLossLimit', 'personalDailyLossLimit']);
    expect(room.maximumLossLimit!.floor).toBeCloseTo(record.drawDownLimit, 6);
    expect(room.dailyLossLimit!.floor).toBeCloseTo(record.startOfDayBalance - record.dailyLoss, 6);
    expect(room.dailyLossLimit!.room).toBeCloseTo(snap.equity - room.dailyLossLimit!.floor!, 6);
    expect(room.personalDailyLossLimit!.room).toBeCloseTo(PERSONAL_DAILY_LOSS + snap.dayPnl, 6);
    expect(snap.equity).toBeCloseTo(snap.balance + snap.openPnl, 6);

    // The refusal by the position cap comes first; the accepted decisions after it.
    expect(snap.decisions[0]).toMatchObject({ accepted: false, code: 'MAX_POSITION_SIZE' });
    expect(snap.decisions.slice(1).every((x) => x.accepted)).toBe(true);
    expect(session.journal.entries({ kind: 'risk-rejected' })).toHaveLength(1);
    expect(snap.evaluation).toMatchObject({ name: evaluation.name, profitTarget: evaluation.profitTarget });
    // Measured on the realized balance, as the evaluation replay measures it.
    const realized = session.engine.snapshot().balance - evaluation.startingBalance;
    expect(snap.evaluation!.profit).toBeCloseTo(realized, 9);
    expect(snap.evaluation!.targetReached).toBeCloseTo(realized / evaluation.profitTarget, 9);
    expect(snap.evaluation!.targetsMet).toBe(false);
    expect(snap.health.bars[0]!.contractId).toBe(ES);
    // Polled half a second after each close, on a clock moved 30 s at a time: the last bar is at most 1.5 bars old.
    expect(snap.health.bars[0]!.ageMs).toBeLessThanOrEqual(90_000);
    expect(snap.health.polls.find((p) => p.name === 'positions')!.lastOkAt).toBeGreaterThan(0);
    expect(snap.calendar[0]).toMatchObject({ contractId: ES, open: true });
    expect(snap.calendar[0]!.nextClose).toBeGreaterThan(snap.time);
    expect(snap.calendar[0]!.nextRoll?.kind).toBe('expiry');
    expect(account!.equity().length).toBeGreaterThan(3);

    // Pause: REDUCING with the operator's reason, journaled with its source; resume lifts only that.
    expect(await account!.act('resume', 'dashboard')).toMatchObject({ ok: false });
    expect(await account!.act('pause', 'dashboard')).toMatchObject({ ok: true });
    expect(session.engine.tradingState()).toMatchObject({ state: 'REDUCING', reason: PAUSE_REASON });
    expect(account!.snapshot().state.paused).toBe(true);
    expect(await account!.act('resume', 'command')).toMatchObject({ ok: true });
    expect(session.engine.tradingState().state).toBe('ACTIVE');
    expect(session.journal.entries({ kind: 'operator' }).map((e) => e.payload)).toEqual([
      { action: 'resume', source: 'dashboard', from: 'ACTIVE' },
      { action: 'pause', source: 'dashboard', from: 'ACTIVE' },
      { action: 'resume', source: 'command', from: 'REDUCING' },
    ]);

    // The kill switch: flat at the simulator, halted, and the journal says who pulled it.
    const killed = await account!.act('kill', 'dashboard');
    expect(killed.ok).toBe(true);
    expect(killed.message).toMatch(/is flat/);
    expect(await b.truth.searchOpenPositions(accountId)).toEqual([]);
    expect(await b.truth.searchOpenOrders(accountId)).toEqual([]);
    expect(session.engine.tradingState().state).toBe('HALTED');
    const kills = session.journal.entries({ kind: 'kill-switch' });
    expect(kills.map((e) => [e.phase, (e.payload as { source: string }).source])).toEqual([
      ['before', 'dashboard'],
      ['after', 'dashboard'],
    ]);
    // A halted bot is not resumed from a page.
    expect(await account!.act('resume', 'dashboard')).toMatchObject({ ok: false });
    feed.close();
  }, 30_000);
});
