/**
 * A paper or live trading session: the gateway client, the journal, the executor (`Venue`), the poller
 * (`MarketData`), the engine, start-up reconciliation, the kill switch and the status line, wired in
 * the one order that keeps the journal authoritative:
 *
 * 1. log in, find the account and the contracts;
 * 2. open the journal (bound to one account) and reconcile it with the gateway before sending anything;
 * 3. start the engine with its id sequences restored, and replay the journal's fills and live orders
 *    into it so its positions and book match what was traded before a restart;
 * 4. poll; each closed bar goes to the engine, whose accepted intents reach the executor.
 */
import { map, Subject, switchMap, type Subscription } from 'rxjs';
import { AdminClient } from '../gateway/admin-client.ts';
import { TradingClient, type TradingClientOptions } from '../gateway/trading.ts';
import type * as S from '../../protocol/schemas.ts';
import type { Logger } from '../../engine/log.ts';
import { PriceGrid } from '../../engine/ticks.ts';
import {
  createEngine,
  failureError,
  RISK_STRATEGY_ID,
  type Engine,
  type PassLockOptions,
  type StrategyFailure,
} from '../../engine/runner.ts';
import { Accounting } from '../../engine/accounting.ts';
import { parseParams, warmupBars, type StrategyError, type StrategyModule } from '../../engine/strategy.ts';
import type { AccountConfig, MllVariant } from '../../engine/account-rules.ts';
import { contractMarketHours, contractMarketOpen } from '../../market/contract-hours.ts';
import type { BarChunk, ContractSpec, Timeframe } from '../../engine/types.ts';
import type { LiveConfig, Credentials } from './live-config.ts';
import { LiveExecutor, journaledUpdate } from './executor.ts';
import type { FlattenResult, KillSource } from './kill-switch.ts';
import { Journal } from './journal.ts';
import {
  disagreementText,
  gatewayLimits,
  limitDisagreements,
  resolveLimits,
  restoreFromGateway,
  type GatewayLimits,
  type LimitDisagreement,
} from './limits.ts';
import { historyBefore, Poller, type PollClient } from './poller.ts';
import type { SharedConnections } from './shared-connections.ts';
import { nominalMs } from '../../engine/timeframe.ts';
import { sameTimeframe } from '../../engine/resample.ts';
import { assertPlan, type BarSubscription, type PollIntervals } from './rate-plan.ts';
import { reconcileOnStart, type ReconcileReport } from './reconcile.ts';
import { RealtimeFeed } from './realtime-feed.ts';
import { MarketHubClient, UserHubClient } from '../gateway/realtime.ts';
import { MarketFeed } from './market-feed.ts';
import {
  ContractRoutes,
  expiryInstant,
  followedSymbol,
  FrontMonthFollower,
  frontMonthOf,
  routedVenue,
  type MonthEvent,
} from './month-follower.ts';
import { renderStatus, type StatusInput } from './status.ts';
import { TicklineError } from '../../engine/errors.ts';

export interface SessionOptions {
  readonly config: LiveConfig;
  readonly mode: 'paper' | 'live';
  readonly tradingUrl: string;
  /** Base URL of the realtime hubs; without it the session polls only. */
  readonly realtimeUrl?: string;
  readonly credentials: Credentials;
  readonly admin?: { readonly url: string; readonly headers: Record<string, string> };
  readonly strategy: StrategyModule;
  readonly logger: Logger;
  /** The gateway's clock and its speed relative to the wall clock (the simulator may run accelerated). */
  readonly now?: () => number;
  readonly speed?: number;
  /** Where the status line goes (only when it is a TTY). */
  readonly statusStream?: NodeJS.WriteStream;
  /** Transport settings for tests (short timeouts, fast retries). */
  readonly client?: Partial<Pick<TradingClientOptions, 'timeoutMs' | 'retry' | 'sleep'>>;
  /**
   * Account rule limits for the engine's guard (the config's `limits`): they override the gateway's
   * (`TradingAccount/find`, when `admin` is set), which fill what they leave out. The starting balance
   * defaults to the account's balance less the journal's net PnL.
   */
  readonly account?: Partial<AccountConfig>;
  /**
   * The maximum loss limit variant of an account's template where the gateway can tell it (paper on the
   * local simulator: its template's, rule-templates.ts); the administration record does not state it, and
   * without it the guard assumes `trailingEndOfDay` for a limit the config does not set.
   */
  readonly maximumLossVariant?: (accountId: number) => MllVariant | undefined;
  /** The evaluation's pass-lock (the config's `evaluation.passLock` with the evaluation's pass conditions). */
  readonly passLock?: PassLockOptions;
  /**
   * The bots this session's account runs (a trading node): each a strategy instance with its own id, contracts,
   * timeframe and size multiplier, in one engine whose guard checks the account's netted exposure. One bot
   * made of `config.strategy`, `strategy`, `config.contracts` and `config.timeframe` by default. The config's
   * `contracts` must hold every bot's, and its `timeframe` is the engine's base (the finest of the bots').
   */
  readonly bots?: readonly SessionBot[];
  /**
   * The user's login, hubs, bar requests and read budget, shared with the other sessions of a trading node:
   * the session neither logs in again nor closes them, and the node checks the whole poll plan.
   */
  readonly shared?: SharedConnections;
}

/** One strategy instance of a session (a bot of a trading node on this account). */
export interface SessionBot {
  readonly strategy: StrategyModule;
  /** The customTag prefix of its orders. */
  readonly id: string;
  readonly params: Record<string, unknown>;
  /** As configured: pinned months, or roots and symbol ids that follow the front month. */
  readonly contracts: readonly string[];
  readonly timeframe: Timeframe;
  /** Every order and target of the bot is this many times its strategy's (a copy on a larger account). */
  readonly size: number;
}

export class SessionError extends TicklineError {
  override readonly name = 'SessionError';
  // An account, journal or contract the config names that the gateway or the journal does not match.
  readonly kind = 'config';
  constructor(
    readonly code: 'ACCOUNT_NOT_FOUND' | 'ACCOUNT_KIND' | 'JOURNAL_ACCOUNT' | 'CONTRACT',
    message: string,
  ) {
    super(message);
  }
}

export class LiveSession {
  readonly finished: Promise<void>;
  private finish!: () => void;
  private readonly subscriptions: Subscription[] = [];
  private statusTimer: NodeJS.Timeout | undefined;
  private clockTimer: NodeJS.Timeout | undefined;
  private closedBars = 0;
  private stopping: Promise<void> | undefined;
  private lastAccount: S.Account | undefined;
  private admin: AdminClient | undefined;
  private positions: readonly S.Position[] = [];
  /** The contracts traded, as the gateway describes them (tick grids for prices in messages). */
  contracts: ReadonlyMap<string, ContractSpec> = new Map();
  private visibilityReason: string | undefined;

  private constructor(
    readonly options: SessionOptions,
    readonly client: TradingClient,
    readonly journal: Journal,
    readonly executor: LiveExecutor,
    readonly poller: Poller,
    readonly engine: Engine,
    readonly account: S.Account,
    readonly reconcile: ReconcileReport,
  ) {
    this.finished = new Promise((resolve) => (this.finish = resolve));
  }

  static async start(options: SessionOptions): Promise<LiveSession> {
    const now = options.now ?? Date.now;
    // A root or symbol id (`ES`, `F.US.EP`) is followed: the engine trades the symbol, the gateway its month.
    const o: SessionOptions = {
      ...options,
      config: { ...options.config, contracts: options.config.contracts.map((c) => followedSymbol(c) ?? c) },
    };
    const { config, logger } = o;
    const bots: SessionBot[] = (
      options.bots ?? [
        {
          strategy: options.strategy,
          id: config.strategy.id,
          params: config.strategy.params,
          contracts: config.contracts,
          timeframe: config.timeframe,
          size: 1,
        },
      ]
    ).map((bot) => ({ ...bot, contracts: bot.contracts.map((c) => followedSymbol(c) ?? c) }));
    const shared = o.shared;
    const routes = new ContractRoutes(
      config.contracts
        .filter((c) => followedSymbol(c) === c)
        .map((c) => [c, frontMonthOf(c, now(), config.roll.daysBeforeExpiry).id] as const),
    );
    const client =
      shared?.client ??
      new TradingClient({
        baseUrl: o.tradingUrl,
        userName: o.credentials.userName,
        apiKey: o.credentials.apiKey,
        logger,
        timeoutMs: config.gateway.timeoutMs,
        now,
        // A read waits out at most 10 s of Retry-After: the poller would rather skip a round than stall.
        retry: { maxAttempts: 3, maxRetryAfterMs: 10_000 },
        ...(o.client ?? {}),
      });
    let journal: Journal | undefined;
    let admin: AdminClient | undefined;
    try {
      // What the config alone decides is refused before anything is asked of the gateway.
      // Each bot's warm-up in bars of the session's base timeframe (a 5-minute bot's 20 bars are 100 1-minute ones).
      const warmup = Math.max(
        0,
        ...bots.map(
          (bot) =>
            warmupBars(bot.strategy, parseParams(bot.strategy, bot.params)) *
            Math.max(1, Math.round(nominalMs(bot.timeframe) / nominalMs(config.timeframe))),
        ),
      );
      // A node checks the plan of all its sessions together before any starts.
      if (shared === undefined) assertPlan(subscriptionsOf(config), pollIntervalsOf(config));
      journal = Journal.open(config.journal, { now });
      // A position the journal holds in an earlier month of a followed symbol (the bot was down at a roll)
      // starts the session on that month, so the first poll round rolls it like any other.
      for (const [contractId, size] of journal.positionsFromFills()) {
        const symbolId = routes.logical(contractId);
        const expiresAt = expiryInstant(contractId);
        if (size === 0 || symbolId === contractId || routes.route(symbolId) === contractId) continue;
        if (expiresAt !== undefined && now() < expiresAt) routes.move(symbolId, contractId);
      }
      // The node logged in once for all its sessions: its held token is reused.
      await (shared === undefined ? client.login() : client.token());
      const account = await findAccount(client, config, o.mode);
      const contracts = await loadContracts(client, config.contracts, routes);
      const boundTo = journal.getMeta('accountId');
      if (boundTo !== undefined && Number(boundTo) !== account.id) {
        throw new SessionError(
          'JOURNAL_ACCOUNT',
          `journal ${config.journal} belongs to account ${boundTo}, not ${account.id} (${account.name}); use another journal file`,
        );
      }
      journal.setMeta('accountId', String(account.id));
      journal.record('session', 'before', null, {
        mode: o.mode,
        account: account.name,
        strategy: config.strategy.name,
        id: config.strategy.id,
        ...(options.bots === undefined ? {} : { bots: bots.map((b) => ({ id: b.id, size: b.size })) }),
      });

      // One answer to "is this month's market open" for the executor and the quote watchdog: the exchange's
      // hours, or always open for a gateway whose market never closes (`market.hours: none`).
      const marketOpen = config.market.hours === 'exchange' ? contractMarketOpen() : () => true;
      const executor = new LiveExecutor({
        client,
        journal,
        accountId: account.id,
        contracts,
        logger: logger.child({ part: 'executor' }),
        now,
        speed: o.speed ?? 1,
        unknownOutcomeMs: config.execution.unknownOutcomeMs,
        ...(config.market.hours === 'exchange' ? { marketOpen } : {}),
      });
      // The engine's own orders (kill switch, flat-by, breach flatten) carry this bot's id too, so two bots
      // on one account never reuse each other's customTags.
      const riskStrategyId = `${config.strategy.id}-${RISK_STRATEGY_ID}`;
      const strategyIds = [...bots.map((b) => b.id), riskStrategyId];
      const report = await reconcileOnStart({
        client,
        journal,
        executor,
        accountId: account.id,
        strategyIds,
        now,
        logger,
      });

      let adminAccount: S.TradingAccount | undefined;
      admin = o.admin ? new AdminClient({ baseUrl: o.admin.url, headers: o.admin.headers, logger, now }) : undefined;
      if (admin) {
        try {
          adminAccount = await admin.findTradingAccount(account.name);
        } catch (error) {
          logger.warn(
            { endpoint: 'TradingAccount/find', err: error },
            'account limits unavailable from the gateway; using the configured ones only',
          );
        }
      }
      const fromGateway = adminAccount === undefined ? undefined : gatewayLimits(adminAccount);
      const variant = o.maximumLossVariant?.(account.id);
      const limits = resolveLimits(o.account ?? {}, fromGateway, variant);
      logger.info({ limits: limits.account, sources: limits.sources }, 'account limits for the risk guard');
      const accountConfig: AccountConfig = {
        ...limits.account,
        // The journal's fills are replayed into the engine below; starting from the balance before them
        // makes the engine's balance equal the gateway's after the replay (no PnL counted twice).
        startingBalance: o.account?.startingBalance ?? account.balance - journalNet(journal, contracts, routes),
      };

      const market =
        o.realtimeUrl !== undefined && config.gateway.realtime
          ? new MarketFeed({
              hub:
                shared?.marketHub ??
                new MarketHubClient({
                  url: o.realtimeUrl,
                  token: () => client.token(),
                  logger: logger.child({ part: 'market-hub' }),
                }),
              contracts,
              logger: logger.child({ part: 'market-hub' }),
              route: (id) => routes.route(id),
              now,
              speed: o.speed ?? 1,
              quoteSilenceMs: config.gateway.quoteSilenceMs,
              isOpen: marketOpen,
              onSilence: (event) => journal?.record('market-hub', 'event', null, event),
              onState: (state) => journal?.record('market-realtime', 'event', null, { state }),
            })
          : undefined;
      const engine = createEngine({
        strategies: bots.map((bot) => ({
          strategy: bot.strategy,
          params: bot.params,
          id: bot.id,
          contracts: bot.contracts,
          ...(sameTimeframe(bot.timeframe, config.timeframe) ? {} : { timeframe: bot.timeframe }),
          ...(bot.size === 1 ? {} : { size: bot.size }),
        })),
        contracts: config.contracts.map((id) => contracts.get(id)!),
        venue: routedVenue(executor, routes),
        risk: config.risk,
        account: accountConfig,
        logger: logger.child({ part: 'engine' }),
        sequenceStart: report.sequenceStart,
        riskStrategyId,
        clock: now,
        // The exchange's hours of each contract's root (today's week beyond the holiday data, as the simulator).
        // The engine's contracts only: a followed symbol's months are the adapter's, not the engine's.
        ...(config.market.hours === 'exchange'
          ? {
              marketHours: contractMarketHours(
                config.contracts.map((id) => contracts.get(id)!),
                { beyondCoverage: 'weeklyHours' },
              ),
            }
          : {}),
        // A failing strategy is the session's to handle (flatten or hold, then stop), never a crash.
        onStrategyError: 'log',
        ...(o.passLock === undefined ? {} : { passLock: o.passLock }),
        ...(market === undefined
          ? {}
          : {
              // A followed symbol's streams move to the new month at a roll, under the symbol's id.
              quotes: (id: string) =>
                routes.changes(id).pipe(
                  switchMap((month) => market.quotes(month)),
                  map((q) => (q.contractId === id ? q : { ...q, contractId: id })),
                ),
              marketTrades: (id: string) =>
                routes.changes(id).pipe(
                  switchMap((month) => market.marketTrades(month)),
                  map((t) => (t.contractId === id ? t : { ...t, contractId: id })),
                ),
              lastPrice: (id: string) => market.lastPrice(id),
            }),
      });

      // The poller reports to the session, which exists only once the poller does.
      const hooks: { session?: LiveSession } = {};
      const poller = new Poller({
        client: shared === undefined ? client : sharedPollClient(client, shared),
        ...(shared === undefined ? {} : { budget: shared.budget }),
        executor,
        journal,
        venueEvents: executor.events,
        accountId: account.id,
        contracts,
        intervals: pollIntervalsOf(config),
        subscriptions: subscriptionsOf(config),
        logger: logger.child({ part: 'poller' }),
        now,
        speed: o.speed ?? 1,
        liveData: config.gateway.liveData,
        closeDelayMs: config.poll.closeDelayMs,
        realtimePollMs: config.poll.realtimeMs,
        ...(config.poll.staleAfterMs === undefined ? {} : { staleAfterMs: config.poll.staleAfterMs }),
        ...(admin ? { admin: { client: admin, accountName: account.name, everyMs: config.gateway.adminEveryMs } } : {}),
        onVisibility: (reason) => hooks.session?.onVisibility(reason),
        onPositions: (positions) => {
          if (hooks.session) hooks.session.positions = positions;
        },
        onAccount: (a) => {
          if (hooks.session) hooks.session.lastAccount = a;
        },
        onTradingAccount: (t) => hooks.session?.onTradingAccount(t),
        route: (id) => routes.route(id),
        onRound: async () => hooks.session?.onRound(),
        onTrades: (trades) => hooks.session?.realtime?.notePolledTrades(trades),
      });
      const session = new LiveSession(o, client, journal, executor, poller, engine, account, report);
      session.market = market;
      if (o.realtimeUrl !== undefined && config.gateway.realtime) {
        const hubLogger = logger.child({ part: 'realtime' });
        session.realtime = new RealtimeFeed({
          hub:
            shared?.userHub ??
            new UserHubClient({ url: o.realtimeUrl, token: () => client.token(), logger: hubLogger }),
          poller,
          executor,
          journal,
          accountId: account.id,
          logger: hubLogger,
          now,
          silenceMs: config.gateway.userSilenceMs,
        });
      }
      session.admin = admin;
      session.contracts = contracts;
      session.routes = routes;
      session.riskStrategyId = riskStrategyId;
      session.bots = bots;
      session.warmup = warmup;
      session.follower = new FrontMonthFollower(
        routes,
        config.contracts.filter((c) => followedSymbol(c) === undefined),
        config.roll,
      );
      for (const symbolId of routes.symbols())
        logger.info({ symbolId, contractId: routes.route(symbolId) }, 'following the front month');
      hooks.session = session;
      session.wire(report);
      if (warmup > 0) await session.warmUp(warmup);
      if (fromGateway !== undefined && adminAccount !== undefined) {
        // After the journal's replay and before the first bar: the floors start where the gateway's are.
        engine.restore(restoreFromGateway(fromGateway, engine.rules.config.maximumLossLimit?.variant));
        session.reportLimitDisagreements(limitDisagreements(engine.rules, fromGateway));
        session.noteTradingAccount(adminAccount, fromGateway);
      }
      return session;
    } catch (error) {
      journal?.close();
      if (shared === undefined) await client.close();
      await admin?.close();
      throw error;
    }
  }

  private wire(report: ReconcileReport): void {
    const { config, logger } = this.options;
    const { engine, journal, executor } = this;
    this.subscriptions.push(
      engine.intents$.subscribe((i) => journal.record('intent', 'event', i.intent.id ?? null, i)),
      engine.decisions$.subscribe((d) => {
        journal.record(d.result.accepted ? 'risk-accepted' : 'risk-rejected', 'event', d.intent.id ?? null, d);
        if (!d.result.accepted)
          logger.warn(
            { strategy: d.strategyId, intent: d.intent, result: d.result },
            'intent rejected by the risk guard',
          );
      }),
      engine.breaches$.subscribe((b) => journal.record('breach', 'event', null, b)),
      engine.strategyStates$.subscribe((change) => {
        journal.record('strategy-state', 'event', null, change);
        logger.info({ ...change }, change.paused ? 'strategy paused' : 'strategy resumed');
      }),
      engine.passLock$.subscribe((event) => {
        // The journal's fills replayed at a restart engage the lock again: it is journaled (and notified) once.
        if (journal.getMeta('passLock') !== undefined) return;
        journal.setMeta('passLock', new Date(event.time).toISOString());
        journal.record('pass-lock', 'event', null, event);
        this.notices.next(`pass-lock: ${event.message}`);
      }),
      engine.errors$.subscribe((f) => void this.onStrategyFailure(f)),
      engine.tradingState$.subscribe((s) => {
        journal.record('trading-state', 'event', null, s);
        logger.info({ state: s.state, reason: s.reason }, 'trading state');
      }),
    );

    // The engine learns what happened before this start: every journaled fill, then every live order.
    for (const fill of journal.fills()) {
      executor.events.next({
        kind: 'fill',
        fillId: fill.fillId,
        orderId: fill.tag ?? `venue-${fill.venueOrderId}`,
        contractId: fill.contractId,
        side: fill.side,
        size: fill.size,
        price: fill.price,
        fees: fill.fees,
        time: fill.time,
      });
    }
    for (const order of journal.orders({ states: ['submitting', 'unknown', 'working', 'cancelling'] })) {
      executor.events.next(journaledUpdate(order, order.updatedAt));
    }
    // An order the gateway showed filled whose trades have not all arrived yet: its fill counts at once.
    for (const order of journal.orders({ states: ['filled'] })) {
      if (order.filledSize < order.size)
        executor.events.next(journaledUpdate(order, order.updatedAt, undefined, order.size));
    }
    if (report.positionDifferences.length > 0) {
      const text = report.positionDifferences
        .map((d) => `${d.contractId} journal ${d.journal} gateway ${d.gateway}`)
        .join(', ');
      engine.setTradingState('REDUCING', `positions differ from the journal (${text}); flatten or reconcile by hand`);
    }

    for (const contractId of config.contracts) {
      this.subscriptions.push(
        this.poller.bars(contractId, config.timeframe).subscribe((chunk) => {
          try {
            engine.push(chunk);
          } catch (error) {
            // An engine or strategy failure leaves its state in doubt: stop everything but cancels.
            logger.error({ err: error, contractId, time: chunk.time[0] }, 'engine failed on a bar; trading HALTED');
            journal.record('engine-error', 'event', null, {
              message: error instanceof Error ? error.message : String(error),
            });
            engine.setTradingState('HALTED', 'engine failed on a bar');
            return;
          }
          if (chunk.partial) return;
          this.market?.noteBar(contractId);
          this.closedBars++;
          if (
            config.session.maxBars !== undefined &&
            contractId === config.contracts[0] &&
            this.closedBars >= config.session.maxBars
          )
            this.finish();
        }),
      );
    }
    // The clock turns the trading day (17:00 CT) and applies the calendar flat-by between bars (the market
    // may close on a quiet minute, and no bar comes in the daily break): once a second of market time.
    this.clockTimer = setInterval(
      () => {
        try {
          engine.advance();
        } catch (error) {
          logger.error({ err: error }, 'engine clock step failed');
        }
      },
      Math.max(50, Math.round(1_000 / (this.options.speed ?? 1))),
    );
    this.clockTimer.unref();
    const stream = this.options.statusStream;
    if (stream?.isTTY) {
      this.statusTimer = setInterval(() => stream.write(`\r\x1b[2K${renderStatus(this.statusInput())}`), 1_000);
      this.statusTimer.unref();
    }
  }

  /** Set when the session ended because its strategy failed (the command then exits non-zero). */
  failure: StrategyError | undefined;

  /**
   * The strategy threw or its stream failed: it is halted (the engine ignores its intents from now on),
   * the failure is journaled, the configured action runs (flatten by default, or hold the position),
   * and the session ends.
   */
  private async onStrategyFailure(failure: StrategyFailure): Promise<void> {
    if (this.failure !== undefined) return;
    // One of several bots of the account: it stops alone, and the others trade on.
    const bot = this.bots.find((b) => b.id === failure.strategyId);
    const others = this.bots.filter((b) => b.id !== failure.strategyId && !this.botFailures.has(b.id));
    if (bot !== undefined && others.length > 0) return this.onBotFailure(bot, failure);
    const error = failureError(failure);
    this.failure = error;
    const action = this.options.config.execution.onStrategyError;
    this.journal.record('strategy-error', 'event', null, {
      strategyId: failure.strategyId,
      message: error.message,
      action,
    });
    this.options.logger.error(
      { strategy: failure.strategyId, action },
      `${error.message}; ${action === 'flatten' ? 'flattening the account' : 'holding the position'} and stopping`,
    );
    this.engine.setTradingState('HALTED', `strategy ${failure.strategyId} failed`);
    if (action === 'flatten') {
      await this.killSwitch(`strategy ${failure.strategyId} failed`).catch((e: unknown) =>
        this.options.logger.error({ err: e }, 'flatten after the strategy failure failed'),
      );
    }
    this.finish();
  }

  /**
   * Pause or resume one bot: paused, it opens no new risk (its reductions, cancels and flattens pass, its stream
   * keeps running). Journaled (`control`) with who asked.
   */
  setBotPaused(botId: string, paused: boolean, source: Exclude<KillSource, 'session'>): void {
    this.journal.record('control', 'event', null, { action: paused ? 'pause' : 'resume', bot: botId, source });
    this.engine.setStrategyPaused(botId, paused, `${paused ? 'paused' : 'resumed'} by ${source}`);
  }

  /** Bots of a several-bot session that failed and stopped, the others trading on (the command exits non-zero). */
  readonly botFailures = new Map<string, StrategyError>();

  /**
   * A bot of a session that runs several failed: the engine ignores its decisions from now on, the failure is
   * journaled, and the configured action closes its own line only (`flatten`: a flatten of each of its
   * contracts on its behalf, through the guard, which on a shared contract closes its line and cancels its
   * orders alone) or leaves it (`hold`). The account and its other bots go on.
   */
  private async onBotFailure(bot: SessionBot, failure: StrategyFailure): Promise<void> {
    if (this.botFailures.has(bot.id)) return;
    const error = failureError(failure);
    this.botFailures.set(bot.id, error);
    const action = this.options.config.execution.onStrategyError;
    this.journal.record('strategy-error', 'event', null, {
      strategyId: bot.id,
      message: error.message,
      action,
      scope: 'bot',
    });
    this.options.logger.error(
      { strategy: bot.id, action },
      `${error.message}; ${action === 'flatten' ? "closing this bot's own positions" : "holding this bot's positions"}; the account's other bots go on`,
    );
    if (action === 'flatten') {
      for (const contractId of bot.contracts) this.engine.submit(bot.id, { kind: 'flatten', contractId });
      await this.executor.idle();
    }
    this.notices.next(
      `bot ${bot.id} failed (${error.message.split('\n')[0]}): stopped${action === 'flatten' ? ', its own positions closed' : ''}; the other bots go on`,
    );
  }

  /** A failure no strategy could be named for (an error RxJS reports asynchronously) is handled the same way. */
  failUnattributed(error: unknown): void {
    void this.onStrategyFailure({ strategyId: this.options.config.strategy.id, error, barTime: NaN });
  }

  /**
   * The strategy's declared warm-up, from the gateway's history before the session's first live bar, run
   * through the strategy with orders suppressed: its first live decision is made with warm indicators.
   */
  private async warmUp(bars: number): Promise<void> {
    for (const contractId of this.options.config.contracts)
      await this.warmUpContract(contractId, bars, this.poller.startedAt);
  }

  /** One contract's warm-up (a followed symbol's from its current month's history, under the symbol's id). */
  private async warmUpContract(contractId: string, bars: number, before: number): Promise<void> {
    const { config, logger } = this.options;
    const month = this.routes.route(contractId);
    const spec = this.contracts.get(month)!;
    let chunk: BarChunk | undefined;
    try {
      chunk = await historyBefore(this.client, spec, config.timeframe, before, bars, config.gateway.liveData);
    } catch (error) {
      logger.warn(
        { contractId, bars, err: error },
        'warm-up history unavailable; the strategy starts cold (its warm-up bars are live ones)',
      );
      return;
    }
    if (chunk === undefined) {
      logger.warn({ contractId, bars }, 'warm-up: no history before the session; the strategy starts cold');
      return;
    }
    if (month !== contractId) chunk = { ...chunk, contractId };
    this.engine.warmUp(chunk);
    const range = {
      from: new Date(chunk.time[0]!).toISOString(),
      to: new Date(chunk.time[chunk.length - 1]!).toISOString(),
    };
    const of = month === contractId ? {} : { month };
    this.journal.record('warm-up', 'event', null, { contractId, ...of, bars: chunk.length, wanted: bars, ...range });
    logger.info(
      { contractId, ...of, bars: chunk.length, wanted: bars, ...range },
      'warm-up: history run through the strategy, orders suppressed',
    );
  }

  /** The bots (strategy instances) this session runs, in the config's order, their contracts as the engine's. */
  bots: readonly SessionBot[] = [];

  /** The ids of the bots this session runs. */
  get botIds(): readonly string[] {
    return this.bots.map((b) => b.id);
  }

  /** The month each followed symbol trades now. */
  routes = new ContractRoutes([]);
  private follower: FrontMonthFollower | undefined;
  private riskStrategyId = RISK_STRATEGY_ID;
  private warmup = 0;
  private monthWork: Promise<void> | undefined;
  /** Set when the session ended because a pinned month was about to expire (the command's exit code says so). */
  expired: { readonly contractId: string; readonly expiresAt: number } | undefined;
  /** One readable line per roll or expiry, for the operator (the CLI prints them). */
  readonly notices = new Subject<string>();

  /** After each poll round: a roll or a pinned month's expiry that became due is handled before the next round. */
  private async onRound(): Promise<void> {
    if (this.follower === undefined || this.stopping !== undefined || this.monthWork !== undefined) return;
    if (this.expired !== undefined || this.failure !== undefined) return;
    const now = this.options.now ?? Date.now;
    const events = this.follower.due(now());
    if (events.length === 0) return;
    this.monthWork = (async () => {
      for (const event of events) {
        if (event.kind === 'roll') await this.roll(event);
        else await this.expire(event);
      }
    })().finally(() => {
      this.monthWork = undefined;
    });
    await this.monthWork;
  }

  /**
   * The front month of a followed symbol moved: the old month's open orders are cancelled and its
   * position closed at the gateway (the kill switch's way, for that month only), bars, quotes and subscriptions move
   * to the new month, the strategy is warmed up on its history, and in `roll` mode the same position is
   * opened in the new month. Journaled (`roll`) and told in one line.
   */
  private async roll(event: Extract<MonthEvent, { kind: 'roll' }>): Promise<void> {
    const { config, logger } = this.options;
    const now = this.options.now ?? Date.now;
    const { symbolId, from, to } = event;
    const mode = config.roll.mode;
    const position = this.engine.accounting.position(symbolId);
    const working = this.engine.openOrders().filter((o) => o.contractId === symbolId).length;
    // The protective legs the position was opened with (the last filled entry with a bracket, on its side) go
    // with it into the new month; other resting orders are cancelled, and the strategy places them again.
    const side = position > 0 ? 'buy' : 'sell';
    const bracket = this.journal
      .orders({ states: ['filled'] })
      .filter((o) => o.contractId === from && o.side === side && o.bracket !== undefined)
      .at(-1)?.bracket;
    this.journal.record('roll', 'before', null, { symbolId, from, to, position, working, mode });
    let closed = true;
    if (position !== 0 || working > 0) {
      // The old month only, as the kill switch does (without halting): the bot's working orders cancelled
      // through the state table, every other open order there (a bracket's legs) cancelled, the position
      // closed at the gateway; the engine learns the cancels and the closing fill from the polls.
      const result = await this.executor
        .flatten(from)
        .catch((error: unknown) => logger.error({ err: error, from }, 'roll: closing the old month failed'));
      if (result !== undefined && !result.flat)
        logger.error({ from, ...result }, 'roll: the old month is not flat at the gateway');
      closed = (result?.flat ?? false) && (await this.settled(symbolId));
    }
    const spec = await this.client.contractById(to).catch((error: unknown) => {
      logger.error({ err: error, symbolId, to }, 'roll: the new month cannot be read; staying on the old one');
      return undefined;
    });
    if (spec === undefined) return;
    (this.contracts as Map<string, ContractSpec>).set(to, {
      id: spec.id,
      name: spec.name,
      symbolId: spec.symbolId,
      description: spec.description,
      grid: new PriceGrid(spec.tickSize, spec.tickValue),
    });
    this.routes.move(symbolId, to);
    this.market?.follow(from, to);
    if (this.warmup > 0) {
      try {
        await this.warmUpContract(symbolId, this.warmup, now());
      } catch (error) {
        logger.warn({ err: error, symbolId, to }, 'roll: warm-up on the new month failed; the strategy goes on');
      }
    }
    const reopen = mode === 'roll' && position !== 0 && closed;
    if (reopen) {
      this.engine.submit(this.riskStrategyId, {
        kind: 'place',
        contractId: symbolId,
        side,
        size: Math.abs(position),
        order: { type: 'market' },
        ...(bracket === undefined ? {} : { bracket }),
      });
      await this.executor.idle();
    }
    const action = position === 0 ? 'flat' : !closed ? 'not closed' : reopen ? 'rolled' : 'flattened';
    const record = {
      symbolId,
      from,
      to,
      position,
      mode,
      action,
      ...(reopen && bracket !== undefined ? { bracket } : {}),
      time: new Date(now()).toISOString(),
    };
    this.journal.record('roll', 'after', null, record);
    logger.info(record, 'contract roll');
    const name = (id: string): string => this.contracts.get(id)?.name ?? id;
    const held = position === 0 ? 'flat' : `position ${position > 0 ? '+' : ''}${position}`;
    const what =
      action === 'rolled'
        ? `${held} closed in ${name(from)} and opened in ${name(to)}${record.bracket ? ' with its protective legs' : ''}`
        : action === 'flattened'
          ? `${held} closed in ${name(from)} (roll.mode flatten)`
          : action === 'flat'
            ? 'no position to move'
            : `${held} NOT closed in ${name(from)} in time; nothing opened in ${name(to)}: check the account`;
    this.notices.next(`roll ${symbolId}: ${name(from)} -> ${name(to)} at ${record.time}: ${what}`);
  }

  /** Waits (poll rounds, bounded) until the engine holds nothing and works no order in `contractId`. */
  private async settled(contractId: string): Promise<boolean> {
    const flat = (): boolean =>
      this.engine.accounting.position(contractId) === 0 &&
      this.engine.openOrders().every((o) => o.contractId !== contractId);
    for (let round = 0; round < 10 && !flat(); round++) {
      await this.executor.idle();
      if (flat()) break;
      await this.poller
        .refreshAccountState()
        .catch((error: unknown) => this.options.logger.warn({ err: error }, 'roll: refresh failed'));
      await this.executor.idle();
      if (!flat()) await new Promise((resolve) => setTimeout(resolve, 50 * (round + 1)));
    }
    return flat();
  }

  /**
   * A pinned month is about to expire: its position is flattened (the whole account, through the kill
   * switch, which HALTS the engine: no order reaches the month afterwards), the session says so in one
   * line and ends (the command exits with ExitCode.ContractExpired).
   */
  private async expire(event: Extract<MonthEvent, { kind: 'expiring' }>): Promise<void> {
    const { contractId, expiresAt } = event;
    const name = this.contracts.get(contractId)?.name ?? contractId;
    const at = new Date(expiresAt).toISOString();
    this.journal.record('expiry', 'event', null, { contractId, expiresAt: at });
    this.options.logger.warn({ contractId, expiresAt: at }, 'pinned contract month expires: flattening and stopping');
    this.expired = { contractId, expiresAt };
    await this.killSwitch(`${name} expires at ${at}`).catch((error: unknown) =>
      this.options.logger.error({ err: error }, 'flatten before the expiry failed'),
    );
    this.notices.next(
      `${name} (${contractId}) expires at ${at}: flattened and stopped; configure the next month or a root (ES) to go on`,
    );
    this.finish();
  }

  /** Start polling (after `start`, so a caller can subscribe to the engine's streams first). */
  run(): void {
    this.poller.start();
    this.realtime?.start();
    this.market?.start();
  }

  /** The market hub's quotes and trades (the guard's last price), with the same realtime host. */
  market: MarketFeed | undefined;

  /** The user hub's events, when the gateway has a realtime host and the config does not turn it off. */
  realtime: RealtimeFeed | undefined;

  private lastLimits: string | undefined;
  private reportedDisagreements = '';

  /**
   * Each poll of the administration record: a change of its limits is journaled, logged and handed to
   * the guard (the config's overrides still win, as at start), then the guard's floors are compared with
   * the gateway's again.
   */
  private onTradingAccount(t: S.TradingAccount): void {
    const limits = gatewayLimits(t);
    if (this.noteTradingAccount(t, limits)) {
      const { personalLimitAction: _notALimit, ...resolved } = resolveLimits(
        this.options.account ?? {},
        limits,
        this.options.maximumLossVariant?.(this.account.id),
      ).account;
      try {
        this.engine.setAccountLimits(resolved);
      } catch (error) {
        this.executor.anomaly(
          null,
          `account limits from the gateway not applied: ${error instanceof Error ? error.message : String(error)}`,
          { limits: resolved },
        );
      }
    }
    // The trading day turns at 17:00 CT by the clock, as the gateway's does, not with the next bar.
    this.engine.advance();
    this.reportLimitDisagreements(limitDisagreements(this.engine.rules, limits));
  }

  /** Journals the record's limits when they changed; true when they changed during the run. */
  private noteTradingAccount(t: S.TradingAccount, limits: GatewayLimits): boolean {
    const { maximumLossFloor: _floorMovesOnItsOwn, startOfDayBalance: _daily, ...amounts } = limits;
    const key = JSON.stringify({ ...amounts, status: t.status });
    if (key === this.lastLimits) return false;
    const changed = this.lastLimits !== undefined;
    if (changed)
      this.options.logger.warn(
        { limits: amounts, status: t.status },
        'account limits changed at the gateway; the guard applies them now',
      );
    this.lastLimits = key;
    this.journal.record('trading-account', 'event', null, { ...amounts, status: t.status });
    return changed;
  }

  /** A difference between the guard's limits and the gateway's is an anomaly, reported once while it lasts. */
  private reportLimitDisagreements(disagreements: readonly LimitDisagreement[]): void {
    const key = disagreements.map(disagreementText).join('; ');
    if (key === this.reportedDisagreements) return;
    this.reportedDisagreements = key;
    if (key !== '')
      this.executor.anomaly(null, `risk guard limits differ from the gateway's (${key})`, { disagreements });
  }

  private onVisibility(reason: string | undefined): void {
    this.visibilityReason = reason;
    this.executor.setBlind(reason);
    const current = this.engine.tradingState();
    if (reason !== undefined) {
      if (current.state === 'ACTIVE') this.engine.setTradingState('REDUCING', `positions not visible: ${reason}`);
    } else if (current.state === 'REDUCING' && current.reason.startsWith('positions not visible')) {
      this.engine.setTradingState('ACTIVE', 'positions visible again');
    }
  }

  statusInput(): StatusInput {
    const snapshot = this.engine.snapshot();
    const rules = this.engine.rules;
    return {
      mode: this.options.mode,
      account: this.account.name,
      state: this.engine.tradingState().state,
      visible: this.visibilityReason === undefined,
      positions: this.positions.map((p) => ({
        contractId: p.contractId,
        size: p.type === 2 ? -p.size : p.size,
        averagePrice: p.averagePrice,
      })),
      dayPnl: snapshot.dayPnl,
      balance: this.lastAccount?.balance ?? snapshot.balance,
      equity: snapshot.equity,
      dailyLossFloor: rules.dailyLossFloor(),
      maximumLossFloor: rules.maximumLossFloor(),
      personalDailyLossLimit: rules.config.personalDailyLossLimit,
      personalDailyProfitTarget: rules.config.personalDailyProfitTarget,
      bars: this.closedBars,
    };
  }

  /**
   * Kill switch: halt the engine (nothing new passes the guard), then cancel every working order and
   * close every position at the gateway, and wait until Position/searchOpen shows flat (or the deadline).
   */
  async killSwitch(reason: string, source: KillSource = 'session'): Promise<FlattenResult> {
    this.journal.record('kill-switch', 'before', null, { reason, source });
    this.engine.setTradingState('HALTED', `kill switch: ${reason}`);
    const result = await this.executor.flatten();
    await this.poller
      .refreshAccountState()
      .catch((error: unknown) => this.options.logger.warn({ err: error }, 'refresh after kill switch failed'));
    await this.executor.idle();
    this.journal.record('kill-switch', 'after', null, { ...result, source });
    this.options.logger.warn({ ...result, source }, 'kill switch done');
    return result;
  }

  /**
   * One more look at orders, trades and positions before the final snapshot, so a fill that happened
   * since the last poll is in it; bounded, since a gateway that does not answer must not hold the stop.
   */
  private async finalPoll(): Promise<void> {
    const limitMs = this.options.config.execution.finalPollMs;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), limitMs)));
    try {
      await this.executor.idle();
      const outcome = await Promise.race([this.poller.refreshAccountState().then(() => 'done' as const), timeout]);
      if (outcome === 'timeout')
        this.options.logger.warn({ limitMs }, 'final poll did not finish in time; the snapshot is as of the last poll');
      await Promise.race([this.executor.idle(), timeout]);
    } catch (error) {
      this.options.logger.warn({ err: error }, 'final poll failed; the snapshot is as of the last poll');
    } finally {
      clearTimeout(timer);
    }
  }

  /** Graceful stop: no new polls, wait for requests in flight and journal their answers, close everything. */
  stop(options: { flatten?: boolean } = {}): Promise<void> {
    this.stopping ??= (async () => {
      if (this.statusTimer) clearInterval(this.statusTimer);
      if (this.clockTimer) clearInterval(this.clockTimer);
      this.poller.stop();
      if (options.flatten ?? this.options.config.session.flattenOnExit) await this.killSwitch('session end');
      await this.finalPoll();
      await this.realtime?.stop();
      await this.market?.stop();
      await this.executor.stop();
      for (const s of this.subscriptions) s.unsubscribe();
      this.engine.close();
      this.executor.complete();
      this.journal.record('session', 'after', null, { bars: this.closedBars, snapshot: this.engine.snapshot() });
      this.journal.close();
      if (this.options.shared === undefined) await this.client.close();
      await this.admin?.close();
      this.finish();
    })();
    return this.stopping;
  }
}

/** The poller's client: the shared bar requests, and the account-state reads of the shared client. */
function sharedPollClient(client: TradingClient, shared: SharedConnections): PollClient {
  return {
    retrieveBars: (request) => shared.bars.retrieveBars(request),
    searchOrders: (request) => client.searchOrders(request),
    searchOpenOrders: (accountId) => client.searchOpenOrders(accountId),
    searchTrades: (request) => client.searchTrades(request),
    searchOpenPositions: (accountId) => client.searchOpenPositions(accountId),
    searchAccounts: (onlyActive) => client.searchAccounts(onlyActive),
  };
}

export function pollIntervalsOf(config: LiveConfig): PollIntervals {
  const p = config.poll;
  return {
    openOrdersMs: p.openOrdersMs,
    ordersMs: p.ordersMs,
    tradesMs: p.tradesMs,
    positionsMs: p.positionsMs,
    accountMs: p.accountMs,
  };
}

export function subscriptionsOf(config: LiveConfig): BarSubscription[] {
  const timeframe: Timeframe = config.timeframe;
  return config.contracts.map((contractId) => ({
    contractId,
    timeframe,
    ...(config.partialEveryMs === undefined ? {} : { partialEveryMs: config.partialEveryMs }),
  }));
}

/** Realized PnL minus fees of every journaled fill (of the configured contracts). */
function journalNet(journal: Journal, contracts: ReadonlyMap<string, ContractSpec>, routes: ContractRoutes): number {
  const scratch = new Accounting([...contracts.values()], 0, { pnlInCents: true });
  for (const fill of journal.fills()) {
    // A followed symbol's fills of every month count under the symbol (one position across its rolls).
    const f = { ...fill, contractId: routes.logical(fill.contractId) };
    if (!contracts.has(f.contractId)) continue;
    scratch.applyFill(
      {
        kind: 'fill',
        fillId: f.fillId,
        orderId: f.tag ?? `venue-${f.venueOrderId}`,
        contractId: f.contractId,
        side: f.side,
        size: f.size,
        price: f.price,
        fees: f.fees,
        time: f.time,
      },
      'replay',
    );
  }
  return scratch.balance;
}

async function findAccount(client: TradingClient, config: LiveConfig, mode: 'paper' | 'live'): Promise<S.Account> {
  const accounts = await client.searchAccounts(true);
  const wanted = config.account;
  const matches = accounts.filter(
    (a) => (wanted.id === undefined || a.id === wanted.id) && (wanted.name === undefined || a.name === wanted.name),
  );
  const eligible = matches.filter((a) => (mode === 'paper' ? a.simulated : !a.simulated));
  if (eligible.length === 0) {
    if (matches.length > 0) {
      throw new SessionError(
        'ACCOUNT_KIND',
        mode === 'paper'
          ? `account ${matches[0]!.name} is not simulated: paper trading refuses real accounts`
          : `account ${matches[0]!.name} is simulated: use the paper command`,
      );
    }
    throw new SessionError(
      'ACCOUNT_NOT_FOUND',
      `no active account matches ${JSON.stringify(wanted)} (found: ${accounts.map((a) => a.name).join(', ') || 'none'})`,
    );
  }
  if (eligible.length > 1)
    throw new SessionError(
      'ACCOUNT_NOT_FOUND',
      `several accounts match; set account.name or account.id (${eligible.map((a) => a.name).join(', ')})`,
    );
  return eligible[0]!;
}

/**
 * The contracts as the gateway describes them: each configured id, and for a followed symbol its current
 * month too (under the month's id; the symbol's own entry has the same grid, under the symbol's id).
 */
async function loadContracts(
  client: TradingClient,
  ids: readonly string[],
  routes: ContractRoutes,
): Promise<Map<string, ContractSpec>> {
  const contracts = new Map<string, ContractSpec>();
  for (const id of ids) {
    const month = routes.route(id);
    const c = await client.contractById(month);
    const spec: ContractSpec = {
      id: c.id,
      name: c.name,
      symbolId: c.symbolId,
      description: c.description,
      grid: new PriceGrid(c.tickSize, c.tickValue),
    };
    contracts.set(month, spec);
    if (month !== id) contracts.set(id, { ...spec, id, name: `${id} (front month)` });
  }
  return contracts;
}
