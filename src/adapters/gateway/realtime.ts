/**
 * The gateway's realtime hubs as RxJS streams, on the official `@microsoft/signalr` client: WebSockets
 * only, negotiation skipped, the session token from the trading client's session (renewed as it is),
 * automatic reconnect. A hub keeps no subscription across connections, so every subscription held is made
 * again after each reconnect. Events are checked against the shared zod schemas; one that does not parse
 * is reported on `malformed$`, never passed on.
 *
 * - `UserHubClient` (`/hubs/user`): `userEvents(accountId)`, orders, trades, positions and accounts.
 * - `MarketHubClient` (`/hubs/market`): `quotes(contractId)`, `marketTrades(contractId)`, `depth(contractId)`.
 *
 * Subscriptions are counted: the hub is asked to subscribe when the first Observable of a feed is
 * subscribed and to unsubscribe when the last one is.
 */
import {
  HttpTransportType,
  HubConnectionBuilder,
  HubConnectionState,
  LogLevel,
  type HubConnection,
} from '@microsoft/signalr';
import { BehaviorSubject, Observable, Subject } from 'rxjs';
import { z } from 'zod';
import { silentLogger, type Logger } from '../../engine/log.ts';
import { batchOf, GatewayDepth, GatewayQuote, GatewayTrade } from '../../protocol/hub-schemas.ts';
import * as S from '../../protocol/schemas.ts';
import { TicklineError } from '../../engine/errors.ts';

export type RealtimeState = 'connecting' | 'connected' | 'reconnecting' | 'disconnected';

export interface HubClientOptions {
  /** Base URL of the realtime host (the hub path is appended). */
  readonly url: string;
  /** A valid session token (the trading client's `login`, shared and renewed). */
  readonly token: () => Promise<string>;
  readonly logger?: Logger;
  /** Delays between reconnect attempts (ms); it keeps trying at the last one. */
  readonly reconnectDelaysMs?: readonly number[];
}
export type UserHubOptions = HubClientOptions;
export type MarketHubOptions = HubClientOptions;

/** The hub refused a subscription (an account not the token's, an unknown or expired contract). */
export class RealtimeSubscriptionError extends TicklineError {
  override readonly name = 'RealtimeSubscriptionError';
  readonly kind = 'runtime';
  readonly code = 'REALTIME_SUBSCRIPTION';
  constructor(
    readonly method: string,
    readonly argument: unknown,
    reason: string,
  ) {
    super(`${method}(${JSON.stringify(argument ?? null)}) refused by the hub: ${reason}`);
  }
}

interface Held {
  readonly subscribe: string;
  readonly unsubscribe: string;
  readonly args: readonly unknown[];
  count: number;
  readonly refused: Set<(error: RealtimeSubscriptionError) => void>;
}

/** One hub connection: state, counted subscriptions made again after every reconnect, validated events. */
class HubSession {
  readonly state$ = new BehaviorSubject<RealtimeState>('disconnected');
  readonly malformed$ = new Subject<{ target: string; error: string }>();
  private readonly connection: HubConnection;
  private readonly held = new Map<string, Held>();
  private readonly log: Logger;
  /** Set by `stop()`: invocations the closing connection cancels are expected then, not failures. */
  private stopping = false;
  /** Set while `restart()` closes the connection: its cancelled invocations are expected too. */
  private restarting = false;

  constructor(path: string, options: HubClientOptions) {
    this.log = options.logger ?? silentLogger;
    const delays = options.reconnectDelaysMs ?? [0, 1_000, 2_000, 5_000, 10_000];
    this.connection = new HubConnectionBuilder()
      .withUrl(`${options.url.replace(/\/$/, '')}${path}`, {
        skipNegotiation: true,
        transport: HttpTransportType.WebSockets,
        accessTokenFactory: options.token,
      })
      .withAutomaticReconnect({
        nextRetryDelayInMilliseconds: (context) =>
          delays[Math.min(context.previousRetryCount, delays.length - 1)] ?? 10_000,
      })
      .configureLogging(LogLevel.None)
      .build();
    this.connection.onreconnecting(() => this.state$.next('reconnecting'));
    this.connection.onreconnected(() => {
      this.state$.next('connected');
      void this.subscribeAll();
    });
    this.connection.onclose((error) => {
      if (error) this.log.warn({ err: error }, 'realtime connection closed');
      this.state$.next('disconnected');
    });
  }

  /** Calls `handler` with the parsed arguments of every `target` event that passes `parse`. */
  on<T>(target: string, parse: (args: unknown[]) => z.ZodSafeParseResult<T>, handler: (value: T) => void): void {
    this.connection.on(target, (...args: unknown[]) => {
      const parsed = parse(args);
      if (parsed.success) return handler(parsed.data);
      const error = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
      this.log.warn({ target, error }, 'malformed realtime event ignored');
      this.malformed$.next({ target, error });
    });
  }

  async start(): Promise<void> {
    this.state$.next('connecting');
    try {
      await this.connection.start();
    } catch (error) {
      this.state$.next('disconnected');
      throw error;
    }
    this.state$.next('connected');
    await this.subscribeAll();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await this.connection.stop();
  }

  /**
   * Close the connection and open a new one, every held subscription made again on it: for a hub that
   * stays connected while its events stopped (the automatic reconnect only follows a lost connection).
   */
  async restart(): Promise<void> {
    if (this.stopping) return;
    this.restarting = true;
    try {
      await this.connection.stop();
    } finally {
      this.restarting = false;
    }
    if (this.stopping) return;
    await this.start();
  }

  /** Holds a subscription while the returned release is not called; `refused` hears a hub refusal. */
  hold(
    subscribe: string,
    unsubscribe: string,
    args: readonly unknown[],
    refused: (error: RealtimeSubscriptionError) => void,
  ): () => void {
    const key = JSON.stringify([subscribe, args]);
    let held = this.held.get(key);
    if (held === undefined) {
      held = { subscribe, unsubscribe, args, count: 0, refused: new Set() };
      this.held.set(key, held);
    }
    const entry = held;
    entry.count++;
    entry.refused.add(refused);
    if (entry.count === 1 && this.connected) void this.subscribeOne(entry);
    return () => {
      entry.refused.delete(refused);
      if (--entry.count > 0) return;
      this.held.delete(key);
      if (this.connected)
        void this.invoke(entry.unsubscribe, entry.args).catch((error: unknown) => {
          // Releasing the last holds just before a stop: the closing connection cancels the call, and the
          // hub forgets every subscription of a closed connection anyway. Expected, so not a warning.
          if (this.stopping || this.restarting || !this.connected)
            this.log.debug(
              { method: entry.unsubscribe, reason: (error as Error).message },
              'realtime unsubscribe ended by the closing connection',
            );
          else this.log.warn({ method: entry.unsubscribe, err: error }, 'realtime unsubscribe failed');
        });
    };
  }

  /** Whether some Observable holds this subscription now. */
  isHeld(subscribe: string, args: readonly unknown[]): boolean {
    return this.held.has(JSON.stringify([subscribe, args]));
  }

  private get connected(): boolean {
    return this.connection.state === HubConnectionState.Connected;
  }

  private async subscribeAll(): Promise<void> {
    for (const entry of [...this.held.values()]) await this.subscribeOne(entry);
  }

  private async subscribeOne(entry: Held): Promise<void> {
    try {
      await this.invoke(entry.subscribe, entry.args);
    } catch (error) {
      // A refusal by the hub is an answer; a connection lost mid-call is retried after the reconnect, and
      // one closed by `stop()` is the end of it.
      if (this.stopping) {
        this.log.debug(
          { method: entry.subscribe, reason: (error as Error).message },
          'realtime subscription ended by stop',
        );
        return;
      }
      this.log.warn({ method: entry.subscribe, err: error }, 'realtime subscription failed');
      if (!this.connected) return;
      const refusal = new RealtimeSubscriptionError(entry.subscribe, entry.args[0], (error as Error).message);
      for (const listener of [...entry.refused]) listener(refusal);
    }
  }

  private invoke(method: string, args: readonly unknown[]): Promise<unknown> {
    return this.connection.invoke(method, ...args);
  }
}

/** An Observable of one hub feed: subscribed on the hub while it has subscribers, erroring if the hub refuses it. */
function feed<T>(
  session: HubSession,
  source: Subject<T>,
  subscribe: string,
  unsubscribe: string,
  args: readonly unknown[],
  accept: (value: T) => boolean,
): Observable<T> {
  return new Observable<T>((subscriber) => {
    const inner = source.subscribe((value) => {
      if (accept(value)) subscriber.next(value);
    });
    const release = session.hold(subscribe, unsubscribe, args, (error) => subscriber.error(error));
    return () => {
      inner.unsubscribe();
      release();
    };
  });
}

// ---------------------------------------------------------------------------- user hub

export type UserEvent =
  | { readonly kind: 'order'; readonly order: S.Order }
  | { readonly kind: 'trade'; readonly trade: S.Trade }
  | { readonly kind: 'position'; readonly position: S.Position }
  | { readonly kind: 'account'; readonly account: S.Account };

const USER_EVENTS: ReadonlyArray<{ target: string; kind: UserEvent['kind']; schema: z.ZodType }> = [
  { target: 'GatewayUserOrder', kind: 'order', schema: S.Order },
  { target: 'GatewayUserTrade', kind: 'trade', schema: S.Trade },
  { target: 'GatewayUserPosition', kind: 'position', schema: S.Position },
  { target: 'GatewayUserAccount', kind: 'account', schema: S.Account },
];

function recordOf(event: Exclude<UserEvent, { kind: 'account' }>): { accountId: number } {
  return event.kind === 'order' ? event.order : event.kind === 'trade' ? event.trade : event.position;
}

export class UserHubClient {
  readonly state$: BehaviorSubject<RealtimeState>;
  readonly malformed$: Subject<{ target: string; error: string }>;
  private readonly session: HubSession;
  private readonly events = new Subject<UserEvent>();

  constructor(options: UserHubOptions) {
    this.session = new HubSession('/hubs/user', options);
    this.state$ = this.session.state$;
    this.malformed$ = this.session.malformed$;
    for (const { target, kind, schema } of USER_EVENTS) {
      this.session.on(
        target,
        (args) => schema.safeParse(args[0]),
        (record) => this.events.next({ kind, [kind]: record } as unknown as UserEvent),
      );
    }
  }

  start(): Promise<void> {
    return this.session.start();
  }

  /** A new connection in place of this one, every subscription made again (a hub gone silent). */
  restart(): Promise<void> {
    return this.session.restart();
  }

  /** Orders, trades and positions of one account, and the accounts (balance, canTrade) as they change. */
  userEvents(accountId: number): Observable<UserEvent> {
    const streams = ['Orders', 'Trades', 'Positions'].map((stream) =>
      feed(this.session, this.events, `Subscribe${stream}`, `Unsubscribe${stream}`, [accountId], () => false),
    );
    // Records of other accounts subscribed by other Observables are not this one's; accounts all are.
    const mine = (event: UserEvent) => event.kind === 'account' || recordOf(event).accountId === accountId;
    const accounts = feed(this.session, this.events, 'SubscribeAccounts', 'UnsubscribeAccounts', [], mine);
    return new Observable<UserEvent>((subscriber) => {
      const holds = streams.map((stream) => stream.subscribe({ error: (error) => subscriber.error(error) }));
      const inner = accounts.subscribe(subscriber);
      return () => {
        inner.unsubscribe();
        for (const hold of holds) hold.unsubscribe();
      };
    });
  }

  get state(): RealtimeState {
    return this.state$.value;
  }

  async stop(): Promise<void> {
    await this.session.stop();
    this.events.complete();
  }
}

// ---------------------------------------------------------------------------- market hub

interface ForContract<T> {
  readonly contractId: string;
  readonly data: T;
}

/** The arguments of a market hub event, `(contractId, data)`, with `data` a batch of `record` or one. */
function contractEvent<T extends z.ZodType>(record: T) {
  const args = z.tuple([z.string().min(1), batchOf(record)]).rest(z.unknown());
  return (values: unknown[]) => args.safeParse(values);
}

export class MarketHubClient {
  readonly state$: BehaviorSubject<RealtimeState>;
  readonly malformed$: Subject<{ target: string; error: string }>;
  private readonly session: HubSession;
  private readonly quoteEvents = new Subject<ForContract<GatewayQuote>>();
  private readonly tradeEvents = new Subject<ForContract<GatewayTrade>>();
  private readonly depthEvents = new Subject<ForContract<GatewayDepth>>();
  /** The last quote of each contract whose quotes are held: what a later subscriber starts from. */
  private readonly latestQuotes = new Map<string, GatewayQuote>();

  constructor(options: MarketHubOptions) {
    this.session = new HubSession('/hubs/market', options);
    this.state$ = this.session.state$;
    this.malformed$ = this.session.malformed$;
    this.session.on('GatewayQuote', contractEvent(GatewayQuote), ([contractId, data]) => {
      for (const quote of data) {
        this.latestQuotes.set(contractId, quote);
        this.quoteEvents.next({ contractId, data: quote });
      }
    });
    this.session.on('GatewayTrade', contractEvent(GatewayTrade), ([contractId, data]) => {
      for (const trade of data) this.tradeEvents.next({ contractId, data: trade });
    });
    this.session.on('GatewayDepth', contractEvent(GatewayDepth), ([contractId, data]) => {
      for (const level of data) this.depthEvents.next({ contractId, data: level });
    });
  }

  start(): Promise<void> {
    return this.session.start();
  }

  /** A new connection in place of this one, every subscription made again (quotes gone silent). */
  restart(): Promise<void> {
    return this.session.restart();
  }

  /** The contract's quote: the current one first, then every change (as often as the hub's throttle allows). */
  quotes(contractId: string): Observable<GatewayQuote> {
    const method = 'SubscribeContractQuotes';
    return new Observable<GatewayQuote>((subscriber) => {
      // The hub sends its opening quote only to the first subscription; a later one starts from the last quote.
      const latest = this.session.isHeld(method, [contractId]) ? this.latestQuotes.get(contractId) : undefined;
      if (latest !== undefined) subscriber.next(latest);
      const inner = this.forContract(this.quoteEvents, 'Quotes', contractId).subscribe(subscriber);
      return () => {
        inner.unsubscribe();
        if (!this.session.isHeld(method, [contractId])) this.latestQuotes.delete(contractId);
      };
    });
  }

  /** The contract's market trades (prints), one at a time, oldest first. */
  marketTrades(contractId: string): Observable<GatewayTrade> {
    return this.forContract(this.tradeEvents, 'Trades', contractId);
  }

  /** Changes of the contract's book levels; a Reset (DomType 6) entry starts a whole book. */
  depth(contractId: string): Observable<GatewayDepth> {
    return this.forContract(this.depthEvents, 'MarketDepth', contractId);
  }

  get state(): RealtimeState {
    return this.state$.value;
  }

  async stop(): Promise<void> {
    await this.session.stop();
    for (const events of [this.quoteEvents, this.tradeEvents, this.depthEvents]) events.complete();
  }

  private forContract<T>(events: Subject<ForContract<T>>, feedName: string, contractId: string): Observable<T> {
    return new Observable<T>((subscriber) =>
      feed(
        this.session,
        events,
        `SubscribeContract${feedName}`,
        `UnsubscribeContract${feedName}`,
        [contractId],
        (event) => event.contractId === contractId,
      ).subscribe({
        next: (event) => subscriber.next(event.data),
        error: (error) => subscriber.error(error),
        complete: () => subscriber.complete(),
      }),
    );
  }
}
