/**
 * A WebSocket proxy in front of the simulator's realtime hubs, for tests: it forwards every frame both
 * ways except the hub records (SignalR JSON records end with 0x1E) a test chooses to discard, and it can
 * cut every connection and refuse new ones until restored.
 */
import type { AddressInfo } from 'node:net';
import { WebSocket, WebSocketServer, type RawData } from 'ws';

const RS = '\u001e';

export interface HubProxy {
  readonly url: string;
  /**
   * Records from the hub that are discarded (the predicate sees one record's JSON text, the connection's
   * number, counted from 1 in the order connections were accepted, and its path: `/hubs/market?...`).
   */
  discard(predicate: ((record: string, connection: number, path: string) => boolean) | undefined): void;
  /** Connections accepted so far (the number of the last one). */
  readonly accepted: number;
  /** Records discarded so far. */
  readonly discarded: string[];
  /** Close every connection and refuse new ones until `restore()`. */
  cut(): void;
  restore(): void;
  /** Connections currently open through the proxy. */
  readonly open: number;
  close(): Promise<void>;
}

export async function startHubProxy(target: string): Promise<HubProxy> {
  const server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  const pairs = new Set<{ client: WebSocket; upstream: WebSocket }>();
  const discarded: string[] = [];
  let predicate: ((record: string, connection: number, path: string) => boolean) | undefined;
  let refusing = false;
  let accepted = 0;

  server.on('connection', (client, request) => {
    if (refusing) {
      client.terminate();
      return;
    }
    const number = ++accepted;
    const requestPath = request.url ?? '/';
    const headers: Record<string, string> = {};
    if (request.headers.authorization) headers.authorization = request.headers.authorization;
    const upstream = new WebSocket(`${target.replace(/^http/, 'ws')}${request.url ?? '/'}`, { headers });
    const pair = { client, upstream };
    pairs.add(pair);
    const early: RawData[] = [];
    client.on('message', (data) =>
      upstream.readyState === WebSocket.OPEN ? upstream.send(data.toString()) : early.push(data),
    );
    upstream.on('open', () => {
      for (const data of early.splice(0)) upstream.send(data.toString());
    });
    upstream.on('message', (data) => {
      const text = data.toString();
      if (predicate === undefined) return client.send(text);
      const kept = text.split(RS).filter((record, i, all) => {
        if (i === all.length - 1 && record === '') return true;
        if (!predicate!(record, number, requestPath)) return true;
        discarded.push(record);
        return false;
      });
      const out = kept.join(RS);
      if (out !== '') client.send(out);
    });
    const end = (): void => {
      pairs.delete(pair);
      client.terminate();
      upstream.terminate();
    };
    client.on('close', end);
    upstream.on('close', end);
    client.on('error', end);
    upstream.on('error', end);
  });

  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    discard: (p) => (predicate = p),
    discarded,
    get accepted() {
      return accepted;
    },
    cut: () => {
      refusing = true;
      for (const pair of [...pairs]) {
        pair.client.terminate();
        pair.upstream.terminate();
      }
    },
    restore: () => (refusing = false),
    get open() {
      return pairs.size;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const pair of pairs) {
          pair.client.terminate();
          pair.upstream.terminate();
        }
        server.close(() => resolve());
      }),
  };
}
