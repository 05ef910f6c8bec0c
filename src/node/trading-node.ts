/**
 * The trading node: every account of a node config as one paper or live session (its own journal, guard,
 * limits, evaluation, trading state and kill switch), over one user's shared connections: one login, one
 * connection to each realtime hub with every session's subscriptions, bar requests answered once per contract
 * and timeframe, and one request budget, planned before start and kept at run time.
 *
 * An account whose guard breaches, locks out or halts stops opening risk on that account only; the others
 * trade on. The node ends when every session has ended, or when it is stopped.
 */
import { MarketHubClient, UserHubClient } from '../adapters/gateway/realtime.ts';
import { TradingClient } from '../adapters/gateway/trading.ts';
import type { Logger } from '../engine/log.ts';
import type { StrategyModule } from '../engine/strategy.ts';
import type { AccountConfig, MllVariant } from '../engine/account-rules.ts';
import type { FlattenResult, KillSource } from '../adapters/live/kill-switch.ts';
import type { Credentials, LiveConfig } from '../adapters/live/live-config.ts';
import type { PassLockOptions } from '../engine/pass-lock.ts';
import { assertPlan, type AccountPolls, type BarSubscription, type RatePlan } from '../adapters/live/rate-plan.ts';
import { shareConnections, SharedHub, type SharedBarRequests } from '../adapters/live/shared-connections.ts';
import { LiveSession, pollIntervalsOf, subscriptionsOf, type SessionBot } from '../adapters/live/trading-session.ts';
import { followedSymbol } from '../adapters/live/month-follower.ts';
import { accountBots, accountSessionConfig, type NodeConfig } from './node-config.ts';
import { TicklineError } from '../engine/errors.ts';

export interface NodeGateway {
  readonly tradingUrl: string;
  readonly realtimeUrl?: string;
  readonly admin?: { readonly url: string; readonly headers: Record<string, string> };
  readonly credentials: Credentials;
  readonly now?: () => number;
  readonly speed?: number;
  readonly maximumLossVariant?: (accountId: number) => MllVariant | undefined;
}

export interface NodeOptions {
  readonly config: NodeConfig;
  /**
   * Each account's session config as loaded (its evaluation applied to limits and risk); by default derived
   * from the node config without evaluations.
   */
  readonly sessionConfigs?: ReadonlyMap<string, LiveConfig & { readonly passLock?: PassLockOptions }>;
  /** The loaded strategy module of each bot, by bot id. */
  readonly strategies: ReadonlyMap<string, StrategyModule>;
  readonly gateway: NodeGateway;
  readonly logger: Logger;
}

export class NodeError extends TicklineError {
  override readonly name = 'NodeError';
  readonly kind = 'usage';
  constructor(
    readonly code: 'UNKNOWN_ACCOUNT' | 'UNKNOWN_BOT',
    message: string,
  ) {
    super(message);
  }
}

/** The poll plan of a node: every account's polls, each bar subscription once. */
export function planNode(config: NodeConfig, sessionConfigs: ReadonlyMap<string, LiveConfig>): RatePlan {
  const subscriptions = new Map<string, BarSubscription>();
  const accounts: AccountPolls[] = [];
  for (const account of config.accounts) {
    const sessionConfig = sessionConfigs.get(account.name) ?? accountSessionConfig(config, account);
    for (const sub of subscriptionsOf({
      ...sessionConfig,
      contracts: sessionConfig.contracts.map((c) => followedSymbol(c) ?? c),
    }))
      subscriptions.set(JSON.stringify([sub.contractId, sub.timeframe, sub.partialEveryMs]), sub);
    accounts.push({ account: account.name, intervals: pollIntervalsOf(sessionConfig) });
  }
  return assertPlan([...subscriptions.values()], accounts);
}

export class TradingNode {
  readonly finished: Promise<void>;
  private stopping: Promise<void> | undefined;

  private constructor(
    readonly options: NodeOptions,
    readonly client: TradingClient,
    /** The sessions by account name, in the config's order. */
    readonly sessions: ReadonlyMap<string, LiveSession>,
    readonly plan: RatePlan,
    /** The accounts' bar requests (`counts`: sent to the gateway, answered from another's). */
    readonly barRequests: SharedBarRequests,
    private readonly hubs: { stop(): Promise<void> },
  ) {
    this.finished = Promise.all([...sessions.values()].map((s) => s.finished)).then(() => undefined);
  }

  static async start(options: NodeOptions): Promise<TradingNode> {
    const { config, gateway, logger } = options;
    const now = gateway.now ?? Date.now;
    const sessionConfigs = new Map<string, LiveConfig & { readonly passLock?: PassLockOptions }>(
      config.accounts.map((a) => [a.name, options.sessionConfigs?.get(a.name) ?? accountSessionConfig(config, a)]),
    );
    // Refused before anything is asked of the gateway: the budget is the user's, whatever the accounts.
    const plan = planNode(config, sessionConfigs);
    const client = new TradingClient({
      baseUrl: gateway.tradingUrl,
      userName: gateway.credentials.userName,
      apiKey: gateway.credentials.apiKey,
      logger,
      timeoutMs: config.gateway.timeoutMs,
      now,
      retry: { maxAttempts: 3, maxRetryAfterMs: 10_000 },
    });
    const realtime = gateway.realtimeUrl !== undefined && config.gateway.realtime ? gateway.realtimeUrl : undefined;
    const hubOptions = (url: string, part: string) => ({
      url,
      token: () => client.token(),
      logger: logger.child({ part }),
    });
    const market =
      realtime === undefined ? undefined : new SharedHub(new MarketHubClient(hubOptions(realtime, 'market-hub')));
    const user =
      realtime === undefined ? undefined : new SharedHub(new UserHubClient(hubOptions(realtime, 'user-hub')));
    const shared = shareConnections(client, { now, logger });
    const hubs = {
      stop: async (): Promise<void> => {
        await market?.hub.stop().catch((e: unknown) => logger.warn({ err: e }, 'market hub did not close cleanly'));
        await user?.hub.stop().catch((e: unknown) => logger.warn({ err: e }, 'user hub did not close cleanly'));
      },
    };
    const sessions = new Map<string, LiveSession>();
    try {
      await client.login();
      for (const account of config.accounts) {
        const sessionConfig = sessionConfigs.get(account.name)!;
        const bots: SessionBot[] = accountBots(config, account.name).map(({ bot, size }) => ({
          strategy: options.strategies.get(bot.id)!,
          id: bot.id,
          params: bot.params,
          contracts: bot.contracts,
          timeframe: bot.timeframe,
          size,
        }));
        if (bots.length === 0) {
          logger.warn({ account: account.name }, 'no bot trades this account: not started');
          continue;
        }
        const session = await LiveSession.start({
          config: sessionConfig,
          mode: config.mode,
          tradingUrl: gateway.tradingUrl,
          ...(realtime === undefined ? {} : { realtimeUrl: realtime }),
          credentials: gateway.credentials,
          ...(gateway.admin ? { admin: gateway.admin } : {}),
          strategy: bots[0]!.strategy,
          bots,
          logger: logger.child({ account: account.name }),
          account: sessionConfig.limits as Partial<AccountConfig>,
          ...(sessionConfig.passLock === undefined ? {} : { passLock: sessionConfig.passLock }),
          ...(gateway.now ? { now: gateway.now } : {}),
          ...(gateway.speed === undefined ? {} : { speed: gateway.speed }),
          ...(gateway.maximumLossVariant ? { maximumLossVariant: gateway.maximumLossVariant } : {}),
          shared: {
            ...shared,
            ...(market === undefined ? {} : { marketHub: market.lease() }),
            ...(user === undefined ? {} : { userHub: user.lease() }),
          },
        });
        sessions.set(account.name, session);
      }
    } catch (error) {
      for (const session of sessions.values())
        await session
          .stop()
          .catch((e: unknown) => logger.error({ err: e }, 'stopping a started session after a failed start'));
      await hubs.stop();
      await client.close();
      throw error;
    }
    logger.info(
      { accounts: [...sessions.keys()], bots: config.bots.map((b) => b.id), plan: plan.buckets },
      'trading node started',
    );
    return new TradingNode(options, client, sessions, plan, shared.bars, hubs);
  }

  /** Start polling and the hubs of every session. */
  run(): void {
    for (const session of this.sessions.values()) session.run();
  }

  session(account: string): LiveSession {
    const session = this.sessions.get(account);
    if (session === undefined)
      throw new NodeError(
        'UNKNOWN_ACCOUNT',
        `no account named ${account} in this node (${[...this.sessions.keys()].join(', ')})`,
      );
    return session;
  }

  /** The kill switch of one account, or of every account (each flattened on its own; one failing stops none). */
  async killSwitch(reason: string, source: KillSource, account?: string): Promise<Map<string, FlattenResult | Error>> {
    const targets = account === undefined ? [...this.sessions.entries()] : [[account, this.session(account)] as const];
    const results = new Map<string, FlattenResult | Error>();
    await Promise.all(
      targets.map(async ([name, session]) => {
        try {
          results.set(name, await session.killSwitch(reason, source));
        } catch (error) {
          this.options.logger.error({ err: error, account: name }, 'kill switch failed');
          results.set(name, error instanceof Error ? error : new Error(String(error)));
        }
      }),
    );
    return results;
  }

  /** The accounts a bot trades in this node. */
  botAccounts(botId: string): string[] {
    if (!this.options.config.bots.some((b) => b.id === botId))
      throw new NodeError(
        'UNKNOWN_BOT',
        `no bot with id ${botId} in this node (${this.options.config.bots.map((b) => b.id).join(', ')})`,
      );
    return [...this.sessions.keys()].filter((name) =>
      accountBots(this.options.config, name).some(({ bot }) => bot.id === botId),
    );
  }

  /**
   * Pause or resume a bot on every account it trades: a paused bot opens no new risk (its reductions,
   * cancels and flattens pass, its stream keeps running). Journaled on each account with its source.
   */
  setBotPaused(botId: string, paused: boolean, source: 'dashboard' | 'signal' | 'command'): string[] {
    const accounts = this.botAccounts(botId);
    for (const name of accounts) this.session(name).setBotPaused(botId, paused, source);
    return accounts;
  }

  /** Stop every session (requests in flight journaled), then the shared hubs and the login. */
  stop(options: { flatten?: boolean } = {}): Promise<void> {
    this.stopping ??= (async () => {
      await Promise.all(
        [...this.sessions.entries()].map(([name, session]) =>
          session
            .stop(options)
            .catch((error: unknown) => this.options.logger.error({ err: error, account: name }, 'session stop failed')),
        ),
      );
      await this.hubs.stop();
      await this.client.close();
    })();
    return this.stopping;
  }
}
