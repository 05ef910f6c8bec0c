/**
 * The first connection to a realtime hub, made in the background: a hub that cannot be reached when the
 * session starts is tried again every `retryMs` while the session polls. Once connected, the SignalR
 * client reconnects by itself.
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
