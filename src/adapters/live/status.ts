/**
 * The one-line status shown on a terminal while paper or live trading runs: position, today's PnL, and
 * how much room is left before each limit (daily loss, maximum loss, personal loss limit and profit
 * target), so the operator sees a limit coming before the guard acts on it.
 */
export interface StatusInput {
  readonly mode: 'paper' | 'live';
  readonly account: string;
  readonly state: string;
  readonly visible: boolean;
  readonly positions: ReadonlyArray<{
    readonly contractId: string;
    readonly size: number;
    readonly averagePrice: number;
  }>;
  readonly dayPnl: number;
  readonly balance: number;
  readonly equity: number;
  /** Equity floors (-Infinity when not configured). */
  readonly dailyLossFloor: number;
  readonly maximumLossFloor: number;
  readonly personalDailyLossLimit: number | undefined;
  readonly personalDailyProfitTarget: number | undefined;
  readonly bars: number;
}

const money = (v: number): string => `${v < 0 ? '-' : ''}$${Math.abs(v).toFixed(2)}`;

export function renderStatus(s: StatusInput): string {
  const parts: string[] = [`${s.mode.toUpperCase()} ${s.account}`, s.state, s.visible ? 'visible' : 'BLIND'];
  const pos = s.positions.filter((p) => p.size !== 0);
  parts.push(
    pos.length === 0
      ? 'flat'
      : pos.map((p) => `${p.contractId} ${p.size > 0 ? '+' : ''}${p.size} @ ${p.averagePrice}`).join(' '),
  );
  parts.push(`PnL today ${money(s.dayPnl)}`);
  if (Number.isFinite(s.dailyLossFloor)) parts.push(`DLL room ${money(s.equity - s.dailyLossFloor)}`);
  if (Number.isFinite(s.maximumLossFloor)) parts.push(`MLL room ${money(s.equity - s.maximumLossFloor)}`);
  if (s.personalDailyLossLimit !== undefined)
    parts.push(`personal loss room ${money(s.personalDailyLossLimit + s.dayPnl)}`);
  if (s.personalDailyProfitTarget !== undefined)
    parts.push(`to target ${money(s.personalDailyProfitTarget - s.dayPnl)}`);
  parts.push(`bars ${s.bars}`);
  return parts.join(' | ');
}
