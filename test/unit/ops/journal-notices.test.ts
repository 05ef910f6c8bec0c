/** Which journal entry is which notification, and its words; which entries say a connection went down or came back. */
import { describe, expect, it } from 'vitest';
import type { JournalEntry } from '../../../src/adapters/live/journal.ts';
import { connectionOf, durationText, noticeOf } from '../../../src/ops/notify/journal-notices.ts';

const ctx = {
  priceOf: (id: string, ticks: number) => (id === 'CON.F.US.EP.Z25' ? ticks * 0.25 : undefined),
  nameOf: (id: string) => ({ 'CON.F.US.EP.Z25': 'ESZ5', 'CON.F.US.EP.H26': 'ESH6' })[id] ?? id,
};
const T = Date.UTC(2025, 11, 10, 15);
const entry = (
  kind: string,
  payload: unknown,
  phase: JournalEntry['phase'] = 'event',
  tag: string | null = null,
): JournalEntry => ({
  seq: 1,
  time: T,
  kind,
  phase,
  tag,
  payload,
});

describe('journal entries as notifications', () => {
  it('a roll, an expiry, an anomaly, a failure, a personal limit, a trading state with its end', () => {
    expect(
      noticeOf(
        entry(
          'roll',
          {
            symbolId: 'F.US.EP',
            from: 'CON.F.US.EP.Z25',
            to: 'CON.F.US.EP.H26',
            position: -2,
            mode: 'roll',
            action: 'rolled',
          },
          'after',
        ),
        ctx,
      ),
    ).toEqual({ event: 'rolls', title: 'Roll F.US.EP', text: 'ESZ5 -> ESH6 (position -2, mode roll): rolled' });
    // The roll's `before` is the plan, not news.
    expect(noticeOf(entry('roll', { symbolId: 'F.US.EP' }, 'before'), ctx)).toBeUndefined();
    expect(
      noticeOf(entry('expiry', { contractId: 'CON.F.US.EP.Z25', expiresAt: '2025-12-19T14:30:00.000Z' }), ctx),
    ).toEqual({
      event: 'rolls',
      title: 'Expiry ESZ5',
      text: 'CON.F.US.EP.Z25 expires at 2025-12-19T14:30:00.000Z: flattened, the session ends',
    });
    expect(
      noticeOf(entry('anomaly', { message: 'position differs: journal 1, gateway 0' }, 'event', 'x-1'), ctx),
    ).toMatchObject({
      event: 'anomalies',
      text: 'position differs: journal 1, gateway 0',
    });
    expect(noticeOf(entry('engine-error', { message: 'boom' }), ctx)).toMatchObject({
      event: 'anomalies',
      title: 'Engine failed; trading HALTED',
    });
    expect(
      noticeOf(
        entry('breach', {
          type: 3,
          duration: 0,
          time: T,
          tradingDay: '2025-12-10',
          equity: 49_400,
          balance: 49_500,
          dayPnl: -600,
          level: -500,
        }),
        ctx,
      ),
    ).toMatchObject({ event: 'breaches', title: 'Breach: personal daily loss limit' });
    expect(
      noticeOf(
        entry('trading-state', {
          state: 'REDUCING',
          reason: 'personal daily loss limit reached',
          until: T + 3_600_000,
          time: T,
        }),
        ctx,
      ),
    ).toEqual({
      event: 'tradingState',
      title: 'Trading REDUCING',
      text: 'personal daily loss limit reached until 2025-12-10T16:00:00.000Z',
    });
    // What is not news by itself: intents, accepted decisions, places.
    for (const kind of ['intent', 'risk-accepted', 'place', 'session', 'realtime'])
      expect(noticeOf(entry(kind, {}), ctx)).toBeUndefined();
  });

  it('the user hub, a market hub and the polls going down and back', () => {
    expect(connectionOf(entry('realtime', { state: 'reconnecting' }))).toEqual({
      channel: 'user hub',
      down: true,
      since: T,
      detail: 'reconnecting',
    });
    expect(connectionOf(entry('realtime', { state: 'connected' }))).toMatchObject({ channel: 'user hub', down: false });
    // A market hub's silence began before the watchdog noticed it.
    expect(
      connectionOf(entry('market-hub', { contractId: 'CON.F.US.EP.Z25', state: 'silent', silentMs: 60_000 })),
    ).toEqual({
      channel: 'market hub CON.F.US.EP.Z25',
      down: true,
      since: T - 60_000,
      detail: 'no quotes',
    });
    expect(connectionOf(entry('market-realtime', { state: 'disconnected' }))).toMatchObject({
      channel: 'market hub',
      down: true,
    });
    expect(connectionOf(entry('visibility', { blind: null }))).toMatchObject({ channel: 'polls', down: false });
    expect(connectionOf(entry('fill', {}))).toBeUndefined();
    expect([45_000, 200_000, 7_500_000].map(durationText)).toEqual(['45s', '3m 20s', '2h 05m']);
  });
});
