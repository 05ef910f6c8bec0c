/**
 * The hub host against the official `@microsoft/signalr` client (a client nobody here wrote), over real
 * loopback sockets: handshake, invocations with results and errors, groups, the token in the query or a
 * header, a token that expires while connected, many connections, and a slow consumer.
 */
import {
  HttpTransportType,
  HubConnectionBuilder,
  HubConnectionState,
  LogLevel,
  type HubConnection,
} from '@microsoft/signalr';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { HubHost, HubMethodError, type HubDefinition } from '../../../src/sim/hubs/hub-host.ts';
import { encode, RECORD_SEPARATOR } from '../../../src/sim/hubs/hub-framing.ts';

let server: Server;
let host: HubHost;
let base: string;
const valid = new Set(['tok-alice', 'tok-bob']);

const testHub: HubDefinition<string> = {
  path: '/hubs/test',
  authenticate: (token) => (valid.has(token) ? token.slice(4) : undefined),
  methods: {
    Echo: (_c, args) => args[0],
    Whoami: (c) => c.user,
    Subscribe: (c, args) => {
      if (typeof args[0] !== 'number') throw new HubMethodError('Subscribe takes an account id');
      c.groups.add(`account:${args[0]}`);
    },
    Unsubscribe: (c, args) => void c.groups.delete(`account:${String(args[0])}`),
    Broken: () => {
      throw new Error('internal detail that must not reach the client');
    },
  },
};

beforeEach(async () => {
  server = createServer((_req, res) => res.writeHead(404).end());
  host = new HubHost({
    server,
    hubs: [testHub as HubDefinition<unknown>],
    authCheckMs: 50,
    maxBufferedBytes: 64 * 1024,
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterEach(async () => {
  await host.close();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

function client(token: string, path = '/hubs/test'): HubConnection {
  return new HubConnectionBuilder()
    .withUrl(`${base}${path}`, {
      skipNegotiation: true,
      transport: HttpTransportType.WebSockets,
      accessTokenFactory: () => token,
    })
    .configureLogging(LogLevel.None)
    .build();
}

async function until(check: () => boolean, ms = 3_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('hub host', () => {
  it('handshakes with the official client; invocations return results, refused ones an error, unknown ones say so', async () => {
    const c = client('tok-alice');
    await c.start();
    expect(await c.invoke('Echo', { a: [1, 2] })).toEqual({ a: [1, 2] });
    expect(await c.invoke('Whoami')).toBe('alice');
    await expect(c.invoke('Subscribe', 'x')).rejects.toThrow(/Subscribe takes an account id/);
    await expect(c.invoke('Broken')).rejects.toThrow(
      /^An unexpected error occurred invoking 'Broken' on the server\.$/,
    );
    await expect(c.invoke('Nope')).rejects.toThrow(/'Nope' because it does not exist/);
    await c.stop();
  });

  it('events reach the connections that joined the group, and stop after they leave it', async () => {
    const alice = client('tok-alice');
    const bob = client('tok-bob');
    const got: Record<string, unknown[]> = { alice: [], bob: [] };
    alice.on('GatewayUserOrder', (order) => got.alice!.push(order));
    bob.on('GatewayUserOrder', (order) => got.bob!.push(order));
    await alice.start();
    await bob.start();
    await alice.invoke('Subscribe', 7);
    expect(host.hasListeners('/hubs/test', 'account:7')).toBe(true);
    expect(host.publish('/hubs/test', 'account:7', 'GatewayUserOrder', [{ id: 1 }])).toBe(1);
    await until(() => got.alice!.length === 1);
    await alice.invoke('Unsubscribe', 7);
    host.publish('/hubs/test', 'account:7', 'GatewayUserOrder', [{ id: 2 }]);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(got).toEqual({ alice: [{ id: 1 }], bob: [] });
    await alice.stop();
    await bob.stop();
  });

  it('an unknown token is refused at the upgrade; a header token works like the query one', async () => {
    await expect(client('tok-mallory').start()).rejects.toThrow();
    const ws = new WebSocket(`${base.replace('http', 'ws')}/hubs/test`, {
      headers: { authorization: 'Bearer tok-bob' },
    });
    const answer = await new Promise<string>((resolve, reject) => {
      ws.on('open', () => ws.send(encode({ protocol: 'json', version: 1 })));
      ws.on('message', (data) => resolve(data.toString()));
      ws.on('error', reject);
    });
    expect(answer).toBe(`{}${RECORD_SEPARATOR}`);
    ws.close();
  });

  it('a token that expires while connected closes the connection with an error', async () => {
    valid.add('tok-carol');
    const c = client('tok-carol');
    let closedWith: Error | undefined;
    c.onclose((error) => (closedWith = error));
    await c.start();
    valid.delete('tok-carol');
    await until(() => c.state === HubConnectionState.Disconnected);
    expect(closedWith?.message).toMatch(/token expired/);
  });

  it('serves 200 connections at once and reaches every one of them', async () => {
    const clients = Array.from({ length: 200 }, () => client('tok-alice'));
    let received = 0;
    for (const c of clients) c.on('GatewayUserTrade', () => received++);
    await Promise.all(clients.map((c) => c.start()));
    await Promise.all(clients.map((c) => c.invoke('Subscribe', 9)));
    expect(host.connectionCount('/hubs/test')).toBe(200);
    expect(host.publish('/hubs/test', 'account:9', 'GatewayUserTrade', [{ id: 5 }])).toBe(200);
    await until(() => received === 200, 5_000);
    await Promise.all(clients.map((c) => c.stop()));
  });

  it('a consumer that stops reading is disconnected, not buffered for without end', async () => {
    const ws = new WebSocket(`${base.replace('http', 'ws')}/hubs/test?access_token=tok-bob`);
    await new Promise<void>((resolve) => ws.on('open', () => resolve()));
    ws.send(encode({ protocol: 'json', version: 1 }));
    ws.send(encode({ type: 1, target: 'Subscribe', arguments: [3], invocationId: '1' }));
    await until(() => host.hasListeners('/hubs/test', 'account:3'));
    // The client's socket stops reading: what the host sends piles up on its side.
    (ws as unknown as { _socket: { pause(): void } })._socket.pause();
    const closed = new Promise<void>((resolve) => ws.on('close', () => resolve()));
    const payload = 'x'.repeat(16 * 1024);
    for (let i = 0; i < 4_000 && host.connectionCount('/hubs/test') > 0; i++) {
      host.publish('/hubs/test', 'account:3', 'GatewayQuote', ['CON.F.US.EP.Z26', { payload }]);
      if (i % 50 === 0) await new Promise((resolve) => setTimeout(resolve, 1));
    }
    await until(() => host.connectionCount('/hubs/test') === 0, 5_000);
    (ws as unknown as { _socket: { resume(): void } })._socket.resume();
    await closed;
  });
});
