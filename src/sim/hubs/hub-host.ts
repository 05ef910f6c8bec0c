/**
 * ASP.NET Core SignalR hubs over WebSocket, served beside an HTTP server (the simulator's): clients skip
 * negotiation and connect straight to the hub's path with the session token as the `access_token` query
 * parameter or an `Authorization: Bearer` header (gateway extras). Each hub is a table of methods and the
 * groups a connection joined; the host does the framing (`hub-framing.ts`), completions, keep-alive pings, a
 * token that stops being valid while connected (closed with an error), and slow consumers (a connection
 * whose unsent data passes a bound is dropped rather than buffered without end).
 */
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { silentLogger, type Logger } from '../../engine/log.ts';
import { encode, handshakeError, HubProtocolError, MessageType, parseMessage, splitRecords } from './hub-framing.ts';
import { TicklineError } from '../../engine/errors.ts';

/** What a hub method throws to answer its caller with an error completion (the message is sent). */
export class HubMethodError extends TicklineError {
  override readonly name = 'HubMethodError';
  readonly kind = 'input';
  readonly code = 'HUB_METHOD';
}

export interface HubConnection<U> {
  readonly id: number;
  readonly user: U;
  /** Groups (subscriptions) this connection joined; a hub keeps none across connections. */
  readonly groups: Set<string>;
  send(target: string, args: readonly unknown[]): void;
  close(error?: string): void;
}

export interface HubDefinition<U> {
  /** URL path, for example `/hubs/user`. */
  readonly path: string;
  /** The user a token belongs to, or undefined for an unknown or expired token; asked again while connected. */
  authenticate(token: string): U | undefined;
  readonly methods: Readonly<Record<string, (connection: HubConnection<U>, args: readonly unknown[]) => unknown>>;
}

export interface HubHostOptions {
  readonly server: Server;
  readonly hubs: ReadonlyArray<HubDefinition<unknown>>;
  readonly logger?: Logger;
  /** Keep-alive ping period (SignalR's default is 15 s; clients time out after 30 s of silence). */
  readonly pingIntervalMs?: number;
  /** How often a connected token is checked again. */
  readonly authCheckMs?: number;
  /** Unsent bytes above which a connection is a slow consumer and is dropped. */
  readonly maxBufferedBytes?: number;
}

interface Live<U> extends HubConnection<U> {
  readonly socket: WebSocket;
  readonly token: string;
  readonly hub: HubDefinition<U>;
  handshaken: boolean;
}

let nextConnectionId = 1;

export class HubHost {
  private readonly wss = new WebSocketServer({ noServer: true });
  private readonly byPath = new Map<string, Set<Live<unknown>>>();
  private readonly hubs = new Map<string, HubDefinition<unknown>>();
  private readonly log: Logger;
  private readonly maxBufferedBytes: number;
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly onUpgrade = (request: IncomingMessage, socket: Duplex, head: Buffer): void =>
    this.upgrade(request, socket, head);

  constructor(private readonly options: HubHostOptions) {
    this.log = options.logger ?? silentLogger;
    this.maxBufferedBytes = options.maxBufferedBytes ?? 4 * 1024 * 1024;
    for (const hub of options.hubs) {
      this.hubs.set(hub.path, hub);
      this.byPath.set(hub.path, new Set());
    }
    options.server.on('upgrade', this.onUpgrade);
    const ping = setInterval(
      () => this.everyConnection((c) => this.write(c, encode({ type: MessageType.Ping }))),
      options.pingIntervalMs ?? 15_000,
    );
    const recheck = setInterval(() => this.recheckTokens(), options.authCheckMs ?? 1_000);
    ping.unref();
    recheck.unref();
    this.timers.push(ping, recheck);
  }

  /** Send `target(args)` to every connection of the hub that joined `group`; returns how many. */
  publish(path: string, group: string, target: string, args: readonly unknown[]): number {
    const connections = this.byPath.get(path);
    if (connections === undefined) return 0;
    let sent = 0;
    const frame = encode({ type: MessageType.Invocation, target, arguments: args });
    for (const connection of connections) {
      if (!connection.handshaken || !connection.groups.has(group)) continue;
      this.write(connection, frame);
      sent++;
    }
    return sent;
  }

  /** Whether any connection of the hub joined `group` (publishers skip work nobody receives). */
  hasListeners(path: string, group: string): boolean {
    for (const connection of this.byPath.get(path) ?? []) if (connection.groups.has(group)) return true;
    return false;
  }

  connectionCount(path: string): number {
    return this.byPath.get(path)?.size ?? 0;
  }

  async close(): Promise<void> {
    for (const timer of this.timers) clearInterval(timer);
    this.options.server.off('upgrade', this.onUpgrade);
    // Clients may come back (a restarted simulator on the same port): a close with an error allows reconnecting.
    this.everyConnection((c) => c.close('The server is shutting down.'));
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
  }

  // ------------------------------------------------------------------ connections

  private upgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void {
    const url = new URL(request.url ?? '/', 'http://hub');
    const hub = this.hubs.get(url.pathname);
    if (hub === undefined) return refuse(socket, 404, 'Not Found');
    const bearer = /^Bearer\s+(.+)$/i.exec(request.headers.authorization ?? '')?.[1];
    const token = url.searchParams.get('access_token') ?? bearer;
    const user = token === undefined || token === null ? undefined : hub.authenticate(token);
    if (user === undefined) return refuse(socket, 401, 'Unauthorized');
    this.wss.handleUpgrade(request, socket, head, (ws) => this.accept(hub, ws, token!, user));
  }

  private accept<U>(hub: HubDefinition<U>, socket: WebSocket, token: string, user: U): void {
    const host = this;
    const connection: Live<U> = {
      id: nextConnectionId++,
      user,
      groups: new Set(),
      socket,
      token,
      hub,
      handshaken: false,
      send(target, args) {
        host.write(connection, encode({ type: MessageType.Invocation, target, arguments: args }));
      },
      close(error) {
        if (socket.readyState !== socket.OPEN) return;
        socket.send(
          encode(
            error === undefined
              ? { type: MessageType.Close }
              : { type: MessageType.Close, error, allowReconnect: true },
          ),
        );
        socket.close(1000);
      },
    };
    const all = this.byPath.get(hub.path) as Set<Live<U>>;
    all.add(connection);
    socket.on('message', (data, isBinary) => {
      if (isBinary) return connection.close('Binary messages are not supported by the json protocol.');
      this.receive(connection, data.toString());
    });
    socket.on('close', () => all.delete(connection));
    socket.on('error', (error) =>
      this.log.warn({ err: error, hub: hub.path, connection: connection.id }, 'hub connection error'),
    );
  }

  private receive<U>(connection: Live<U>, frame: string): void {
    let records: string[];
    try {
      records = splitRecords(frame);
    } catch (error) {
      return connection.close((error as Error).message);
    }
    for (const record of records) {
      if (!connection.handshaken) {
        const problem = handshakeError(record);
        connection.socket.send(encode(problem === undefined ? {} : { error: problem }));
        if (problem !== undefined) return void connection.socket.close(1002);
        connection.handshaken = true;
        continue;
      }
      let message: ReturnType<typeof parseMessage>;
      try {
        message = parseMessage(record);
      } catch (error) {
        return connection.close(error instanceof HubProtocolError ? error.message : 'Invalid message.');
      }
      if (message.type === MessageType.Close) return void connection.socket.close(1000);
      if (message.type === MessageType.Invocation)
        this.invoke(connection, message.target, message.arguments, message.invocationId);
    }
  }

  private invoke<U>(
    connection: Live<U>,
    target: string,
    args: readonly unknown[],
    invocationId: string | undefined,
  ): void {
    const method = Object.hasOwn(connection.hub.methods, target) ? connection.hub.methods[target] : undefined;
    let reply: object;
    if (method === undefined) {
      reply = {
        type: MessageType.Completion,
        invocationId,
        error: `Failed to invoke '${target}' because it does not exist.`,
      };
    } else {
      try {
        const result = method(connection, args);
        reply =
          result === undefined
            ? { type: MessageType.Completion, invocationId }
            : { type: MessageType.Completion, invocationId, result };
      } catch (error) {
        if (!(error instanceof HubMethodError))
          this.log.error({ err: error, hub: connection.hub.path, target }, 'hub method failed');
        reply = {
          type: MessageType.Completion,
          invocationId,
          error:
            error instanceof HubMethodError
              ? error.message
              : `An unexpected error occurred invoking '${target}' on the server.`,
        };
      }
    }
    if (invocationId !== undefined) this.write(connection, encode(reply));
  }

  private write<U>(connection: Live<U>, frame: string): void {
    const socket = connection.socket;
    if (socket.readyState !== socket.OPEN) return;
    if (socket.bufferedAmount > this.maxBufferedBytes) {
      this.log.warn(
        { hub: connection.hub.path, connection: connection.id, buffered: socket.bufferedAmount },
        'slow hub consumer disconnected',
      );
      socket.terminate();
      return;
    }
    socket.send(frame);
  }

  private recheckTokens(): void {
    this.everyConnection((connection) => {
      if (connection.hub.authenticate(connection.token) === undefined)
        connection.close('Unauthorized: the session token expired.');
    });
  }

  private everyConnection(action: (connection: Live<unknown>) => void): void {
    for (const connections of this.byPath.values()) for (const connection of [...connections]) action(connection);
  }
}

function refuse(socket: Duplex, status: number, text: string): void {
  socket.end(`HTTP/1.1 ${status} ${text}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
}
