/**
 * Retrieves any time range of bars under the 20,000-bars-per-request limit. The server's ordering is not
 * guaranteed (the example answers newest first) and which end of an over-full range it keeps is not
 * shown, so the pager assumes only that one answer is a contiguous run of the range's bars: it then holds
 * every bar between the earliest and latest it received, and asks again for what lies on either side.
 * Bars are returned oldest first, each bar start once; two different bars with the same start in one
 * answer are an error, because no ordering can make those times increase.
 */
import type { Bar } from '../../protocol/schemas.ts';
import { GatewayError } from './gateway-errors.ts';
import { Endpoints, Limits } from '../../protocol/endpoints.ts';

export interface BarWindow {
  /** Inclusive bounds, epoch ms. */
  startMs: number;
  endMs: number;
  limit: number;
}

export type FetchBars = (window: BarWindow) => Promise<ReadonlyArray<Bar>>;

export interface PageInfo {
  bars: number;
  pages: number;
}

export interface PageBarsOptions {
  startMs: number;
  endMs: number;
  pageSize?: number;
  onPage?: (info: PageInfo) => void;
  /** The endpoint named in errors. */
  endpoint?: string;
}

export function barTime(bar: Bar): number {
  return Date.parse(bar.t);
}

export async function pageBars(fetch: FetchBars, options: PageBarsOptions): Promise<Bar[]> {
  const endpoint = options.endpoint ?? Endpoints.retrieveBars.name;
  const pageSize = options.pageSize ?? Limits.barsPerRequest;
  if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > Limits.barsPerRequest) {
    throw new GatewayError(
      'RANGE_REFUSED',
      `${endpoint}: pageSize must be an integer from 1 to ${Limits.barsPerRequest}, got ${pageSize}`,
      {
        endpoint,
        outcome: 'not-sent',
      },
    );
  }
  if (!Number.isFinite(options.startMs) || !Number.isFinite(options.endMs) || options.startMs > options.endMs) {
    throw new GatewayError('INVALID_REQUEST', `${endpoint}: start must be a date at or before end`, {
      endpoint,
      outcome: 'not-sent',
    });
  }
  const byTime = new Map<number, Bar>();
  const todo: Array<[number, number]> = [[options.startMs, options.endMs]];
  let pages = 0;
  while (todo.length > 0) {
    const [startMs, endMs] = todo.pop() as [number, number];
    const page = await fetch({ startMs, endMs, limit: pageSize });
    pages += 1;
    const inRange = ascendingWithinPage(page, endpoint).filter((b) => b.ms >= startMs && b.ms <= endMs);
    for (const { bar, ms } of inRange) if (!byTime.has(ms)) byTime.set(ms, bar);
    options.onPage?.({ bars: byTime.size, pages });
    if (page.length < pageSize) continue; // the whole window fitted in one answer
    const first = inRange[0];
    const last = inRange.at(-1);
    // A full answer with nothing inside the window: the server padded it with neighbours (an inclusive
    // edge read against the bar's end, say), so the window itself holds no bars.
    if (first === undefined || last === undefined) continue;
    // Later windows first on the stack, so the earlier one is fetched next: pages run oldest to newest
    // when the server keeps the oldest bars and newest to oldest when it keeps the newest.
    if (last.ms < endMs) todo.push([last.ms + 1, endMs]);
    if (first.ms > startMs) todo.push([startMs, first.ms - 1]);
  }
  const bars = [...byTime.entries()].sort((a, b) => a[0] - b[0]).map(([, bar]) => bar);
  assertIncreasing(bars, endpoint);
  return bars;
}

function ascendingWithinPage(page: ReadonlyArray<Bar>, endpoint: string): Array<{ bar: Bar; ms: number }> {
  const timed = page.map((bar) => ({ bar, ms: barTime(bar) }));
  timed.sort((a, b) => a.ms - b.ms);
  for (let i = 1; i < timed.length; i++) {
    const previous = timed[i - 1] as { bar: Bar; ms: number };
    const current = timed[i] as { bar: Bar; ms: number };
    if (current.ms <= previous.ms) {
      throw new GatewayError(
        'MALFORMED_RESPONSE',
        `${endpoint}: two bars start at ${current.bar.t}; bar times must increase`,
        {
          endpoint,
          outcome: 'unknown',
          issues: [{ path: 'bars.t', message: 'bar start times must be distinct', received: current.bar.t }],
        },
      );
    }
  }
  return timed;
}

/** Times strictly increasing, or a GatewayError naming the first offending bar. */
export function assertIncreasing(bars: ReadonlyArray<Bar>, endpoint: string = Endpoints.retrieveBars.name): void {
  for (let i = 1; i < bars.length; i++) {
    const previous = bars[i - 1] as Bar;
    const current = bars[i] as Bar;
    if (!(barTime(current) > barTime(previous))) {
      throw new GatewayError(
        'MALFORMED_RESPONSE',
        `${endpoint}: bar ${i} at ${current.t} does not follow ${previous.t}`,
        {
          endpoint,
          outcome: 'unknown',
          issues: [{ path: `bars.${i}.t`, message: 'bar times must strictly increase', received: current.t }],
        },
      );
    }
  }
}

/** A `Date` or an ISO string with an offset, as epoch ms; bad input is refused before sending. */
export function toEpochMs(value: Date | string, field: string, endpoint: string): number {
  const ms =
    value instanceof Date
      ? value.getTime()
      : typeof value === 'string' && /(Z|[+-]\d{2}:\d{2})$/.test(value)
        ? Date.parse(value)
        : NaN;
  if (Number.isNaN(ms)) {
    throw new GatewayError(
      'INVALID_REQUEST',
      `${endpoint}: ${field} must be a Date or an ISO 8601 datetime with an offset, got ${JSON.stringify(value)}`,
      {
        endpoint,
        outcome: 'not-sent',
        issues: [
          {
            path: field,
            message: 'expected a datetime with an offset',
            received: value instanceof Date ? String(value) : value,
          },
        ],
      },
    );
  }
  return ms;
}

export function isoOf(ms: number): string {
  return new Date(ms).toISOString();
}
