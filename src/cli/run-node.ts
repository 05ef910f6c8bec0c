/**
 * `tickline run --config node.yaml`: the trading node. Every bot of the config on every account it names,
 * in one process over one login (docs/node.md). In paper mode without `gateway.url` the local simulator is
 * started in-process, with the node's accounts made on it. SIGUSR2 flattens every account; Ctrl-C stops.
 */
import path from 'node:path';
import { createInterface } from 'node:readline';
import { config as rxjsConfig, Subscription } from 'rxjs';
import { RejectionTally } from '../adapters/live/event-lines.ts';
import { flattenText } from '../adapters/live/kill-switch.ts';
import { credentialsFromEnv } from '../adapters/live/live-config.ts';
import { renderStatus } from '../adapters/live/status.ts';
import { createLogger } from '../engine/log.ts';
import { accountBots, nodeLogFile } from '../node/node-config.ts';
import { TradingNode, type NodeGateway } from '../node/trading-node.ts';
import { EXIT_CODE_OF_KIND, ExitCode, UsageError } from './exit.ts';
import { printEvents, startLocalSimulator, type LocalGateway } from './paper.ts';
import { checkBotParams, loadBotStrategies, loadNodeConfig } from './trading-config.ts';
import { startNotifications } from '../ops/notify/start-notifications.ts';
import { DASHBOARD_USAGE, openDashboard, tradingCommandArgs } from './dashboard-option.ts';

export const summary = 'Run a trading node: several bots on several accounts in one process (docs/node.md)';

const USAGE = `Usage: tickline run --config <node.yaml>

Runs every bot of the node config on the accounts it names, each account with its own journal, guard and
kill switch, over one login, one connection to each realtime hub and one request budget. Without
gateway.url (paper) the local simulator runs in-process. SIGUSR2 flattens every account; Ctrl-C stops
after requests in flight are journaled. \`tickline flatten --config <node.yaml> --account NAME\` flattens
one account beside the running node.

Options:
  --config <file>   node configuration (see config/node.yaml and docs/node.md)
${DASHBOARD_USAGE}
  --help            this text`;

export async function run(argv: string[]): Promise<number> {
  const parsed = tradingCommandArgs(argv, {}, USAGE);
  if (parsed === undefined) return ExitCode.Ok;
  const { config, dashboard } = parsed;
  return runNode(config, dashboard === undefined ? {} : { dashboard });
}

export async function runNode(
  configFile: string,
  options: { signals?: boolean; dashboard?: string } = {},
): Promise<number> {
  const { config, sessions } = loadNodeConfig(configFile, { env: process.env });
  const logFile = nodeLogFile(config);
  const logger = createLogger({
    level: process.env.TICKLINE_LOG_LEVEL ?? config.log.level,
    name: 'tickline-node',
    file: logFile,
  });
  const strategies = await loadBotStrategies(configFile, config.bots);
  checkBotParams(configFile, config.bots, strategies);
  let local: LocalGateway | undefined;
  if (config.gateway.url === undefined) {
    if (config.mode === 'live') throw new UsageError('a live node needs gateway.url in the config');
    const first = sessions.values().next().value!;
    local = await startLocalSimulator(
      { ...first, journal: path.join(config.journals, 'node.sqlite') },
      logger,
      config.accounts.map((a) => a.name),
    );
    logger.info({ tradingUrl: local.tradingUrl, speed: local.speed }, 'node on the local simulator');
  }
  let node: TradingNode;
  try {
    const adminAuth = process.env.TICKLINE_ADMIN_AUTH;
    const admin =
      local?.adminUrl !== undefined
        ? { url: local.adminUrl, headers: local.adminHeaders ?? {} }
        : config.gateway.adminUrl !== undefined && adminAuth
          ? { url: config.gateway.adminUrl, headers: { [config.gateway.adminAuthHeader]: adminAuth } }
          : undefined;
    const realtimeUrl = local ? local.realtimeUrl : config.gateway.realtimeUrl;
    const gateway: NodeGateway = {
      tradingUrl: local?.tradingUrl ?? config.gateway.url!,
      ...(realtimeUrl === undefined ? {} : { realtimeUrl }),
      ...(admin ? { admin } : {}),
      credentials: local?.credentials ?? credentialsFromEnv(),
      ...(local ? { now: local.now, speed: local.speed } : {}),
      ...(local?.maximumLossVariant ? { maximumLossVariant: local.maximumLossVariant } : {}),
    };
    node = await TradingNode.start({ config, sessionConfigs: sessions, strategies, gateway, logger });
  } catch (error) {
    await local?.close();
    throw error;
  }

  const dashboard =
    options.dashboard === undefined
      ? undefined
      : await openDashboard(
          [...node.sessions].map(([name, session]) => ({ session, config: sessions.get(name)! })),
          configFile,
          options.dashboard,
          logger,
        ).catch(async (error: unknown) => {
          await node.stop();
          await local?.close();
          throw error;
        });
  // Each account's notifications, from its own journal (the targets are the node's).
  const stopNotifications = [...node.sessions.values()].map((session) =>
    startNotifications(config.notify, session, logger.child({ account: session.account.name })),
  );
  const write = (line: string): void => void process.stdout.write(`${line}\n`);
  write(
    `${config.mode} node: ${node.sessions.size} accounts, ${config.bots.length} bots; journals ${config.journals}; log ${logFile}`,
  );
  const printing = new Subscription();
  const tallies = new Map<string, RejectionTally>();
  for (const [name, session] of node.sessions) {
    const r = session.reconcile;
    write(
      `[${name}] ${session.account.name} (${session.account.id}): bots ${accountBots(config, name)
        .map((b) => (b.size === 1 ? b.bot.id : `${b.bot.id} x${b.size}`))
        .join(', ')}; ` +
        `reconciled: ${r.clean ? 'no differences' : `${r.unjournaledTags.length} unjournaled tags, ${r.foreignOpenOrders.length} foreign open orders, ${r.positionDifferences.length} position differences`}`,
    );
    const tally = new RejectionTally((session.options.now ?? Date.now)());
    tallies.set(name, tally);
    printing.add(printEvents(session, (line) => write(`[${name}] ${line}`), tally));
    printing.add(session.notices.subscribe((line) => write(`[${name}] ${line}`)));
  }
  const statusTimer = startStatus(node);

  let interrupted = false;
  const onInt = (): void => {
    if (interrupted) {
      logger.warn('second interrupt: exiting now');
      process.exit(ExitCode.Interrupted);
    }
    interrupted = true;
    logger.warn(
      'interrupt: stopping every account after requests in flight are journaled (Ctrl-C again to exit at once)',
    );
    void node.stop();
  };
  const onKill = (): void => {
    logger.warn('SIGUSR2: kill switch on every account');
    void node.killSwitch('SIGUSR2', 'signal').then((results) => {
      for (const [name, result] of results)
        write(
          `kill switch: ${result instanceof Error ? `${name}: failed: ${result.message}` : flattenText(name, result)}`,
        );
    });
  };
  const signals = options.signals ?? true;
  if (signals) {
    process.on('SIGINT', onInt);
    process.on('SIGTERM', onInt);
    process.on('SIGUSR2', onKill);
  }
  const commands = readCommands(node, write);
  const previousUnhandled = rxjsConfig.onUnhandledError;
  // An error RxJS reports asynchronously cannot be told to one account: every session handles it as its own.
  rxjsConfig.onUnhandledError = (error: unknown) => {
    for (const session of node.sessions.values()) session.failUnattributed(error);
  };
  node.run();
  try {
    await node.finished;
    await node.stop();
    for (const [name, session] of node.sessions) {
      const snapshot = session.engine.snapshot();
      const positions = snapshot.positions
        .filter((p) => p.size !== 0)
        .map((p) => `${p.contractId} ${p.size > 0 ? '+' : ''}${p.size}`);
      write(
        `[${name}] ended: balance ${snapshot.balance.toFixed(2)}, day PnL ${snapshot.dayPnl.toFixed(2)}, ` +
          `position ${positions.join(' ') || 'flat'}, state ${session.engine.tradingState().state}`,
      );
      // Each bot's own share of the account: its line's PnL after fees and its closed trades.
      for (const { bot } of accountBots(config, name)) {
        const own = session.engine.strategySnapshot(bot.id);
        const held = own.positions.filter((p) => p.size !== 0).map((p) => `${p.size > 0 ? '+' : ''}${p.size}`);
        write(
          `[${name}]   ${bot.id}: net PnL ${own.netPnl.toFixed(2)} (fees ${own.fees.toFixed(2)}), ${own.trades} trades, position ${held.join(' ') || 'flat'}`,
        );
      }
    }
    const { sent, shared } = node.barRequests.counts;
    write(`bar requests: ${sent} sent, ${shared} answered from another account's`);
  } finally {
    if (statusTimer) clearInterval(statusTimer);
    commands.close();
    await dashboard?.close();
    await Promise.all(stopNotifications.map((stop) => stop()));
    rxjsConfig.onUnhandledError = previousUnhandled;
    printing.unsubscribe();
    if (signals) {
      process.off('SIGINT', onInt);
      process.off('SIGTERM', onInt);
      process.off('SIGUSR2', onKill);
    }
    await local?.close();
  }
  const failures = [...node.sessions.entries()].flatMap(([name, session]) => [
    ...(session.failure === undefined ? [] : [`[${name}] ${session.failure.message.split('\n')[0]}`]),
    ...[...session.botFailures].map(([bot, error]) => `[${name}] bot ${bot}: ${error.message.split('\n')[0]}`),
  ]);
  for (const line of failures) process.stderr.write(`run: ${line}\n`);
  if (failures.length > 0) return EXIT_CODE_OF_KIND.runtime;
  return interrupted ? ExitCode.Interrupted : ExitCode.Ok;
}

const COMMANDS_HELP =
  'commands: pause <bot> | resume <bot> | flatten <account> | flatten all | status | help (one a line)';

/**
 * Commands typed on standard input while the node runs (a terminal, tmux, or a pipe): pause and resume a
 * bot, flatten an account or all, print the status lines. Each is journaled with its source `command`.
 */
function readCommands(node: TradingNode, write: (line: string) => void): { close(): void } {
  const lines = createInterface({ input: process.stdin, terminal: false });
  lines.on('line', (line) => {
    const [verb, target] = line.trim().split(/\s+/);
    if (verb === undefined || verb === '') return;
    try {
      if ((verb === 'pause' || verb === 'resume') && target !== undefined) {
        const accounts = node.setBotPaused(target, verb === 'pause', 'command');
        write(`${target} ${verb === 'pause' ? 'paused' : 'resumed'} on ${accounts.join(', ')}`);
      } else if (verb === 'flatten' && target !== undefined) {
        void node
          .killSwitch('command', 'command', target === 'all' ? undefined : target)
          .then((results) => {
            for (const [name, result] of results)
              write(
                `kill switch: ${result instanceof Error ? `${name}: failed: ${result.message}` : flattenText(name, result)}`,
              );
          })
          .catch((error: unknown) =>
            write(`flatten ${target}: ${error instanceof Error ? error.message : String(error)}`),
          );
      } else if (verb === 'status') {
        for (const session of node.sessions.values()) write(renderStatus(session.statusInput()));
      } else {
        write(COMMANDS_HELP);
      }
    } catch (error) {
      write(`${line.trim()}: ${error instanceof Error ? error.message : String(error)}`);
    }
  });
  return { close: () => lines.close() };
}

/** A status line per account on a terminal, redrawn every second below the event lines. */
function startStatus(node: TradingNode): NodeJS.Timeout | undefined {
  const stream = process.stderr;
  if (!stream.isTTY) return undefined;
  const timer = setInterval(() => {
    const lines = [...node.sessions.values()].map((s) => renderStatus(s.statusInput()));
    // Back up to the block's first line (a cursor-up of 0 moves one line on most terminals: none then).
    const up = lines.length > 1 ? `\x1b[${lines.length - 1}A` : '';
    stream.write(`\r\x1b[J${lines.join('\n')}${up}\r`);
  }, 1_000);
  timer.unref();
  return timer;
}
