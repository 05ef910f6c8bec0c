/**
 * The gateway client against the simulator on loopback: a read endpoint (Contract/searchById) through the
 * project's `TradingClient` (schema validation of request and answer, session, limiter, undici pool) and
 * the simulator's real HTTP server. The gateway's rate budgets (200 requests a minute) would make this a
 * measurement of the limiter, so both the simulator's and the client's budgets are raised for the bench.
 */
import { TradingClient } from '../src/adapters/gateway/trading.ts';
import { startSimulator } from '../src/sim/index.ts';

/** A budget no bench run can reach; a 1 ms window keeps the limiters' logs short. */
const UNLIMITED = { requests: 1_000_000, windowMs: 1 };
export const RAISED_BUDGETS = `simulator and client rate budgets raised to ${UNLIMITED.requests.toLocaleString('en-US')} requests per ${UNLIMITED.windowMs} ms (the gateway's are 200/60 s and 30/30 s)`;

export interface ClientFigures {
  readonly endpoint: string;
  readonly requests: number;
  /** Closed loop, one request at a time. */
  readonly sequentialPerSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  /** `concurrency` requests in flight. */
  readonly concurrentPerSecond: number;
  readonly concurrency: number;
  readonly concurrentP50Ms: number;
  readonly concurrentP99Ms: number;
}

export async function measureClient(options: {
  requests: number;
  concurrency: number;
  warmup: number;
}): Promise<ClientFigures> {
  const sim = await startSimulator({ clock: 'manual', rateLimits: { bars: UNLIMITED, default: UNLIMITED } });
  const client = new TradingClient({
    baseUrl: sim.tradingUrl,
    userName: sim.demo.userName,
    apiKey: sim.demo.apiKey,
    rateLimits: { bars: UNLIMITED, default: UNLIMITED },
  });
  const contractId = 'CON.F.US.EP.Z25';
  try {
    await client.login();
    const first = await client.contractById(contractId);
    if (first.id !== contractId) throw new Error(`Contract/searchById answered ${first.id} for ${contractId}`);
    for (let k = 0; k < options.warmup; k++) await client.contractById(contractId);

    const sequential = new Float64Array(options.requests);
    let start = performance.now();
    for (let k = 0; k < options.requests; k++) {
      const t = performance.now();
      await client.contractById(contractId);
      sequential[k] = performance.now() - t;
    }
    const sequentialMs = performance.now() - start;

    const concurrent = new Float64Array(options.requests);
    let next = 0;
    const lane = async (): Promise<void> => {
      while (next < options.requests) {
        const k = next++;
        const t = performance.now();
        await client.contractById(contractId);
        concurrent[k] = performance.now() - t;
      }
    };
    start = performance.now();
    await Promise.all(Array.from({ length: options.concurrency }, lane));
    const concurrentMs = performance.now() - start;

    return {
      endpoint: 'Contract/searchById',
      requests: options.requests,
      sequentialPerSecond: (options.requests / sequentialMs) * 1000,
      p50Ms: quantile(sequential, 0.5),
      p99Ms: quantile(sequential, 0.99),
      concurrentPerSecond: (options.requests / concurrentMs) * 1000,
      concurrency: options.concurrency,
      concurrentP50Ms: quantile(concurrent, 0.5),
      concurrentP99Ms: quantile(concurrent, 0.99),
    };
  } finally {
    await client.close();
    await sim.close();
  }
}

/** Nearest-rank quantile. */
export function quantile(values: Float64Array, q: number): number {
  const sorted = Float64Array.from(values).sort();
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}
