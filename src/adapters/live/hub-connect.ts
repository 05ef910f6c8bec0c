/**
 * Connections to a realtime hub made in the background, so the session polls meanwhile: the first one (a
 * hub that cannot be reached when the session starts is tried again every `retryMs`; once connected, the
 * SignalR client reconnects by itself), and a watchdog's restart of a hub that went silent.
 */
import type { Logger } from '../../engine/log.ts';

export interface BackgroundConnection {
  cancel(): void;
}

export function connectInBackground(
  start: () => Promise<void>,
  options: { logger: Logger; what: string; retryMs: number },
): BackgroundConnection {
  let timer: NodeJS.Timeout | undefined;
  let cancelled = false;
  const attempt = async (): Promise<void> => {
    if (cancelled) return;
    try {
      await start();
    } catch (error) {
      if (cancelled) return;
      options.logger.warn(
        { err: error, retryMs: options.retryMs },
        `${options.what} unavailable; polling meanwhile, trying again`,
      );
      timer = setTimeout(() => void attempt(), options.retryMs);
      timer.unref();
    }
  };
  void attempt();
  return {
    cancel: () => {
      cancelled = true;
      if (timer) clearTimeout(timer);
    },
  };
}

/**
 * A watchdog's reconnect of a hub that is connected but silent: the hub is restarted (closed, connected,
 * its subscriptions made again). A restart that fails is logged and, unless the feed stopped meanwhile,
 * left to `reconnect` (a connection in the background); `settled` runs once either way.
 */
export function restartInBackground(
  hub: { restart(): Promise<void> },
  options: { logger: Logger; what: string; stopped: () => boolean; reconnect: () => void; settled: () => void },
): void {
  void hub
    .restart()
    .catch((error: unknown) => {
      if (options.stopped()) return;
      options.logger.warn({ err: error }, `${options.what} reconnect failed; trying again in the background`);
      options.reconnect();
    })
    .finally(options.settled);
}
