/**
 * Paper results and backtests agree: one bar file (real ES minutes of 8 October 2013) replayed through the
 * simulator on an accelerated clock and through the backtest's fill model, with the same spread model and
 * the same orders of the same strategy, gives the same fills at the same prices.
 *
 * The strategy (the mean-reversion reference: market entries with a stop-loss and take-profit bracket)
 * runs once, in the backtest's engine; every order it sends is recorded and sent to the simulator at the
 * moment the backtest's venue receives it (the open of the bar after the decision). The simulator's clock
 * runs 10x real time and is moved ahead to each decision, so the test takes seconds; between decisions
 * the simulator matches the bracket legs along its own price path.
 *
 * What makes "the same moment" exact: in each bar of the file the price holds at the open for the first
 * third of the bar (the first extreme is moved to the open, which keeps every bar valid), so an order that
 * reaches the simulator a little after the open (up to 20 s of simulator time, 2 s of wall time) meets
 * the same quote as the backtest gives the open.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { signedBrackets } from '../../../src/protocol/brackets.ts';
import { OrderSide, OrderType } from '../../../src/protocol/codes.ts';
import { SimulatedVenue } from '../../../src/adapters/backtest/simulated-venue.ts';
import { readCsvBars } from '../../../src/data/csv.ts';
import { createEngine } from '../../../src/engine/runner.ts';
import type { BarChunk, Fill, OrderCommand, Venue } from '../../../src/engine/types.ts';
import { CALENDAR } from '../../../src/market/contract-months.ts';
import { DEFAULT_BOOK, type SpreadModel } from '../../../src/market/quotes.ts';
import meanReversion from '../../../src/strategies/mean-reversion.ts';
import { ISO, accountIds, frontMonth, startTestSimulator, tradingClient } from './sim-harness.ts';

const ES_CSV = path.resolve(import.meta.dirname, '../../../../shared/data/es-minute-lean.csv');
const FROM = Date.parse('2013-10-08T13:30:00Z');
const BARS = 300;
const MINUTE = 60_000;
const SPREAD: SpreadModel = { type: 'fixed', ticks: 1 };
const PARAMS = {
  period: 20,
  stdDev: 1.5,
  rsiPeriod: 14,
  oversold: 40,
  overbought: 60,
  size: 1,
  stopLossTicks: 6,
  takeProfitTicks: 6,
};

const dir = mkdtempSync(path.join(tmpdir(), 'tickline-agreement-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The file's bars from FROM, each with its first extreme moved to its open (ticks), written as a CSV. */
function barFile(contractId: string): { file: string; chunk: BarChunk } {
  const grid = CALENDAR.byId(contractId)!.grid;
  const all = readCsvBars(ES_CSV, grid).bars;
  const first = all.time.findIndex((t) => t >= FROM);
  const slice = (column: Float64Array) => Float64Array.from(column.subarray(first, first + BARS));
  const [time, open, high, low, close, volume] = [all.time, all.open, all.high, all.low, all.close, all.volume].map(
    slice,
  ) as [Float64Array, Float64Array, Float64Array, Float64Array, Float64Array, Float64Array];
  const lines = ['t,o,h,l,c,v'];
  for (let i = 0; i < BARS; i++) {
    // The path visits the low first on an up bar: raising the low to the open keeps the bar valid.
    if (close[i]! >= open[i]!) low[i] = open[i]!;
    else high[i] = open[i]!;
    lines.push(
      [
        ISO(time[i]!),
        grid.toPrice(open[i]!),
        grid.toPrice(high[i]!),
        grid.toPrice(low[i]!),
        grid.toPrice(close[i]!),
        volume[i]!,
      ].join(','),
    );
  }
  const file = path.join(dir, 'es.csv');
  writeFileSync(file, `${lines.join('\n')}\n`);
  return {
    file,
    chunk: {
      contractId,
      timeframe: { unit: 'minute', unitNumber: 1 },
      length: BARS,
      time,
      open,
      high,
      low,
      close,
      volume,
    },
  };
}

/** The backtest's venue, remembering every order the engine sends it. */
function recording(model: SimulatedVenue, placed: OrderCommand[]): Venue {
  return {
    // It keeps the commands it passes on, so it cannot take the model's lent one.
    traits: { ...model.traits, keepsCommands: true },
    events: model.events,
    onBar: (chunk, index) => model.onBar(chunk, index),
    place: (command) => (placed.push(command), model.place(command)),
    modify: (command) => model.modify(command),
    cancel: (orderId) => model.cancel(orderId),
  };
}

/** Fills as "bar side price" keys with their summed size (a level per touch may split one order's fill). */
function summed(
  fills: ReadonlyArray<{ bar: number; side: string; price: number; size: number }>,
): Record<string, number> {
  const out: Record<string, number> = {};
  for (const f of fills)
    out[`${String(f.bar).padStart(3, '0')} ${f.side} ${f.price}`] =
      (out[`${String(f.bar).padStart(3, '0')} ${f.side} ${f.price}`] ?? 0) + f.size;
  return out;
}

describe('simulator and backtest agree', () => {
  it('on the fills of the same strategy over the same bar file with the same spread model', async () => {
    const contractId = frontMonth('ES', FROM);
    const contract = CALENDAR.byId(contractId)!;
    const { file, chunk } = barFile(contractId);

    // The backtest.
    const model = new SimulatedVenue({
      slippageTicks: 0,
      feePerContractPerSide: 0,
      sameBar: 'path',
      touch: { spread: SPREAD, book: DEFAULT_BOOK, partialFills: true, queue: false },
    });
    const placed: OrderCommand[] = [];
    const engine = createEngine({
      strategies: [{ strategy: meanReversion, params: PARAMS }],
      contracts: [
        {
          id: contract.id,
          name: contract.name,
          symbolId: contract.symbolId,
          description: contract.description,
          grid: contract.grid,
        },
      ],
      venue: recording(model, placed),
      account: { startingBalance: 100_000 },
    });
    const backtestFills: Fill[] = [];
    engine.fills$.subscribe((fill) => backtestFills.push(fill));
    engine.push(chunk);
    engine.close();
    expect(placed.length).toBeGreaterThanOrEqual(4);
    expect(placed.every((c) => c.order.type === 'market' && c.bracket !== undefined)).toBe(true);

    // The simulator: the same file, the same spread, an accelerated clock moved on to each order's moment.
    const sim = await startTestSimulator({
      clock: { speed: 10 },
      tickMs: 20,
      startTime: FROM + MINUTE,
      market: { source: 'csv', path: file },
      fills: { spread: SPREAD, partialFills: true, queue: false },
      users: [{ userName: 'agree', apiKey: 'agree-key', accounts: [{ name: 'A-1', template: 'PRACTICE' }] }],
    });
    const client = tradingClient(sim, { userName: 'agree', apiKey: 'agree-key' });
    try {
      const accountId = (await accountIds(client))['A-1']!;
      const grid = contract.grid;
      for (const command of placed) {
        // The backtest's venue meets the order at the open of the bar after the decision.
        const at = command.decidedAt + MINUTE;
        sim.clock.advance(Math.max(0, at - sim.clock.now()));
        const id = await client.placeOrder({
          accountId,
          contractId,
          type: OrderType.Market,
          side: command.side === 'buy' ? OrderSide.Bid : OrderSide.Ask,
          size: command.size,
          customTag: command.id,
          ...signedBrackets(command.side, command.bracket),
        });
        const order = (await client.searchOrders({ accountId, startTimestamp: ISO(at) })).find((o) => o.id === id)!;
        // Within the bar's flat opening third, or the quotes could differ (a stalled machine).
        expect(Date.parse(order.creationTimestamp) - at, `order ${command.id} reached the simulator late`).toBeLessThan(
          MINUTE / 3,
        );
      }
      sim.clock.advance(Math.max(0, chunk.time[BARS - 1]! + MINUTE - sim.clock.now()));

      const trades = await client.searchTrades({ accountId, startTimestamp: ISO(FROM) });
      const barOf = (t: number) => Math.floor((t - FROM) / MINUTE);
      const simulated = summed(
        trades.map((t) => ({
          bar: barOf(Date.parse(t.creationTimestamp)),
          side: t.side === OrderSide.Bid ? 'buy' : 'sell',
          price: t.price,
          size: t.size,
        })),
      );
      const backtested = summed(
        backtestFills.map((f) => ({ bar: barOf(f.time), side: f.side, price: grid.toPrice(f.price), size: f.size })),
      );
      expect(simulated).toEqual(backtested);
      // The comparison means something: entries and both kinds of exits filled.
      expect(Object.keys(backtested).length).toBeGreaterThanOrEqual(2 * placed.length - 1);
      const legs = backtestFills.filter((f) => f.orderId.includes(':'));
      expect(new Set(legs.map((f) => f.orderId.split(':')[1]))).toEqual(new Set(['sl', 'tp']));
    } finally {
      await client.close();
      await sim.close();
    }
  }, 60_000);
});
