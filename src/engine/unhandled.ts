/**
 * RxJS reports a throw it cannot hand to an error channel (inside a plain subscriber's callback, behind a
 * combination the engine did not make) asynchronously: `reportUnhandledError` schedules it on its
 * `timeoutProvider`, and without `config.onUnhandledError` the process dies with a raw stack, after the
 * bars that followed ran on with the strategy broken. While the engine hands a strategy its bars, chunks
 * or events, `unhandled.catcher` names that strategy's failure handler: a report scheduled then is run at
 * once with the catcher as RxJS's handler, so the throw is attributed to the strategy and the bar it
 * happened on, synchronously. Outside those moments RxJS behaves as it always does.
 */
import { config } from 'rxjs';
import { timeoutProvider } from 'rxjs/internal/scheduler/timeoutProvider';

export const unhandled: { catcher: ((error: unknown) => void) | undefined } = { catcher: undefined };

let installed = false;

/** Routes RxJS's scheduled reports through `unhandled.catcher` while one is set (idempotent). */
export function installUnhandledCatcher(): void {
  if (installed) return;
  installed = true;
  const previous = timeoutProvider.delegate;
  timeoutProvider.delegate = {
    setTimeout(handler, timeout, ...args) {
      const catcher = unhandled.catcher;
      if (catcher === undefined)
        return previous !== undefined ? previous.setTimeout(handler, timeout, ...args) : setTimeout(handler, timeout);
      const saved = config.onUnhandledError;
      config.onUnhandledError = catcher;
      try {
        handler(...(args as []));
      } finally {
        config.onUnhandledError = saved;
      }
      return 0 as unknown as ReturnType<typeof setTimeout>;
    },
    clearTimeout(handle) {
      if (previous !== undefined) previous.clearTimeout(handle);
      else clearTimeout(handle as Parameters<typeof clearTimeout>[0]);
    },
  };
}
