/**
 * The simulator's user hub (`/hubs/user`, gateway extras): `SubscribeAccounts()`,
 * `SubscribeOrders/Positions/Trades(accountId)` and their `Unsubscribe…` twins, for the token's own
 * accounts only; events `GatewayUserAccount`, `GatewayUserOrder`, `GatewayUserPosition`,
 * `GatewayUserTrade` with one argument, the record in the same shape the REST searches answer.
 *
 * The events come from the records, not from inside the matching: after every change (a request handled,
 * the market stepped) `publish()` reads the subscribed accounts' records through the same engine methods
 * the REST endpoints use and sends what differs from what each subscriber was last sent, oldest first.
 * A position that closed is sent once more with size 0.
 */
import { HubMethodError, type HubConnection, type HubDefinition, type HubHost } from './hub-host.ts';
import type { SimEngine } from '../sim-core.ts';
import type { UserRow } from '../store.ts';
import type * as S from '../../protocol/schemas.ts';

export const USER_HUB = '/hubs/user';

type Stream = 'Orders' | 'Positions' | 'Trades';
const STREAMS: readonly Stream[] = ['Orders', 'Positions', 'Trades'];

interface Watched {
  readonly user: UserRow;
  readonly orders: Map<number, string>;
  readonly positions: Map<number, S.Position>;
  lastTradeId: number;
  /** Creation time of the oldest order still open when last read: Order/search reaches back that far. */
  since: number;
}

export class UserHub {
  readonly definition: HubDefinition<UserRow>;
  private readonly accounts = new Map<number, Watched>();
  private readonly users = new Map<number, { user: UserRow; sent: Map<number, string> }>();
  private host: HubHost | undefined;

  constructor(private readonly engine: SimEngine) {
    const methods: Record<string, (c: HubConnection<UserRow>, args: readonly unknown[]) => unknown> = {
      SubscribeAccounts: (c) => {
        c.groups.add(`accounts:${c.user.id}`);
        if (!this.users.has(c.user.id)) this.users.set(c.user.id, { user: c.user, sent: new Map() });
      },
      UnsubscribeAccounts: (c) => void c.groups.delete(`accounts:${c.user.id}`),
    };
    for (const stream of STREAMS) {
      methods[`Subscribe${stream}`] = (c, args) => {
        const accountId = this.ownAccount(c, args, `Subscribe${stream}`);
        c.groups.add(group(stream, accountId));
        this.watch(c.user, accountId);
      };
      methods[`Unsubscribe${stream}`] = (c, args) =>
        void c.groups.delete(group(stream, this.ownAccount(c, args, `Unsubscribe${stream}`)));
    }
    this.definition = { path: USER_HUB, authenticate: (token) => engine.authenticate(token), methods };
  }

  attach(host: HubHost): void {
    this.host = host;
  }

  /** Send every change since the last call to the connections that subscribed to it. */
  publish(): void {
    const host = this.host;
    if (host === undefined) return;
    for (const [accountId, watched] of this.accounts) {
      if (STREAMS.every((s) => !host.hasListeners(USER_HUB, group(s, accountId)))) continue;
      this.publishOrders(host, accountId, watched);
      this.publishTrades(host, accountId, watched);
      this.publishPositions(host, accountId, watched);
    }
    for (const [userId, entry] of this.users) {
      const name = `accounts:${userId}`;
      if (!host.hasListeners(USER_HUB, name)) continue;
      const answer = this.engine.accountSearch(entry.user, false);
      for (const account of answer.accounts) {
        const key = JSON.stringify(account);
        if (entry.sent.get(account.id) === key) continue;
        entry.sent.set(account.id, key);
        host.publish(USER_HUB, name, 'GatewayUserAccount', [account]);
      }
    }
  }

  private ownAccount(c: HubConnection<UserRow>, args: readonly unknown[], method: string): number {
    const accountId = args[0];
    if (typeof accountId !== 'number' || !Number.isInteger(accountId))
      throw new HubMethodError(`${method} takes an account id`);
    if (this.engine.ownedAccount(c.user, accountId) === undefined)
      throw new HubMethodError(`Account ${accountId} not found`);
    return accountId;
  }

  private watch(user: UserRow, accountId: number): void {
    if (this.accounts.has(accountId)) return;
    // Only what changes from now on is an event: the current records are the starting point.
    const now = this.engine.clock.now();
    const watched: Watched = { user, orders: new Map(), positions: new Map(), lastTradeId: 0, since: now };
    const orders = this.engine.orderSearch(user, { accountId, startTimestamp: new Date(0).toISOString() });
    if ('orders' in orders) for (const o of orders.orders) watched.orders.set(o.id, JSON.stringify(o));
    const trades = this.engine.tradeSearch(user, { accountId, startTimestamp: new Date(0).toISOString() });
    if ('trades' in trades) for (const t of trades.trades) watched.lastTradeId = Math.max(watched.lastTradeId, t.id);
    const positions = this.engine.positionSearchOpen(user, accountId);
    if ('positions' in positions) for (const p of positions.positions) watched.positions.set(p.id, p);
    this.accounts.set(accountId, watched);
  }

  private publishOrders(host: HubHost, accountId: number, watched: Watched): void {
    const open = this.engine.orderSearchOpen(watched.user, accountId);
    const openSince =
      'orders' in open ? Math.min(...open.orders.map((o) => Date.parse(o.creationTimestamp))) : Infinity;
    const answer = this.engine.orderSearch(watched.user, {
      accountId,
      startTimestamp: new Date(watched.since).toISOString(),
    });
    if (!('orders' in answer)) return;
    for (const order of answer.orders) {
      const key = JSON.stringify(order);
      if (watched.orders.get(order.id) === key) continue;
      watched.orders.set(order.id, key);
      host.publish(USER_HUB, group('Orders', accountId), 'GatewayUserOrder', [order]);
    }
    watched.since = Math.min(this.engine.clock.now(), openSince);
  }

  private publishTrades(host: HubHost, accountId: number, watched: Watched): void {
    const answer = this.engine.tradeSearch(watched.user, {
      accountId,
      startTimestamp: new Date(watched.since - 60_000).toISOString(),
    });
    if (!('trades' in answer)) return;
    for (const trade of answer.trades) {
      if (trade.id <= watched.lastTradeId) continue;
      watched.lastTradeId = trade.id;
      host.publish(USER_HUB, group('Trades', accountId), 'GatewayUserTrade', [trade]);
    }
  }

  private publishPositions(host: HubHost, accountId: number, watched: Watched): void {
    const answer = this.engine.positionSearchOpen(watched.user, accountId);
    if (!('positions' in answer)) return;
    const seen = new Set<number>();
    for (const position of answer.positions) {
      seen.add(position.id);
      if (JSON.stringify(watched.positions.get(position.id)) === JSON.stringify(position)) continue;
      watched.positions.set(position.id, position);
      host.publish(USER_HUB, group('Positions', accountId), 'GatewayUserPosition', [position]);
    }
    for (const [id, position] of watched.positions) {
      if (seen.has(id)) continue;
      watched.positions.delete(id);
      host.publish(USER_HUB, group('Positions', accountId), 'GatewayUserPosition', [{ ...position, size: 0 }]);
    }
  }
}

function group(stream: Stream, accountId: number): string {
  return `${stream.toLowerCase()}:${accountId}`;
}
