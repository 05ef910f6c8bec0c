/**
 * Shared set-up of the simulator's black-box tests: a simulator on a free loopback port with a manual
 * clock (tests step the market), a few users whose settings produce each login error, and accounts with
 * small rule limits so a single round trip can break them deterministically.
 */
import { request } from 'undici';
import { AdminClient } from '../../../src/adapters/gateway/admin-client.ts';
import { TradingClient } from '../../../src/adapters/gateway/trading.ts';
import { CALENDAR } from '../../../src/market/contract-months.ts';
import { startSimulator, type SimHandle, type SimulatorOptions } from '../../../src/sim/index.ts';

/** Monday 3 November 2025, 14:00 UTC: US morning, an active synthetic market. */
export const START = Date.UTC(2025, 10, 3, 14, 0);
/** The front months of START (December 2025). */
export const ES = 'CON.F.US.EP.Z25';
export const MES = 'CON.F.US.MES.Z25';

/** The id of a root's front month at `t` (tests that run at other dates trade what is listed then). */
export function frontMonth(root: string, t: number): string {
  return CALENDAR.contract(root, CALENDAR.frontMonth(root, t)).id;
}

export const TRADER = { userName: 'Trader', apiKey: 'trader-key-0123456789' };

export const TEST_OPTIONS: SimulatorOptions = {
  clock: 'manual',
  startTime: START,
  seed: 42,
  templates: [
    // A round trip of 2 ES costs 5.60 in fees, which breaks these limits without any market move.
    { name: 'TIGHT-DAILY', startingBalance: 50_000, margin: 50_000, dailyLossLimit: { limit: 5, duration: 2 } },
    { name: 'TIGHT-MAX', startingBalance: 50_000, margin: 50_000, maximumLossLimit: { limit: 5, duration: 1 } },
    { name: 'SMALL-MARGIN', startingBalance: 50_000, margin: 600 },
  ],
  users: [
    {
      userName: TRADER.userName,
      apiKey: TRADER.apiKey,
      email: 'trader@example.com',
      accounts: [
        { name: 'T-MAIN', template: '50K' },
        { name: 'T-DAILY', template: 'TIGHT-DAILY' },
        { name: 'T-MAX', template: 'TIGHT-MAX' },
        { name: 'T-MARGIN', template: 'SMALL-MARGIN' },
        { name: 'T-PERSONAL-LOSS', template: 'PRACTICE', personalDailyLossLimit: 5 },
        { name: 'T-PERSONAL-TARGET', template: 'PRACTICE', personalDailyProfitTarget: 1 },
        { name: 'T-FOLLOWER', template: '50K', follower: true },
        { name: 'T-LIVE', template: 'PRACTICE', live: true },
        { name: 'T-STATS', template: 'PRACTICE' },
        { name: 'T-LEADER', template: 'PRACTICE', leader: true },
        { name: 'T-CLOSED', template: '50K', active: false },
        // Test hook: its first place answers OrderPending (6) and its first two cancels Pending (4).
        { name: 'T-PENDING', template: 'PRACTICE', pendingPlaces: 1, pendingCancels: 2 },
      ],
    },
    { userName: 'unsigned', apiKey: 'unsigned-key', agreementsSigned: false },
    { userName: 'lapsed', apiKey: 'lapsed-key', subscriptionActive: false },
    { userName: 'keyless', apiKey: 'keyless-key', apiKeyLoginEnabled: false },
  ],
};

export function startTestSimulator(extra: SimulatorOptions = {}): Promise<SimHandle> {
  return startSimulator({ ...TEST_OPTIONS, rateLimits: GENEROUS_RATES, ...extra });
}

/** Budgets high enough that neither the client nor the simulator paces the tests that poll. */
export const GENEROUS_RATES = {
  bars: { requests: 100_000, windowMs: 30_000 },
  default: { requests: 100_000, windowMs: 60_000 },
};

export function tradingClient(
  sim: Pick<SimHandle, 'tradingUrl'>,
  user: { userName: string; apiKey: string } = TRADER,
): TradingClient {
  return new TradingClient({
    baseUrl: sim.tradingUrl,
    userName: user.userName,
    apiKey: user.apiKey,
    retry: { maxAttempts: 1 },
    rateLimits: GENEROUS_RATES,
  });
}

/** Steps the manual clock until `done` holds, or fails after `maxMs` of simulated time. */
export async function advanceUntil(
  sim: SimHandle,
  done: () => Promise<boolean>,
  { stepMs = 60_000, maxMs = 3 * 86_400_000 } = {},
): Promise<number> {
  for (let elapsed = 0; elapsed <= maxMs; elapsed += stepMs) {
    if (await done()) return elapsed;
    sim.clock.advance(stepMs);
  }
  throw new Error(`condition not reached within ${maxMs} ms of simulated time`);
}

export function adminClient(sim: SimHandle): AdminClient {
  return new AdminClient({
    baseUrl: sim.adminUrl,
    headers: sim.adminHeaders,
    retry: { maxAttempts: 1 },
    rateLimits: GENEROUS_RATES,
  });
}

/** A simulator driven by the trader's trading client and an admin client, with the trader's account ids. */
export interface Session {
  sim: SimHandle;
  client: TradingClient;
  admin: AdminClient;
  ids: Record<string, number>;
  /** Closes both clients, then the simulator. */
  close(): Promise<void>;
}

export async function openSession(extra: SimulatorOptions = {}): Promise<Session> {
  const sim = await startTestSimulator(extra);
  const client = tradingClient(sim);
  const admin = adminClient(sim);
  return {
    sim,
    client,
    admin,
    ids: await accountIds(client),
    async close() {
      await client.close();
      await admin.close();
      await sim.close();
    },
  };
}

/** Account ids by name, as the trader sees them. */
export async function accountIds(client: TradingClient): Promise<Record<string, number>> {
  const accounts = await client.searchAccounts(false);
  return Object.fromEntries(accounts.map((a) => [a.name, a.id]));
}

/** A raw JSON POST (for what the client refuses to send: malformed bodies, missing fields, bursts). */
export async function rawPost(url: string, body: string | object, headers: Record<string, string> = {}) {
  const response = await request(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await response.body.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.statusCode, headers: response.headers, text, json };
}

export async function rawLogin(sim: SimHandle, user = TRADER): Promise<string> {
  const { json } = await rawPost(`${sim.tradingUrl}/api/Auth/loginKey`, user);
  if (!json?.token) throw new Error(`login failed: ${JSON.stringify(json)}`);
  return json.token as string;
}

export const ISO = (t: number) => new Date(t).toISOString();
