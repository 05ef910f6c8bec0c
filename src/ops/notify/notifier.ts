/**
 * The notifier: follows a session's journal as it is written, turns its entries into notifications, and
 * hands each to the queue of every target that asked for its event. Besides the entries themselves it
 * watches two things over time, checked at every entry and on a timer: a connection down longer than a
 * target's `downAfterMs` (and back), and the end of a trading day (the daily summary).
 *
 * Off the trading path: the journal's subscriber only appends the entry to a list; the words, the filters
 * and the queues run on the next turn of the event loop (setImmediate), after the code that wrote the
 * entry (a bar's decision, the order it sends) has finished. Nothing the trading path calls waits for a
 * target.
 */
import { Agent } from 'undici';
import type { Observable, Subscription } from 'rxjs';
import type { Logger } from '../../engine/log.ts';
import { TradingCalendar, type TradingDayConfig } from '../../engine/trading-day.ts';
import type { JournalEntry } from '../../adapters/live/journal.ts';
import { NOTIFY_EVENTS, type NotifyEvent, type NotifyTarget } from '../../adapters/live/notify-config.ts';
import { DeliveryQueue } from './delivery-queue.ts';
import { connectionOf, durationText, noticeOf, type NoticeContext } from './journal-notices.ts';
import { createSender, resolveTargets, type Notice, type ResolvedTarget } from './senders.ts';

/** What the daily summary reads of the session when a trading day ends. */
export interface DayFacts {
  readonly balance: number;
  /** The ended day's realized PnL, when known. */
  readonly dayPnl?: number;
  /** `ESZ5 +1`, or `flat`. */
  readonly position: string;
  readonly tradingState: string;
  readonly passLocked: boolean;
}

export interface NotifierSource extends NoticeContext {
  /** The journal's entries as they are written. */
  readonly entries: Observable<JournalEntry>;
  /** The session's clock (the gateway's: a simulator may run it faster or by hand). */
  readonly now: () => number;
  readonly tradingDay?: TradingDayConfig;
  readonly account: string;
  readonly bot: string;
  /** The figures of the day that ended, for the daily summary; without it the summary has the counts only. */
  dayFacts?(tradingDay: string): DayFacts;
}

export interface NotifierOptions {
  readonly logger: Logger;
  readonly env?: NodeJS.ProcessEnv;
  /** Wall ms between the checks of the connections and the day (default 1000). */
  readonly checkEveryMs?: number;
  /** The queues' first pause after a failure (default 1 s; tests shorten it). */
  readonly backoffMs?: number;
}

interface TargetState {
  readonly target: ResolvedTarget;
  readonly events: ReadonlySet<NotifyEvent>;
  readonly queue: DeliveryQueue<Notice>;
  /** Channels this target was told are down. */
  readonly toldDown: Set<string>;
}

interface DayCounts {
  fills: number;
  rejections: number;
  breaches: number;
  anomalies: number;
  /** Reason codes already notified today: a refusal repeated every bar is told once a day. */
  readonly codes: Set<string>;
}

export interface Notifier {
  /** The targets' queues, by target name (statistics, tests). */
  readonly queues: ReadonlyMap<string, DeliveryQueue<Notice>>;
  /** Checks the connections and the day now (the timer does it every second; a manual clock's test calls it). */
  check(): void;
  /** Entries still waiting for the next turn of the event loop are handled, the queues get `graceMs`, then stop. */
  stop(graceMs?: number): Promise<void>;
}

export function startNotifier(
  targets: readonly NotifyTarget[],
  source: NotifierSource,
  options: NotifierOptions,
): Notifier {
  const { logger } = options;
  const resolved = resolveTargets(targets, options.env ?? process.env);
  // Its own pool: a receiver that hangs holds its own sockets, and `stop` closes them all.
  const agent = new Agent({ connections: 4, keepAliveTimeout: 10_000 });
  const states: TargetState[] = resolved.map((target) => {
    const sender = createSender(target, agent, logger);
    return {
      target,
      events: new Set(target.events ?? NOTIFY_EVENTS),
      toldDown: new Set(),
      queue: new DeliveryQueue<Notice>({
        name: target.label,
        bound: target.queue,
        attempts: target.attempts,
        send: sender,
        describe: (notice) => ({ event: notice.event, time: new Date(notice.time).toISOString(), title: notice.title }),
        logger,
        ...(options.backoffMs === undefined ? {} : { backoffMs: options.backoffMs }),
      }),
    };
  });
  const calendar = new TradingCalendar(source.tradingDay);
  let day = calendar.dayOf(source.now());
  const fresh = (): DayCounts => ({ fills: 0, rejections: 0, breaches: 0, anomalies: 0, codes: new Set() });
  let counts = fresh();
  /** Channels down now, since when (session ms), and why. */
  const down = new Map<string, { since: number; detail: string }>();
  const pending: JournalEntry[] = [];
  let scheduled: NodeJS.Immediate | undefined;
  let stopped = false;

  const send = (event: NotifyEvent, time: number, title: string, text: string, data: unknown, only?: TargetState) => {
    const notice: Notice = { event, time, account: source.account, bot: source.bot, title, text, data };
    for (const state of only === undefined ? states : [only]) {
      if (state.events.has(event)) state.queue.push(notice);
    }
  };

  const handle = (entry: JournalEntry): void => {
    const dayOfEntry = calendar.dayOf(entry.time);
    if (dayOfEntry > day) endDay(dayOfEntry);
    const content = noticeOf(entry, source);
    if (content !== undefined) {
      if (content.event === 'fills') counts.fills++;
      else if (content.event === 'breaches') counts.breaches++;
      else if (content.event === 'anomalies') counts.anomalies++;
      else if (content.event === 'rejections') {
        counts.rejections++;
        const code = content.title;
        if (counts.codes.has(code)) return;
        counts.codes.add(code);
      }
      send(content.event, entry.time, content.title, content.text, entry.payload);
      return;
    }
    const change = connectionOf(entry);
    if (change === undefined) return;
    const was = down.get(change.channel);
    if (change.down) {
      if (was === undefined) down.set(change.channel, { since: change.since, detail: change.detail });
      return;
    }
    if (was === undefined) return;
    down.delete(change.channel);
    for (const state of states) {
      if (!state.toldDown.delete(change.channel)) continue;
      send(
        'connection',
        entry.time,
        `${change.channel} back`,
        `${change.channel} back after ${durationText(entry.time - was.since)} (${change.detail})`,
        { channel: change.channel, down: false, downMs: entry.time - was.since },
        state,
      );
    }
  };

  /** The trading day `day` ended (the clock or an entry is in `next`): its summary, then fresh counts. */
  const endDay = (next: string): void => {
    const ended = day;
    day = next;
    const c = counts;
    counts = fresh();
    let facts: DayFacts | undefined;
    try {
      facts = source.dayFacts?.(ended);
    } catch (error) {
      logger.warn({ err: error, tradingDay: ended }, 'daily summary: the session figures are unavailable');
    }
    const lines = [
      ...(facts === undefined
        ? []
        : [
            `${facts.dayPnl === undefined ? '' : `PnL ${facts.dayPnl.toFixed(2)}, `}balance ${facts.balance.toFixed(2)}, position ${facts.position}, trading ${facts.tradingState}${facts.passLocked ? ', pass-locked' : ''}`,
          ]),
      `${c.fills} fills, ${c.rejections} refused, ${c.breaches} breaches, ${c.anomalies} anomalies`,
    ];
    send('dailySummary', source.now(), `Trading day ${ended} ended`, lines.join('\n'), {
      tradingDay: ended,
      ...facts,
      fills: c.fills,
      rejections: c.rejections,
      breaches: c.breaches,
      anomalies: c.anomalies,
    });
  };

  const check = (): void => {
    if (stopped) return;
    flush();
    const now = source.now();
    const today = calendar.dayOf(now);
    if (today > day) endDay(today);
    for (const [channel, { since, detail }] of down) {
      for (const state of states) {
        if (state.toldDown.has(channel) || now - since < state.target.downAfterMs) continue;
        state.toldDown.add(channel);
        send(
          'connection',
          now,
          `${channel} down`,
          `${channel} down for ${durationText(now - since)} (${detail})`,
          { channel, down: true, downMs: now - since, detail },
          state,
        );
      }
    }
  };

  const flush = (): void => {
    scheduled = undefined;
    for (const entry of pending.splice(0)) {
      try {
        handle(entry);
      } catch (error) {
        logger.error({ err: error, kind: entry.kind, seq: entry.seq }, 'notification of a journal entry failed');
      }
    }
  };

  const subscription: Subscription = source.entries.subscribe({
    next: (entry) => {
      pending.push(entry);
      scheduled ??= setImmediate(check);
    },
    error: (error: unknown) => logger.error({ err: error }, 'notifications: the journal stream failed'),
  });
  const timer = setInterval(check, options.checkEveryMs ?? 1_000);
  timer.unref();
  logger.info(
    { targets: states.map((s) => ({ name: s.target.label, type: s.target.type, events: [...s.events] })) },
    'notifications on',
  );

  return {
    queues: new Map(states.map((s) => [s.target.label, s.queue])),
    check,
    async stop(graceMs = 3_000) {
      if (stopped) return;
      subscription.unsubscribe();
      clearInterval(timer);
      if (scheduled !== undefined) clearImmediate(scheduled);
      check();
      stopped = true;
      await Promise.all(states.map((s) => s.queue.stop(graceMs)));
      // Destroyed, not closed: a receiver that never answers would keep a graceful close waiting.
      await agent
        .destroy()
        .catch((error: unknown) => logger.warn({ err: error }, 'notifications: closing connections failed'));
    },
  };
}
