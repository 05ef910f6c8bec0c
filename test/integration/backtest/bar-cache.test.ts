import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { TradingClient } from '../../../src/adapters/gateway/trading.ts';
import { silentLogger } from '../../../src/engine/log.ts';
import { PriceGrid } from '../../../src/engine/ticks.ts';
import { BarCache } from '../../../src/data/bar-cache.ts';
import { loadGatewayBars } from '../../../src/data/gateway-bars.ts';
import { barAt, MINUTE, startLoopbackGateway, type LoopbackGateway } from './loopback-gateway.ts';

const ES = new PriceGrid(0.25, 12.5);
let gateway: LoopbackGateway;
let baseUrl: string;

beforeAll(async () => {
  gateway = await startLoopbackGateway();
  baseUrl = gateway.baseUrl;
});

afterAll(() => gateway.close());

describe('gateway bars through the SQLite cache', () => {
  it('fetches only what is missing, and a second run of the same range sends no request', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'tickline-cache-'));
    try {
      const client = new TradingClient({ baseUrl, userName: 'quant', apiKey: 'k', logger: silentLogger });
      const file = path.join(dir, 'bars.sqlite');
      const key = {
        contractId: 'CON.F.US.EP.Z25',
        timeframe: { unit: 'minute', unitNumber: 1 } as const,
        live: false,
        grid: ES,
      };
      const from = Date.UTC(2024, 0, 5, 20); // Friday 20:00 UTC
      const to = Date.UTC(2024, 0, 7, 2); // Sunday 02:00 UTC: the Saturday has no bars
      const now = Date.UTC(2024, 2, 1);

      let cache = new BarCache(file);
      const first = await loadGatewayBars(client, cache, { ...key, from, to, now, pageSize: 100 });
      const requestsAfterFirst = gateway.barRequests();
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
      expect(gateway.barRequests()).toBe(requestsAfterFirst);
      expect(second.fetched).toEqual([]);
      expect(Array.from(second.bars.close)).toEqual(Array.from(first.bars.close));

      // A wider range asks only for the two missing ends; a narrower one for nothing.
      const wider = await loadGatewayBars(client, cache, {
        ...key,
        from: from - 60 * MINUTE,
        to: to + 30 * MINUTE,
        now,
      });
      expect(wider.fetched).toEqual([
        [from - 60 * MINUTE, from],
        [to, to + 30 * MINUTE],
      ]);
      expect(wider.bars.time.length).toBe(expected.length + 90);
      const before = gateway.barRequests();
      const inner = await loadGatewayBars(client, cache, {
        ...key,
        from: from + 10 * MINUTE,
        to: from + 20 * MINUTE,
        now,
      });
      expect(gateway.barRequests()).toBe(before);
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
