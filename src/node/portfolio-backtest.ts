/**
 * A node's portfolio on history (`tickline backtest --config node.yaml`): every account of the node config
 * as one backtest of its own, under its own limits, evaluation and guard, with all its bots in one engine
 * (each with its id, parameters, size on that account and timeframe), so what two bots of one account net
 * is netted as the gateway would. The history is loaded once and replayed for every account; each account
 * writes the usual result files and report, and the node a summary per account and per strategy.
 *
 * One history means one contract: every bot of the node must trade the same root (a bot of another
 * contract is a config error, not a silent replay of the wrong prices).
 */
import path from 'node:path';
import { mkdirSync } from 'node:fs';
import { AccountConfig, type BacktestConfig } from '../adapters/backtest/backtest-config.ts';
import { resolveContract, type ContractInput } from '../adapters/backtest/contract.ts';
import {
  configuredContract,
  loadHistory,
  runDefinition,
  type BacktestOutcome,
  type History,
} from '../adapters/backtest/definition-run.ts';
import { writeBacktestOutputs, type WrittenFiles } from '../adapters/backtest/result-files.ts';
import { writeJson } from '../adapters/backtest/outputs.ts';
import type { BacktestStrategy } from '../adapters/backtest/run.ts';
import type { LiveConfig } from '../adapters/live/live-config.ts';
import { followedSymbol } from '../adapters/live/month-follower.ts';
import type { EvaluationSource } from '../engine/evaluation-rules.ts';
import type { Logger } from '../engine/log.ts';
import type { StrategyModule } from '../engine/strategy.ts';
import { timeframeLabel } from '../engine/timeframe.ts';
import { CALENDAR } from '../market/contract-months.ts';
import { headlineVerdict } from '../report/format.ts';
import type { DecisionSequence } from '../report/report-types.ts';
import { computeStatistics } from '../report/statistics.ts';
import { accountBots, baseTimeframe, type NodeBot, type NodeConfig } from './node-config.ts';

export interface NodeBacktestInput {
  /** The node config, its paths resolved; it must have a `backtest` section (`nodeBacktestIssues`). */
  readonly config: NodeConfig;
  /** Names the output folder `out/<name>/`. */
  readonly name: string;
  /** Each account's session config as loaded: its limits and risk with its evaluation applied. */
  readonly sessions: ReadonlyMap<string, LiveConfig>;
  /** The evaluation each account is judged by, by account name. */
  readonly evaluations?: ReadonlyMap<string, EvaluationSource>;
  /** Each bot's strategy module, by bot id. */
  readonly strategies: ReadonlyMap<string, StrategyModule>;
  readonly logger?: Logger;
  readonly cwd?: string;
}

export interface NodeAccountRun {
  readonly account: string;
  readonly outcome: BacktestOutcome;
}

export interface NodeBacktestResult {
  readonly name: string;
  readonly history: History;
  /** Accounts no bot trades, left out. */
  readonly idle: readonly string[];
  readonly accounts: readonly NodeAccountRun[];
}

/** A config issue of a node backtest, at its path in the file. */
export interface NodeBacktestIssue {
  readonly path: readonly (string | number)[];
  readonly message: string;
}

/** The root a bot's contract entry belongs to (`ES` for `F.US.EP`, `ES`, `CON.F.US.EP.Z26`), or the entry itself. */
function rootOf(entry: string): string {
  const symbol = followedSymbol(entry);
  if (symbol !== undefined) return CALENDAR.roots().find((r) => `F.US.${r.symbol}` === symbol)!.root;
  return CALENDAR.resolve(entry, Date.now())?.spec.root ?? entry;
}

/**
 * The contract the node's history is of: `backtest.contract`, else the bots' own in the backtest's terms
 * (a followed root or symbol: the root, rolled at each front month's end as live follows it; one pinned
 * month: that month; several forms of one root: the root).
 */
export function nodeContract(config: NodeConfig): ContractInput {
  if (config.backtest?.contract !== undefined) return config.backtest.contract;
  const entries = [...new Set(config.bots.flatMap((b) => b.contracts))];
  if (entries.length === 1 && followedSymbol(entries[0]!) === undefined) return entries[0]!;
  return rootOf(entries[0]!);
}

/** Why the node config cannot be backtested, each at its path; empty when it can. */
export function nodeBacktestIssues(config: NodeConfig): NodeBacktestIssue[] {
  const backtest = config.backtest;
  if (backtest === undefined)
    return [
      {
        path: [],
        message:
          'no backtest section: add backtest: { data: { source: synthetic } } (or csv, gateway) to run the node on history',
      },
    ];
  const issues: NodeBacktestIssue[] = [];
  const first = config.bots[0]!;
  const root = rootOf(first.contracts[0]!);
  config.bots.forEach((bot, i) => {
    if (bot.contracts.length > 1)
      issues.push({
        path: ['bots', i, 'contracts'],
        message: `a node backtest replays one contract's history: bot ${bot.id} trades ${bot.contracts.length} contracts (${bot.contracts.join(', ')})`,
      });
    else if (rootOf(bot.contracts[0]!) !== root)
      issues.push({
        path: ['bots', i, 'contracts'],
        message: `a node backtest replays one contract's history: bot ${bot.id} trades ${bot.contracts[0]} but ${first.id} trades ${first.contracts[0]}; backtest them in separate node files`,
      });
  });
  if (backtest.from !== undefined && backtest.to !== undefined && backtest.from >= backtest.to)
    issues.push({
      path: ['backtest', 'to'],
      message: `the range ends before it starts: to (${new Date(backtest.to).toISOString()}) must be after from (${new Date(backtest.from).toISOString()})`,
    });
  if (issues.length > 0) return issues;
  try {
    resolveContract(nodeContract(config), dataStart(config), CALENDAR);
  } catch (error) {
    issues.push({
      path: backtest.contract === undefined ? ['bots', 0, 'contracts'] : ['backtest', 'contract'],
      message: `${error instanceof Error ? error.message : String(error)}${backtest.contract === undefined ? '; or set backtest.contract' : ''}`,
    });
  }
  return issues;
}

/** Where the data starts, for a symbol's front month and a one-digit year (as a backtest definition reads them). */
function dataStart(config: NodeConfig): number | undefined {
  const backtest = config.backtest!;
  return backtest.from ?? (backtest.data.source === 'synthetic' ? backtest.data.start : undefined);
}

/** One account's backtest definition: the node's history settings, the account's own rules, its bots' finest bars. */
export function accountBacktestConfig(
  input: Pick<NodeBacktestInput, 'config' | 'name' | 'sessions'>,
  account: string,
): BacktestConfig {
  const { config } = input;
  const backtest = config.backtest!;
  const bots = accountBots(config, account).map((b) => b.bot);
  const session = input.sessions.get(account);
  const limits = session?.limits ?? config.accounts.find((a) => a.name === account)!.limits;
  const timeframe = baseTimeframe(bots.map((b) => b.timeframe)) ?? { unit: 'minute' as const, unitNumber: 1 };
  return {
    name: account,
    title: `${input.name} / ${account}: ${bots.map((b) => b.id).join(', ')}`,
    strategy: { name: bots[0]?.strategy ?? 'none', params: bots[0]?.params ?? {} },
    contract: nodeContract(config),
    roots: [],
    roll: {
      mode: config.roll.mode,
      ...(config.roll.daysBeforeExpiry === undefined ? {} : { daysBeforeExpiry: config.roll.daysBeforeExpiry }),
      by: 'calendar',
      adjust: 'difference',
    },
    gaps: backtest.gaps,
    timeframe,
    data: backtest.data,
    ...(backtest.from === undefined ? {} : { from: backtest.from }),
    ...(backtest.to === undefined ? {} : { to: backtest.to }),
    account: AccountConfig.parse({ startingBalance: backtest.startingBalance, ...limits }),
    fills: backtest.fills,
    market: backtest.market,
    risk: session?.risk ?? config.accounts.find((a) => a.name === account)!.risk ?? config.risk,
    outputs: backtest.outputs,
  };
}

/**
 * One bot alone on one of its accounts, as a single backtest definition (what `tickline optimize` sweeps):
 * the account's rules and the node's history, the bot's strategy, parameters and timeframe, at size 1.
 */
export function botBacktestConfig(
  input: Pick<NodeBacktestInput, 'config' | 'name' | 'sessions'>,
  bot: NodeBot,
  account: string,
): BacktestConfig {
  return {
    ...accountBacktestConfig(input, account),
    name: `${input.name}-${bot.id}`,
    title: `${input.name} / ${account}: ${bot.id}`,
    strategy: { name: bot.strategy, params: bot.params },
    timeframe: bot.timeframe,
  };
}

/** The bots of an account as the engine's instances: their ids, parameters, sizes there and timeframes. */
export function accountInstances(
  config: NodeConfig,
  account: string,
  strategies: ReadonlyMap<string, StrategyModule>,
): BacktestStrategy[] {
  const bots = accountBots(config, account);
  const base = baseTimeframe(bots.map((b) => b.bot.timeframe));
  return bots.map(({ bot, size }) => {
    const strategy = strategies.get(bot.id);
    if (strategy === undefined) throw new RangeError(`no strategy module loaded for bot ${bot.id}`);
    const own = timeframeLabel(bot.timeframe) !== (base === undefined ? '' : timeframeLabel(base));
    return { id: bot.id, strategy, params: bot.params, size, ...(own ? { timeframe: bot.timeframe } : {}) };
  });
}

/** Run every account on the one history; writes nothing. */
export async function runNodeBacktest(input: NodeBacktestInput): Promise<NodeBacktestResult> {
  const { config } = input;
  const traded = config.accounts.filter((a) => accountBots(config, a.name).length > 0).map((a) => a.name);
  const idle = config.accounts.map((a) => a.name).filter((name) => !traded.includes(name));
  const configs = traded.map((account) => accountBacktestConfig(input, account));
  const first = configs[0]!;
  const options = {
    ...(input.cwd === undefined ? {} : { cwd: input.cwd }),
    ...(input.logger ? { logger: input.logger } : {}),
  };
  const history = await loadHistory(first, configuredContract(first), options);
  const accounts: NodeAccountRun[] = [];
  for (const [k, account] of traded.entries()) {
    const accountConfig = configs[k]!;
    const evaluation = input.evaluations?.get(account);
    const run = await runDefinition(accountConfig, account, {
      ...options,
      history,
      strategies: accountInstances(config, account, input.strategies),
      ...(evaluation === undefined ? {} : { evaluation }),
    });
    const statistics = computeStatistics(run.report, accountConfig.gaps.longerThanHours * 3_600_000);
    accounts.push({ account, outcome: { ...run, statistics } });
  }
  return { name: input.name, history, idle, accounts };
}

export interface NodeSummaryStrategy {
  readonly id: string;
  readonly strategy: string;
  readonly size: number;
  readonly netPnl: number;
  readonly trades: number;
  readonly winRate: number | null;
  readonly position: number;
  /** Its intents the account's guard refused, by reason code. */
  readonly refused: Readonly<Record<string, number>>;
}

export interface NodeSummaryAccount {
  readonly account: string;
  /** PASSED, FAILED or NOT PASSED: by its evaluation where it has one, else by its account rules. */
  readonly verdict: string;
  readonly why: string;
  /** No permanent violation (the exit code's test, as a single backtest's). */
  readonly passed: boolean;
  readonly netPnl: number;
  readonly maxDrawdown: number;
  readonly trades: number;
  readonly winRate: number | null;
  /** Intents the guard refused, by reason code (every bot's and the engine's own). */
  readonly refused: Readonly<Record<string, number>>;
  /** Rule breaks, each `rule tradingDay`. */
  readonly breaches: readonly string[];
  readonly orderListHash: string;
  /** The strategy that threw and stopped this account's run. */
  readonly failure: string | null;
  readonly strategies: readonly NodeSummaryStrategy[];
}

export interface NodeSummary {
  readonly name: string;
  readonly contract: string;
  readonly data: string;
  readonly bars: number;
  readonly netPnl: number;
  readonly accounts: readonly NodeSummaryAccount[];
  readonly idle: readonly string[];
}

export function nodeSummary(result: NodeBacktestResult): NodeSummary {
  const accounts = result.accounts.map(({ account, outcome }): NodeSummaryAccount => {
    const { statistics, report, result: run } = outcome;
    const verdict = headlineVerdict(report);
    return {
      account,
      verdict: verdict.badge,
      why: verdict.text,
      passed: run.passed,
      netPnl: statistics.netPnl,
      maxDrawdown: statistics.maxDrawdown,
      trades: statistics.trades,
      winRate: statistics.winRate,
      refused: run.rejections,
      breaches: run.violations.map((v) => `${v.rule} ${v.tradingDay}`),
      orderListHash: run.orderListHash,
      failure: run.failure === undefined ? null : run.failure.message.split('\n')[0]!,
      strategies: (report.strategies ?? []).map((s) => ({
        id: s.id,
        strategy: s.strategy,
        size: s.size,
        netPnl: s.netPnl,
        trades: s.trades,
        winRate: s.winRate,
        position: s.position,
        refused: refusedBy(run.decisions, s.id),
      })),
    };
  });
  const first = result.accounts[0]?.outcome;
  return {
    name: result.name,
    contract: first === undefined ? '' : first.contract.name,
    data: result.history.description,
    bars: result.history.bars.time.length,
    netPnl: Math.round(accounts.reduce((sum, a) => sum + a.netPnl, 0) * 100) / 100,
    accounts,
    idle: result.idle,
  };
}

/** One bot's refused intents by reason code, in the order each code first occurred. */
function refusedBy(decisions: DecisionSequence, strategyId: string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const d of decisions)
    if (d.strategyId === strategyId && !d.result.accepted) counts[d.result.code] = (counts[d.result.code] ?? 0) + 1;
  return counts;
}

const refusedText = (counts: Readonly<Record<string, number>>): string =>
  Object.entries(counts)
    .map(([code, n]) => `${code} ${n}`)
    .join(', ');

const money = (value: number): string => value.toFixed(2);
const rate = (value: number | null): string => (value === null ? '-' : `${(value * 100).toFixed(1)}%`);

/** The summary as a table: a row per account, under it a row per strategy of that account. */
export function renderNodeSummary(summary: NodeSummary): string {
  const rows: string[][] = [
    ['account / bot', 'verdict / strategy', 'net PnL', 'max DD', 'trades', 'win rate', 'breaches'],
  ];
  for (const a of summary.accounts) {
    rows.push([
      a.account,
      a.verdict,
      money(a.netPnl),
      money(a.maxDrawdown),
      String(a.trades),
      rate(a.winRate),
      String(a.breaches.length),
    ]);
    for (const s of a.strategies)
      rows.push([
        `  ${s.id}${s.size === 1 ? '' : ` x${s.size}`}`,
        s.strategy,
        money(s.netPnl),
        '',
        String(s.trades),
        rate(s.winRate),
        '',
      ]);
  }
  rows.push(['node', '', money(summary.netPnl), '', '', '', '']);
  const widths = rows[0]!.map((_, k) => Math.max(...rows.map((r) => r[k]!.length)));
  // Names and verdicts read left to right, figures line up on their last digit.
  const line = (r: string[]) =>
    r
      .map((cell, k) => (k < 2 ? cell.padEnd(widths[k]!) : cell.padStart(widths[k]!)))
      .join('  ')
      .trimEnd();
  const out = [
    `${summary.name}: node backtest of ${summary.accounts.length} account(s) on ${summary.contract}, ${summary.data}, ${summary.bars} bars`,
    ...rows.map(line),
  ];
  for (const a of summary.accounts) {
    if (a.why !== '') out.push(`  ${a.account}: ${a.why}`);
    for (const s of a.strategies)
      if (Object.keys(s.refused).length > 0) out.push(`  ${a.account}: ${s.id} refused ${refusedText(s.refused)}`);
    for (const b of a.breaches) out.push(`  ${a.account}: breach ${b}`);
    if (a.failure !== null) out.push(`  ${a.account}: stopped: ${a.failure}`);
  }
  for (const name of summary.idle) out.push(`  ${name}: no bot trades this account; not run`);
  return `${out.join('\n')}\n`;
}

/** Each account's result files and report in `<outDir>/<account>/`, and the node's summary in `<outDir>/node-summary.json`. */
export async function writeNodeBacktest(
  outDir: string,
  result: NodeBacktestResult,
): Promise<{ summary: NodeSummary; file: string; accounts: ReadonlyMap<string, WrittenFiles> }> {
  const accounts = new Map<string, WrittenFiles>();
  for (const { account, outcome } of result.accounts)
    accounts.set(account, await writeBacktestOutputs(path.join(outDir, safeName(account)), outcome));
  const summary = nodeSummary(result);
  mkdirSync(outDir, { recursive: true });
  const file = path.join(outDir, 'node-summary.json');
  writeJson(file, summary, result.accounts[0]?.outcome.outputs.json ?? 'compact');
  return { summary, file, accounts };
}

/** An account name as a folder name (a gateway's names may hold characters a file system refuses). */
function safeName(account: string): string {
  return account.replace(/[^A-Za-z0-9._-]/g, '_');
}
