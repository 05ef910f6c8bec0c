/**
 * The gateway's user hub as RxJS streams, on the official `@microsoft/signalr` client: WebSockets only,
 * negotiation skipped, the session token from the trading client's session (renewed as it is), automatic
 * reconnect. A hub keeps no subscription across connections, so every subscription is made again after
 * each reconnect. Events are checked against the same zod schemas as the REST records; one that does not
 * parse is reported on `malformed$`, never passed on.
 */
import { HttpTransportType, HubConnectionBuilder, HubConnectionState, LogLevel, type HubConnection } from '@microsoft/signalr';
import { BehaviorSubject, Observable, Subject } from 'rxjs';
import type { z } from 'zod';
import { silentLogger, type Logger } from '../../engine/log.ts';
import * as S from './schemas.ts';

export type RealtimeState = 'connecting' | 'connected' | 'reconnecting' | 'disconnected';

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

export interface UserHubOptions {
  /** Base URL of the realtime host (the hub path is appended). */
  readonly url: string;
  /** A valid session token (the trading client's `login`, shared and renewed). */
  readonly token: () => Promise<string>;
  readonly logger?: Logger;
  /** Delays between reconnect attempts (ms); it keeps trying at the last one. */
  readonly reconnectDelaysMs?: readonly number[];
}

export class UserHubClient {
  readonly state$ = new BehaviorSubject<RealtimeState>('disconnected');
  readonly malformed$ = new Subject<{ target: string; error: string }>();
  private readonly events = new Subject<UserEvent>();
  private readonly connection: HubConnection;
  private readonly subscriptions = new Set<string>();
  private readonly log: Logger;

  constructor(options: UserHubOptions) {
    this.log = options.logger ?? silentLogger;
    const delays = options.reconnectDelaysMs ?? [0, 1_000, 2_000, 5_000, 10_000];
    this.connection = new HubConnectionBuilder()
      .withUrl(`${options.url.replace(/\/$/, '')}/hubs/user`, { skipNegotiation: true, transport: HttpTransportType.WebSockets, accessTokenFactory: options.token })
      .withAutomaticReconnect({ nextRetryDelayInMilliseconds: (context) => delays[Math.min(context.previousRetryCount, delays.length - 1)] ?? 10_000 })
      .configureLogging(LogLevel.None)
      .build();
    for (const { target, kind, schema } of USER_EVENTS) {
      this.connection.on(target, (record: unknown) => {
        const parsed = schema.safeParse(record);
        if (!parsed.success) {
          const error = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
          this.log.warn({ target, error }, 'malformed realtime event ignored');
          this.malformed$.next({ target, error });
          return;
        }
        this.events.next({ kind, [kind]: parsed.data } as unknown as UserEvent);
      });
    }
    this.connection.onreconnecting(() => this.state$.next('reconnecting'));
    this.connection.onreconnected(() => {
      this.state$.next('connected');
      void this.resubscribe();
    });
    this.connection.onclose((error) => {
      if (error) this.log.warn({ err: error }, 'realtime connection closed');
      this.state$.next('disconnected');
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
    await this.resubscribe();
  }

  /** Orders, trades and positions of one account, and the accounts (balance, canTrade) as they change. */
  userEvents(accountId: number): Observable<UserEvent> {
    const methods = [`SubscribeOrders:${accountId}`, `SubscribeTrades:${accountId}`, `SubscribePositions:${accountId}`, 'SubscribeAccounts:'];
    return new Observable<UserEvent>((subscriber) => {
      const inner = this.events.subscribe(subscriber);
      for (const method of methods) this.subscriptions.add(method);
      if (this.connection.state === HubConnectionState.Connected) void this.resubscribe();
      return () => {
        inner.unsubscribe();
        for (const method of methods) this.subscriptions.delete(method);
      };
    });
  }

  get state(): RealtimeState {
    return this.state$.value;
  }

  async stop(): Promise<void> {
    await this.connection.stop();
    this.events.complete();
  }

  private async resubscribe(): Promise<void> {
    for (const entry of this.subscriptions) {
      const [method, arg] = entry.split(':') as [string, string];
      try {
        await (arg === '' ? this.connection.invoke(method) : this.connection.invoke(method, Number(arg)));
      } catch (error) {
        this.log.warn({ method, err: error }, 'realtime subscription failed');
      }
    }
  }
}
