import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { main } from '../../../src/cli/main.ts';
import { ExitCode } from '../../../src/cli/exit.ts';
import { startLoopbackGateway, type LoopbackGateway } from './loopback-gateway.ts';

let gateway: LoopbackGateway;
let dir: string;
let out: string[];
let err: string[];
const saved = { ...process.env };

beforeAll(async () => {
  gateway = await startLoopbackGateway();
});
afterAll(() => gateway.close());

beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'tickline-fetch-'));
  out = [];
  err = [];
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => (out.push(String(chunk)), true));
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => (err.push(String(chunk)), true));
  process.env.TICKLINE_BASE_URL = gateway.baseUrl;
  process.env.TICKLINE_USERNAME = 'quant';
  process.env.TICKLINE_API_KEY = 'key-from-the-environment';
  process.env.TICKLINE_LOG_LEVEL = 'silent';
});

afterEach(() => {
  vi.restoreAllMocks();
  process.env = { ...saved };
  rmSync(dir, { recursive: true, force: true });
});

describe('tickline fetch-bars and a gateway-sourced backtest', () => {
  it('fills the cache once; a second fetch and a backtest of the range send no request', async () => {
    const cache = path.join(dir, 'bars.sqlite');
    const args = [
      'fetch-bars',
      '--contract',
      'ESZ5',
      '--from',
      '2024-01-08T14:00:00Z',
      '--to',
      '2024-01-08T20:00:00Z',
      '--cache',
      cache,
    ];
    expect(await main(args)).toBe(ExitCode.Ok);
    const first = gateway.barRequests();
    expect(first).toBeGreaterThan(0);
    expect(out.join('')).toContain('CON.F.US.EP.Z25: 360 bars');
    expect(await main(args)).toBe(ExitCode.Ok);
    expect(gateway.barRequests()).toBe(first);
    expect(out.join('')).toContain('nothing to fetch');

    // The backtest reads the cache without credentials and without a request.
    delete process.env.TICKLINE_API_KEY;
    const file = path.join(dir, 'gw.yaml');
    writeFileSync(
      file,
      [
        'strategy: { name: sma-cross, params: { fast: 5, slow: 20 } }',
        'contract: ESZ5',
        `data: { source: gateway, cache: ${JSON.stringify(cache)} }`,
        'from: 2024-01-08T14:00:00Z',
        'to: 2024-01-08T20:00:00Z',
        '',
      ].join('\n'),
    );
    expect(await main(['backtest', '--config', file, '--out', path.join(dir, 'out')])).toBe(ExitCode.Ok);
    expect(gateway.barRequests()).toBe(first);
    expect(out.join('')).toMatch(/\(all from the cache\), 360 bars/);
  });

  it('a root fetches each front month over its window, and a continuous backtest reads them from the cache', async () => {
    const cache = path.join(dir, 'bars.sqlite');
    // ES March 2024 expires on Friday the 15th; its front window ends six business days before, on the 7th.
    const args = [
      'fetch-bars',
      '--contract',
      'ES',
      '--from',
      '2024-03-06T20:00:00Z',
      '--to',
      '2024-03-07T02:00:00Z',
      '--cache',
      cache,
    ];
    const before = gateway.requestedContracts().length;
    expect(await main(args)).toBe(ExitCode.Ok);
    expect(new Set(gateway.requestedContracts().slice(before))).toEqual(
      new Set(['CON.F.US.EP.H24', 'CON.F.US.EP.M24']),
    );
    const text = out.join('');
    expect(text).toContain(
      'CON.F.US.EP.H24: 240 bars in cache for 2024-03-06T20:00:00.000Z .. 2024-03-07T00:00:00.000Z (fetched 1 range(s))',
    );
    expect(text).toContain(
      'CON.F.US.EP.M24: 120 bars in cache for 2024-03-07T00:00:00.000Z .. 2024-03-07T02:00:00.000Z (fetched 1 range(s))',
    );
    // Rolling two business days before expiry instead, March stays in front over the whole range.
    out.length = 0;
    expect(await main([...args, '--days-before-expiry', '2'])).toBe(ExitCode.Ok);
    expect(out.join('')).toContain(
      'CON.F.US.EP.H24: 360 bars in cache for 2024-03-06T20:00:00.000Z .. 2024-03-07T02:00:00.000Z (fetched 1 range(s))',
    );
    out.length = 0;

    delete process.env.TICKLINE_API_KEY;
    const file = path.join(dir, 'gw.yaml');
    writeFileSync(
      file,
      [
        'strategy: { name: sma-cross, params: { fast: 5, slow: 20 } }',
        'contract: ES',
        `data: { source: gateway, cache: ${JSON.stringify(cache)} }`,
        'from: 2024-03-06T20:00:00Z',
        'to: 2024-03-07T02:00:00Z',
        '',
      ].join('\n'),
    );
    const requests = gateway.barRequests();
    expect(await main(['backtest', '--config', file, '--out', path.join(dir, 'out')])).toBe(ExitCode.Ok);
    expect(gateway.barRequests()).toBe(requests);
    expect(out.join('')).toMatch(/gateway ES front months \(ESH4, ESM4\) 1m \(all from the cache\), 360 bars/);
    expect(out.join('')).toContain('Rolls           CON.F.US.EP.H24 -> CON.F.US.EP.M24 2024-03-07');
  });

  it('an empty answer is an error that says why; reaching into today it is asked again; a past one is recorded; --force refetches', async () => {
    const cache = path.join(dir, 'bars.sqlite');
    gateway.answerEmpty(true);
    try {
      const now = Date.now();
      const open = [
        'fetch-bars',
        '--contract',
        'ESZ5',
        '--from',
        new Date(now - 3_600_000).toISOString(),
        '--to',
        new Date(now + 3_600_000).toISOString(),
        '--cache',
        cache,
      ];
      const first = gateway.barRequests();
      // No bar at all: exit 2, with what may be the reason.
      expect(await main(open)).toBe(ExitCode.Usage);
      expect(out.join('')).toContain('not recorded, asked again next time');
      expect(err.join('')).toContain('no bars for the whole range');
      // Why, read from the calendar: here that the month had expired (ESZ5 read at today's date).
      expect(err.join('')).toMatch(
        /CON\.F\.US\.EP\.Z\d{2}: (ESZ5 expired on|the market was closed|the gateway has no history)/,
      );
      expect(await main(open)).toBe(ExitCode.Usage);
      expect(gateway.barRequests()).toBe(first + 2);

      const past = [
        'fetch-bars',
        '--contract',
        'ESZ5',
        '--from',
        '2024-01-06T00:00:00Z',
        '--to',
        '2024-01-06T06:00:00Z',
        '--cache',
        cache,
      ];
      expect(await main(past)).toBe(ExitCode.Usage);
      // ESZ5 read on 2024-01-06 is December 2025, not yet among the five months ES lists then.
      expect(err.join('')).toContain('ESZ5 was not yet listed over the range');
      out.length = 0;
      expect(await main(past)).toBe(ExitCode.Usage);
      expect(out.join('')).toContain('nothing to fetch');
      const requests = gateway.barRequests();
      expect(await main([...past, '--force'])).toBe(ExitCode.Usage);
      expect(gateway.barRequests()).toBe(requests + 1);
    } finally {
      gateway.answerEmpty(false);
    }
  });

  it('refuses to run without credentials or with a bad range (exit 2)', async () => {
    delete process.env.TICKLINE_API_KEY;
    expect(
      await main([
        'fetch-bars',
        '--contract',
        'ESZ5',
        '--from',
        '2024-01-08',
        '--to',
        '2024-01-09',
        '--cache',
        path.join(dir, 'c.sqlite'),
      ]),
    ).toBe(ExitCode.Usage);
    expect(err.join('')).toContain('TICKLINE_API_KEY');
    process.env.TICKLINE_API_KEY = 'k';
    expect(await main(['fetch-bars', '--contract', 'ESZ5', '--from', '2024-01-09', '--to', '2024-01-08'])).toBe(
      ExitCode.Usage,
    );
    expect(await main(['fetch-bars', '--contract', 'NOPE', '--from', '2024-01-08', '--to', '2024-01-09'])).toBe(
      ExitCode.Usage,
    );
    expect(
      await main(['fetch-bars', '--contract', 'ES', '--from', 'now-1d', '--to', 'now', '--base-url', 'localhost:5005']),
    ).toBe(ExitCode.Usage);
    expect(err.join('')).toContain('--base-url: "localhost:5005" is not an http(s) URL');
    expect(
      await main([
        'fetch-bars',
        '--contract',
        'ESZ5',
        '--from',
        '2024-01-08',
        '--to',
        '2024-01-09',
        '--days-before-expiry',
        '2',
      ]),
    ).toBe(ExitCode.Usage);
    expect(err.join('')).toContain('--days-before-expiry applies to a root');
    expect(
      await main([
        'fetch-bars',
        '--contract',
        'ES',
        '--from',
        '2024-01-08',
        '--to',
        '2024-01-09',
        '--days-before-expiry',
        '-1',
      ]),
    ).toBe(ExitCode.Usage);
    expect(await main(['fetch-bars', '--help'])).toBe(ExitCode.Ok);
  });
});
