/**
 * `tickline fetch-bars`: download a range of bars from the gateway into the local SQLite cache, so later
 * backtests of that range send no request. Only the parts not yet cached are asked for; the client's
 * rate limiter paces the requests (retrieveBars has its own budget). Credentials come from the
 * environment (TICKLINE_USERNAME, TICKLINE_API_KEY), never from a file or an argument.
 */
import { SingleBar } from 'cli-progress';
import { TradingClient } from '../adapters/gateway/trading.ts';
import { BarCache } from '../data/bar-cache.ts';
import { loadGatewayBars } from '../data/gateway-bars.ts';
import { DEFAULT_BAR_CACHE } from '../adapters/backtest/backtest-config.ts';
import { resolveContract, UnknownContractError } from '../adapters/backtest/contract.ts';
import { frontMonthWindows } from '../data/continuous.ts';
import { TicklineError } from '../engine/errors.ts';
import { CALENDAR } from '../market/contract-months.ts';
import { exchangeCalendarFor } from '../market/contract-hours.ts';
import { createLogger } from '../engine/log.ts';
import { isoDate } from '../engine/trading-day.ts';
import { timeframe as makeTimeframe } from '../engine/timeframe.ts';
import type { BarUnit } from '../engine/types.ts';
import { parseCommandArgs } from './args.ts';
import { ExitCode, UsageError } from './exit.ts';

export const summary = 'Download a range of bars from the gateway into the local bar cache';

const USAGE = `Usage: tickline fetch-bars --contract <root|id|name> --from <date> --to <date> [options]

Downloads bars into the SQLite cache used by backtests with \`data.source: gateway\`. A root fetches
each front month over the part of the range it is in front (the calendar's roll dates), as a backtest
of \`contract: ES\` reads them. A range with no bar at all is an error (exit 2) that says why it may be
(the month was not traded then, the market was closed, the gateway's history starts later: the local
simulator's is its last 30 days). An empty answer for a range that reaches into today is not recorded as
fetched: the next run asks again.

Options:
  --contract <c>      Root (ES: each front month), contract id (CON.F.US.EP.H26) or name (ESH6, ESH26)  (required)
  --from <date>       Start, ISO date or time (UTC when no offset), or now-7d, now-12h, now-30m (required)
  --to <date>         End (exclusive), as --from; now is the moment the command runs     (required)
  --unit <u>          second|minute|hour|day|week|month (default minute)
  --unit-number <n>   Units per bar (default 1)
  --live              Use the live data subscription (default: the sim one)
  --cache <file>      Cache file (default ${DEFAULT_BAR_CACHE})
  --base-url <url>    Trading interface URL (default: $TICKLINE_BASE_URL)
  --force             Fetch the whole range again, even the parts already cached
  --days-before-expiry <n>  With a root: the front month moves n business days before expiry
                      (default: the root's own rule; match the backtest's roll.daysBeforeExpiry)
  -h, --help          This help

Environment: TICKLINE_USERNAME, TICKLINE_API_KEY (required), TICKLINE_BASE_URL.
Exit codes: 0 done, 2 bad usage, missing credentials or no bar in the whole range, 1 the gateway failed.`;

const UNITS: readonly BarUnit[] = ['second', 'minute', 'hour', 'day', 'week', 'month'];

/** `now`, or `now-<n>d` / `now-<n>h` / `now-<n>m`: a range relative to the moment the command runs. */
const RELATIVE = /^now(?:-(\d+)([dhm]))?$/;
const UNIT_MS = { d: 86_400_000, h: 3_600_000, m: 60_000 } as const;

export function parseTime(text: string, option: string, now = Date.now()): number {
  const relative = RELATIVE.exec(text);
  if (relative !== null)
    return relative[1] === undefined ? now : now - Number(relative[1]) * UNIT_MS[relative[2] as keyof typeof UNIT_MS];
  const iso = /^\d{4}-\d{2}-\d{2}$/.test(text)
    ? `${text}T00:00:00Z`
    : /[zZ]|[+-]\d{2}:\d{2}$/.test(text)
      ? text
      : `${text}Z`;
  const ms = Date.parse(iso);
  if (Number.isNaN(ms))
    throw new UsageError(`${option}: "${text}" is not an ISO 8601 date or time (or now, now-7d, now-12h, now-30m)`);
  return ms;
}

export async function run(args: string[]): Promise<number> {
  const values = parseCommandArgs(
    args,
    {
      contract: { type: 'string' },
      from: { type: 'string' },
      to: { type: 'string' },
      unit: { type: 'string', default: 'minute' },
      'unit-number': { type: 'string', default: '1' },
      live: { type: 'boolean', default: false },
      cache: { type: 'string', default: DEFAULT_BAR_CACHE },
      'base-url': { type: 'string' },
      force: { type: 'boolean', default: false },
      'days-before-expiry': { type: 'string' },
    },
    USAGE,
  );
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return ExitCode.Ok;
  }
  const missing = (['contract', 'from', 'to'] as const).filter((k) => values[k] === undefined);
  if (missing.length > 0) throw new UsageError(`missing ${missing.map((m) => `--${m}`).join(', ')}\n\n${USAGE}`);
  if (!UNITS.includes(values.unit as BarUnit)) throw new UsageError(`--unit must be one of ${UNITS.join(', ')}`);
  const unitNumber = Number(values['unit-number']);
  if (!Number.isInteger(unitNumber) || unitNumber < 1)
    throw new UsageError('--unit-number must be a positive whole number');
  const now = Date.now();
  const from = parseTime(values.from!, '--from', now);
  const to = parseTime(values.to!, '--to', now);
  if (from >= to)
    throw new UsageError(
      `the range ends before it starts: --to ${values.to} (${new Date(to).toISOString()}) must be after --from ${values.from} (${new Date(from).toISOString()})`,
    );
  const baseUrl = values['base-url'] ?? process.env.TICKLINE_BASE_URL;
  const userName = process.env.TICKLINE_USERNAME;
  const apiKey = process.env.TICKLINE_API_KEY;
  const unset = [
    baseUrl ? undefined : 'TICKLINE_BASE_URL (or --base-url)',
    userName ? undefined : 'TICKLINE_USERNAME',
    apiKey ? undefined : 'TICKLINE_API_KEY',
  ].filter(Boolean);
  if (unset.length > 0)
    throw new UsageError(`set ${unset.join(', ')} in the environment (credentials are never read from files)`);
  if (!/^https?:$/.test(URL.parse(baseUrl!)?.protocol ?? ''))
    throw new UsageError(
      `${values['base-url'] === undefined ? 'TICKLINE_BASE_URL' : '--base-url'}: "${baseUrl}" is not an http(s) URL (npm run sim prints its trading URL, e.g. http://127.0.0.1:5005)`,
    );

  let contract: ReturnType<typeof resolveContract>;
  try {
    contract = resolveContract(values.contract!, from);
  } catch (error) {
    if (error instanceof UnknownContractError) throw new UsageError(`--contract: ${error.message}`, { cause: error });
    throw error;
  }
  const daysText = values['days-before-expiry'];
  const days = daysText === undefined ? undefined : Number(daysText);
  if (days !== undefined && !(Number.isInteger(days) && days >= 0))
    throw new UsageError('--days-before-expiry must be a whole number >= 0');
  const continuous = contract.continuous;
  if (days !== undefined && continuous === undefined)
    throw new UsageError('--days-before-expiry applies to a root (ES), not to one month');
  const windows = continuous
    ? frontMonthWindows(continuous.root, continuous.calendar, from, to, days)
    : [{ contractId: contract.id, name: contract.name, from, to }];
  const logger = createLogger({ name: 'fetch-bars' });
  const client = new TradingClient({ baseUrl: baseUrl!, userName: userName!, apiKey: apiKey!, logger });
  const cache = new BarCache(values.cache!);
  const progress = process.stderr.isTTY
    ? new SingleBar({ format: 'fetching {bars} bars, {pages} pages [{range}]', hideCursor: true })
    : null;
  progress?.start(1, 0, { bars: 0, pages: 0, range: '' });
  try {
    const lines: string[] = [];
    const empty: string[] = [];
    let total = 0;
    for (const window of windows) {
      const result = await loadGatewayBars(client, cache, {
        contractId: window.contractId,
        timeframe: makeTimeframe(values.unit as BarUnit, unitNumber),
        live: values.live!,
        grid: contract.grid,
        from: window.from,
        to: window.to,
        now: Date.now(),
        force: values.force!,
        onPage: (info) =>
          progress?.update(0, {
            bars: info.bars,
            pages: info.pages,
            range: `${new Date(info.range[0]).toISOString()} .. ${new Date(info.range[1]).toISOString()}`,
          }),
      });
      lines.push(
        windowLine(window, result.bars.time.length, result.fetched.length, result.unrecorded.length, values.cache!),
      );
      total += result.bars.time.length;
      if (result.bars.time.length === 0) empty.push(`${window.contractId}: ${whyNoBars(window)}`);
    }
    progress?.stop();
    process.stdout.write(`${lines.join('\n')}\n`);
    // Nothing at all is an error (exit 2, as for a bad range: fix the range or the contract and run again),
    // not a success: a script's `fetch-bars && backtest` must stop here, and a quant reading "0 bars in
    // cache" with exit 0 would take the fetch for done. A month empty among others that returned bars is
    // a warning: a root's range may well start before the gateway's history does.
    if (total === 0) throw new NoBarsError(`no bars for the whole range\n${empty.join('\n')}`);
    for (const line of empty) process.stderr.write(`fetch-bars: warning: no bars for ${line}\n`);
    return ExitCode.Ok;
  } finally {
    progress?.stop();
    cache.close();
    await client.close();
  }
}

/** A fetch whose whole range returned no bar (exit 2: the range, the contract or the gateway's history). */
export class NoBarsError extends TicklineError {
  override readonly name = 'NoBarsError';
  readonly kind = 'input';
  readonly code = 'NO_BARS';
}

/**
 * Why a month's window may have no bars, most telling first: the month was not traded then, the market
 * was closed over the whole window, or the gateway's history does not reach back that far (the
 * simulator's history is synthetic and starts `historyDays`, 30 by default, before the simulator did).
 */
export function whyNoBars(window: { contractId: string; from: number; to: number }): string {
  const month = CALENDAR.byId(window.contractId);
  if (month !== undefined) {
    if (window.from > month.expiry)
      return `${month.name} expired on ${isoDate(month.expiry)}, before the range (name the root, ${month.spec.root}, for the front month of each date)`;
    if (CALENDAR.status(month, window.to - 1) === 'unlisted')
      return `${month.name} was not yet listed over the range (name the root, ${month.spec.root}, for the front month of each date)`;
    const hours = exchangeCalendarFor('weeklyHours');
    const root = month.spec.root.toUpperCase();
    if (hours.knows(root) && !hours.isOpen(root, window.from) && hours.nextOpen(root, window.from) >= window.to)
      return `the market was closed over the whole range (${isoDate(window.from)} .. ${isoDate(window.to)}: a weekend, a holiday or the daily break)`;
  }
  return 'the gateway has no history there: the local simulator (npm run sim) has synthetic bars only from historyDays (30 by default) before it started, so ask for recent dates (--from now-7d --to now); a gateway keeps a limited history too';
}

/** What was fetched for one contract month. */
function windowLine(
  window: { contractId: string; from: number; to: number },
  bars: number,
  fetched: number,
  unrecorded: number,
  cache: string,
): string {
  const what = fetched === 0 ? 'nothing to fetch' : `fetched ${fetched} range(s)`;
  const open =
    unrecorded === 0 ? '' : `; ${unrecorded} empty range(s) reaching into today not recorded, asked again next time`;
  return `${window.contractId}: ${bars} bars in cache for ${new Date(window.from).toISOString()} .. ${new Date(window.to).toISOString()} (${what}${open}) -> ${cache}`;
}
