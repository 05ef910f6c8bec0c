/**
 * `--dashboard [host:port]` of `paper` and `live`: the flag's value is optional, which node's parseArgs
 * cannot say, so it is taken out of the arguments first; then the dashboard is started on the session.
 */
import path from 'node:path';
import type { LiveConfig } from '../adapters/live/live-config.ts';
import type { LiveSession } from '../adapters/live/trading-session.ts';
import type { Logger } from '../engine/log.ts';
import { parseDashboardAddress, startDashboard } from '../ops/dashboard/dashboard-server.ts';
import { sessionFeed } from '../ops/dashboard/session-feed.ts';
import { loadEvaluationRules } from './evaluations.ts';

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
