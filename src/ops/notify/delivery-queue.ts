/**
 * One target's queue of notifications: bounded, delivered one at a time in the order they came, each tried
 * up to `attempts` times with a growing pause (a 429's Retry-After when the target gives one), then dropped
 * with a log line. Nothing here is awaited by the trading path: `push` only appends, and the delivery runs
 * on its own promise chain, so a target that hangs or fails delays nothing but its own queue.
 *
 * When the queue is full the oldest waiting message is dropped (logged) for the new one: a phone wants the
 * latest state of a bot, not an old fill that waited behind a dead webhook.
 */
import type { Logger } from '../../engine/log.ts';

export type SendOutcome =
  | { readonly ok: true }
  | {
      readonly ok: false;
      /** Why, for the log line (no URL, no token: the senders keep them out). */
      readonly reason: string;
      /** The target asked to wait this long (a 429's Retry-After). */
      readonly retryAfterMs?: number;
      /** Trying again cannot help (a 4xx other than 408 and 429, a command that does not exist). */
      readonly permanent?: boolean;
    };

export interface DeliveryQueueOptions<M> {
  /** The target's name in log lines. */
  readonly name: string;
  /** Messages waiting at most (the one being delivered is not waiting). */
  readonly bound: number;
  readonly attempts: number;
  /** Delivers one message; `signal` aborts it when the queue stops. */
  readonly send: (message: M, signal: AbortSignal) => Promise<SendOutcome>;
  /** What a log line says of a message (its event and time; never its secrets). */
  readonly describe: (message: M) => Record<string, unknown>;
  readonly logger: Logger;
  /** The pause after the first failure, doubled after each (default 1 s), up to `maxBackoffMs` (default 60 s). */
  readonly backoffMs?: number;
  readonly maxBackoffMs?: number;
  /** A Retry-After longer than this is cut to it (default 5 minutes). */
  readonly maxRetryAfterMs?: number;
  /** Called once per message, when delivered or dropped (statistics, tests). */
  readonly onSettled?: (message: M, outcome: 'delivered' | 'dropped', reason?: string) => void;
}

export class DeliveryQueue<M> {
  private readonly waiting: M[] = [];
  private running: Promise<void> | undefined;
  private stopped = false;
  private wake: (() => void) | undefined;
  private pauseTimer: NodeJS.Timeout | undefined;
  private readonly abort = new AbortController();
  delivered = 0;
  dropped = 0;

  constructor(private readonly o: DeliveryQueueOptions<M>) {}

  /** Messages waiting (the one in delivery not counted): never more than the bound. */
  get size(): number {
    return this.waiting.length;
  }

  get idle(): boolean {
    return this.running === undefined && this.waiting.length === 0;
  }

  push(message: M): void {
    if (this.stopped) {
      this.drop(message, 'notifications stopped');
      return;
    }
    if (this.waiting.length >= this.o.bound) this.drop(this.waiting.shift()!, `queue full (${this.o.bound} waiting)`);
    this.waiting.push(message);
    this.running ??= this.run();
  }

  /** Resolves when nothing waits and nothing is in delivery. */
  async drain(): Promise<void> {
    while (this.running !== undefined) await this.running;
  }

  /**
   * Stops taking messages: what is in delivery gets `graceMs` to finish (retries included), then every
   * message still waiting or retrying is dropped with its log line.
   */
  async stop(graceMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, graceMs);
    });
    await Promise.race([this.drain(), deadline]);
    clearTimeout(timer);
    this.stopped = true;
    for (const message of this.waiting.splice(0)) this.drop(message, 'notifications stopped');
    this.interruptPause();
    this.abort.abort();
    await this.drain();
  }

  private async run(): Promise<void> {
    try {
      while (this.waiting.length > 0) await this.deliver(this.waiting.shift()!);
    } finally {
      this.running = undefined;
    }
  }

  private async deliver(message: M): Promise<void> {
    const { attempts, logger, name } = this.o;
    for (let attempt = 1; ; attempt++) {
      let outcome: SendOutcome;
      try {
        outcome = await this.o.send(message, this.abort.signal);
      } catch (error) {
        // A sender reports failures as outcomes; a throw is a bug of its own, counted as a failed attempt.
        outcome = { ok: false, reason: error instanceof Error ? error.message : String(error) };
      }
      if (outcome.ok) {
        this.delivered++;
        this.o.onSettled?.(message, 'delivered');
        return;
      }
      if (outcome.permanent === true || attempt >= attempts || this.stopped) {
        const why = outcome.permanent === true ? outcome.reason : `${outcome.reason} (${attempt} attempts)`;
        this.drop(message, this.stopped ? `${why}; notifications stopped` : why);
        return;
      }
      const pause =
        outcome.retryAfterMs === undefined
          ? Math.min(this.o.maxBackoffMs ?? 60_000, (this.o.backoffMs ?? 1_000) * 2 ** (attempt - 1))
          : Math.min(outcome.retryAfterMs, this.o.maxRetryAfterMs ?? 300_000);
      logger.debug(
        { target: name, ...this.o.describe(message), attempt, reason: outcome.reason, retryInMs: pause },
        'notification not delivered; trying again',
      );
      await this.pause(pause);
    }
  }

  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      this.wake = resolve;
      this.pauseTimer = setTimeout(resolve, ms);
      // A pause never keeps the process alive: a bot that stops does not wait for a webhook's retry.
      this.pauseTimer.unref();
    });
  }

  private interruptPause(): void {
    clearTimeout(this.pauseTimer);
    this.wake?.();
    this.wake = undefined;
  }

  private drop(message: M, reason: string): void {
    this.dropped++;
    this.o.logger.warn({ target: this.o.name, ...this.o.describe(message), reason }, 'notification dropped');
    this.o.onSettled?.(message, 'dropped', reason);
  }
}
