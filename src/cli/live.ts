/**
 * `tickline live --config config/live.yaml --confirm-live`: the same as paper, on a real (non-simulated)
 * account of a configured gateway. Refuses to start without the explicit confirmation flag.
 */
import { ExitCode, UsageError } from './exit.ts';
import { runTrading } from './paper.ts';
import { DASHBOARD_USAGE, tradingCommandArgs } from './dashboard-option.ts';

export const summary = 'Trade a strategy on a live account (needs --confirm-live)';

const USAGE = `Usage: tickline live --config <file.yaml> --confirm-live

Trades real money. Credentials come from TICKLINE_USERNAME and TICKLINE_API_KEY (and TICKLINE_ADMIN_AUTH
for the administration interface); never put them in the config file. SIGUSR2 triggers the kill switch
(cancel working orders, flatten positions); Ctrl-C stops after requests in flight are journaled.

Options:
  --config <file>    live configuration (see config/live.yaml and docs/live.md)
  --confirm-live     required: confirms that orders go to a live account
${DASHBOARD_USAGE}
  --help             this text`;

export async function run(argv: string[]): Promise<number> {
  const parsed = tradingCommandArgs(argv, { 'confirm-live': { type: 'boolean' } }, USAGE);
  if (parsed === undefined) return ExitCode.Ok;
  if (!parsed.values['confirm-live'])
    throw new UsageError('live trading sends real orders: add --confirm-live to confirm');
  return runTrading({ mode: 'live', configFile: parsed.config, dashboard: parsed.dashboard });
}
