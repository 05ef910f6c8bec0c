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

type Delegate = NonNullable<typeof timeoutProvider.delegate>;

let ours: Delegate | undefined;

/**
 * Routes RxJS's scheduled reports through `unhandled.catcher` while one is set. Called at each engine's
 * start: a no-op while ours is in place, and in place again (over whatever delegate is there then, which it
 * defers to) when something replaced it (RxJS's TestScheduler sets its own and clears it after a run).
 */
export function installUnhandledCatcher(): void {
  if (ours !== undefined && timeoutProvider.delegate === ours) return;
  const previous = timeoutProvider.delegate;
  const delegate: Delegate = {
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
  ours = delegate;
  timeoutProvider.delegate = delegate;
}
