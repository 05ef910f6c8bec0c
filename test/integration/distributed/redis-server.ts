/**
 * A real `redis-server` (the Debian package) for the distributed-sweep tests: on a free loopback port, in
 * a temporary folder, without persistence, stopped by its own pid.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';

const START_DEADLINE_MS = 20_000;

export interface RedisServer {
  readonly port: number;
  /** `redis://127.0.0.1:<port>` with an optional database number. */
  url(db?: number): string;
  stop(): Promise<void>;
}

/** A port the system hands out now: free at the moment of asking. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export async function startRedisServer(): Promise<RedisServer> {
  const port = await freePort();
  const dir = mkdtempSync(path.join(tmpdir(), 'tickline-redis-'));
  const child = spawn(
    'redis-server',
    [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--dir',
      dir,
      '--save',
      '',
      '--appendonly',
      'no',
      '--protected-mode',
      'yes',
    ],
    {
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    await untilPingAnswers(port, child, () => stderr);
  } catch (error) {
    child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    port,
    url: (db) => `redis://127.0.0.1:${port}${db === undefined ? '' : `/${db}`}`,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function untilPingAnswers(port: number, child: ChildProcess, stderr: () => string): Promise<void> {
  const deadline = Date.now() + START_DEADLINE_MS;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`redis-server exited with ${child.exitCode}: ${stderr()}`);
    if (await pings(port)) return;
    if (Date.now() > deadline)
      throw new Error(`redis-server did not answer on port ${port} within ${START_DEADLINE_MS} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function pings(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new Socket();
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.once('error', () => done(false));
    socket.once('data', (chunk) => done(chunk.toString().startsWith('+PONG')));
    socket.connect(port, '127.0.0.1', () => socket.write('PING\r\n'));
  });
}
