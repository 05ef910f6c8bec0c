/**
 * Replay of bar history into the engine (`MarketData`): oldest first, in chunks of typed-array views into
 * the loaded columns (no copy). Every bar in the history has closed, and the runner hands bar i to the
 * fill model before the strategies (which decide at its close), so nothing is seen before it happened.
 * Bars exist only where the data has them: a gap between sessions stays a gap.
 */
import { Observable } from 'rxjs';
import { nominalMs, timeframeLabel } from '../../engine/timeframe.ts';
import type { BarChunk, BarColumns, MarketData, Timeframe } from '../../engine/types.ts';
import { aggregate } from '../../data/columns.ts';
import { TicklineError } from '../../engine/errors.ts';

export interface ReplaySeries {
  readonly contractId: string;
  /** Timeframe of `bars`; a coarser one asked for is aggregated from it. */
  readonly timeframe: Timeframe;
  readonly bars: BarColumns;
}

export class ReplayDataError extends TicklineError {
  override readonly name = 'ReplayDataError';
  readonly kind = 'input';
  readonly code = 'REPLAY_NO_DATA';
}

/** Bars per emitted chunk: big enough that per-chunk costs vanish, small enough to stay in cache. */
export const DEFAULT_CHUNK_BARS = 16_384;

export class ReplayMarketData implements MarketData {
  private readonly series = new Map<string, ReplaySeries>();

  constructor(
    series: readonly ReplaySeries[],
    private readonly chunkBars = DEFAULT_CHUNK_BARS,
  ) {
    if (!Number.isInteger(chunkBars) || chunkBars < 1)
      throw new RangeError(`chunkBars must be a positive whole number, got ${chunkBars}`);
    for (const s of series) this.series.set(s.contractId, s);
  }

  bars(contractId: string, timeframe: Timeframe): Observable<BarChunk> {
    // Resolved now, so asking for a contract or timeframe that has no history fails at the call.
    const columns = this.columns(contractId, timeframe);
    return new Observable<BarChunk>((subscriber) => {
      const n = columns.time.length;
      for (let start = 0; start < n && !subscriber.closed; start += this.chunkBars) {
        const end = Math.min(n, start + this.chunkBars);
        subscriber.next({
          contractId,
          timeframe,
          length: end - start,
          time: columns.time.subarray(start, end),
          open: columns.open.subarray(start, end),
          high: columns.high.subarray(start, end),
          low: columns.low.subarray(start, end),
          close: columns.close.subarray(start, end),
          volume: columns.volume.subarray(start, end),
        });
      }
      subscriber.complete();
    });
  }

  private readonly aggregated = new Map<string, BarColumns>();

  private columns(contractId: string, timeframe: Timeframe): BarColumns {
    const series = this.series.get(contractId);
    if (series === undefined) throw new ReplayDataError(`no history loaded for contract ${contractId}`);
    const base = series.timeframe;
    if (base.unit === timeframe.unit && base.unitNumber === timeframe.unitNumber) return series.bars;
    if (nominalMs(timeframe) < nominalMs(base)) {
      throw new ReplayDataError(
        `cannot replay ${timeframeLabel(timeframe)} bars of ${contractId} from ${timeframeLabel(base)} history`,
      );
    }
    const key = `${contractId}/${timeframeLabel(timeframe)}`;
    let bars = this.aggregated.get(key);
    if (bars === undefined) {
      bars = aggregate(series.bars, timeframe);
      this.aggregated.set(key, bars);
    }
    return bars;
  }
}
