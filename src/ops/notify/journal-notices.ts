/**
 * From the journal's entries to notifications: which kind of entry is which event, and the words for it.
 * The journal is the one source (what it does not hold is never notified), read as it is written
 * (`Journal.recorded`). Kinds that are not events of their own feed the connection watch (`realtime`,
 * `market-realtime`, `market-hub`, `visibility`) or the daily summary's counts.
 */
import type { JournalEntry } from '../../adapters/live/journal.ts';
import type { NotifyEvent } from '../../adapters/live/notify-config.ts';

/** What the words need to know of the session: prices of contracts, the trading day of an instant. */
export interface NoticeContext {
  /** A price in ticks as a decimal, when the contract is known. */
  priceOf(contractId: string, ticks: number): number | undefined;
  /** A contract's short name (`ESZ5`), else its id. */
  nameOf(contractId: string): string;
}

export interface NoticeContent {
  readonly event: NotifyEvent;
  readonly title: string;
  readonly text: string;
}

type Payload = Record<string, unknown>;

const BREACH_NAMES: Readonly<Record<string, string>> = {
  dailyLossLimit: 'daily loss limit',
  maximumLossLimit: 'maximum loss limit',
};

function money(value: unknown): string {
  return typeof value === 'number' && Number.isFinite(value) ? value.toFixed(2) : String(value);
}

function iso(value: unknown): string {
  return typeof value === 'number' && Number.isFinite(value) ? new Date(value).toISOString() : String(value);
}

/** The notification an entry makes, if it makes one by itself. */
export function noticeOf(entry: JournalEntry, ctx: NoticeContext): NoticeContent | undefined {
  const p = (entry.payload ?? {}) as Payload;
  switch (entry.kind) {
    case 'fill': {
      const contractId = String(p.contractId);
      const ticks = Number(p.price);
      const price = ctx.priceOf(contractId, ticks);
      return {
        event: 'fills',
        title: 'Fill',
        text: `${String(p.side).toUpperCase()} ${p.size} ${ctx.nameOf(contractId)} at ${price ?? `${ticks} ticks`}${entry.tag === null ? '' : ` (order ${entry.tag})`}`,
      };
    }
    case 'risk-rejected': {
      const result = (p.result ?? {}) as Payload;
      const intent = (p.intent ?? {}) as Payload;
      const what =
        intent.kind === 'place'
          ? `${String(intent.side)} ${intent.size} ${ctx.nameOf(String(intent.contractId))}`
          : String(intent.kind);
      return {
        event: 'rejections',
        title: `Refused: ${String(result.code)}`,
        text: `${what} of ${String(p.strategyId)}: ${String(result.message)}`,
      };
    }
    case 'breach': {
      const rule =
        p.type === 3
          ? 'personal daily loss limit'
          : p.type === 5
            ? 'personal daily profit target'
            : (BREACH_NAMES[String(p.rule)] ?? 'account rule');
      return {
        event: 'breaches',
        title: `Breach: ${rule}`,
        text: `equity ${money(p.equity)} crossed ${money(p.level)} on trading day ${String(p.tradingDay)} (balance ${money(p.balance)}, day PnL ${money(p.dayPnl)}) at ${iso(p.time)}`,
      };
    }
    case 'anomaly':
      return { event: 'anomalies', title: 'Anomaly', text: String(p.message) };
    case 'strategy-error':
      return { event: 'anomalies', title: 'Strategy failed', text: String(p.message ?? JSON.stringify(p)) };
    case 'engine-error':
      return { event: 'anomalies', title: 'Engine failed; trading HALTED', text: String(p.message) };
    case 'trading-state': {
      const until = p.until === null || p.until === undefined || p.until === Infinity ? '' : ` until ${iso(p.until)}`;
      return { event: 'tradingState', title: `Trading ${String(p.state)}`, text: `${String(p.reason)}${until}` };
    }
    case 'roll': {
      if (entry.phase !== 'after') return undefined;
      const held = Number(p.position) === 0 ? 'flat' : `position ${Number(p.position) > 0 ? '+' : ''}${p.position}`;
      return {
        event: 'rolls',
        title: `Roll ${String(p.symbolId)}`,
        text: `${ctx.nameOf(String(p.from))} -> ${ctx.nameOf(String(p.to))} (${held}, mode ${String(p.mode)}): ${String(p.action)}`,
      };
    }
    case 'expiry':
      return {
        event: 'rolls',
        title: `Expiry ${ctx.nameOf(String(p.contractId))}`,
        text: `${String(p.contractId)} expires at ${String(p.expiresAt)}: flattened, the session ends`,
      };
    case 'pass-lock':
      return { event: 'passLock', title: 'Evaluation passed: pass-lock', text: String(p.message) };
    default:
      return undefined;
  }
}

/** A connection's state change an entry says: the user hub, a market hub's quotes, the polls. */
export interface ConnectionChange {
  readonly channel: string;
  readonly down: boolean;
  /** Session ms the channel went down (a market hub's silence began before it was noticed). */
  readonly since: number;
  readonly detail: string;
}

export function connectionOf(entry: JournalEntry): ConnectionChange | undefined {
  const p = (entry.payload ?? {}) as Payload;
  switch (entry.kind) {
    case 'realtime': {
      const state = String(p.state);
      return { channel: 'user hub', down: state !== 'connected', since: entry.time, detail: state };
    }
    case 'market-realtime': {
      const state = String(p.state);
      return { channel: 'market hub', down: state !== 'connected', since: entry.time, detail: state };
    }
    case 'market-hub': {
      const silentMs = Number(p.silentMs);
      const down = p.state === 'silent';
      return {
        channel: `market hub ${String(p.contractId)}`,
        down,
        since: down && Number.isFinite(silentMs) ? entry.time - silentMs : entry.time,
        detail: down ? 'no quotes' : 'quotes back',
      };
    }
    case 'visibility': {
      const blind = p.blind;
      return {
        channel: 'polls',
        down: typeof blind === 'string',
        since: entry.time,
        detail: typeof blind === 'string' ? blind : 'positions and orders visible again',
      };
    }
    default:
      return undefined;
  }
}

/** `2h 05m`, `3m 20s`, `45s`: a duration for people. */
export function durationText(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000));
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m ${String(seconds % 60).padStart(2, '0')}s`;
  return `${Math.floor(minutes / 60)}h ${String(minutes % 60).padStart(2, '0')}m`;
}
