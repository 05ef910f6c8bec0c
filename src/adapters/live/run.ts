/**
 * What the `paper` and `live` commands share: load the strict config, find the gateway (a configured URL
 * with credentials from the environment, or in paper mode the local simulator started in-process with an
 * accelerated clock), start the session, wire the kill switch (SIGUSR2) and a graceful Ctrl-C, and run
 * until the configured number of bars or a signal.
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { existsSync } from 'node:fs';
import { ConfigError, loadConfig } from '../../cli/config.ts';
import { ExitCode, UsageError } from '../../cli/exit.ts';
import { createLogger, type Logger } from '../../engine/log.ts';
import { isStrategyModule, type StrategyModule } from '../../engine/strategy.ts';
import { credentialsFromEnv, liveConfigSchema, type Credentials, type LiveConfig } from './config.ts';
import { LiveSession } from './session.ts';

export interface LocalGateway {
  readonly tradingUrl: string;
  readonly adminUrl?: string;
  readonly adminHeaders?: Record<string, string>;
  readonly credentials: Credentials;
  readonly accountId?: number;
  readonly accountName?: string;
  readonly now: () => number;
  readonly speed: number;
  close(): Promise<void>;
}

/** A built-in strategy by name (`sma-cross`), or a module file by path. */
export async function resolveStrategy(nameOrPath: string, configDir: string): Promise<StrategyModule> {
  const builtIn = /^[a-z0-9-]+$/.test(nameOrPath) ? path.resolve(import.meta.dirname, '../../strategies', `${nameOrPath}.ts`) : undefined;
  const file = builtIn !== undefined && existsSync(builtIn) ? builtIn : path.resolve(configDir, nameOrPath);
  if (!existsSync(file)) throw new UsageError(`strategy "${nameOrPath}": no built-in strategy of that name and no file ${file}`);
  const mod = (await import(pathToFileURL(file).href)) as { default?: unknown };
  if (!isStrategyModule(mod.default)) throw new UsageError(`strategy "${nameOrPath}": ${file} has no default export made with defineStrategy`);
  return mod.default;
}

export interface RunOptions {
  readonly mode: 'paper' | 'live';
  readonly configFile: string;
  readonly logger?: Logger;
  /** Starts the local simulator (paper without a URL). */
  readonly startLocal?: (config: LiveConfig, logger: Logger) => Promise<LocalGateway>;
  readonly signals?: boolean;
}

export async function runTrading(o: RunOptions): Promise<number> {
  let config: LiveConfig;
  try {
    config = loadConfig(o.configFile, liveConfigSchema);
  } catch (error) {
    if (error instanceof ConfigError) throw new UsageError(error.message);
    throw error;
  }
  const logger = o.logger ?? createLogger({ level: config.log.level, name: `tickline-${o.mode}` });
  const strategy = await resolveStrategy(config.strategy.name, path.dirname(path.resolve(o.configFile)));
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
    const configWithAccount: LiveConfig =
      local && config.account.id === undefined && config.account.name === undefined && local.accountId !== undefined
        ? { ...config, account: { id: local.accountId } }
        : config;
    session = await LiveSession.start({
      config: configWithAccount,
      mode: o.mode,
      tradingUrl: local?.tradingUrl ?? config.gateway.url!,
      credentials,
      ...(admin ? { admin } : {}),
      strategy,
      logger,
      account: config.limits,
      ...(local ? { now: local.now, speed: local.speed } : {}),
      statusStream: process.stderr,
    });
  } catch (error) {
    await local?.close();
    throw error;
  }

  const r = session.reconcile;
  process.stdout.write(
    `${o.mode} session on account ${session.account.name} (${session.account.id}); journal ${config.journal}; ` +
      `reconciled: ${r.clean ? 'no differences' : `${r.unjournaledTags.length} unjournaled tags, ${r.foreignOpenOrders.length} foreign open orders, ${r.positionDifferences.length} position differences`}\n`,
  );

  let interrupted = false;
  const onInt = (): void => {
    interrupted = true;
    logger.warn('interrupt: stopping after requests in flight are journaled');
    void session.stop();
  };
  const onKill = (): void => {
    logger.warn('SIGUSR2: kill switch');
    void session.killSwitch('SIGUSR2').then((report) => process.stdout.write(`kill switch: ${JSON.stringify(report)}\n`));
  };
  if (o.signals ?? true) {
    process.on('SIGINT', onInt);
    process.on('SIGTERM', onInt);
    process.on('SIGUSR2', onKill);
  }
  session.run();
  try {
    await session.finished;
    await session.stop();
    const snapshot = session.engine.snapshot();
    process.stdout.write(`\nsession ended: balance ${snapshot.balance.toFixed(2)}, day PnL ${snapshot.dayPnl.toFixed(2)}, state ${session.engine.tradingState().state}\n`);
  } finally {
    if (o.signals ?? true) {
      process.off('SIGINT', onInt);
      process.off('SIGTERM', onInt);
      process.off('SIGUSR2', onKill);
    }
    await local?.close();
  }
  return interrupted ? ExitCode.Interrupted : ExitCode.Ok;
}
