/**
 * `tickline flatten --config <file.yaml>`: the kill switch from outside the bot. Cancels every open order
 * and closes every position of the configured account (or of one contract), then reads back until the
 * account is flat. Journals what it did when the config's journal exists. A running bot should be told
 * first (SIGUSR2 halts it and flattens; this command is for a bot that is gone or stuck).
 */
import { existsSync } from 'node:fs';
import { parseCommandArgs } from './args.ts';
import { EXIT_CODE_OF_KIND, ExitCode, UsageError } from './exit.ts';
import { loadTradingConfig } from './trading-config.ts';
import { createLogger, type Logger } from '../engine/log.ts';
import { TradingClient } from '../adapters/gateway/trading.ts';
import { credentialsFromEnv } from '../adapters/live/live-config.ts';
import { flattenAccount, flattenText } from '../adapters/live/kill-switch.ts';
import { Journal, JournalError } from '../adapters/live/journal.ts';

export const summary = 'Kill switch: cancel all working orders and flatten all positions of an account';

const USAGE = `Usage: tickline flatten --config <file.yaml> [--contract <id>] [--url <trading url>]

Options:
  --config <file>    the paper or live configuration of the account (gateway.url and account)
  --contract <id>    only this contract
  --url <url>        trading URL, overriding gateway.url (for example a local simulator)
  --json             print the result as JSON instead of words
  --help             this text

Credentials come from TICKLINE_USERNAME and TICKLINE_API_KEY.`;

export async function run(args: string[]): Promise<number> {
  const values = parseCommandArgs(
    args,
    { config: { type: 'string' }, contract: { type: 'string' }, url: { type: 'string' }, json: { type: 'boolean' } },
    USAGE,
  );
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return ExitCode.Ok;
  }
  if (!values.config) throw new UsageError(`--config is required\n\n${USAGE}`);
  const config = loadTradingConfig(values.config);
  const baseUrl = values.url ?? config.gateway.url;
  if (!baseUrl) throw new UsageError('no gateway: set gateway.url in the config or pass --url');
  const logger = createLogger({ level: config.log.level, name: 'tickline-flatten' });
  const client = new TradingClient({ baseUrl, ...credentialsFromEnv(), logger, timeoutMs: config.gateway.timeoutMs });
  const journal = existsSync(config.journal) ? openUnlessHeld(config.journal, logger) : undefined;
  try {
    const accounts = await client.searchAccounts(true);
    const account = accounts.find(
      (a) =>
        (config.account.id === undefined || a.id === config.account.id) &&
        (config.account.name === undefined || a.name === config.account.name),
    );
    if (!account) throw new UsageError(`no active account matches ${JSON.stringify(config.account)}`);
    journal?.record('flatten-command', 'before', null, { account: account.name, contract: values.contract ?? null });
    const result = await flattenAccount(
      client,
      account.id,
      logger,
      values.contract === undefined ? {} : { contractId: values.contract },
    );
    journal?.record('flatten-command', 'after', null, result);
    process.stdout.write(
      `${values.json ? JSON.stringify({ account: account.name, ...result }) : flattenText(account.name, result)}\n`,
    );
    return result.flat ? ExitCode.Ok : EXIT_CODE_OF_KIND.runtime;
  } finally {
    journal?.close();
    await client.close();
  }
}

/** The running bot holds its journal: the flatten then goes unjournaled here, and that bot's next poll sees it. */
function openUnlessHeld(file: string, logger: Logger): Journal | undefined {
  try {
    return Journal.open(file);
  } catch (error) {
    if (!(error instanceof JournalError) || error.code !== 'JOURNAL_LOCKED') throw error;
    logger.warn(
      { journal: file },
      `${error.message}; flattening without journaling here (the running bot sees the flatten at its next poll)`,
    );
    return undefined;
  }
}
