/**
 * DataExport/trades accepts a range of at most 30 days (spec 4.2 note 2, section 8). A longer range is
 * refused before sending; `tradeExportWindows` splits one into consecutive windows of at most 30 days,
 * and `mergeById` joins their answers, keeping each trade once (a trade updated near a window edge can
 * be reported by both windows).
 */
import { Endpoints, Limits } from '../../protocol/endpoints.ts';
import { GatewayError } from './gateway-errors.ts';

export interface TimeWindow {
  fromMs: number;
  toMs: number;
}

export function assertTradeExportRange(
  fromMs: number,
  toMs: number,
  endpoint: string = Endpoints.tradesExport.name,
): void {
  if (!(fromMs <= toMs)) {
    throw new GatewayError('INVALID_REQUEST', `${endpoint}: from must not be after to`, {
      endpoint,
      outcome: 'not-sent',
      issues: [{ path: 'from', message: 'from is after to', received: new Date(fromMs).toISOString() }],
    });
  }
  if (toMs - fromMs > Limits.tradesExportRangeMs) {
    const days = ((toMs - fromMs) / 86_400_000).toFixed(2);
    throw new GatewayError(
      'RANGE_REFUSED',
      `${endpoint}: range of ${days} days exceeds the 30-day maximum; use exportTradesRange to split it`,
      {
        endpoint,
        outcome: 'not-sent',
      },
    );
  }
}

/** Consecutive windows covering [from, to], each at most 30 days; adjacent windows share their edge. */
export function tradeExportWindows(
  fromMs: number,
  toMs: number,
  maxMs: number = Limits.tradesExportRangeMs,
): TimeWindow[] {
  if (!(fromMs <= toMs)) throw new RangeError('from must not be after to');
  if (!(maxMs > 0)) throw new RangeError('window length must be positive');
  const windows: TimeWindow[] = [];
  let start = fromMs;
  do {
    const end = Math.min(toMs, start + maxMs);
    windows.push({ fromMs: start, toMs: end });
    start = end;
  } while (start < toMs);
  return windows;
}

/** Records of several answers, each `id` once (the first seen), in the order first seen. */
export function mergeById<T extends { id: number }>(pages: ReadonlyArray<ReadonlyArray<T>>): T[] {
  const seen = new Map<number, T>();
  for (const page of pages) for (const record of page) if (!seen.has(record.id)) seen.set(record.id, record);
  return [...seen.values()];
}
