import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type * as S from '../../../src/protocol/schemas.ts';
import { RateBudget } from '../../../src/adapters/live/rate-plan.ts';
import { SharedBarRequests, SharedHub, BarBudgetFull } from '../../../src/adapters/live/shared-connections.ts';

class CountingHub {
  starts = 0;
  stops = 0;
  restarts = 0;
  async start(): Promise<void> {
    this.starts++;
  }
  async stop(): Promise<void> {
    this.stops++;
  }
  async restart(): Promise<void> {
    this.restarts++;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  quotes(id: string): string {
    return `quotes of ${id}`;
  }
}

describe('a hub shared by several feeds', () => {
  it('opens with the first start, closes with the last stop, restarts once for a burst of asks', async () => {
    const hub = new CountingHub();
    const shared = new SharedHub(hub);
    const one = shared.lease();
    const two = shared.lease();
    await one.start();
    await two.start();
    await one.start();
    expect(hub.starts).toBe(1);
    expect(two.quotes('X')).toBe('quotes of X');
    await Promise.all([one.restart(), two.restart()]);
    expect(hub.restarts).toBe(1);
    await one.stop();
    await one.stop();
    expect(hub.stops).toBe(0);
    await two.stop();
    expect(hub.stops).toBe(1);
  });
});

const MINUTE = 60_000;
const T0 = Date.UTC(2026, 2, 2, 15, 0);
function request(start: number, partial = false): S.RetrieveBarsRequest {
  return {
    contractId: 'C',
    live: false,
    startTime: new Date(start).toISOString(),
    endTime: new Date(start + 5 * MINUTE).toISOString(),
    unit: 2,
    unitNumber: 1,
    limit: 10,
    includePartialBar: partial,
  };
}
const bar = (t: number): S.Bar => ({ t: new Date(t).toISOString(), o: 1, h: 1, l: 1, c: 1, v: 1 });

describe('bar requests of several accounts', () => {
  it('answers a request in the same bar from no earlier a start once; a later bar, an earlier start or a stale partial go out', async () => {
    let now = T0 + 500;
    let sent = 0;
    const client = {
      retrieveBars: async (r: S.RetrieveBarsRequest) => {
        sent++;
        const from = Date.parse(r.startTime);
        return [bar(from + MINUTE), bar(from)];
      },
    };
    const shared = new SharedBarRequests(client, () => now, new RateBudget(undefined, () => now));
    await shared.retrieveBars(request(T0 - 2 * MINUTE));
    now += 300;
    const second = await shared.retrieveBars(request(T0 - MINUTE));
    expect(sent).toBe(1);
    // Filtered to its own start, newest first as the gateway answers.
    expect(second.map((b) => b.t)).toEqual([new Date(T0 - MINUTE).toISOString()]);
    await shared.retrieveBars(request(T0 - 3 * MINUTE));
    expect(sent).toBe(2);
    now = T0 + MINUTE + 500;
    await shared.retrieveBars(request(T0 - MINUTE));
    expect(sent).toBe(3);
    await shared.retrieveBars(request(T0, true));
    now += 2_000;
    await shared.retrieveBars(request(T0, true));
    expect(sent).toBe(5);
    expect(shared.counts).toEqual({ sent: 5, shared: 1 });
  });

  it('property: a shared answer holds exactly the bars the gateway would have given from the request start', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.integer({ min: 0, max: 5 }), fc.integer({ min: 0, max: 90_000 })), {
          minLength: 1,
          maxLength: 12,
        }),
        async (steps) => {
          let now = T0;
          const history = Array.from({ length: 200 }, (_, i) => bar(T0 - 100 * MINUTE + i * MINUTE));
          const gateway = async (r: S.RetrieveBarsRequest) => {
            const from = Date.parse(r.startTime);
            return history.filter((b) => Date.parse(b.t) >= from && Date.parse(b.t) + MINUTE <= now).reverse();
          };
          const shared = new SharedBarRequests(
            { retrieveBars: gateway },
            () => now,
            new RateBudget(undefined, () => now),
          );
          for (const [back, advance] of steps) {
            now += advance;
            const r = request(Math.floor(now / MINUTE) * MINUTE - back * MINUTE);
            expect(await shared.retrieveBars(r)).toEqual(await gateway(r));
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  it('a full bar window skips the request with a named error, the gateway not asked', async () => {
    const now = T0;
    const budget = new RateBudget(
      { bars: { requests: 1, windowMs: 30_000 }, default: { requests: 200, windowMs: 60_000 } },
      () => now,
    );
    let sent = 0;
    const shared = new SharedBarRequests({ retrieveBars: async () => (sent++, []) }, () => now, budget);
    await shared.retrieveBars(request(T0 - MINUTE));
    await expect(shared.retrieveBars(request(T0 - 3 * MINUTE))).rejects.toBeInstanceOf(BarBudgetFull);
    expect(sent).toBe(1);
  });
});
