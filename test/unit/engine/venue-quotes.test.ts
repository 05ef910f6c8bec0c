/**
 * `ctx.quotes()` and `ctx.trades()`: in a backtest one quote and one print per bar at its close (no spread,
 * or the backtest's spread model), in paper and live the adapter's live stream; the same strategy module
 * runs on both.
 */
import { EMPTY, Subject, map, merge, type Observable } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { AccountConfig } from '../../../src/adapters/backtest/backtest-config.ts';
import { resolveContract } from '../../../src/adapters/backtest/contract.ts';
import { runBacktest, type BacktestRunInput } from '../../../src/adapters/backtest/run.ts';
import { syntheticBars } from '../../../src/data/synthetic-bars.ts';
import { createEngine } from '../../../src/engine/runner.ts';
import { defineStrategy } from '../../../src/engine/strategy.ts';
import type { Intent, MarketTrade, Quote, Venue, VenueEvent } from '../../../src/engine/types.ts';
import { DEFAULT_BOOK } from '../../../src/market/quotes.ts';

const contract = resolveContract('MESZ5');
const bars = syntheticBars({
  seed: 5,
  grid: contract.grid,
  startPrice: 6700,
  start: Date.UTC(2025, 2, 3),
  sessions: 1,
});
const n = bars.time.length;

/** Records what it is given and never trades. */
function recorder(): { strategy: ReturnType<typeof defineStrategy>; quotes: Quote[]; trades: MarketTrade[] } {
  const quotes: Quote[] = [];
  const trades: MarketTrade[] = [];
  const strategy = defineStrategy({
    name: 'quote-recorder',
    params: z.object({}),
    run: (ctx): Observable<Intent> =>
      merge(
        ctx.quotes().pipe(map((q) => void quotes.push(q))),
        ctx.trades().pipe(map((t) => void trades.push(t))),
      ).pipe(map(() => undefined as never)),
  });
  return { strategy, quotes, trades };
}

function backtest(fills: BacktestRunInput['fills'], strategy: BacktestRunInput['strategy']) {
  return runBacktest({
    contract,
    bars,
    dataTimeframe: { unit: 'minute', unitNumber: 1 },
    timeframe: { unit: 'minute', unitNumber: 1 },
    strategy,
    params: {},
    account: AccountConfig.parse({}),
    risk: {},
    fills,
  });
}

describe('quotes and market trades for strategies', () => {
  it('a backtest without a spread model: one quote per bar, bid = ask = last = the close; one print of its volume', () => {
    const r = recorder();
    backtest({ slippageTicks: 0, feePerContractPerSide: 0 }, r.strategy);
    expect(r.quotes).toHaveLength(n);
    for (let k = 0; k < n; k++) {
      expect(r.quotes[k]).toMatchObject({
        contractId: contract.id,
        time: bars.time[k],
        bid: bars.close[k],
        ask: bars.close[k],
        last: bars.close[k],
      });
      expect(r.trades[k]).toMatchObject({ price: bars.close[k], size: bars.volume[k] });
    }
    // The tick rule names the aggressor: a print above the previous close was bought.
    const up = r.trades.findIndex((t, k) => k > 0 && t.price > r.trades[k - 1]!.price);
    expect(r.trades[up]!.side).toBe('buy');
  });

  it('a backtest at the touch: the quote is the spread model around the close, on the side of the last move', () => {
    const r = recorder();
    backtest(
      {
        slippageTicks: 0,
        feePerContractPerSide: 0,
        touch: { spread: { type: 'fixed', ticks: 2 }, book: DEFAULT_BOOK, partialFills: false, queue: false },
      },
      r.strategy,
    );
    expect(r.quotes).toHaveLength(n);
    for (let k = 1; k < n; k++) {
      const q = r.quotes[k]!;
      expect(q.ask - q.bid).toBe(2);
      const close = bars.close[k]!;
      const before = bars.close[k - 1]!;
      if (close > before) expect(q.ask).toBe(close);
      if (close < before) expect(q.bid).toBe(close);
    }
  });

  it("paper and live: the adapter's live quotes and trades, not the bars", () => {
    const r = recorder();
    const quotes = new Subject<Quote>();
    const trades = new Subject<MarketTrade>();
    const venue: Venue = {
      traits: { kind: 'live', fillsCanRepeat: true, pnlRounding: 'none', keepsCommands: true },
      events: new Subject<VenueEvent>(),
      place: () => undefined,
      modify: () => undefined,
      cancel: () => undefined,
    };
    const engine = createEngine({
      strategies: [{ strategy: r.strategy, params: {} }],
      contracts: [contract],
      venue,
      account: AccountConfig.parse({}),
      quotes: (id) => (id === contract.id ? quotes.asObservable() : EMPTY),
      marketTrades: (id) => (id === contract.id ? trades.asObservable() : EMPTY),
    });
    quotes.next({ contractId: contract.id, time: 1, bid: 100, ask: 101, bidSize: 3, askSize: 4, last: 101 });
    trades.next({ contractId: contract.id, time: 2, price: 101, size: 2, side: 'buy' });
    const first = (column: Float64Array): Float64Array => column.subarray(0, 1);
    engine.push({
      contractId: contract.id,
      timeframe: { unit: 'minute', unitNumber: 1 },
      length: 1,
      time: first(bars.time),
      open: first(bars.open),
      high: first(bars.high),
      low: first(bars.low),
      close: first(bars.close),
      volume: first(bars.volume),
    });
    expect(r.quotes).toEqual([
      { contractId: contract.id, time: 1, bid: 100, ask: 101, bidSize: 3, askSize: 4, last: 101 },
    ]);
    expect(r.trades).toEqual([{ contractId: contract.id, time: 2, price: 101, size: 2, side: 'buy' }]);
    engine.close();
  });
});
