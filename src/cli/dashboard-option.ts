/**
 * The flags of the commands that trade from a config (`paper`, `live`, `run`), and their
 * `--dashboard [host:port]`: the flag's value is optional, which node's parseArgs cannot say, so it is
 * taken out of the arguments first; then the dashboard is started on the sessions.
 */
import path from 'node:path';
import type { LiveConfig } from '../adapters/live/live-config.ts';
import type { LiveSession } from '../adapters/live/trading-session.ts';
import type { Logger } from '../engine/log.ts';
import { parseDashboardAddress, startDashboard } from '../ops/dashboard/dashboard-server.ts';
import { sessionFeed } from '../ops/dashboard/session-feed.ts';
import { parseCommandArgs, type FlagValues, type ParseArgsOptionsConfig } from './args.ts';
import { loadEvaluationRules } from './evaluations.ts';
import { UsageError } from './exit.ts';

export const DASHBOARD_USAGE = `  --dashboard [host:port]  serve the dashboard (127.0.0.1 and a free port by default; the URL with its
                           access token is printed at start; see docs/dashboard.md)`;

/**
 * The arguments without `--dashboard` and its value: `''` when the flag came without one, undefined
 * when it did not come. A following argument that starts with `-` is the next flag, not the value.
 */
export function takeDashboardFlag(args: readonly string[]): { args: string[]; dashboard: string | undefined } {
  const rest: string[] = [];
  let dashboard: string | undefined;
  for (let k = 0; k < args.length; k++) {
    const arg = args[k]!;
    if (arg.startsWith('--dashboard=')) dashboard = arg.slice('--dashboard='.length);
    else if (arg === '--dashboard') {
      const next = args[k + 1];
      if (next !== undefined && !next.startsWith('-')) {
        dashboard = next;
        k++;
      } else dashboard = '';
    } else rest.push(arg);
  }
  // A malformed address is refused before anything starts, not after the session is up.
  if (dashboard !== undefined && dashboard !== '') parseDashboardAddress(dashboard);
  return { args: rest, dashboard };
}

/**
 * The flags of a command that trades from a config (`paper`, `live`, `run`): `--config` (required),
 * `--dashboard [host:port]`, `--help` and the command's own `options`; undefined once `--help` has
 * printed the usage.
 */
export function tradingCommandArgs<const O extends ParseArgsOptionsConfig>(
  argv: readonly string[],
  options: O,
  usage: string,
): { values: FlagValues<O>; config: string; dashboard: string | undefined } | undefined {
  const { args, dashboard } = takeDashboardFlag(argv);
  const values = parseCommandArgs(args, { ...options, ...CONFIG_FLAG }, usage);
  const common = values as { help?: boolean; config?: string };
  if (common.help) {
    process.stdout.write(`${usage}\n`);
    return undefined;
  }
  if (!common.config) throw new UsageError(`--config is required\n\n${usage}`);
  return { values: values as FlagValues<O>, config: common.config, dashboard };
}

const CONFIG_FLAG = { config: { type: 'string' } } as const;

/** Starts the dashboard on running sessions (one, or a node's every account) and prints its URL (with the token). */
export async function openDashboard(
  sessions: readonly { readonly session: LiveSession; readonly config: LiveConfig }[],
  configFile: string,
  address: string,
  logger: Logger,
): Promise<{ close(): Promise<void> }> {
  const where = address === '' ? { host: '127.0.0.1', port: 0 } : parseDashboardAddress(address);
  const baseDir = path.dirname(path.resolve(configFile));
  const feeds = sessions.map(({ session, config }) => {
    const evaluation =
      config.evaluation === undefined ? undefined : loadEvaluationRules(config.evaluation.rules, baseDir);
    return sessionFeed(session, { ...(evaluation === undefined ? {} : { evaluation }), logger });
  });
  const feed = { accounts: () => feeds.flatMap((f) => f.accounts()) };
  const dashboard = await startDashboard({ feed, ...where, logger: logger.child({ part: 'dashboard' }) });
  process.stdout.write(`dashboard: ${dashboard.url}\n`);
  return {
    close: async () => {
      await dashboard.close();
      for (const f of feeds) f.close();
    },
  };
}
