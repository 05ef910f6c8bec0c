/**
 * `tickline flatten --config <file.yaml>`: the kill switch from outside the bot. Cancels every open order
 * and closes every position of the configured account (or of one contract), then reads back until the
 * account is flat. Journals what it did when the config's journal exists. A running bot should be told
 * first (SIGUSR2 halts it and flattens; this command is for a bot that is gone or stuck).
 */
import { existsSync } from 'node:fs';
import { parseCommandArgs } from './args.ts';
import { EXIT_CODE_OF_KIND, ExitCode, UsageError } from './exit.ts';
import { isNodeConfig, loadNodeConfig, loadTradingConfig } from './trading-config.ts';
import { accountJournal } from '../node/node-config.ts';
import { createLogger, type Logger } from '../engine/log.ts';
import { TradingClient } from '../adapters/gateway/trading.ts';
import { credentialsFromEnv } from '../adapters/live/live-config.ts';
import { flattenAccount, flattenText } from '../adapters/live/kill-switch.ts';
import { Journal, JournalError } from '../adapters/live/journal.ts';

export const summary = 'Kill switch: cancel all working orders and flatten all positions of an account';

const USAGE = `Usage: tickline flatten --config <file.yaml> [--contract <id>] [--url <trading url>]
       tickline flatten --config <node.yaml> (--account <name> | --all) [--contract <id>] [--url <trading url>]

Options:
  --config <file>    the paper or live configuration of the account (gateway.url and account), or a
                     node's configuration (then --account or --all says which of its accounts)
  --account <name>   a node's account to flatten
  --all              every account of the node
  --contract <id>    only this contract
  --url <url>        trading URL, overriding gateway.url (for example a local simulator)
  --json             print the result as JSON instead of words
  --help             this text

Credentials come from TICKLINE_USERNAME and TICKLINE_API_KEY.`;

export async function run(args: string[]): Promise<number> {
  const values = parseCommandArgs(
    args,
    {
      config: { type: 'string' },
      contract: { type: 'string' },
      url: { type: 'string' },
      json: { type: 'boolean' },
      account: { type: 'string' },
      all: { type: 'boolean' },
    },
    USAGE,
  );
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return ExitCode.Ok;
  }
  if (!values.config) throw new UsageError(`--config is required\n\n${USAGE}`);
  const targets = flattenTargets(values.config, values.account, values.all ?? false);
  const baseUrl = values.url ?? targets.gateway.url;
  if (!baseUrl) throw new UsageError('no gateway: set gateway.url in the config or pass --url');
  const logger = createLogger({ level: targets.logLevel, name: 'tickline-flatten' });
  const client = new TradingClient({ baseUrl, ...credentialsFromEnv(), logger, timeoutMs: targets.gateway.timeoutMs });
  try {
    const accounts = await client.searchAccounts(true);
    let allFlat = true;
    for (const target of targets.accounts) {
      const account = accounts.find(
        (a) => (target.id === undefined || a.id === target.id) && (target.name === undefined || a.name === target.name),
      );
      if (!account) throw new UsageError(`no active account matches ${JSON.stringify(target)}`);
      const journal = existsSync(target.journal) ? openUnlessHeld(target.journal, logger) : undefined;
      try {
        journal?.record('flatten-command', 'before', null, {
          account: account.name,
          contract: values.contract ?? null,
          source: 'command',
        });
        const result = await flattenAccount(
          client,
          account.id,
          logger,
          values.contract === undefined ? {} : { contractId: values.contract },
        );
        journal?.record('flatten-command', 'after', null, result);
        allFlat &&= result.flat;
        process.stdout.write(
          `${values.json ? JSON.stringify({ account: account.name, ...result }) : flattenText(account.name, result)}\n`,
        );
      } finally {
        journal?.close();
      }
    }
    return allFlat ? ExitCode.Ok : EXIT_CODE_OF_KIND.runtime;
  } finally {
    await client.close();
  }
}

interface FlattenTargets {
  readonly gateway: { readonly url?: string; readonly timeoutMs: number };
  readonly logLevel: string;
  readonly accounts: readonly { readonly name?: string; readonly id?: number; readonly journal: string }[];
}

/** The accounts to flatten: the paper or live config's one, or the node's named one (or all of them). */
function flattenTargets(file: string, account: string | undefined, all: boolean): FlattenTargets {
  if (!isNodeConfig(file)) {
    if (account !== undefined || all)
      throw new UsageError(
        '--account and --all name accounts of a node config (one with bots:); this one has one account',
      );
    const config = loadTradingConfig(file);
    return {
      gateway: config.gateway,
      logLevel: config.log.level,
      accounts: [{ ...config.account, journal: config.journal }],
    };
  }
  const { config } = loadNodeConfig(file);
  const names = config.accounts.map((a) => a.name);
  if ((account === undefined) === !all)
    throw new UsageError(`a node config needs --account <name> or --all (its accounts: ${names.join(', ')})`);
  const chosen = all ? config.accounts : config.accounts.filter((a) => a.name === account);
  if (chosen.length === 0)
    throw new UsageError(`no account named ${account} in ${file} (its accounts: ${names.join(', ')})`);
  return {
    gateway: config.gateway,
    logLevel: config.log.level,
    accounts: chosen.map((a) => ({ name: a.name, journal: accountJournal(config, a) })),
  };
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
