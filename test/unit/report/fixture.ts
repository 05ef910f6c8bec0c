/**
 * A small, deterministic run to render: a seeded random walk of minute bars with alternating long and
 * short trades, an equity curve marked to market at each close, and one violation.
 */
import type { ClosedTrade, ReportInput } from '../../../src/report/types.ts';

function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function generatedRun(barCount = 3000, seed = 7): ReportInput {
  const random = mulberry32(seed);
  const tickValue = 12.5;
  const feePerSide = 2.1;
  const start = Date.parse('2024-03-07T14:30:00Z');
  const time = new Float64Array(barCount);
  const open = new Float64Array(barCount);
  const high = new Float64Array(barCount);
  const low = new Float64Array(barCount);
  const close = new Float64Array(barCount);
  let price = 20_000; // ticks: 5000.00 on a 0.25 grid
  for (let i = 0; i < barCount; i++) {
    time[i] = start + i * 60_000;
    open[i] = price;
    const move = Math.round((random() - 0.5) * 8);
    price += move;
    close[i] = price;
    high[i] = Math.max(open[i]!, close[i]!) + Math.floor(random() * 3);
    low[i] = Math.min(open[i]!, close[i]!) - Math.floor(random() * 3);
  }

  const trades: ClosedTrade[] = [];
  const equity = new Float64Array(barCount);
  let balance = 50_000;
  let position: { side: 'buy' | 'sell'; entryIndex: number; entryPrice: number } | undefined;
  for (let i = 0; i < barCount; i++) {
    if (position === undefined && i % 97 === 5 && i + 1 < barCount) {
      position = { side: trades.length % 2 === 0 ? 'buy' : 'sell', entryIndex: i + 1, entryPrice: open[i + 1]! };
    } else if (position !== undefined && i - position.entryIndex >= 40 && i + 1 < barCount) {
      const exitPrice = open[i + 1]!;
      const direction = position.side === 'buy' ? 1 : -1;
      const pnl = (exitPrice - position.entryPrice) * direction * tickValue;
      trades.push({
        contractId: 'CON.F.US.EP.H24',
        side: position.side,
        size: 1,
        entryTime: time[position.entryIndex]!,
        exitTime: time[i + 1]!,
        entryPrice: position.entryPrice,
        exitPrice,
        pnl,
        fees: 2 * feePerSide,
      });
      balance += pnl - 2 * feePerSide;
      position = undefined;
    }
    const open_ = position !== undefined && position.entryIndex <= i
      ? (close[i]! - position.entryPrice) * (position.side === 'buy' ? 1 : -1) * tickValue
      : 0;
    equity[i] = balance + open_;
  }

  return {
    title: 'Generated run <ES> & friends',
    contract: { id: 'CON.F.US.EP.H24', name: 'ESH4', symbolId: 'F.US.EP', tickSize: 0.25, tickValue },
    startingBalance: 50_000,
    bars: { time, open, high, low, close },
    trades,
    equity: { time, equity },
    violations: [
      {
        time: time[Math.floor(barCount / 2)]!,
        type: 6,
        rule: 'dailyLossLimit',
        duration: 2,
        balance: 48_900,
        message: 'equity 48,900.00 at the bar low crossed the daily floor 49,000.00',
      },
    ],
    closestApproach: [
      { rule: 'dailyLossLimit', minRoom: -100, time: time[Math.floor(barCount / 2)]! },
      { rule: 'maximumLossLimit', minRoom: 1_400, time: time[Math.floor(barCount / 2)]! },
    ],
    passed: false,
    verdict: 'daily loss limit crossed once (temporary)',
    orderListHash: 'sha256:0123456789abcdef',
    config: { strategy: 'sma-cross', fast: 10, slow: 30, slippageTicks: 1, sameBarRule: 'stop-first' },
  };
}
