/**
 * Text of numbers, times and the statistics table, shared by the terminal summary and the HTML report.
 * Never locale-dependent (no toLocaleString), so the output is the same on every machine.
 */
import type { ReportInput, RuleName, Statistics } from './report-types.ts';

const DASH = '-';

function groupThousands(digits: string): string {
  return digits.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/** `-1,234.50`; a dash for null. */
export function formatMoney(value: number | null): string {
  if (value === null) return DASH;
  const [whole, fraction] = Math.abs(value).toFixed(2).split('.') as [string, string];
  const sign = value < 0 && Math.abs(value) >= 0.005 ? '-' : '';
  return `${sign}${groupThousands(whole)}.${fraction}`;
}

export function formatNumber(value: number | null, decimals = 2): string {
  if (value === null) return DASH;
  const text = value.toFixed(decimals);
  return text.startsWith('-') && Number(text) === 0 ? text.slice(1) : text;
}

/** A fraction as a percentage: 0.4567 -> `45.67%`. */
export function formatFraction(value: number | null): string {
  return value === null ? DASH : `${formatNumber(value * 100)}%`;
}

/** `2024-01-10 22:59` (UTC), or `2024-01-10 22:59:30` when the instant has seconds. */
export function formatTime(timeMs: number | null): string {
  if (timeMs === null) return DASH;
  const iso = new Date(timeMs).toISOString();
  const withSeconds = iso.slice(17, 19) !== '00' || iso.slice(20, 23) !== '000';
  return `${iso.slice(0, 10)} ${iso.slice(11, withSeconds ? 19 : 16)}`;
}

/** `3d 4h 05m`, `2h 00m`, `45m`, `30s`. */
export function formatDuration(ms: number): string {
  if (ms < 60_000) return `${Math.round(ms / 1000)}s`;
  const totalMinutes = Math.floor(ms / 60_000);
  const days = Math.floor(totalMinutes / 1440);
  const hours = Math.floor((totalMinutes % 1440) / 60);
  const minutes = totalMinutes % 60;
  if (days > 0) return `${days}d ${hours}h ${String(minutes).padStart(2, '0')}m`;
  if (hours > 0) return `${hours}h ${String(minutes).padStart(2, '0')}m`;
  return `${minutes}m`;
}

export const RULE_LABELS: Readonly<Record<RuleName, string>> = {
  dailyLossLimit: 'Daily loss limit',
  maximumLossLimit: 'Maximum loss limit',
  personalDailyLossLimit: 'Personal daily loss limit',
  personalDailyProfitTarget: 'Personal daily profit target',
};

export const VIOLATION_TYPE_LABELS: Readonly<Record<3 | 5 | 6, string>> = {
  3: '3 personal daily loss limit',
  5: '5 personal daily profit target',
  6: '6 rule break',
};

export const DURATION_LABELS: Readonly<Record<0 | 1 | 2, string>> = {
  0: '0 personal',
  1: '1 permanent',
  2: '2 temporary',
};

export interface StatisticRow {
  readonly label: string;
  readonly value: string;
}

/** The statistics table, in the order a reader scans it: result, trades, risk, risk-adjusted return. */
export function statisticRows(stats: Statistics): StatisticRow[] {
  const profitFactor =
    stats.profitFactor !== null
      ? formatNumber(stats.profitFactor)
      : stats.winningTrades > 0
        ? 'inf (no losing trade)'
        : DASH;
  return [
    { label: 'Net PnL', value: formatMoney(stats.netPnl) },
    { label: 'Gross PnL', value: formatMoney(stats.grossPnl) },
    { label: 'Fees', value: formatMoney(stats.fees) },
    { label: 'Return', value: stats.returnPct === null ? DASH : `${formatNumber(stats.returnPct)}%` },
    { label: 'Starting balance', value: formatMoney(stats.startingBalance) },
    { label: 'Ending equity', value: formatMoney(stats.endingEquity) },
    { label: 'Trades', value: String(stats.trades) },
    { label: 'Contracts (round turns)', value: String(stats.contracts) },
    {
      label: 'Won / lost / even',
      value: `${stats.winningTrades} / ${stats.losingTrades} / ${stats.neutralTrades}`,
    },
    { label: 'Win rate (after fees)', value: formatFraction(stats.winRate) },
    { label: 'Profit factor', value: profitFactor },
    { label: 'Expectancy per trade', value: formatMoney(stats.expectancy) },
    { label: 'Average win', value: formatMoney(stats.averageWin) },
    { label: 'Average loss', value: formatMoney(stats.averageLoss) },
    { label: 'Largest win', value: formatMoney(stats.largestWin) },
    { label: 'Largest loss', value: formatMoney(stats.largestLoss) },
    { label: 'Max drawdown', value: formatMoney(stats.maxDrawdown) },
    { label: 'Max drawdown %', value: `${formatNumber(stats.maxDrawdownPct)}%` },
    {
      label: 'Max drawdown from / to',
      value: `${formatTime(stats.maxDrawdownPeakTime)} / ${formatTime(stats.maxDrawdownTroughTime)}`,
    },
    { label: 'Longest drawdown', value: formatDuration(stats.maxDrawdownDurationMs) },
    { label: 'Sharpe (daily, x sqrt 252)', value: formatNumber(stats.sharpe) },
    { label: 'Sortino (daily, x sqrt 252)', value: formatNumber(stats.sortino) },
    { label: 'Exposure', value: formatFraction(stats.exposure) },
    { label: 'Trading days', value: String(stats.tradingDays) },
  ];
}

/** The one verdict a report leads with. */
export interface HeadlineVerdict {
  readonly status: 'passed' | 'failed' | 'open';
  /** `PASSED`, `FAILED` or (an evaluation neither passed nor failed) `NOT PASSED`. */
  readonly badge: string;
  readonly text: string;
}

/**
 * The verdict at the top of the report and in the terminal summary: the evaluation's when the run has one
 * (its rules decide whether it passed: target, days, consistency), else the account's (no permanent
 * violation, the target where one is set), so the page never shows two verdicts that disagree.
 */
export function headlineVerdict(run: Pick<ReportInput, 'passed' | 'verdict' | 'evaluation'>): HeadlineVerdict {
  const evaluation = run.evaluation;
  if (evaluation !== undefined) {
    const status = evaluation.outcome.status;
    return {
      status,
      badge: status === 'passed' ? 'PASSED' : status === 'failed' ? 'FAILED' : 'NOT PASSED',
      text: `${evaluation.rules.name}: ${evaluation.outcome.summary}`,
    };
  }
  return { status: run.passed ? 'passed' : 'failed', badge: run.passed ? 'PASSED' : 'FAILED', text: run.verdict ?? '' };
}

/**
 * A compact aligned table for the terminal: the verdict and hash when given, then every statistic.
 */
export function renderSummary(
  stats: Statistics,
  run?: Pick<ReportInput, 'title' | 'passed' | 'verdict' | 'orderListHash' | 'violations' | 'evaluation'>,
): string {
  const rows: StatisticRow[] = [];
  if (run) {
    const verdict = headlineVerdict(run);
    rows.push({
      label: run.evaluation === undefined ? 'Account' : 'Evaluation',
      value: `${verdict.badge}${verdict.text ? ` (${verdict.text})` : ''}`,
    });
    rows.push({ label: 'Violations', value: String(run.violations.length) });
  }
  rows.push(...statisticRows(stats));
  if (run) rows.push({ label: 'Order list hash', value: run.orderListHash });
  const width = Math.max(...rows.map((row) => row.label.length));
  const lines = rows.map((row) => `  ${row.label.padEnd(width)}  ${row.value}`);
  return `${run ? `${run.title}\n` : ''}${lines.join('\n')}\n`;
}
