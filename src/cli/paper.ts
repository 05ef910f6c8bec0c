/**
 * `tickline paper --config config/paper.yaml`: run a strategy against a simulated account. Without
 * `gateway.url` the local simulator is started in-process with an accelerated clock (so a session of
 * bars passes quickly); with one, the account must be a simulated account of that gateway and the
 * credentials come from TICKLINE_USERNAME and TICKLINE_API_KEY.
 */
import { copyFileSync, existsSync, mkdirSync } from 'node:fs';
import { config as rxjsConfig, Subscription } from 'rxjs';
import { dayLine, decisionLine, EventLinePrinter, LineDates, RejectionTally } from '../adapters/live/event-lines.ts';
import { flattenText } from '../adapters/live/kill-switch.ts';
import type { MllVariant } from '../engine/account-rules.ts';
import path from 'node:path';
import { ConfigError } from './config-loader.ts';
import { EXIT_CODE_OF_KIND, ExitCode, UsageError } from './exit.ts';
import { createLogger, type Logger } from '../engine/log.ts';
import { StrategyError } from '../engine/strategy.ts';
import { loadStrategy } from '../strategies/index.ts';
import { credentialsFromEnv, type Credentials, type LiveConfig } from '../adapters/live/live-config.ts';
import { loadTradingConfig } from './trading-config.ts';
import { LiveSession } from '../adapters/live/trading-session.ts';
import { startSimulator } from '../sim/index.ts';
import { Limits } from '../protocol/endpoints.ts';
import { resolveFrontMonths } from './front-month.ts';
import { DASHBOARD_USAGE, openDashboard, tradingCommandArgs } from './dashboard-option.ts';
import { startNotifications } from '../ops/notify/start-notifications.ts';

/**
 * What the `paper` and `live` commands share: load the strict config, find the gateway (a configured URL
 * with credentials from the environment, or in paper mode the local simulator started in-process with an
 * accelerated clock), start the session, wire the kill switch (SIGUSR2) and a graceful Ctrl-C, and run
 * until the configured number of bars or a signal.
 */
export interface LocalGateway {
  readonly tradingUrl: string;
  readonly realtimeUrl?: string;
  readonly adminUrl?: string;
  readonly adminHeaders?: Record<string, string>;
  readonly credentials: Credentials;
  readonly accountId?: number;
  readonly accountName?: string;
  readonly now: () => number;
  readonly speed: number;
  /** The maximum loss limit variant of an account's template (the guard takes the simulator's). */
  readonly maximumLossVariant?: (accountId: number) => MllVariant | undefined;
  close(): Promise<void>;
}

export interface RunOptions {
  readonly mode: 'paper' | 'live';
  readonly configFile: string;
  readonly logger?: Logger;
  /** Starts the local simulator (paper without a URL). */
  readonly startLocal?: (config: LiveConfig, logger: Logger) => Promise<LocalGateway>;
  readonly signals?: boolean;
  /** `--dashboard`'s address (`''`: 127.0.0.1, a free port); undefined: no dashboard. */
  readonly dashboard?: string;
}

export async function runTrading(o: RunOptions): Promise<number> {
  const config = loadTradingConfig(o.configFile, { env: process.env });
  // TICKLINE_LOG_LEVEL wins over the config: it is how one looks closer at a run without editing files.
  const logFile = config.log.file ?? defaultLogFile(config.journal);
  const logger =
    o.logger ??
    createLogger({
      level: process.env.TICKLINE_LOG_LEVEL ?? config.log.level,
      name: `tickline-${o.mode}`,
      file: logFile,
    });
  let strategy: Awaited<ReturnType<typeof loadStrategy>>;
  try {
    strategy = await loadStrategy(config.strategy.name, path.dirname(path.resolve(o.configFile)));
  } catch (error) {
    if (error instanceof StrategyError)
      throw new ConfigError([{ file: o.configFile, line: 0, path: 'strategy.name', message: error.message }], {
        cause: error,
      });
    throw error;
  }
  let local: LocalGateway | undefined;
  let session: LiveSession;
  if (config.gateway.url === undefined) {
    if (o.mode === 'live') throw new UsageError('live trading needs gateway.url in the config');
    if (!o.startLocal) throw new UsageError('no gateway.url configured and no local simulator available');
    local = await o.startLocal(config, logger);
    logger.info({ tradingUrl: local.tradingUrl, speed: local.speed }, 'paper trading on the local simulator');
  }
  try {
    const credentials = local?.credentials ?? credentialsFromEnv();
    const adminAuth = process.env.TICKLINE_ADMIN_AUTH;
    const admin =
      local?.adminUrl !== undefined
        ? { url: local.adminUrl, headers: local.adminHeaders ?? {} }
        : config.gateway.adminUrl !== undefined && adminAuth
          ? { url: config.gateway.adminUrl, headers: { [config.gateway.adminAuthHeader]: adminAuth } }
          : undefined;
    const tradingUrl = local?.tradingUrl ?? config.gateway.url!;
    const realtimeUrl = local ? local.realtimeUrl : config.gateway.realtimeUrl;
    const contracts = await resolveFrontMonths(config.contracts, {
      tradingUrl,
      credentials,
      logger,
      ...(local ? { now: local.now } : {}),
    });
    const configWithAccount: LiveConfig =
      local && config.account.id === undefined && config.account.name === undefined && local.accountId !== undefined
        ? { ...config, contracts, account: { id: local.accountId } }
        : { ...config, contracts };
    session = await LiveSession.start({
      config: configWithAccount,
      mode: o.mode,
      tradingUrl,
      ...(realtimeUrl === undefined ? {} : { realtimeUrl }),
      credentials,
      ...(admin ? { admin } : {}),
      strategy,
      logger,
      account: config.limits,
      ...(config.passLock === undefined ? {} : { passLock: config.passLock }),
      ...(local ? { now: local.now, speed: local.speed } : {}),
      ...(local?.maximumLossVariant ? { maximumLossVariant: local.maximumLossVariant } : {}),
      statusStream: process.stderr,
    });
  } catch (error) {
    await local?.close();
    throw error;
  }

  const r = session.reconcile;
  process.stdout.write(
    `${o.mode} session on account ${session.account.name} (${session.account.id}); journal ${config.journal}; log ${logFile}; ` +
      `reconciled: ${r.clean ? 'no differences' : `${r.unjournaledTags.length} unjournaled tags, ${r.foreignOpenOrders.length} foreign open orders, ${r.positionDifferences.length} position differences`}\n`,
  );
  const dashboard =
    o.dashboard === undefined
      ? undefined
      : await openDashboard([{ session, config }], o.configFile, o.dashboard, logger).catch(async (error: unknown) => {
          await session.stop();
          await local?.close();
          throw error;
        });
  const stopNotifications = startNotifications(config.notify, session, logger);
  const rejections = new RejectionTally((session.options.now ?? Date.now)());
  const printing = printEvents(session, (line) => process.stdout.write(`${line}\n`), rejections);
  printing.add(session.notices.subscribe((line) => process.stdout.write(`${line}\n`)));

  let interrupted = false;
  const onInt = (): void => {
    if (interrupted) {
      // A second Ctrl-C does not wait: every journal write is a committed transaction, and a request
      // still in flight is looked up by its customTag at the next start.
      logger.warn('second interrupt: exiting now');
      process.exit(ExitCode.Interrupted);
    }
    interrupted = true;
    logger.warn('interrupt: stopping after requests in flight are journaled (Ctrl-C again to exit at once)');
    void session.stop();
  };
  const onKill = (): void => {
    logger.warn('SIGUSR2: kill switch');
    void session
      .killSwitch('SIGUSR2', 'signal')
      .then((report) => process.stdout.write(`kill switch: ${flattenText(session.account.name, report)}\n`));
  };
  if (o.signals ?? true) {
    process.on('SIGINT', onInt);
    process.on('SIGTERM', onInt);
    process.on('SIGUSR2', onKill);
  }
  // A throw RxJS could not hand to the engine (reported asynchronously) is the strategy failing too.
  const previousUnhandled = rxjsConfig.onUnhandledError;
  rxjsConfig.onUnhandledError = (error: unknown) => session.failUnattributed(error);
  session.run();
  try {
    await session.finished;
    await session.stop();
    const snapshot = session.engine.snapshot();
    const positions = snapshot.positions
      .filter((p) => p.size !== 0)
      .map((p) => `${p.contractId} ${p.size > 0 ? '+' : ''}${p.size}`);
    process.stdout.write(
      `\nsession ended: balance ${snapshot.balance.toFixed(2)}, day PnL ${snapshot.dayPnl.toFixed(2)}, ` +
        `position ${positions.join(' ') || 'flat'}, state ${session.engine.tradingState().state}\n`,
    );
  } finally {
    rxjsConfig.onUnhandledError = previousUnhandled;
    printing.unsubscribe();
    await dashboard?.close();
    if (o.signals ?? true) {
      process.off('SIGINT', onInt);
      process.off('SIGTERM', onInt);
      process.off('SIGUSR2', onKill);
    }
    await stopNotifications();
    await local?.close();
  }
  if (session.failure !== undefined) {
    const action =
      config.execution.onStrategyError === 'flatten' ? 'the account was flattened' : 'the position was held';
    process.stderr.write(
      `${o.mode}: ${session.failure.message.split('\n')[0]}; ${action} (execution.onStrategyError)\n`,
    );
    return EXIT_CODE_OF_KIND.runtime;
  }
  const allRejected = rejections.summary();
  if (allRejected !== undefined) {
    // A session that traded nothing because the gateway refused every order did not succeed.
    process.stdout.write(`${allRejected}\n`);
    process.stderr.write(`${o.mode}: ${allRejected}\n`);
    return EXIT_CODE_OF_KIND.runtime;
  }
  if (session.expired !== undefined && !interrupted) return ExitCode.ContractExpired;
  return interrupted ? ExitCode.Interrupted : ExitCode.Ok;
}

/** `<journal>.log` beside the journal (`journal.sqlite` -> `journal.log`). */
function defaultLogFile(journal: string): string {
  const parsed = path.parse(journal);
  return path.join(parsed.dir, `${parsed.name}.log`);
}

/**
 * The operator's readable lines: orders placed, modified, cancelled and rejected, fills with position and
 * PnL, refusals; a line at each new trading day (its date, the previous day's PnL, the limits in force),
 * and the date on the first line and on every line after the date changed.
 */
export function printEvents(
  session: LiveSession,
  write: (line: string) => void,
  rejections: RejectionTally,
): Subscription {
  const { engine } = session;
  const now = session.options.now ?? Date.now;
  const ctx = { contracts: session.contracts, now, dates: new LineDates() };
  let day = '';
  const checkDay = (): void => {
    const tradingDay = engine.rules.tradingDay;
    if (tradingDay === '' || tradingDay === day) return;
    const ended = day === '' ? undefined : engine.accounting.days.findLast((d) => d.tradingDay === day);
    day = tradingDay;
    const rules = engine.rules;
    write(
      dayLine(ctx, {
        time: now(),
        tradingDay,
        previousDayPnl: ended === undefined ? undefined : ended.endBalance - ended.startBalance,
        limits: {
          dailyLossLimit: rules.config.dailyLossLimit,
          dailyLossFloor: rules.dailyLossFloor(),
          maximumLossLimit: rules.config.maximumLossLimit,
          maximumLossFloor: rules.maximumLossFloor(),
          personalDailyLossLimit: rules.config.personalDailyLossLimit,
          personalDailyProfitTarget: rules.config.personalDailyProfitTarget,
        },
      }),
    );
  };
  const emit = (line: string | undefined): void => {
    checkDay();
    if (line !== undefined) write(line);
  };
  const lines = new EventLinePrinter(ctx, emit);
  const all = new Subscription();
  checkDay();
  all.add(engine.account$.subscribe(() => checkDay()));
  all.add(
    engine.orders$.subscribe((update) => {
      rejections.note(update);
      lines.order(update);
    }),
  );
  all.add(
    engine.fills$.subscribe((fill) =>
      lines.fill(fill, engine.accounting.position(fill.contractId), engine.snapshot().dayPnl),
    ),
  );
  all.add(engine.decisions$.subscribe((decision) => emit(decisionLine(ctx, decision))));
  return all;
}

export const summary = 'Paper trade a strategy on the local simulator (default) or a gateway sim account';

const USAGE = `Usage: tickline paper --config <file.yaml>

Runs the configured strategy on a simulated account, journaling every order to the configured SQLite
journal, until session.maxBars closed bars have passed or Ctrl-C. SIGUSR2 triggers the kill switch.

Options:
  --config <file>   paper configuration (see config/paper.yaml and docs/live.md)
${DASHBOARD_USAGE}
  --help            this text`;

/**
 * The local simulator's database of a paper config without `simulator.dbPath`: named after its journal
 * and beside it (`var/paper.sqlite` -> `var/paper.sim.sqlite`), so each paper config of a folder has its
 * own simulated account, and deleting one journal leaves the others' accounts alone.
 */
export function defaultSimulatorDb(journal: string): string {
  const parsed = path.parse(path.resolve(journal));
  return path.join(parsed.dir, `${parsed.name}.sim.sqlite`);
}

/** The one database every paper config of a folder shared before each had its own. */
const SHARED_SIMULATOR_DB = 'paper-sim.sqlite';

/**
 * A session resumed from a journal written while the folder's paper configs shared `paper-sim.sqlite`
 * continues on a copy of that database (its orders and account are the journal's), so a restart finds
 * what it left; a new journal starts on a fresh one.
 */
function adoptSharedSimulatorDb(journal: string, dbPath: string, logger: Logger): void {
  const shared = path.join(path.dirname(path.resolve(journal)), SHARED_SIMULATOR_DB);
  if (existsSync(dbPath) || !existsSync(shared) || !existsSync(journal)) return;
  for (const suffix of ['', '-wal', '-shm'])
    if (existsSync(`${shared}${suffix}`)) copyFileSync(`${shared}${suffix}`, `${dbPath}${suffix}`);
  logger.info(
    { from: shared, to: dbPath },
    'the simulator database of this journal starts as a copy of the shared one',
  );
}

/**
 * The local simulator of a paper config; `accounts` names simulated accounts of its demo user to make
 * besides its own (a trading node's, on the 50K evaluation template), once, in its database.
 */
export async function startLocalSimulator(
  config: LiveConfig,
  logger: Logger,
  accounts: readonly string[] = [],
): Promise<LocalGateway> {
  const dbPath = config.simulator.dbPath ?? defaultSimulatorDb(config.journal);
  if (config.simulator.dbPath === undefined) adoptSharedSimulatorDb(config.journal, dbPath, logger);
  mkdirSync(path.dirname(path.resolve(dbPath)), { recursive: true });
  const sim = await startSimulator({
    clock: { speed: config.simulator.speed },
    seed: config.simulator.seed,
    ...(config.simulator.startTime === undefined ? {} : { startTime: Date.parse(config.simulator.startTime) }),
    // A session told the market never closes trades a simulator whose market never closes.
    ...(config.market.hours === 'none' ? { marketHours: 'always' as const } : {}),
    dbPath,
    ...(accounts.length === 0 ? {} : { demoAccounts: accounts.map((name) => ({ name, template: '50K' })) }),
    logger: logger.child({ part: 'sim' }),
    // The simulator counts its rate budgets on the wall clock; with the market running `speed` times
    // faster, the gateway's budgets (per 30 s and 60 s of market time) are `speed` times more requests
    // per wall window. The poll plan is checked in market time, as it would be against a real gateway.
    rateLimits: {
      bars: {
        requests: Limits.rate.bars.requests * Math.ceil(config.simulator.speed),
        windowMs: Limits.rate.bars.windowMs,
      },
      default: {
        requests: Limits.rate.default.requests * Math.ceil(config.simulator.speed),
        windowMs: Limits.rate.default.windowMs,
      },
    },
  });
  return {
    tradingUrl: sim.tradingUrl,
    realtimeUrl: sim.realtimeUrl,
    adminUrl: sim.adminUrl,
    adminHeaders: sim.adminHeaders,
    credentials: { userName: sim.demo.userName, apiKey: sim.demo.apiKey },
    accountId: sim.demo.accountId,
    accountName: sim.demo.accountName,
    now: () => sim.clock.now(),
    speed: config.simulator.speed,
    maximumLossVariant: (accountId) => sim.maximumLossVariant(accountId),
    close: () => sim.close(),
  };
}

export async function run(argv: string[]): Promise<number> {
  const parsed = tradingCommandArgs(argv, {}, USAGE);
  if (parsed === undefined) return ExitCode.Ok;
  return runTrading({
    mode: 'paper',
    configFile: parsed.config,
    startLocal: startLocalSimulator,
    dashboard: parsed.dashboard,
  });
}
