import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { TradingClient } from '../../../src/adapters/gateway/trading.ts';
import { silentLogger } from '../../../src/engine/log.ts';
import { PriceGrid } from '../../../src/engine/ticks.ts';
import { BarCache } from '../../../src/adapters/backtest/sources/cache.ts';
import { loadGatewayBars } from '../../../src/adapters/backtest/sources/gateway.ts';

/**
 * A loopback gateway that answers login and retrieveBars (newest first, at most `limit`, one bar a minute
 * except on Saturdays) and counts the bar requests it receives.
 */
const ES = new PriceGrid(0.25, 12.5);
const MINUTE = 60_000;
let server: Server;
let baseUrl: string;
let barRequests = 0;

function barAt(t: number) {
  const base = 4000 + ((t / MINUTE) % 97) * 0.25;
  return { t: new Date(t).toISOString(), o: base, h: base + 0.5, l: base - 0.25, c: base + 0.25, v: 1 + ((t / MINUTE) % 7) };
}

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (part: Buffer) => (body += part.toString()));
    req.on('end', () => {
      res.setHeader('content-type', 'application/json');
      if (req.url === '/api/Auth/loginKey') {
        res.end(JSON.stringify({ token: 'test-token', success: true, errorCode: 0, errorMessage: null }));
        return;
      }
      if (req.url === '/api/History/retrieveBars') {
        barRequests++;
        const q = JSON.parse(body) as { startTime: string; endTime: string; limit: number };
        const bars = [];
        const from = Math.ceil(Date.parse(q.startTime) / MINUTE) * MINUTE;
        for (let t = from; t <= Date.parse(q.endTime) && bars.length < q.limit; t += MINUTE) {
          if (new Date(t).getUTCDay() !== 6) bars.push(barAt(t));
        }
        res.end(JSON.stringify({ bars: bars.reverse(), success: true, errorCode: 0, errorMessage: null }));
        return;
      }
      res.statusCode = 404;
      res.end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe('gateway bars through the SQLite cache', () => {
  it('fetches only what is missing, and a second run of the same range sends no request', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'tickline-cache-'));
    try {
      const client = new TradingClient({ baseUrl, userName: 'quant', apiKey: 'k', logger: silentLogger });
      const file = path.join(dir, 'bars.sqlite');
      const key = { contractId: 'CON.F.US.EP.Z25', timeframe: { unit: 'minute', unitNumber: 1 } as const, live: false, grid: ES };
      const from = Date.UTC(2024, 0, 5, 20); // Friday 20:00 UTC
      const to = Date.UTC(2024, 0, 7, 2); // Sunday 02:00 UTC: the Saturday has no bars
      const now = Date.UTC(2024, 2, 1);

      let cache = new BarCache(file);
      const first = await loadGatewayBars(client, cache, { ...key, from, to, now, pageSize: 100 });
      const requestsAfterFirst = barRequests;
      expect(requestsAfterFirst).toBeGreaterThan(1); // paged: 360 bars in pages of 100
      expect(first.fetched).toEqual([[from, to]]);
      const expected = [];
      for (let t = from; t < to; t += MINUTE) if (new Date(t).getUTCDay() !== 6) expected.push(t);
      expect(Array.from(first.bars.time)).toEqual(expected);
      expect(first.bars.open[0]).toBe(ES.toTicksExact(barAt(from).o));
      cache.close();

      // A new process (a new cache handle on the same file): no request at all for the same range.
      cache = new BarCache(file);
      const second = await loadGatewayBars(client, cache, { ...key, from, to, now });
      expect(barRequests).toBe(requestsAfterFirst);
      expect(second.fetched).toEqual([]);
      expect(Array.from(second.bars.close)).toEqual(Array.from(first.bars.close));

      // A wider range asks only for the two missing ends; a narrower one for nothing.
      const wider = await loadGatewayBars(client, cache, { ...key, from: from - 60 * MINUTE, to: to + 30 * MINUTE, now });
      expect(wider.fetched).toEqual([
        [from - 60 * MINUTE, from],
        [to, to + 30 * MINUTE],
      ]);
      expect(wider.bars.time.length).toBe(expected.length + 90);
      const before = barRequests;
      const inner = await loadGatewayBars(client, cache, { ...key, from: from + 10 * MINUTE, to: from + 20 * MINUTE, now });
      expect(barRequests).toBe(before);
      expect(inner.bars.time.length).toBe(10);
      expect(cache.covered(key)).toEqual([[from - 60 * MINUTE, to + 30 * MINUTE]]);
      cache.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('never caches past the bar still forming', async () => {
    const cache = new BarCache(':memory:');
    const client = new TradingClient({ baseUrl, userName: 'quant', apiKey: 'k', logger: silentLogger });
    const key = { contractId: 'X', timeframe: { unit: 'minute', unitNumber: 1 } as const, live: true, grid: ES };
    const from = Date.UTC(2024, 0, 8, 14);
    const now = from + 5 * MINUTE + 30_000;
    const result = await loadGatewayBars(client, cache, { ...key, from, to: from + 60 * MINUTE, now });
    expect(result.bars.time.length).toBe(5);
    expect(cache.covered(key)).toEqual([[from, from + 5 * MINUTE]]);
    cache.close();
  });
});
