/**
 * Starts the gateway simulator: a real HTTP service on loopback implementing the trading and the
 * administration interfaces, with its state in SQLite and a market from the synthetic generator or a
 * replayed bar file. `startSimulator()` with no options gives an in-memory simulator on a free port with a
 * demo user, the way tests and newcomers want it.
 */
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import { readCsvBars } from '../data/csv.ts';
import { TradingCalendar, type TradingDayConfig } from '../engine/trading-day.ts';
import { silentLogger, type Logger } from '../engine/log.ts';
import {
  CALENDAR,
  pricePathOf,
  type ContractCalendar,
  type RootSpec,
  type RootSpecInput,
} from '../market/contract-months.ts';
import type { ExchangeCalendar } from '../market/exchange-hours.ts';
import { bookModelSchema, depthOf, type BookModel, type SpreadModel, type TouchFills } from '../market/quotes.ts';
import { syntheticSpreadModel } from '../market/synthetic.ts';
import { SimAdmin } from './admin-service.ts';
import { createClock, type ClockMode } from './clock.ts';
import { SimContracts, simExchangeCalendar } from './contracts.ts';
import { SimEngine } from './sim-core.ts';
import {
  ContractMarket,
  FixedBars,
  RegriddedBars,
  SyntheticBars,
  type BaseBars,
  type MarketHours,
} from './market/market.ts';
import type { PendingOptions } from './pending.ts';
import { DEFAULT_RATE_LIMITS, type RateBudget, type RateLimits } from './request-budget.ts';
import { SimRuleError, accountRuleBook, mllVariant, type MaximumSource, type MinimumSource } from './rule-templates.ts';
import type { MllVariant } from '../engine/account-rules.ts';
import { ADMIN_PREFIX, buildServer } from './server.ts';
import { HubHost, type HubDefinition } from './hubs/hub-host.ts';
import { MARKET_HUB, MarketHub } from './hubs/market-hub.ts';
import { USER_HUB, UserHub } from './hubs/user-hub.ts';
import { getMeta, openStore, setMeta, type Db, type RuleRow } from './store.ts';

export { generateBars } from '../market/synthetic.ts';
export { ADMIN_PREFIX } from './server.ts';
export { MaximumSource, MinimumSource, SimRuleError, mllVariant } from './rule-templates.ts';
export type { PendingOptions } from './pending.ts';

const DAY_MS = 86_400_000;

/**
 * Where prices come from: the seeded synthetic market, or a bar file replayed for every month of one
 * root (`contractId` names any contract of it, ES by default); the other roots stay synthetic.
 */
export type MarketSource = { source: 'synthetic' } | { source: 'csv'; path: string; contractId?: string };

/**
 * How orders fill at the touch. `spread` applies to every market when given; otherwise the synthetic
 * market's spread follows its volatility and time of day (`syntheticSpreadModel`) and a replayed file has
 * one tick. Partial fills are on and the queue model off unless set.
 */
export interface SimFillOptions {
  spread?: SpreadModel;
  book?: Partial<BookModel>;
  partialFills?: boolean;
  queue?: boolean;
}

export interface SimTemplateOptions {
  name: string;
  title?: string;
  description?: string;
  startingBalance?: number;
  margin?: number;
  /** 0 Regular, 1 Practice. */
  tag?: 0 | 1;
  /** A daily loss limit rule; `duration` 2 (Temporary, the default) or 1 (Permanent). */
  dailyLossLimit?: { limit: number; duration?: 1 | 2 };
  /**
   * A maximum loss limit rule; `duration` 1 (Permanent, the default) or 2 (Temporary). `maximumSource`
   * (default 0) and `minimumSource` (default null) are spec 2.11's and choose the variant: 0 static,
   * 1 trailing the end-of-day high balance (with `minimumSource` 0: until the floor locks at the starting
   * balance), 2 trailing the intraday high equity.
   */
  maximumLossLimit?: {
    limit: number;
    duration?: 1 | 2;
    maximumSource?: MaximumSource;
    minimumSource?: MinimumSource | null;
  };
}

export interface SimAccountOptions {
  name: string;
  /** Template name; `50K` by default. */
  template?: string;
  /** A live (brokerage) account instead of a simulated one. */
  live?: boolean;
  leader?: boolean;
  follower?: boolean;
  /** An inactive account is refused orders (AccountRejected). Default true. */
  active?: boolean;
  personalDailyLossLimit?: number;
  personalDailyProfitTarget?: number;
  /** Test hook: the first this-many `Order/place` requests on the account answer OrderPending (6) and place nothing. */
  pendingPlaces?: number;
  /** Test hook: the first this-many `Order/cancel` requests on the account answer Pending (4) and cancel nothing. */
  pendingCancels?: number;
}

export interface SimUserOptions {
  userName: string;
  apiKey: string;
  email?: string;
  firstName?: string;
  lastName?: string;
  /** false makes login answer errorCode 7 (AgreementsNotSigned). */
  agreementsSigned?: boolean;
  /** false makes login answer errorCode 9 (ApiSubscriptionNotFound). */
  subscriptionActive?: boolean;
  /** false makes login answer errorCode 10 (ApiKeyAuthenticationDisabled). */
  apiKeyLoginEnabled?: boolean;
  accounts?: SimAccountOptions[];
}

export interface SimulatorOptions {
  port?: number;
  host?: string;
  /** SQLite file; ':memory:' (the default) keeps nothing after close. */
  dbPath?: string;
  /** Seed of the synthetic market; fixed when the database is created. Default 1. */
  seed?: number;
  clock?: ClockMode;
  /** Epoch ms the clock starts at (manual and accelerated clocks). */
  startTime?: number;
  market?: MarketSource;
  /**
   * When the synthetic market trades: `exchange` (the default) keeps the exchange calendar's hours and
   * holidays (src/market/exchange-hours.ts); `always` is a market that never closes, for tests that run
   * a realtime simulator on the wall clock and must not depend on the day they run.
   */
  marketHours?: 'exchange' | 'always';
  /** Days of synthetic history before the start time. Default 30. */
  historyDays?: number;
  rateLimits?: Partial<RateLimits>;
  /**
   * The clock the request budgets are counted on: `wall` (default: a real gateway's budgets are wall time)
   * or `market`, the simulator's own clock, to rehearse a poll plan on a manual or accelerated clock.
   */
  rateClock?: 'wall' | 'market';
  templates?: SimTemplateOptions[];
  users?: SimUserOptions[];
  /** The administration credential; generated and kept in the database when absent. */
  adminKey?: string;
  /** The demo user's API key; generated and kept in the database when absent. */
  demoApiKey?: string;
  /** Accounts of the demo user besides its three (a trading node's paper accounts); made once, kept after. */
  demoAccounts?: SimAccountOptions[];
  /** The exchange trading day (daily P&L, daily limits, lockouts, statistics). Default 17:00 America/Chicago. */
  tradingDay?: TradingDayConfig;
  /** How often a realtime or accelerated clock moves the market and matches orders. Default 250 ms. */
  tickMs?: number;
  /** Spread, book, partial fills and the queue model (see SimFillOptions). */
  fills?: SimFillOptions;
  /** A seeded share of places and cancels answered pending first (off by default). */
  pending?: PendingOptions;
  /** Roots traded besides the built-in ones (a root of the same name replaces the built-in one). */
  roots?: RootSpecInput[];
  /** The realtime hubs (docs/sim.md, Realtime hubs). */
  realtime?: SimRealtimeOptions;
  logger?: Logger;
}

export interface SimRealtimeOptions {
  /** The most `GatewayQuote` events a second per contract (default 20). */
  quotesPerSecond?: number;
  /** Unsent bytes above which a hub connection is a slow consumer and is dropped (default 4 MiB). */
  maxBufferedBytes?: number;
  /** How often a connected token is checked again, ms (default 1000). */
  authCheckMs?: number;
}

/** The book of one contract as decimals: the touch, its sizes, the last trade and a few levels each side. */
export interface SimQuote {
  bid: number;
  ask: number;
  bidSize: number;
  askSize: number;
  last: number;
  bids: { price: number; size: number }[];
  asks: { price: number; size: number }[];
}

export interface SimHandle {
  tradingUrl: string;
  /** Base URL of the realtime hubs (`/hubs/user`, `/hubs/market`): the same server. */
  realtimeUrl: string;
  adminUrl: string;
  adminHeaders: Record<string, string>;
  demo: { userName: string; apiKey: string; accountId: number; accountName: string };
  clock: { now(): number; advance(ms: number): void };
  /** The quote of a contract now, or undefined when it does not trade now (the realtime market hub's source). */
  quote(contractId: string): SimQuote | undefined;
  /** Open connections of each realtime hub. */
  hubConnections(): { user: number; market: number };
  /**
   * The maximum loss limit variant of an account's template (rule-templates.ts), undefined when it has no
   * maximum loss limit: the guard of a paper session on this simulator takes it, the gateway's record
   * not stating it.
   */
  maximumLossVariant(accountId: number): MllVariant | undefined;
  close(): Promise<void>;
}

export const DEMO_USER = 'demo';
export const DEMO_ACCOUNT = 'DEMO-50K-1';

export const DEFAULT_TEMPLATES: SimTemplateOptions[] = [
  {
    name: '50K',
    title: '50K Combine',
    description:
      'Evaluation account: $50,000 start, $1,000 daily loss limit (temporary), $2,000 maximum loss limit (permanent)',
    startingBalance: 50_000,
    margin: 50_000,
    tag: 0,
    dailyLossLimit: { limit: 1000, duration: 2 },
    maximumLossLimit: { limit: 2000, duration: 1 },
  },
  {
    name: 'PRACTICE',
    title: 'Practice',
    description: 'Practice account without rules',
    startingBalance: 100_000,
    margin: 100_000,
    tag: 1,
  },
];

/** The simulator without its HTTP face: engine, admin views, clock and store, for in-process use and tests. */
export interface SimCore {
  engine: SimEngine;
  admin: SimAdmin;
  db: Db;
  adminKey: string;
  demo: SimHandle['demo'];
  /** Closes the store. */
  close(): void;
}

export function openSimulator(options: Omit<SimulatorOptions, 'port' | 'host' | 'tickMs'> = {}): SimCore {
  const logger = options.logger ?? silentLogger;
  const db = openStore(options.dbPath ?? ':memory:');
  try {
    const calendar = CALENDAR.withRoots(options.roots ?? []);
    const source = options.market ?? { source: 'synthetic' };
    const replay = source.source === 'csv' ? loadReplay(calendar, source) : undefined;

    const seed = Number(getMeta(db, 'seed') ?? options.seed ?? 1);
    setMeta(db, 'seed', String(seed));
    const storedTime = Number(getMeta(db, 'lastStep') ?? Number.NaN);
    const mode = options.clock ?? 'realtime';
    let startTime =
      options.startTime ?? (Number.isFinite(storedTime) ? storedTime : (replay?.defaultStart ?? Date.now()));
    // A realtime clock follows the wall clock, except over a replayed file or from an explicit start
    // time: then it runs at real speed from that start (or from where the last run stopped).
    const anchored = replay !== undefined || options.startTime !== undefined;
    // The market clock never runs backwards across restarts of the same database.
    if (Number.isFinite(storedTime) && (mode !== 'realtime' || anchored)) startTime = Math.max(startTime, storedTime);
    const clock = createClock(mode === 'realtime' && anchored ? { speed: 1 } : mode, startTime);
    const origin = Number(
      getMeta(db, 'origin') ?? Math.floor(clock.now() / DAY_MS) * DAY_MS - (options.historyDays ?? 30) * DAY_MS,
    );
    setMeta(db, 'origin', String(origin));

    const markets = new Map<string, ContractMarket>();
    const exchangeHours = simExchangeCalendar(calendar.roots());
    const book = bookModelSchema.parse(options.fills?.book ?? {});
    // One price path per underlying: a micro root trades its mini's bars (PRICE_PATHS), on its own grid.
    const roots = calendar.roots();
    // A replayed file is the path of its root's underlying (a micro file plays for its mini too).
    const replayPath = replay === undefined ? undefined : pricePathOf(replay.root);
    const paths = new Map<string, BaseBars>();
    const pathOf = (spec: RootSpec): RootSpec => {
      const underlying = pricePathOf(spec.root);
      return roots.find((r) => r.root === underlying) ?? spec;
    };
    const barsOf = (spec: RootSpec): BaseBars => {
      let bars = paths.get(spec.root);
      if (!bars) {
        bars =
          replay !== undefined && replayPath === spec.root
            ? new FixedBars(replay.file.stepMs, replay.file.bars)
            : new SyntheticBars(
                { startPrice: spec.startPrice, grid: calendar.grid(spec) },
                seed,
                roots.indexOf(spec),
                origin,
              );
        paths.set(spec.root, bars);
      }
      return bars;
    };
    for (const spec of roots) {
      const grid = calendar.grid(spec);
      const underlying = pathOf(spec);
      const replayed = replayPath === underlying.root;
      const shared = barsOf(underlying);
      const underlyingGrid = calendar.grid(underlying);
      const base = underlyingGrid.tickSize === grid.tickSize ? shared : new RegriddedBars(shared, underlyingGrid, grid);
      // A synthetic market keeps the exchange's hours; a replayed file's own gaps are its closed periods.
      const hours = replayed || options.marketHours === 'always' ? undefined : hoursOf(exchangeHours, spec);
      markets.set(spec.root, new ContractMarket(grid, base, touchFills(options.fills, book, spec, replayed), hours));
    }

    const adminKey = options.adminKey ?? getMeta(db, 'adminKey') ?? randomBytes(20).toString('hex');
    setMeta(db, 'adminKey', adminKey);
    const now = clock.now();
    seedTemplates(db, [...DEFAULT_TEMPLATES, ...(options.templates ?? [])]);
    const demoKey = options.demoApiKey ?? getMeta(db, 'demoApiKey') ?? randomBytes(20).toString('hex');
    setMeta(db, 'demoApiKey', demoKey);
    seedUsers(db, now, [
      {
        userName: DEMO_USER,
        apiKey: demoKey,
        email: 'demo@example.com',
        firstName: 'Demo',
        lastName: 'Trader',
        accounts: [
          { name: DEMO_ACCOUNT, template: '50K', leader: true },
          { name: 'DEMO-FOLLOWER', template: '50K', follower: true },
          { name: 'DEMO-LIVE', template: 'PRACTICE', live: true },
          ...(options.demoAccounts ?? []),
        ],
      },
      ...(options.users ?? []),
    ]);
    const demoAccount = db.prepare('SELECT id FROM accounts WHERE name = ?').get(DEMO_ACCOUNT) as { id: number };

    const engine = new SimEngine(db, clock, new SimContracts(calendar, clock, exchangeHours), markets, logger, {
      tradingDay: new TradingCalendar(options.tradingDay),
      seed,
      ...(options.pending ? { pending: options.pending } : {}),
    });
    engine.step(clock.now());
    return {
      engine,
      admin: new SimAdmin(engine),
      db,
      adminKey,
      demo: { userName: DEMO_USER, apiKey: demoKey, accountId: demoAccount.id, accountName: DEMO_ACCOUNT },
      close: () => db.close(),
    };
  } catch (error) {
    db.close();
    throw error;
  }
}

function hoursOf(exchange: ExchangeCalendar, spec: RootSpec): MarketHours {
  return {
    isOpen: (t) => exchange.isOpen(spec.root, t),
    closedAt: (t) => {
      const state = exchange.sessionAt(spec.root, t);
      return state.open ? t : state.closedAt;
    },
  };
}

export async function startSimulator(options: SimulatorOptions = {}): Promise<SimHandle> {
  const logger = options.logger ?? silentLogger;
  const core = openSimulator(options);
  const { engine, admin, adminKey } = core;
  const clock = engine.clock;
  try {
    const rateLimits: RateLimits = {
      bars: { ...DEFAULT_RATE_LIMITS.bars, ...options.rateLimits?.bars } as RateBudget,
      default: { ...DEFAULT_RATE_LIMITS.default, ...options.rateLimits?.default } as RateBudget,
    };
    const userHub = new UserHub(engine);
    const marketHub = new MarketHub(
      engine,
      options.realtime?.quotesPerSecond === undefined ? {} : { quotesPerSecond: options.realtime.quotesPerSecond },
    );
    const publish = (): void => {
      for (const hub of [userHub, marketHub]) {
        try {
          hub.publish();
        } catch (error) {
          logger.error({ err: error }, 'realtime hub publish failed');
        }
      }
    };
    const app = buildServer({
      engine,
      admin,
      adminKey,
      rateLimits,
      logger,
      onChange: publish,
      ...(options.rateClock === 'market' ? { wallClock: () => clock.now() } : {}),
    });
    const hubs = new HubHost({
      server: app.server,
      hubs: [userHub.definition as HubDefinition<unknown>, marketHub.definition as HubDefinition<unknown>],
      logger,
      ...(options.realtime?.maxBufferedBytes === undefined
        ? {}
        : { maxBufferedBytes: options.realtime.maxBufferedBytes }),
      ...(options.realtime?.authCheckMs === undefined ? {} : { authCheckMs: options.realtime.authCheckMs }),
    });
    userHub.attach(hubs);
    marketHub.attach(hubs);
    await app.listen({ port: options.port ?? 0, host: options.host ?? '127.0.0.1' });
    const address = app.server.address() as AddressInfo;
    const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
    const baseUrl = `http://${host}:${address.port}`;

    const timer =
      clock.mode === 'manual'
        ? undefined
        : setInterval(() => {
            try {
              engine.step(clock.now());
            } catch (error) {
              logger.error({ err: error }, 'simulator market step failed');
            }
            publish();
          }, options.tickMs ?? 250);
    timer?.unref();

    let closed = false;
    logger.info({ tradingUrl: baseUrl, adminUrl: baseUrl + ADMIN_PREFIX }, 'simulator listening');
    return {
      tradingUrl: baseUrl,
      realtimeUrl: baseUrl,
      adminUrl: baseUrl + ADMIN_PREFIX,
      adminHeaders: { authorization: `Bearer ${adminKey}` },
      demo: core.demo,
      clock: {
        now: () => clock.now(),
        advance(ms: number) {
          clock.advance(ms);
          engine.step(clock.now());
          publish();
        },
      },
      quote: (contractId) => quoteOf(engine, contractId),
      hubConnections: () => ({ user: hubs.connectionCount(USER_HUB), market: hubs.connectionCount(MARKET_HUB) }),
      maximumLossVariant: (accountId) => templateMllVariant(core.db, accountId),
      async close() {
        if (closed) return;
        closed = true;
        if (timer) clearInterval(timer);
        marketHub.close();
        await hubs.close();
        await app.close();
        core.close();
      },
    };
  } catch (error) {
    core.close();
    throw error;
  }
}

function loadReplay(calendar: ContractCalendar, source: { path: string; contractId?: string }) {
  const named = source.contractId === undefined ? undefined : calendar.resolve(source.contractId, Date.now());
  if (source.contractId !== undefined && !named)
    throw new RangeError(`market.contractId ${source.contractId} is not a contract of a known root`);
  const spec = named?.spec ?? (calendar.root('ES') as RootSpec);
  // The backtest's reader: one CSV format (and one set of file/line/column errors) for both. Its contract
  // month segments are not used: the replay stands for every month of the root.
  const { bars } = readCsvBars(source.path, calendar.grid(spec));
  const file = { bars, stepMs: smallestStep(bars.time) };
  // Start in the middle of the file, so there is history to ask for and a market to trade.
  const defaultStart = bars.time[Math.floor(bars.time.length / 2)] as number;
  return { root: spec.root, file, defaultStart };
}

/** The fill rules of one root's market: the options given, with the defaults of a synthetic or a replayed market. */
function touchFills(
  options: SimFillOptions | undefined,
  book: BookModel,
  spec: RootSpec,
  replayed: boolean,
): TouchFills {
  const spread =
    options?.spread ??
    (replayed ? { type: 'fixed' as const, ticks: 1 } : syntheticSpreadModel(spec.startPrice, spec.tickSize));
  return { spread, book, partialFills: options?.partialFills ?? true, queue: options?.queue ?? false };
}

function quoteOf(engine: SimEngine, contractId: string): SimQuote | undefined {
  const contract = engine.contracts.byId(contractId);
  const market = engine.market(contractId);
  const now = engine.clock.now();
  const quote = engine.quote(contractId, now);
  const last = engine.lastPrice(contractId, now);
  if (!contract || !market || !quote || last === undefined) return undefined;
  const price = (ticks: number) => contract.grid.toPrice(ticks);
  const depth = depthOf(quote, market.fills.book.levels);
  const levels = (side: { price: number; size: number }[]) =>
    side.map((l) => ({ price: price(l.price), size: l.size }));
  return {
    bid: price(quote.bid),
    ask: price(quote.ask),
    bidSize: quote.bidSize,
    askSize: quote.askSize,
    last: price(last),
    bids: levels(depth.bids),
    asks: levels(depth.asks),
  };
}

/** The bar length of a replayed file: the smallest spacing between consecutive bars (gaps are closed market). */
function smallestStep(times: Float64Array): number {
  let step = Number.POSITIVE_INFINITY;
  for (let i = 1; i < times.length; i++) step = Math.min(step, (times[i] as number) - (times[i - 1] as number));
  return Number.isFinite(step) ? step : 60_000;
}

function seedTemplates(db: Db, templates: SimTemplateOptions[]): void {
  db.transaction(() => {
    for (const t of templates) {
      const existing = db.prepare('SELECT id FROM templates WHERE name = ?').get(t.name) as { id: number } | undefined;
      if (existing) continue;
      const startingBalance = t.startingBalance ?? 50_000;
      const info = db
        .prepare(
          'INSERT INTO templates (name, title, description, starting_balance, margin, tag) VALUES (?, ?, ?, ?, ?, ?)',
        )
        .run(t.name, t.title ?? t.name, t.description ?? '', startingBalance, t.margin ?? startingBalance, t.tag ?? 0);
      const templateId = Number(info.lastInsertRowid);
      const rule = db.prepare(
        'INSERT INTO rules (template_id, kind, amount, violation_duration, maximum_source, minimum_source) VALUES (?, ?, ?, ?, ?, ?)',
      );
      if (t.dailyLossLimit)
        rule.run(templateId, 'dailyLossLimit', t.dailyLossLimit.limit, t.dailyLossLimit.duration ?? 2, 0, null);
      if (t.maximumLossLimit) {
        const { limit, duration, maximumSource, minimumSource } = t.maximumLossLimit;
        rule.run(templateId, 'maximumLossLimit', limit, duration ?? 1, maximumSource ?? 0, minimumSource ?? null);
      }
      checkTemplateRules(
        t.name,
        startingBalance,
        db.prepare('SELECT * FROM rules WHERE template_id = ?').all(templateId) as RuleRow[],
      );
    }
  })();
}

/** The maximum loss limit variant of an account's template, undefined without one (or without the account). */
function templateMllVariant(db: Db, accountId: number): MllVariant | undefined {
  const rule = db
    .prepare(
      "SELECT r.* FROM rules r JOIN accounts a ON a.template_id = r.template_id WHERE a.id = ? AND r.kind = 'maximumLossLimit'",
    )
    .get(accountId) as RuleRow | undefined;
  return rule === undefined ? undefined : mllVariant(rule.maximum_source, rule.minimum_source);
}

/** A template's rules must make an engine rule book (positive amounts, a known variant): refused at creation, not at the first fill. */
function checkTemplateRules(name: string, startingBalance: number, rules: RuleRow[]): void {
  try {
    accountRuleBook(startingBalance, rules);
  } catch (error) {
    if (error instanceof SimRuleError) throw new SimRuleError(`template ${name}: ${error.message}`);
    if (error instanceof z.ZodError)
      throw new SimRuleError(
        `template ${name}: ${error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
      );
    throw error;
  }
}

/** Users and their accounts from options or config: created once, their login settings refreshed on each start. */
function seedUsers(db: Db, now: number, users: SimUserOptions[]): void {
  db.transaction(() => {
    for (const u of users) {
      const settings = [
        u.apiKey,
        u.agreementsSigned === false ? 0 : 1,
        u.subscriptionActive === false ? 0 : 1,
        u.apiKeyLoginEnabled === false ? 0 : 1,
      ];
      const existing = db.prepare('SELECT id FROM users WHERE user_name = ?').get(u.userName) as
        | { id: number }
        | undefined;
      let userId: number;
      if (existing) {
        userId = existing.id;
        db.prepare(
          'UPDATE users SET api_key = ?, agreements_signed = ?, subscription_active = ?, api_key_login_enabled = ? WHERE id = ?',
        ).run(...settings, userId);
      } else {
        const info = db
          .prepare(
            `INSERT INTO users (user_name, email, first_name, last_name, api_key, agreements_signed, subscription_active, api_key_login_enabled, created_at)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
          )
          .run(
            u.userName,
            u.email ?? `${u.userName.toLowerCase()}@example.com`,
            u.firstName ?? '',
            u.lastName ?? '',
            ...settings,
            now,
          );
        userId = Number(info.lastInsertRowid);
      }
      for (const a of u.accounts ?? []) {
        if (db.prepare('SELECT 1 FROM accounts WHERE name = ?').get(a.name)) continue;
        const template = db
          .prepare('SELECT id, starting_balance, margin FROM templates WHERE name = ?')
          .get(a.template ?? '50K') as { id: number; starting_balance: number; margin: number } | undefined;
        if (!template) throw new RangeError(`account ${a.name}: no template named ${a.template}`);
        db.prepare(
          `INSERT INTO accounts (user_id, name, template_id, starting_balance, margin, simulated, is_leader, is_follower, active,
             personal_daily_loss_limit, personal_daily_profit_target, pending_places, pending_cancels, created_at, updated_at)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        ).run(
          userId,
          a.name,
          template.id,
          template.starting_balance,
          template.margin,
          a.live ? 0 : 1,
          a.leader ? 1 : 0,
          a.follower ? 1 : 0,
          a.active === false ? 0 : 1,
          a.personalDailyLossLimit ?? null,
          a.personalDailyProfitTarget ?? null,
          a.pendingPlaces ?? 0,
          a.pendingCancels ?? 0,
          now,
          now,
        );
      }
    }
  })();
}
