/**
 * The cases of the black-box fault suite (issue 12) and the audit every case ends with. A case runs the
 * bot (`tickline paper|live`, a child process) through the fault proxy with the flip strategy and returns
 * the problems specific to it; `invariantViolations` then checks what must hold whatever the network did:
 *
 * - no two orders with one customTag (at the gateway, and at the wire: no tag forwarded twice);
 * - no order at the gateway the journal does not know;
 * - no lost fill: every trade of the account is a journaled fill, and every journaled fill a trade;
 * - the gateway's position never beyond the strategy's largest target, or, when a place was held longer
 *   than `execution.unknownOutcomeMs`, back within it inside one poll (and never compounded);
 * - journal, engine (its final snapshot and status line) and gateway agree at the end: positions,
 *   balance, each order's state and filled size, nothing left unresolved.
 *
 * Each case reports its numbers (largest position, anomalies, duplicates) for docs/live.md.
 */
import { readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { OrderStatus, TradeSide } from '../../../src/protocol/codes.ts';
import type { LiveOrderState } from '../../../src/adapters/live/order-state.ts';
import {
  BAR_MS,
  CONTRACT,
  MAX_TARGET,
  POLL,
  peekJournal,
  REQUEST_TIMEOUT_MS,
  type Audit,
  type BotProcess,
  type FaultWorld,
  type Mode,
} from './fault-world.ts';

const PLACE = '/api/Order/place';
const LOGIN = '/api/Auth/loginKey';
const ORDER_SEARCH = '/api/Order/search';
const OPEN_ORDERS = '/api/Order/searchOpen';
const TRADES = '/api/Trade/search';
const POSITIONS = '/api/Position/searchOpen';
const ACCOUNTS = '/api/Account/search';
const BARS_PATH = '/api/History/retrieveBars';
const READS = [ORDER_SEARCH, OPEN_ORDERS, TRADES, POSITIONS];

/** Closed bars per bot run (`TICKLINE_FAULT_BARS`; the CI default keeps the suite within a couple of minutes). */
export const BARS = Math.max(8, Number(process.env.TICKLINE_FAULT_BARS ?? 10));
/** How often each fault fires in a run: twice in the CI form, more in a longer run. */
const ROUNDS = Math.max(2, Math.floor((BARS - 4) / 3));
/** Bars of a run after a restart. */
const RESTART_BARS = Math.max(6, Math.round(BARS / 2));
/**
 * The unknown-outcome window of the cases where a place may never reach the gateway (a reset before it,
 * a 5xx the proxy answers itself, a kill): short enough that the order is given up within the run.
 */
const SHORT_WINDOW_MS = 4_000;
/** "Corrected within one poll": one Order/search interval, plus the time to send and fill one order. */
export const CORRECTION_MS = POLL.ordersMs + 1_500;
/** How late the place of the case beyond the unknown-outcome window lands. */
const LATE_MS = 6_000;

export interface CaseOutcome {
  readonly violations: string[];
  /** False when the case ends without a trading session (a bot that must refuse to start): no final snapshot to compare. */
  readonly sessionExpected: boolean;
  /** A node's case: the account of the audited journal, whose line of the node's output is its final status line. */
  readonly account?: string;
}

export interface FaultCase {
  readonly name: string;
  /** What the network (or the operator) does, for the report. */
  readonly fault: string;
  readonly mode?: Mode;
  /** A place is held longer than the unknown-outcome window: the position may pass the target by this order's size, then is corrected. */
  readonly beyondWindow?: { readonly lateOrderSize: number };
  /** The journal is deleted mid-run: gateway orders the restart reported as unknown tags are allowed. */
  readonly journalDeleted?: boolean;
  /** No anomaly may be journaled (the run without faults). */
  readonly noAnomalies?: boolean;
  run(world: FaultWorld): Promise<CaseOutcome>;
}

// ------------------------------------------------------------------ helpers for the cases

/** Runs one bot for `BARS` bars with `arm` injecting faults once its session is up; faults stop 4 bars before its end. */
/**
 * Whether faults may still start: until 4 bars before the run's end, less `marginMs` for a fault whose
 * effect comes later (a request delivered late), so the bot has time to set everything right.
 */
type During = (marginMs?: number) => boolean;

async function faultRun(
  world: FaultWorld,
  arm: (during: During, bot: BotProcess) => Promise<void> | void,
  execution?: Record<string, unknown>,
  options: { realtime?: boolean } = {},
): Promise<CaseOutcome> {
  const violations: string[] = [];
  const bot = world.spawn(
    world.config({ bars: BARS, ...(execution ? { execution } : {}), ...(options.realtime ? { realtime: true } : {}) }),
  );
  await bot.started();
  const stopAt = Date.now() + (BARS - 4) * BAR_MS;
  await arm((marginMs = 0) => Date.now() < stopAt - marginMs, bot);
  const exit = await bot.finish(runDeadline(BARS));
  if (exit.code !== 0) violations.push(`bot exited ${JSON.stringify(exit)}; stderr: ${lastLines(bot.stderr)}`);
  return { violations, sessionExpected: true };
}

function runDeadline(bars: number): number {
  return bars * BAR_MS + 60_000;
}

/** Faults of these kinds on these paths did happen (a case whose fault never fired proves nothing). */
function exercised(world: FaultWorld, paths: readonly string[] | '*', kinds: readonly string[]): string[] {
  const hits = [world.proxy, ...world.extraProxies]
    .flatMap((p) => p.requests)
    .filter((r) => r.fault !== undefined && kinds.includes(r.fault) && (paths === '*' || paths.includes(r.path)));
  return hits.length > 0
    ? []
    : [
        `fault ${kinds.join('/')} on ${paths === '*' ? 'any path' : paths.join(', ')} never happened: the case proved nothing`,
      ];
}

function placeTags(world: FaultWorld): string[] {
  return world.proxy.requests
    .filter((r) => r.path === PLACE)
    .map((r) => (r.body as { customTag?: string }).customTag ?? '');
}

/** Lines a person reads: everything on standard error that is not a JSON log line. */
export function humanLines(stderr: string): string[] {
  return stderr.split('\n').filter((l) => l.trim() !== '' && !l.startsWith('{'));
}

function lastLines(text: string, n = 4): string {
  return text.trim().split('\n').slice(-n).join(' | ').slice(0, 1_500);
}

function journalOrderState(world: FaultWorld, tag: string): { state: string; fills: number } | undefined {
  return peekJournal(world.journalFile, (db) => {
    const row = db.prepare('SELECT state FROM orders WHERE tag = ?').get(tag) as { state: string } | undefined;
    if (!row) return undefined;
    const fills = (db.prepare('SELECT count(*) AS n FROM fills WHERE tag = ?').get(tag) as { n: number }).n;
    return { state: row.state, fills };
  });
}

/** The login answer cut just before its end: still holding the whole token, no longer JSON. */
const cutLoginAnswer = (body: string): string => body.slice(0, Math.max(1, body.length - 2));

// ------------------------------------------------------------------ kill -9 at six points of an order's life

interface KillPoint {
  readonly name: string;
  readonly fault: string;
  /** Injects what holds the order at the point, and resolves once the bot is there. */
  arm(world: FaultWorld, bot: BotProcess): Promise<void>;
}

/** The third place: by then the bot holds a position and its orders reverse it. */
const THIRD = (world: FaultWorld): boolean => world.placesAnswered() >= 2;

const KILL_POINTS: readonly KillPoint[] = [
  {
    name: 'kill -9: place not yet at the gateway',
    fault: 'third place held by the network, never delivered; kill -9; restart',
    async arm(world, bot) {
      world.proxy.inject({ path: PLACE, action: { kind: 'hold', forward: false }, when: () => THIRD(world) });
      await bot.until(
        () => world.proxy.requests.some((r) => r.path === PLACE && r.fault === 'hold'),
        60_000,
        'a place held before the gateway',
      );
    },
  },
  {
    name: 'kill -9: place applied, answer not received',
    fault: 'third place delivered, its answer withheld; kill -9; restart',
    async arm(world, bot) {
      let held = false;
      world.proxy.inject({ path: PLACE, action: { kind: 'hold' }, when: () => THIRD(world) });
      void world.proxy.held().then(() => (held = true));
      await bot.until(() => held, 60_000, 'a place applied at the gateway with its answer withheld');
    },
  },
  {
    name: 'kill -9: place unknown, lookup in flight',
    fault: 'third place delivered, answer withheld past the timeout, its lookup withheld; kill -9; restart',
    async arm(world, bot) {
      world.proxy.inject({ path: PLACE, action: { kind: 'hold' }, when: () => THIRD(world) });
      const placeHeld = (): boolean => world.proxy.requests.some((r) => r.path === PLACE && r.fault === 'hold');
      world.proxy.inject({
        path: ORDER_SEARCH,
        action: { kind: 'hold', forward: false },
        times: 1_000,
        when: placeHeld,
      });
      await bot.until(() => placeHeld(), 60_000, 'the third place');
      const tag = placeTags(world).at(-1)!;
      await bot.until(() => journalOrderState(world, tag)?.state === 'unknown', 20_000, `${tag} journaled as unknown`);
    },
  },
  {
    name: 'kill -9: place answered, fill not yet seen',
    fault: 'third place answered; every read after it withheld; kill -9 once it is journaled working; restart',
    async arm(world, bot) {
      const third = (): boolean => world.placesAnswered() >= 3;
      world.proxy.inject({ path: READS, action: { kind: 'hold', forward: false }, times: 1_000, when: third });
      await bot.until(third, 60_000, 'the third place answered');
      const tag = placeTags(world)[2]!;
      await bot.until(() => journalOrderState(world, tag)?.state === 'working', 20_000, `${tag} journaled working`);
    },
  },
  {
    name: 'kill -9: filled at Order/search, trade not yet seen',
    fault: 'third place answered; Trade/search withheld; kill -9 once Order/search showed it filled; restart',
    async arm(world, bot) {
      const third = (): boolean => world.placesAnswered() >= 3;
      world.proxy.inject({ path: TRADES, action: { kind: 'hold', forward: false }, times: 1_000, when: third });
      await bot.until(third, 60_000, 'the third place answered');
      const tag = placeTags(world)[2]!;
      await bot.until(
        () => {
          const seen = journalOrderState(world, tag);
          return seen !== undefined && seen.state === 'filled' && seen.fills === 0;
        },
        20_000,
        `${tag} journaled filled (from Order/search) before its trade`,
      );
    },
  },
  {
    name: 'kill -9: fill journaled',
    fault: "kill -9 as soon as the third order's fill is journaled; restart",
    async arm(world, bot) {
      await bot.until(() => world.placesAnswered() >= 3, 60_000, 'the third place answered');
      const tag = placeTags(world)[2]!;
      await bot.until(() => (journalOrderState(world, tag)?.fills ?? 0) > 0, 20_000, `${tag}'s fill journaled`);
    },
  },
];

function killCase(point: KillPoint): FaultCase {
  return {
    name: point.name,
    fault: point.fault,
    async run(world) {
      const violations: string[] = [];
      const execution = { unknownOutcomeMs: SHORT_WINDOW_MS };
      const first = world.spawn(world.config({ bars: 10_000, execution }));
      await first.started();
      await point.arm(world, first);
      first.kill('SIGKILL');
      const killed = await first.exited;
      if (killed.signal !== 'SIGKILL') violations.push(`first bot ended ${JSON.stringify(killed)} before the kill`);
      world.proxy.release({ drop: true });
      world.proxy.clear();
      const second = world.spawn(world.config({ bars: RESTART_BARS, execution }));
      const exit = await second.finish(runDeadline(RESTART_BARS) + 30_000);
      if (exit.code !== 0)
        violations.push(`restarted bot exited ${JSON.stringify(exit)}; stderr: ${lastLines(second.stderr)}`);
      return { violations, sessionExpected: true };
    },
  };
}

/**
 * The trading node: the flip strategy on two accounts in one process, killed while its third place is
 * applied at the gateway with the answer withheld, then started again. The first account is audited as
 * every case is; the second here, with the same invariants (and its own line of the node's output).
 */
const nodeKillCase: FaultCase = {
  name: 'trading node: kill -9 at a place in flight',
  fault: 'two bots on two accounts; third place delivered, its answer withheld; kill -9; restart',
  async run(world) {
    const violations: string[] = [];
    const execution = { unknownOutcomeMs: SHORT_WINDOW_MS };
    const first = world.spawn(world.nodeConfig({ bars: 10_000, execution }));
    await first.started(90_000, 2);
    await KILL_POINTS[1]!.arm(world, first);
    first.kill('SIGKILL');
    const killed = await first.exited;
    if (killed.signal !== 'SIGKILL') violations.push(`first node ended ${JSON.stringify(killed)} before the kill`);
    world.proxy.release({ drop: true });
    world.proxy.clear();
    const second = world.spawn(world.nodeConfig({ bars: RESTART_BARS, execution }));
    const exit = await second.finish(runDeadline(RESTART_BARS) + 30_000);
    if (exit.code !== 0)
      violations.push(`restarted node exited ${JSON.stringify(exit)}; stderr: ${lastLines(second.stderr)}`);
    const outcome = { violations: [], sessionExpected: true };
    const audit = await world.audit({ accountId: world.second.id, journalFile: world.secondJournalFile });
    for (const v of invariantViolations(audit, nodeKillCase, outcome, second.stdout, world.second.name))
      violations.push(`${world.second.name}: ${v}`);
    if (audit.orders.length === 0) violations.push(`${world.second.name}: no order at all: the case proved nothing`);
    return { violations, sessionExpected: true, account: world.account.paper.name };
  },
};

// ------------------------------------------------------------------ the cases

export const CASES: readonly FaultCase[] = [
  {
    name: 'no fault',
    fault: 'none (reference run)',
    noAnomalies: true,
    run: (world) => faultRun(world, () => undefined),
  },
  {
    name: 'realtime hubs losing events and dropping',
    fault:
      'the bot on the user and market hubs: every other bar the user hub loses its trade and order events, every third bar its connections are cut and refused for a bar; places reset after the gateway applied them',
    async run(world) {
      let bar = 0;
      let timer: NodeJS.Timeout | undefined;
      let cuts = 0;
      const outcome = await faultRun(
        world,
        (during) => {
          world.proxy.inject({ path: PLACE, action: { kind: 'drop-after' }, times: ROUNDS, every: 3, when: during });
          timer = setInterval(() => {
            bar++;
            const faulty = during(2 * BAR_MS);
            world.hubProxy.discard(
              faulty && bar % 2 === 0 ? (record) => /"GatewayUser(Trade|Order)"/.test(record) : undefined,
            );
            if (faulty && bar % 3 === 0) {
              world.hubProxy.cut();
              cuts++;
            } else world.hubProxy.restore();
          }, BAR_MS);
        },
        { unknownOutcomeMs: SHORT_WINDOW_MS },
        { realtime: true },
      );
      clearInterval(timer);
      world.hubProxy.discard(undefined);
      world.hubProxy.restore();
      const hub = [
        ...(world.hubProxy.discarded.length > 0 ? [] : ['no realtime event was discarded: the case proved nothing']),
        ...(cuts > 0 ? [] : ['the hub was never cut: the case proved nothing']),
      ];
      return { ...outcome, violations: [...outcome.violations, ...hub, ...exercised(world, [PLACE], ['drop-after'])] };
    },
  },
  {
    name: 'held request delivered late',
    fault: `every other place held 4 s by the network, then delivered (request timeout ${REQUEST_TIMEOUT_MS} ms, default unknownOutcomeMs)`,
    async run(world) {
      const outcome = await faultRun(world, (during) =>
        world.proxy.inject({
          path: PLACE,
          action: { kind: 'delay', delayMs: 4_000 },
          times: ROUNDS,
          every: 2,
          when: () => during(4_000),
        }),
      );
      return { ...outcome, violations: [...outcome.violations, ...exercised(world, [PLACE], ['delay'])] };
    },
  },
  {
    name: 'held answer',
    fault: 'places, orders and trades searches delivered at once, their answers held 4 s (past the request timeout)',
    async run(world) {
      const outcome = await faultRun(world, (during) => {
        world.proxy.inject({
          path: PLACE,
          action: { kind: 'late-answer', delayMs: 4_000 },
          times: ROUNDS,
          every: 2,
          when: () => during(4_000),
        });
        world.proxy.inject({
          path: [ORDER_SEARCH, TRADES],
          action: { kind: 'late-answer', delayMs: 4_000 },
          times: ROUNDS,
          every: 3,
          when: () => during(4_000),
        });
      });
      return {
        ...outcome,
        violations: [
          ...outcome.violations,
          ...exercised(world, [PLACE], ['late-answer']),
          ...exercised(world, [ORDER_SEARCH, TRADES], ['late-answer']),
        ],
      };
    },
  },
  {
    name: 'held longer than unknownOutcomeMs',
    fault:
      'a place held 6 s then delivered (more, one at a time, in longer runs), with execution.unknownOutcomeMs 2500; Order/search fails for 3.5 s as it lands',
    beyondWindow: { lateOrderSize: 2 * MAX_TARGET },
    async run(world) {
      const outcome = await faultRun(
        world,
        (during) => {
          const late = () => world.proxy.requests.filter((r) => r.path === PLACE && r.fault === 'delay');
          // One late order at a time: the next only once the last has landed and had three bars to be corrected.
          const spaced = (): boolean => late().every((r) => Date.now() - r.at > LATE_MS + 3 * BAR_MS);
          world.proxy.inject({
            path: PLACE,
            action: { kind: 'delay', delayMs: LATE_MS },
            times: ROUNDS - 1,
            when: () => during(LATE_MS) && world.placesAnswered() >= 1 && spaced(),
          });
          // Order/search fails for a moment as the late order lands, so Trade/search is first to show it.
          const justLanded = (): boolean =>
            late().some((r) => r.forwardedAt !== undefined && Date.now() - r.forwardedAt < 3_500);
          world.proxy.inject({
            path: ORDER_SEARCH,
            action: { kind: 'status', status: 503 },
            times: 100,
            when: justLanded,
          });
        },
        { unknownOutcomeMs: 2_500 },
      );
      return { ...outcome, violations: [...outcome.violations, ...exercised(world, [PLACE], ['delay'])] };
    },
  },
  {
    name: 'connection resets',
    fault: 'places reset after the gateway applied them; every 4th request reset before reaching it',
    async run(world) {
      const outcome = await faultRun(
        world,
        (during) => {
          world.proxy.inject({ path: PLACE, action: { kind: 'drop-after' }, times: ROUNDS, every: 2, when: during });
          world.proxy.inject({ path: '*', action: { kind: 'drop-before' }, times: 6 * ROUNDS, every: 4, when: during });
        },
        { unknownOutcomeMs: SHORT_WINDOW_MS },
      );
      return {
        ...outcome,
        violations: [
          ...outcome.violations,
          ...exercised(world, [PLACE], ['drop-after']),
          ...exercised(world, '*', ['drop-before']),
        ],
      };
    },
  },
  {
    name: '5xx before the gateway applied the request',
    fault: 'live: places answered 503 by the network without reaching the gateway; every 3rd request 500',
    mode: 'live',
    async run(world) {
      const outcome = await faultRun(
        world,
        (during) => {
          world.proxy.inject({
            path: PLACE,
            action: { kind: 'status', status: 503, body: '<html>Service Unavailable</html>' },
            times: ROUNDS,
            every: 2,
            when: during,
          });
          world.proxy.inject({
            path: '*',
            action: { kind: 'status', status: 500, body: '{"message":"internal error"}' },
            times: 6 * ROUNDS,
            every: 3,
            when: during,
          });
        },
        { unknownOutcomeMs: SHORT_WINDOW_MS },
      );
      return { ...outcome, violations: [...outcome.violations, ...exercised(world, [PLACE], ['status'])] };
    },
  },
  {
    name: '5xx after the gateway applied the request',
    fault: 'live: places applied, then answered 500; every 3rd request applied, then answered 502',
    mode: 'live',
    async run(world) {
      const outcome = await faultRun(
        world,
        (during) => {
          world.proxy.inject({
            path: PLACE,
            action: { kind: 'status-after', status: 500 },
            times: ROUNDS,
            every: 2,
            when: during,
          });
          world.proxy.inject({
            path: '*',
            action: { kind: 'status-after', status: 502, body: 'Bad Gateway' },
            times: 6 * ROUNDS,
            every: 3,
            when: during,
          });
        },
        { unknownOutcomeMs: SHORT_WINDOW_MS },
      );
      return { ...outcome, violations: [...outcome.violations, ...exercised(world, [PLACE], ['status-after'])] };
    },
  },
  {
    name: '429 bursts',
    fault: 'bursts of 2.5 s in which every request is answered 429 (Retry-After 1); every other place answered 429',
    async run(world) {
      const outcome = await faultRun(world, (during) => {
        const armedAt = Date.now();
        const burst = (fromMs: number) => () => Date.now() >= armedAt + fromMs && Date.now() < armedAt + fromMs + 2_500;
        const action = {
          kind: 'status',
          status: 429,
          headers: { 'retry-after': '1' },
          body: '{"message":"rate limit"}',
        } as const;
        // A burst stalls the poll loop on its retries, so the places that meet a 429 are chosen outright.
        world.proxy.inject({ path: PLACE, action, times: ROUNDS, every: 2, when: during });
        for (let i = 0; i < ROUNDS; i++)
          world.proxy.inject({
            path: '*',
            action,
            times: 1_000,
            when: () => during() && burst((1 + 3 * i) * BAR_MS)(),
          });
      });
      return { ...outcome, violations: [...outcome.violations, ...exercised(world, [PLACE], ['status'])] };
    },
  },
  {
    name: 'malformed bodies',
    fault:
      'a place answer without orderId; orders, trades, positions, open orders, account and bars answers that break their schema',
    async run(world) {
      const outcome = await faultRun(world, (during) => {
        const inject = (p: string, corrupt: (body: string) => string, times = ROUNDS): void =>
          world.proxy.inject({ path: p, action: { kind: 'malformed', corrupt }, times, every: 2, when: during });
        // Until 2 bars before the end (not 4): on a loaded machine the bot's second place can come late,
        // and a lost place answer is set right within one poll round.
        world.proxy.inject({
          path: PLACE,
          action: { kind: 'malformed', corrupt: (b) => b.replace('"orderId":', '"orderID":') },
          times: ROUNDS - 1,
          when: () => during(-2 * BAR_MS) && world.placesAnswered() >= 1,
        });
        inject(ORDER_SEARCH, (b) => b.replace('"orders":', '"orderz":'));
        inject(TRADES, (b) => b.replace(/"size":(\d+)/, '"size":"$1"'));
        inject(POSITIONS, (b) => b.replace('"positions":', '"positionz":'));
        inject(OPEN_ORDERS, () => 'null', 1);
        inject(ACCOUNTS, () => '<html><body>Gateway Timeout</body></html>', 1);
        inject(BARS_PATH, (b) => b.replace('"bars":', '"barz":'), 1);
      });
      return {
        ...outcome,
        violations: [
          ...outcome.violations,
          ...exercised(world, [PLACE], ['malformed']),
          ...exercised(world, [TRADES, ORDER_SEARCH, POSITIONS], ['malformed']),
        ],
      };
    },
  },
  {
    name: 'truncated bodies',
    fault: 'a place answer cut mid-transfer; orders, trades and positions answers cut short or mid-transfer',
    async run(world) {
      const outcome = await faultRun(
        world,
        (during) => {
          const half = (b: string): number => Math.floor(b.length / 2);
          world.proxy.inject({
            path: PLACE,
            action: { kind: 'truncate', keep: half },
            times: ROUNDS - 1,
            when: () => during() && world.placesAnswered() >= 1,
          });
          world.proxy.inject({
            path: [ORDER_SEARCH, POSITIONS],
            action: { kind: 'malformed', corrupt: (b) => b.slice(0, half(b)) },
            times: ROUNDS + 1,
            every: 2,
            when: during,
          });
          world.proxy.inject({
            path: [TRADES, OPEN_ORDERS],
            action: { kind: 'truncate', keep: half },
            times: ROUNDS + 1,
            every: 2,
            when: during,
          });
        },
        { unknownOutcomeMs: SHORT_WINDOW_MS },
      );
      return {
        ...outcome,
        violations: [
          ...outcome.violations,
          ...exercised(world, [PLACE], ['truncate']),
          ...exercised(world, [ORDER_SEARCH, POSITIONS], ['malformed']),
        ],
      };
    },
  },
  {
    name: 'token expiry',
    fault:
      'the session token expires mid-run, repeatedly; the first new login answer is cut short with the token inside',
    async run(world) {
      const outcome = await faultRun(world, async (during, bot) => {
        await bot.until(() => world.placesAnswered() >= 2, 30_000, 'two places answered');
        world.proxy.inject({ path: LOGIN, action: { kind: 'malformed', corrupt: cutLoginAnswer } });
        world.proxy.expireTokens();
        const loginsBefore = world.proxy.requests.filter((r) => r.path === LOGIN).length;
        await bot.until(
          () =>
            world.proxy.requests.filter((r) => r.path === LOGIN && r.fault === undefined && r.answeredStatus === 200)
              .length > 0 && world.proxy.requests.filter((r) => r.path === LOGIN).length > loginsBefore + 1,
          30_000,
          'a new login after the expiry',
        );
        for (let round = 1; round < ROUNDS && during(); round++) {
          const places = world.placesAnswered();
          await bot.until(() => world.placesAnswered() >= places + 2, 30_000, 'two more places answered');
          world.proxy.expireTokens();
        }
      });
      const expired = world.proxy.requests.filter((r) => r.fault === 'expired-token').length;
      return {
        ...outcome,
        violations: [
          ...outcome.violations,
          ...exercised(world, [LOGIN], ['malformed']),
          ...(expired === 0 ? ['no request was refused for an expired token'] : []),
        ],
      };
    },
  },
  {
    name: 'truncated login answer at start',
    fault: 'the first login answer cut short with the token inside',
    async run(world) {
      world.proxy.inject({ path: LOGIN, action: { kind: 'malformed', corrupt: cutLoginAnswer } });
      const bot = world.spawn(world.config({ bars: RESTART_BARS }));
      const exit = await bot.finish(runDeadline(RESTART_BARS));
      const violations = exercised(world, [LOGIN], ['malformed']);
      if (exit.code === 0) return { violations, sessionExpected: true };
      // Refusing to start is allowed, with one line that says what went wrong.
      const lines = humanLines(bot.stderr);
      if (exit.code !== 1 && exit.code !== 2)
        violations.push(`exit ${JSON.stringify(exit)}, expected 0 (logged in again) or 1/2 with a one-line error`);
      if (lines.length !== 1)
        violations.push(`expected one line on standard error, got ${lines.length}: ${lines.slice(0, 6).join(' | ')}`);
      if (/^\s+at /m.test(bot.stderr)) violations.push('standard error holds a stack trace');
      return { violations, sessionExpected: false };
    },
  },
  ...KILL_POINTS.map(killCase),
  nodeKillCase,
  {
    name: 'second bot on the same journal',
    fault: "a second paper bot started on the running bot's journal (through its own proxy)",
    async run(world) {
      const violations: string[] = [];
      const first = world.spawn(world.config({ bars: BARS }));
      await first.started();
      const proxy = await world.extraProxy();
      const second = world.spawn(world.config({ bars: BARS, gatewayUrl: proxy.url }));
      const refused = await second.finish(45_000);
      if (refused.code !== 2)
        violations.push(
          `second bot exited ${JSON.stringify(refused)}, expected exit code 2; stderr: ${lastLines(second.stderr)}`,
        );
      const lines = humanLines(second.stderr);
      if (lines.length !== 1)
        violations.push(
          `second bot: expected one line on standard error, got ${lines.length}: ${lines.slice(0, 6).join(' | ')}`,
        );
      const line = lines.join(' ');
      if (!line.includes(world.journalFile))
        violations.push(`second bot's error does not name the journal ${world.journalFile}: ${line}`);
      if (!new RegExp(`\\b${first.pid}\\b`).test(line))
        violations.push(`second bot's error does not name the holding process ${first.pid}: ${line}`);
      if (/^\s+at /m.test(second.stderr)) violations.push('second bot printed a stack trace');
      if (proxy.requests.length > 0)
        violations.push(
          `second bot sent ${proxy.requests.length} requests before refusing (${[...new Set(proxy.requests.map((r) => r.path))].join(', ')})`,
        );
      const exit = await first.finish(runDeadline(BARS));
      if (exit.code !== 0)
        violations.push(`first bot exited ${JSON.stringify(exit)}; stderr: ${lastLines(first.stderr)}`);
      return { violations, sessionExpected: true };
    },
  },
  {
    name: 'deleted journal',
    fault: 'the journal files deleted while the bot runs; the bot restarted on a fresh journal',
    journalDeleted: true,
    async run(world) {
      const violations: string[] = [];
      const first = world.spawn(world.config({ bars: BARS }));
      await first.started();
      await first.until(() => world.placesAnswered() >= 3, 60_000, 'three places answered');
      const dir = path.dirname(world.journalFile);
      const base = path.basename(world.journalFile);
      for (const file of readdirSync(dir)) if (file.startsWith(base)) rmSync(path.join(dir, file), { force: true });
      // The first bot's behaviour with its journal gone is not prescribed; the account must stay right.
      await first.finish(runDeadline(BARS));
      const second = world.spawn(world.config({ bars: RESTART_BARS }));
      const exit = await second.finish(runDeadline(RESTART_BARS) + 30_000);
      if (exit.code !== 0)
        violations.push(`restarted bot exited ${JSON.stringify(exit)}; stderr: ${lastLines(second.stderr)}`);
      return { violations, sessionExpected: true };
    },
  },
];

// ------------------------------------------------------------------ the audit

const STATE_OF_STATUS: Record<number, readonly LiveOrderState[]> = {
  [OrderStatus.Open]: ['working', 'cancelling'],
  [OrderStatus.Pending]: ['working', 'cancelling'],
  [OrderStatus.PendingCancellation]: ['working', 'cancelling'],
  [OrderStatus.Filled]: ['filled'],
  [OrderStatus.Cancelled]: ['cancelled'],
  [OrderStatus.Expired]: ['expired'],
  [OrderStatus.Rejected]: ['rejected'],
};

const near = (a: number, b: number): boolean => Math.abs(a - b) < 0.005;

/** `account`: the node's account whose `[NAME] ended: balance` line is the final status line. */
export function invariantViolations(
  a: Audit,
  c: FaultCase,
  outcome: CaseOutcome,
  lastStdout: string,
  account?: string,
): string[] {
  const v: string[] = [];

  // No two orders with one customTag.
  const tagCounts = new Map<string, number>();
  for (const o of a.orders) if (o.customTag) tagCounts.set(o.customTag, (tagCounts.get(o.customTag) ?? 0) + 1);
  for (const [tag, n] of tagCounts) if (n > 1) v.push(`customTag ${tag} is on ${n} gateway orders`);
  for (const [tag, n] of a.placesForwarded) if (n > 1) v.push(`customTag ${tag} reached the gateway ${n} times`);

  // No order the journal does not know.
  const journaled = new Map(a.journal.orders.map((o) => [o.tag, o]));
  for (const o of a.orders) {
    const tag = o.customTag;
    if (!tag) {
      v.push(`gateway order ${o.id} has no customTag`);
      continue;
    }
    const j = journaled.get(tag);
    if (!j) {
      if (!(c.journalDeleted && a.journal.unjournaledTags.includes(tag)))
        v.push(`gateway order ${o.id} (${tag}) is not in the journal`);
      continue;
    }
    if (j.venueOrderId !== o.id)
      v.push(`journal has ${tag} as gateway order ${j.venueOrderId ?? 'none'}, the gateway as ${o.id}`);
    const states = STATE_OF_STATUS[o.status] ?? [];
    if (!states.includes(j.state)) v.push(`${tag}: journal state ${j.state}, gateway status ${o.status}`);
    if (j.filledSize !== (o.fillVolume ?? 0))
      v.push(`${tag}: journal filled ${j.filledSize}, gateway fillVolume ${o.fillVolume ?? 0}`);
  }
  for (const j of a.journal.orders) {
    if (j.state === 'submitting' || j.state === 'unknown')
      v.push(`${j.tag} is still ${j.state} in the journal at the end`);
    if ((j.state === 'lost' || j.state === 'rejected') && tagCounts.has(j.tag))
      v.push(`${j.tag} is ${j.state} in the journal but exists at the gateway`);
    const fillSum = a.journal.fills.filter((f) => f.tag === j.tag).reduce((s, f) => s + f.size, 0);
    if (fillSum !== j.filledSize)
      v.push(`${j.tag}: journaled fills add up to ${fillSum}, its order row says ${j.filledSize}`);
  }

  // No lost fill, no invented one.
  const fillIds = new Set(a.journal.fills.map((f) => f.fillId));
  const trades = a.trades.filter((t) => !t.voided);
  for (const t of trades) {
    if (!fillIds.has(String(t.id)))
      v.push(
        `trade ${t.id} (order ${t.orderId}, ${t.side === TradeSide.Buy ? 'buy' : 'sell'} ${t.size}) is not a journaled fill`,
      );
  }
  const tradeIds = new Set(trades.map((t) => String(t.id)));
  for (const f of a.journal.fills)
    if (!tradeIds.has(f.fillId)) v.push(`journaled fill ${f.fillId} is no trade of the account`);

  // The position bound.
  const episodes = a.path.excesses
    .map((e) => `${e.peak} for ${e.to - e.from} ms${e.closed ? '' : ' (never corrected)'}`)
    .join(', ');
  if (c.beyondWindow === undefined) {
    if (a.path.maxAbs > MAX_TARGET)
      v.push(`gateway position reached ${a.path.maxAbs} (strategy's largest target ${MAX_TARGET}): ${episodes}`);
    if (a.sampledMax > MAX_TARGET)
      v.push(`sampled gateway position reached ${a.sampledMax} (largest target ${MAX_TARGET})`);
  } else {
    const bound = MAX_TARGET + c.beyondWindow.lateOrderSize;
    if (a.path.maxAbs > bound)
      v.push(
        `gateway position reached ${a.path.maxAbs}: beyond target ${MAX_TARGET} plus the one late order (${c.beyondWindow.lateOrderSize}), so it compounded`,
      );
    for (const e of a.path.excesses) {
      if (!e.closed || e.to - e.from > CORRECTION_MS)
        v.push(
          `gateway position ${e.peak} beyond the target for ${e.to - e.from} ms (one poll: ${CORRECTION_MS} ms)${e.closed ? '' : ', never corrected'}`,
        );
    }
  }

  // Journal, engine and gateway agree at the end.
  const gatewayPositions = JSON.stringify(a.positions);
  if (JSON.stringify(a.journal.positions) !== gatewayPositions)
    v.push(`journal positions ${JSON.stringify(a.journal.positions)}, gateway ${gatewayPositions}`);
  if (a.path.final !== (a.positions[CONTRACT] ?? 0))
    v.push(`the account's trades add up to ${a.path.final}, Position/searchOpen says ${gatewayPositions}`);
  if (outcome.sessionExpected) {
    const snapshot = a.journal.finalSnapshot;
    if (!snapshot) {
      v.push('no final engine snapshot in the journal: the last session did not end cleanly');
    } else {
      const engine = JSON.stringify(
        Object.fromEntries(snapshot.positions.filter((p) => p.size !== 0).map((p) => [p.contractId, p.size])),
      );
      if (engine !== gatewayPositions) v.push(`engine's final positions ${engine}, gateway ${gatewayPositions}`);
      if (!near(snapshot.balance, a.balance))
        v.push(`engine's final balance ${snapshot.balance}, gateway ${a.balance}`);
    }
    const line = (
      account === undefined
        ? /session ended: balance (-?[\d.]+)/
        : new RegExp(`\\[${account}\\] ended: balance (-?[\\d.]+)`)
    ).exec(lastStdout);
    if (!line) v.push('no final status line on standard output');
    else if (!near(Number(line[1]), a.balance))
      v.push(`final status line says balance ${line[1]}, gateway ${a.balance}`);
  }

  if (c.noAnomalies && a.journal.anomalies.length > 0)
    v.push(`anomalies without any fault: ${a.journal.anomalies.join('; ')}`);
  return v;
}

/** The numbers of a case, for docs/live.md. */
export interface CaseNumbers {
  readonly case: string;
  readonly fault: string;
  readonly bars: number;
  readonly maxAbsPosition: number;
  readonly sampledMaxAbsPosition: number;
  readonly longestExcessMs: number;
  readonly anomalies: number;
  readonly duplicates: number;
  readonly unjournaledOrders: number;
  readonly lostFills: number;
  readonly orders: number;
  readonly trades: number;
  readonly faultsInjected: number;
  readonly violations: number;
  readonly wallMs: number;
}

export function numbersOf(c: FaultCase, a: Audit, violations: number, wallMs: number): CaseNumbers {
  const tagCounts = new Map<string, number>();
  for (const o of a.orders) if (o.customTag) tagCounts.set(o.customTag, (tagCounts.get(o.customTag) ?? 0) + 1);
  const duplicates = [...tagCounts.values(), ...a.placesForwarded.values()].filter((n) => n > 1).length;
  const journaled = new Set(a.journal.orders.map((o) => o.tag));
  const fillIds = new Set(a.journal.fills.map((f) => f.fillId));
  return {
    case: c.name,
    fault: c.fault,
    bars: BARS,
    maxAbsPosition: a.path.maxAbs,
    sampledMaxAbsPosition: a.sampledMax,
    longestExcessMs: a.path.excesses.reduce((m, e) => Math.max(m, e.to - e.from), 0),
    anomalies: a.journal.anomalies.length,
    duplicates,
    unjournaledOrders: a.orders.filter((o) => !o.customTag || !journaled.has(o.customTag)).length,
    lostFills: a.trades.filter((t) => !t.voided && !fillIds.has(String(t.id))).length,
    orders: a.orders.length,
    trades: a.trades.length,
    faultsInjected: a.faultsInjected,
    violations,
    wallMs,
  };
}
