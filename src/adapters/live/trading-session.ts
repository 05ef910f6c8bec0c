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
import type { Subscription } from 'rxjs';
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
  type StrategyFailure,
} from '../../engine/runner.ts';
import { Accounting } from '../../engine/accounting.ts';
import { parseParams, warmupBars, type StrategyError, type StrategyModule } from '../../engine/strategy.ts';
import type { AccountConfig } from '../../engine/account-rules.ts';
import type { BarChunk, ContractSpec, Timeframe } from '../../engine/types.ts';
import type { LiveConfig, Credentials } from './live-config.ts';
import { LiveExecutor, journaledUpdate } from './executor.ts';
import type { FlattenResult } from './kill-switch.ts';
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
import { historyBefore, Poller } from './poller.ts';
import { assertPlan, type BarSubscription, type PollIntervals } from './rate-plan.ts';
import { reconcileOnStart, type ReconcileReport } from './reconcile.ts';
import { RealtimeFeed } from './realtime-feed.ts';
import { MarketHubClient, UserHubClient } from '../gateway/realtime.ts';
import { MarketFeed } from './market-feed.ts';
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

  static async start(o: SessionOptions): Promise<LiveSession> {
    const { config, logger } = o;
    const now = o.now ?? Date.now;
    const client = new TradingClient({
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
      const params = parseParams(o.strategy, config.strategy.params);
      const warmup = warmupBars(o.strategy, params);
      assertPlan(subscriptionsOf(config), pollIntervalsOf(config));
      journal = Journal.open(config.journal, { now });
      await client.login();
      const account = await findAccount(client, config, o.mode);
      const contracts = await loadContracts(client, config.contracts);
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
      });

      const executor = new LiveExecutor({
        client,
        journal,
        accountId: account.id,
        contracts,
        logger: logger.child({ part: 'executor' }),
        now,
        speed: o.speed ?? 1,
        unknownOutcomeMs: config.execution.unknownOutcomeMs,
      });
      // The engine's own orders (kill switch, flat-by, breach flatten) carry this bot's id too, so two bots
      // on one account never reuse each other's customTags.
      const riskStrategyId = `${config.strategy.id}-${RISK_STRATEGY_ID}`;
      const strategyIds = [config.strategy.id, riskStrategyId];
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
      const limits = resolveLimits(o.account ?? {}, fromGateway);
      logger.info({ limits: limits.account, sources: limits.sources }, 'account limits for the risk guard');
      const accountConfig: AccountConfig = {
        ...limits.account,
        // The journal's fills are replayed into the engine below; starting from the balance before them
        // makes the engine's balance equal the gateway's after the replay (no PnL counted twice).
        startingBalance: o.account?.startingBalance ?? account.balance - journalNet(journal, contracts),
      };

      const market =
        o.realtimeUrl !== undefined && config.gateway.realtime
          ? new MarketFeed({
              hub: new MarketHubClient({
                url: o.realtimeUrl,
                token: () => client.token(),
                logger: logger.child({ part: 'market-hub' }),
              }),
              contracts,
              logger: logger.child({ part: 'market-hub' }),
              now,
              speed: o.speed ?? 1,
              quoteSilenceMs: config.gateway.quoteSilenceMs,
              onSilence: (event) => journal?.record('market-hub', 'event', null, event),
            })
          : undefined;
      const engine = createEngine({
        strategies: [
          { strategy: o.strategy, params: config.strategy.params, id: config.strategy.id, contracts: config.contracts },
        ],
        contracts: [...contracts.values()],
        venue: executor,
        risk: config.risk,
        account: accountConfig,
        logger: logger.child({ part: 'engine' }),
        sequenceStart: report.sequenceStart,
        riskStrategyId,
        clock: now,
        // A failing strategy is the session's to handle (flatten or hold, then stop), never a crash.
        onStrategyError: 'log',
        ...(market === undefined
          ? {}
          : {
              quotes: (id: string) => market.quotes(id),
              marketTrades: (id: string) => market.marketTrades(id),
              lastPrice: (id: string) => market.lastPrice(id),
            }),
      });

      // The poller reports to the session, which exists only once the poller does.
      const hooks: { session?: LiveSession } = {};
      const poller = new Poller({
        client,
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
        onTrades: (trades) => hooks.session?.realtime?.notePolledTrades(trades),
      });
      const session = new LiveSession(o, client, journal, executor, poller, engine, account, report);
      session.market = market;
      if (o.realtimeUrl !== undefined && config.gateway.realtime) {
        const hubLogger = logger.child({ part: 'realtime' });
        session.realtime = new RealtimeFeed({
          hub: new UserHubClient({ url: o.realtimeUrl, token: () => client.token(), logger: hubLogger }),
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
      await client.close();
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

  /** A failure no strategy could be named for (an error RxJS reports asynchronously) is handled the same way. */
  failUnattributed(error: unknown): void {
    void this.onStrategyFailure({ strategyId: this.options.config.strategy.id, error, barTime: NaN });
  }

  /**
   * The strategy's declared warm-up, from the gateway's history before the session's first live bar, run
   * through the strategy with orders suppressed: its first live decision is made with warm indicators.
   */
  private async warmUp(bars: number): Promise<void> {
    const { config, logger } = this.options;
    for (const contractId of config.contracts) {
      const spec = this.contracts.get(contractId)!;
      let chunk: BarChunk | undefined;
      try {
        chunk = await historyBefore(
          this.client,
          spec,
          config.timeframe,
          this.poller.startedAt,
          bars,
          config.gateway.liveData,
        );
      } catch (error) {
        logger.warn(
          { contractId, bars, err: error },
          'warm-up history unavailable; the strategy starts cold (its warm-up bars are live ones)',
        );
        continue;
      }
      if (chunk === undefined) {
        logger.warn({ contractId, bars }, 'warm-up: no history before the session; the strategy starts cold');
        continue;
      }
      this.engine.warmUp(chunk);
      const range = {
        from: new Date(chunk.time[0]!).toISOString(),
        to: new Date(chunk.time[chunk.length - 1]!).toISOString(),
      };
      this.journal.record('warm-up', 'event', null, { contractId, bars: chunk.length, wanted: bars, ...range });
      logger.info(
        { contractId, bars: chunk.length, wanted: bars, ...range },
        'warm-up: history run through the strategy, orders suppressed',
      );
    }
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
  async killSwitch(reason: string): Promise<FlattenResult> {
    this.journal.record('kill-switch', 'before', null, { reason });
    this.engine.setTradingState('HALTED', `kill switch: ${reason}`);
    const result = await this.executor.flatten();
    await this.poller
      .refreshAccountState()
      .catch((error: unknown) => this.options.logger.warn({ err: error }, 'refresh after kill switch failed'));
    await this.executor.idle();
    this.journal.record('kill-switch', 'after', null, result);
    this.options.logger.warn({ ...result }, 'kill switch done');
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
      await this.client.close();
      await this.admin?.close();
      this.finish();
    })();
    return this.stopping;
  }
}

function pollIntervalsOf(config: LiveConfig): PollIntervals {
  const p = config.poll;
  return {
    openOrdersMs: p.openOrdersMs,
    ordersMs: p.ordersMs,
    tradesMs: p.tradesMs,
    positionsMs: p.positionsMs,
    accountMs: p.accountMs,
  };
}

function subscriptionsOf(config: LiveConfig): BarSubscription[] {
  const timeframe: Timeframe = config.timeframe;
  return config.contracts.map((contractId) => ({
    contractId,
    timeframe,
    ...(config.partialEveryMs === undefined ? {} : { partialEveryMs: config.partialEveryMs }),
  }));
}

/** Realized PnL minus fees of every journaled fill (of the configured contracts). */
function journalNet(journal: Journal, contracts: ReadonlyMap<string, ContractSpec>): number {
  const scratch = new Accounting([...contracts.values()], 0, { pnlInCents: true });
  for (const f of journal.fills()) {
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

async function loadContracts(client: TradingClient, ids: readonly string[]): Promise<Map<string, ContractSpec>> {
  const map = new Map<string, ContractSpec>();
  for (const id of ids) {
    const c = await client.contractById(id);
    map.set(id, {
      id: c.id,
      name: c.name,
      symbolId: c.symbolId,
      description: c.description,
      grid: new PriceGrid(c.tickSize, c.tickValue),
    });
  }
  return map;
}
