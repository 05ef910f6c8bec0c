import { Subject, filter, map } from 'rxjs';
import { z } from 'zod';
import { createEngine, type Decision, type Engine, type StrategyEntry } from '../../../src/engine/runner.ts';
import { defineStrategy } from '../../../src/engine/strategy.ts';
import { PriceGrid } from '../../../src/engine/ticks.ts';
import { timeframe } from '../../../src/engine/timeframe.ts';
import type {
  BarChunk,
  ContractSpec,
  Fill,
  Intent,
  ModifyCommand,
  OrderCommand,
  OrderUpdate,
  Venue,
  VenueEvent,
  VenueTraits,
} from '../../../src/engine/types.ts';

export const ES: ContractSpec = {
  id: 'CON.F.US.EP.Z25',
  name: 'ESZ5',
  symbolId: 'F.US.EP',
  description: 'E-mini S&P 500',
  grid: new PriceGrid(0.25, 12.5),
};

export const MINUTE = timeframe('minute');
/** 2026-11-16 (a Monday) 15:00 UTC = 09:00 Chicago. */
export const T0 = Date.UTC(2026, 10, 16, 15, 0);

export interface BarInput {
  open?: number;
  high?: number;
  low?: number;
  close: number;
}

/** Bars one minute apart from `start`; a bare number is a bar with open = high = low = close. */
export function chunk(bars: Array<number | BarInput>, start = T0, contractId = ES.id): BarChunk {
  const n = bars.length;
  const c: BarChunk = {
    contractId,
    timeframe: MINUTE,
    length: n,
    time: new Float64Array(n),
    open: new Float64Array(n),
    high: new Float64Array(n),
    low: new Float64Array(n),
    close: new Float64Array(n),
    volume: new Float64Array(n),
  };
  bars.forEach((bar, i) => {
    const b = typeof bar === 'number' ? { close: bar } : bar;
    c.time[i] = start + i * 60_000;
    c.open[i] = b.open ?? b.close;
    c.high[i] = b.high ?? Math.max(b.open ?? b.close, b.close);
    c.low[i] = b.low ?? Math.min(b.open ?? b.close, b.close);
    c.close[i] = b.close;
    c.volume[i] = 1;
  });
  return c;
}

/** Split one chunk into pieces of the given sizes (views), to test chunk-independence. */
export function split(whole: BarChunk, sizes: number[]): BarChunk[] {
  const out: BarChunk[] = [];
  let from = 0;
  let k = 0;
  while (from < whole.length) {
    const size = Math.max(1, sizes[k++ % sizes.length]!);
    const to = Math.min(whole.length, from + size);
    out.push({
      contractId: whole.contractId,
      timeframe: whole.timeframe,
      length: to - from,
      time: whole.time.subarray(from, to),
      open: whole.open.subarray(from, to),
      high: whole.high.subarray(from, to),
      low: whole.low.subarray(from, to),
      close: whole.close.subarray(from, to),
      volume: whole.volume.subarray(from, to),
    });
    from = to;
  }
  return out;
}

/** An in-test venue that answers at once and keeps fill-id memory: what an engine without venue options was. */
export const SIMULATED_VENUE: VenueTraits = {
  kind: 'simulated',
  fillsCanRepeat: true,
  pnlRounding: 'none',
  keepsCommands: true,
};
/** The same venue taken as a live one: what `live: true` made of an engine. */
export const LIVE_VENUE: VenueTraits = { kind: 'live', fillsCanRepeat: true, pnlRounding: 'none', keepsCommands: true };

/**
 * A tiny in-test venue: market orders fill at the next bar's open, stops and limits when the bar touches
 * them (at the order price), everything synchronously inside `onBar`. Fees per contract per side.
 * Deliberately simple: a trailing stop is treated as a fixed stop at its latest trailPrice (the strategies
 * move it with modifies), which is enough to test what the engine sends.
 */
export class TinyVenue implements Venue {
  readonly subject = new Subject<VenueEvent>();
  readonly events = this.subject.asObservable();
  readonly placed: OrderCommand[] = [];
  readonly modified: ModifyCommand[] = [];
  readonly cancelled: string[] = [];
  readonly working = new Map<string, OrderCommand>();
  private fillSeq = 0;
  constructor(
    readonly feePerSide = 0,
    readonly traits: VenueTraits = SIMULATED_VENUE,
  ) {}

  place(command: OrderCommand): void {
    this.placed.push(command);
    this.working.set(command.id, command);
    this.subject.next(this.update(command, 'working', 0, command.decidedAt));
  }
  modify(command: ModifyCommand): void {
    this.modified.push(command);
    const order = this.working.get(command.orderId);
    if (order === undefined) return;
    const spec = order.order;
    const next: OrderCommand = {
      ...order,
      size: command.size ?? order.size,
      order:
        spec.type === 'stop' && command.stopPrice !== undefined
          ? { type: 'stop', stopPrice: command.stopPrice }
          : spec.type === 'limit' && command.limitPrice !== undefined
            ? { type: 'limit', limitPrice: command.limitPrice }
            : spec.type === 'trailingStop' && command.trailPrice !== undefined
              ? { type: 'trailingStop', trailPrice: command.trailPrice }
              : spec,
    };
    this.working.set(order.id, next);
  }
  cancel(orderId: string): void {
    this.cancelled.push(orderId);
    const order = this.working.get(orderId);
    if (order === undefined) return;
    this.working.delete(orderId);
    this.subject.next(this.update(order, 'cancelled', 0, order.decidedAt));
  }
  onBar(chunk: BarChunk, i: number): void {
    if (this.working.size === 0) return;
    for (const order of [...this.working.values()]) {
      const spec = order.order;
      let price: number | undefined;
      if (spec.type === 'market') price = chunk.open[i]!;
      else if (spec.type === 'limit') {
        if (order.side === 'buy' ? chunk.low[i]! <= spec.limitPrice : chunk.high[i]! >= spec.limitPrice)
          price = spec.limitPrice;
      } else if (spec.type === 'stop' || spec.type === 'trailingStop') {
        const level = spec.type === 'stop' ? spec.stopPrice : spec.trailPrice;
        if (order.side === 'buy' ? chunk.high[i]! >= level : chunk.low[i]! <= level) price = level;
      }
      if (price === undefined) continue;
      this.working.delete(order.id);
      const fill: Fill = {
        kind: 'fill',
        fillId: `f${++this.fillSeq}`,
        orderId: order.id,
        contractId: order.contractId,
        side: order.side,
        size: order.size,
        price,
        fees: this.feePerSide * order.size,
        time: chunk.time[i]!,
      };
      this.subject.next(fill);
      this.subject.next(this.update(order, 'filled', order.size, chunk.time[i]!));
    }
  }
  private update(order: OrderCommand, state: OrderUpdate['state'], filledSize: number, time: number): OrderUpdate {
    return {
      kind: 'order',
      orderId: order.id,
      state,
      time,
      contractId: order.contractId,
      side: order.side,
      size: order.size,
      filledSize,
      order: order.order,
    };
  }
}

/**
 * A strategy that emits the intents planned for each bar index, from its per-bar records; `seen` gets the
 * position it saw at each bar.
 */
export function scripted(name: string, plan: Record<number, Intent>, seen: number[] = []) {
  return defineStrategy({
    name,
    params: z.object({}),
    run: ({ barRecords, position }) => {
      let index = 0;
      return barRecords().pipe(
        map(() => {
          seen.push(position());
          return plan[index++];
        }),
        filter((intent): intent is Intent => intent !== undefined),
      );
    },
  });
}

/** An engine of one strategy on ES with 50,000 of balance, its decisions recorded as they are published. */
export function recordingEngine(venue: Venue, entry: StrategyEntry): { engine: Engine; decisions: Decision[] } {
  const engine = createEngine({
    strategies: [entry],
    contracts: [ES],
    venue,
    account: { startingBalance: 50_000 },
  });
  const decisions: Decision[] = [];
  engine.decisions$.subscribe((d) => decisions.push(d));
  return { engine, decisions };
}
