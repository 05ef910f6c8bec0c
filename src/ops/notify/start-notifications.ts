/**
 * Notifications for a paper or live session: `startNotifications(config.notify, session, logger)` follows
 * the session's journal and returns the function that stops them (after the session stopped, so its last
 * entries and the day's summary still go out). The one call `tickline paper` and `tickline live` make.
 */
import type { Logger } from '../../engine/log.ts';
import type { LiveSession } from '../../adapters/live/trading-session.ts';
import type { NotifyConfig } from '../../adapters/live/notify-config.ts';
import { startNotifier, type DayFacts, type Notifier } from './notifier.ts';

export type { Notifier } from './notifier.ts';

export function startNotifications(
  targets: NotifyConfig,
  session: LiveSession,
  logger: Logger,
  options: { readonly env?: NodeJS.ProcessEnv } = {},
): () => Promise<void> {
  const notifier = notifySession(targets, session, logger, options);
  return notifier === undefined ? async () => undefined : () => notifier.stop();
}

/** The notifier of a session (undefined without targets), for what needs its queues. */
export function notifySession(
  targets: NotifyConfig,
  session: LiveSession,
  logger: Logger,
  options: { readonly env?: NodeJS.ProcessEnv; readonly checkEveryMs?: number; readonly backoffMs?: number } = {},
): Notifier | undefined {
  if (targets.length === 0) return undefined;
  const { engine, options: o } = session;
  const contract = (id: string) => session.contracts.get(id) ?? session.contracts.get(session.routes.route(id));
  return startNotifier(
    targets,
    {
      entries: session.journal.recorded,
      now: o.now ?? Date.now,
      tradingDay: engine.riskConfig.tradingDay,
      account: session.account.name,
      bot: o.config.strategy.id,
      priceOf: (id, ticks) => contract(id)?.grid.toPrice(ticks),
      nameOf: (id) => contract(id)?.name ?? id,
      dayFacts: (tradingDay): DayFacts => {
        const record = engine.accounting.days.findLast((d) => d.tradingDay === tradingDay);
        const snapshot = engine.snapshot();
        const held = snapshot.positions
          .filter((p) => p.size !== 0)
          .map((p) => `${contract(p.contractId)?.name ?? p.contractId} ${p.size > 0 ? '+' : ''}${p.size}`);
        return {
          balance: snapshot.balance,
          ...(record === undefined ? {} : { dayPnl: record.endBalance - record.startBalance }),
          position: held.join(' ') || 'flat',
          tradingState: engine.tradingState().state,
          passLocked: engine.passLocked() !== undefined,
        };
      },
    },
    { logger: logger.child({ part: 'notify' }), ...options },
  );
}
