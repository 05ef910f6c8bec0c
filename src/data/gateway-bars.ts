/**
 * Bar history from the gateway, through the client's pager and the local cache: only the parts of the
 * range the cache has not covered are requested, so a second run of the same range sends no request.
 * The range ends no later than the last closed bar, so a partial bar is never cached as history.
 */
import type { Bar } from '../protocol/schemas.ts';
import type { PriceGrid } from '../engine/ticks.ts';
import { BAR_UNIT_CODES, bucketStart } from '../engine/timeframe.ts';
import type { BarColumns } from '../engine/types.ts';
import { allocateColumns } from './columns.ts';

const DAY_MS = 86_400_000;
import type { BarCache, CacheKey, TimeRange } from './bar-cache.ts';
import { TicklineError } from '../engine/errors.ts';

/** How far a paged request has come. */
export interface PageInfo {
  bars: number;
  pages: number;
}

/** A range of bars as the client's pager takes it (the gateway's `retrieveBars` fields, any length of range). */
export interface BarsRangeRequest {
  contractId: string;
  live: boolean;
  unit: number;
  unitNumber: number;
  start: Date | string;
  end: Date | string;
  pageSize?: number;
  includePartialBar?: boolean;
  onPage?: (info: PageInfo) => void;
}

/**
 * The one client method this source needs. The `TradingClient` has it; the source names only its shape, so
 * the data room depends on no venue's client.
 */
export interface BarsClient {
  retrieveBarsRange(request: BarsRangeRequest): Promise<Bar[]>;
}

export interface GatewayBarsRequest extends CacheKey {
  readonly grid: PriceGrid;
  readonly from: number;
  readonly to: number;
  /** Epoch ms now; the range is cut at the start of the bar still forming. */
  readonly now: number;
  /** Bars per request (at most 20,000, the default). */
  readonly pageSize?: number;
  readonly onPage?: (info: PageInfo & { range: TimeRange }) => void;
  /** Fetch the whole range again, cached or not (`fetch-bars --force`). */
  readonly force?: boolean;
}

export interface GatewayBarsResult {
  readonly bars: BarColumns;
  /** Ranges that were requested (empty when the cache had everything). */
  readonly fetched: readonly TimeRange[];
  /**
   * Requested ranges that reach into today and came back empty: not recorded as covered, since their bars
   * may still come (the next run asks again).
   */
  readonly unrecorded: readonly TimeRange[];
}

export class GatewayBarsError extends TicklineError {
  override readonly name = 'GatewayBarsError';
  readonly kind = 'runtime';
  readonly code = 'GATEWAY_BARS_INVALID';
}

export async function loadGatewayBars(
  client: BarsClient,
  cache: BarCache,
  request: GatewayBarsRequest,
): Promise<GatewayBarsResult> {
  const to = Math.min(request.to, bucketStart(request.now, request.timeframe));
  const fetched: TimeRange[] = [];
  const unrecorded: TimeRange[] = [];
  const today = Math.floor(request.now / DAY_MS) * DAY_MS;
  if (request.from < to) {
    const ranges: TimeRange[] =
      request.force === true ? [[request.from, to]] : cache.missing(request, request.from, to);
    for (const range of ranges) {
      const [start, end] = range;
      const bars = await client.retrieveBarsRange({
        contractId: request.contractId,
        live: request.live,
        unit: BAR_UNIT_CODES[request.timeframe.unit],
        unitNumber: request.timeframe.unitNumber,
        start: new Date(start),
        // The pager's end is inclusive; the cache's ranges are half-open.
        end: new Date(end - 1),
        includePartialBar: false,
        ...(request.pageSize !== undefined ? { pageSize: request.pageSize } : {}),
        ...(request.onPage ? { onPage: (info: PageInfo) => request.onPage!({ ...info, range }) } : {}),
      });
      const columns = toColumns(bars, request.grid, request.contractId, start, end);
      fetched.push(range);
      if (columns.time.length === 0 && end > today) {
        unrecorded.push(range);
        continue;
      }
      cache.store(request, request.grid, columns, start, end);
    }
  }
  return { bars: cache.load(request, request.grid, request.from, to), fetched, unrecorded };
}

/** Wire bars (oldest first, decimal prices) to tick columns, exactly: a price off the grid is an error. */
export function toColumns(
  bars: readonly Bar[],
  grid: PriceGrid,
  contractId: string,
  from: number,
  to: number,
): BarColumns {
  const times = bars.map((b) => Date.parse(b.t));
  const keep = times.map((t) => t >= from && t < to);
  const out = allocateColumns(keep.filter(Boolean).length);
  let k = 0;
  bars.forEach((bar, i) => {
    if (!keep[i]) return;
    const t = times[i]!;
    if (k > 0 && t <= out.time[k - 1]!)
      throw new GatewayBarsError(`bars of ${contractId} are not oldest first at ${bar.t}`);
    const where = `${contractId} bar ${bar.t}`;
    out.time[k] = t;
    out.open[k] = grid.toTicksExact(bar.o, `${where} open`);
    out.high[k] = grid.toTicksExact(bar.h, `${where} high`);
    out.low[k] = grid.toTicksExact(bar.l, `${where} low`);
    out.close[k] = grid.toTicksExact(bar.c, `${where} close`);
    out.volume[k] = bar.v;
    k++;
  });
  return out;
}
