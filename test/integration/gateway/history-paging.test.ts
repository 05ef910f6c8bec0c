/** retrieveBarsRange over HTTP: a scripted server that keeps the newest bars and answers newest first. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { TradingClient, type Bar } from '../../../src/adapters/gateway/index.ts';
import { ScriptedServer } from './scripted-server.ts';
import * as F from './fixtures.ts';

const MINUTE = 60_000;
const T0 = Date.parse('2025-03-03T14:30:00Z');

let server: ScriptedServer;
let client: TradingClient;
let held: number[] = [];
let order: 'newestFirst' | 'oldestFirst' = 'newestFirst';

beforeAll(async () => {
  server = await ScriptedServer.start();
  server.on('/api/History/retrieveBars', (r) => {
    const req = r.body as { startTime: string; endTime: string; limit: number };
    const from = Date.parse(req.startTime);
    const to = Date.parse(req.endTime);
    const inRange = held.filter((t) => t >= from && t <= to).slice(-req.limit);
    const bars: Bar[] = inRange.map((t) => ({ ...F.bar, t: new Date(t).toISOString().replace('.000Z', '+00:00') }));
    return { body: { ...F.ok, bars: order === 'newestFirst' ? bars.reverse() : bars } };
  });
  // The documented 30-per-30-s bars budget would make the property wait; it is tested on a fake clock.
  client = new TradingClient({
    baseUrl: server.url,
    userName: 'trader1',
    apiKey: 'k',
    timeoutMs: 2_000,
    rateLimits: { bars: { requests: 100_000, windowMs: 1_000 } },
  });
});

afterAll(async () => {
  await client.close();
  await server.close();
});

describe('retrieveBarsRange', () => {
  it('pages a range under the limit and returns each bar once, oldest first', async () => {
    held = Array.from({ length: 50 }, (_, i) => T0 + i * MINUTE);
    const before = server.count('/api/History/retrieveBars');
    const pages: number[] = [];
    const bars = await client.retrieveBarsRange({
      contractId: 'CON.F.US.EP.H25',
      live: false,
      unit: 2,
      unitNumber: 1,
      start: new Date(T0),
      end: '2025-03-03T15:19:00+00:00',
      pageSize: 20,
      onPage: (info) => pages.push(info.bars),
    });
    expect(bars.map((b) => Date.parse(b.t))).toEqual(held);
    expect(server.count('/api/History/retrieveBars') - before).toBe(4);
    expect(pages).toEqual([20, 40, 50, 50]);
    const first = server.requests.find((r) => r.path === '/api/History/retrieveBars')?.body;
    expect(first).toEqual({
      contractId: 'CON.F.US.EP.H25',
      live: false,
      startTime: '2025-03-03T14:30:00.000Z',
      endTime: '2025-03-03T15:19:00.000Z',
      unit: 2,
      unitNumber: 1,
      limit: 20,
      includePartialBar: false,
    });
  });

  it('holds for any held bars, range and page size over real requests (property, few runs)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(fc.integer({ min: 0, max: 120 }), { maxLength: 60 }),
        fc.integer({ min: 0, max: 120 }),
        fc.integer({ min: 0, max: 130 }),
        fc.integer({ min: 1, max: 25 }),
        fc.boolean(),
        async (minutes, from, span, pageSize, newestFirst) => {
          held = minutes.map((m) => T0 + m * MINUTE).sort((a, b) => a - b);
          order = newestFirst ? 'newestFirst' : 'oldestFirst';
          const start = T0 + from * MINUTE;
          const end = start + span * MINUTE;
          const bars = await client.retrieveBarsRange({
            contractId: 'C',
            live: false,
            unit: 2,
            unitNumber: 1,
            start: new Date(start),
            end: new Date(end),
            pageSize,
          });
          expect(bars.map((b) => Date.parse(b.t))).toEqual(held.filter((t) => t >= start && t <= end));
        },
      ),
      { numRuns: 25 },
    );
  });

  it('refuses a start without an offset before sending', async () => {
    const before = server.count('/api/History/retrieveBars');
    await expect(
      client.retrieveBarsRange({
        contractId: 'C',
        live: false,
        unit: 2,
        unitNumber: 1,
        start: '2025-03-03T14:30:00',
        end: new Date(T0),
      }),
    ).rejects.toMatchObject({ code: 'INVALID_REQUEST', outcome: 'not-sent' });
    expect(server.count('/api/History/retrieveBars')).toBe(before);
  });
});
