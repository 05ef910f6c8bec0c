/**
 * Properties of the matching engine over random order flows on the synthetic market, with partial fills
 * and the queue model on or off: an order that takes liquidity never fills better than the touch it met,
 * resting orders respect their limits and stops, fills lie on the grid, a filled size never exceeds the
 * order and its trades sum to its fillVolume, positions equal the sum of the trades, and the profit and
 * loss of a flat contract equals its cash flow in ticks.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { OrderSide, OrderStatus, OrderType } from '../../../src/protocol/codes.ts';
import { CALENDAR } from '../../../src/market/contract-months.ts';
import { openSimulator } from '../../../src/sim/index.ts';
import type { OrderRow, PositionRow, TradeRow, UserRow } from '../../../src/sim/store.ts';

const START = Date.UTC(2025, 10, 3, 13, 0);
const CONTRACT_IDS = ['CON.F.US.EP.Z25', 'CON.F.US.GCE.G26'];

type Command =
  | { kind: 'place'; contract: number; type: number; side: number; size: number; offset: number; gap: number }
  | { kind: 'advance'; minutes: number }
  | { kind: 'cancel'; pick: number };

const command: fc.Arbitrary<Command> = fc.oneof(
  fc.record({
    kind: fc.constant('place' as const),
    contract: fc.integer({ min: 0, max: 1 }),
    type: fc.constantFrom(
      OrderType.Market,
      OrderType.Limit,
      OrderType.Stop,
      OrderType.StopLimit,
      OrderType.TrailingStop,
    ),
    side: fc.constantFrom(OrderSide.Bid, OrderSide.Ask),
    // Up to 40 contracts: beyond the top of the book, so orders walk it and fill in parts.
    size: fc.integer({ min: 1, max: 40 }),
    offset: fc.integer({ min: -20, max: 20 }),
    gap: fc.integer({ min: 0, max: 6 }),
  }),
  fc.record({ kind: fc.constant('advance' as const), minutes: fc.integer({ min: 1, max: 20 }) }),
  fc.record({ kind: fc.constant('cancel' as const), pick: fc.nat() }),
);

let fillsSeen = 0;
let partsSeen = 0;

function run(seed: number, commands: Command[], fills: { partialFills: boolean; queue: boolean }) {
  const core = openSimulator({
    clock: 'manual',
    startTime: START,
    seed,
    fills,
    users: [{ userName: 'p', apiKey: 'k', accounts: [{ name: 'P', template: 'PRACTICE' }] }],
  });
  const touches: { orderId: number; touch: number }[] = [];
  try {
    const { engine, db } = core;
    const user = db.prepare("SELECT * FROM users WHERE user_name = 'p'").get() as UserRow;
    const accountId = (db.prepare("SELECT id FROM accounts WHERE name = 'P'").get() as { id: number }).id;
    for (const c of commands) {
      if (c.kind === 'advance') {
        engine.clock.advance(c.minutes * 60_000);
        engine.step(engine.clock.now());
      } else if (c.kind === 'cancel') {
        const open = db
          .prepare('SELECT id FROM orders WHERE account_id = ? AND status = ?')
          .all(accountId, OrderStatus.Open) as { id: number }[];
        if (open.length > 0) engine.cancel(user, { accountId, orderId: open[c.pick % open.length]!.id });
      } else {
        const contract = CALENDAR.byId(CONTRACT_IDS[c.contract]!)!;
        const last = engine.lastPrice(contract.id)!;
        const price = (ticks: number) => contract.grid.toPrice(Math.max(1, ticks));
        const level = last + c.offset;
        const quote = engine.quote(contract.id)!;
        const placed = engine.place(user, {
          accountId,
          contractId: contract.id,
          type: c.type,
          side: c.side,
          size: c.size,
          limitPrice:
            c.type === OrderType.Limit
              ? price(level)
              : c.type === OrderType.StopLimit
                ? price(level + (c.side === OrderSide.Bid ? c.gap : -c.gap))
                : null,
          stopPrice: c.type === OrderType.Stop || c.type === OrderType.StopLimit ? price(level) : null,
          trailPrice:
            c.type === OrderType.TrailingStop
              ? price(last + (c.side === OrderSide.Bid ? 1 : -1) * (Math.abs(c.offset) + 1))
              : null,
        });
        if (c.type === OrderType.Market && 'orderId' in placed)
          touches.push({ orderId: placed.orderId, touch: c.side === OrderSide.Bid ? quote.ask : quote.bid });
      }
    }
    const orders = db.prepare('SELECT * FROM orders WHERE account_id = ?').all(accountId) as OrderRow[];
    const trades = db.prepare('SELECT * FROM trades WHERE account_id = ?').all(accountId) as TradeRow[];
    const positions = db.prepare('SELECT * FROM positions WHERE account_id = ?').all(accountId) as PositionRow[];
    const problems: string[] = [];
    for (const o of orders) {
      const own = trades.filter((t) => t.order_id === o.id);
      const filled = own.reduce((sum, t) => sum + t.size, 0);
      if (o.fill_volume > o.size) problems.push(`order ${o.id} filled ${o.fill_volume} of ${o.size}`);
      if (filled !== o.fill_volume)
        problems.push(`order ${o.id}: trades sum to ${filled}, fillVolume ${o.fill_volume}`);
      if ((o.status === OrderStatus.Filled) !== (o.fill_volume === o.size))
        problems.push(`order ${o.id} is status ${o.status} with ${o.fill_volume} of ${o.size} filled`);
      if (own.length > 0) fillsSeen++;
      if (own.length > 1) partsSeen++;
      const buy = o.side === OrderSide.Bid;
      for (const t of own) {
        if (!Number.isInteger(t.price_ticks)) problems.push(`order ${o.id} filled off the grid`);
        if (
          (o.type === OrderType.Limit || o.type === OrderType.StopLimit) &&
          (buy ? t.price_ticks > o.limit_ticks! : t.price_ticks < o.limit_ticks!)
        )
          problems.push(`order ${o.id} filled through its limit`);
        if (o.type === OrderType.Stop && (buy ? t.price_ticks < o.stop_ticks! : t.price_ticks > o.stop_ticks!))
          problems.push(`order ${o.id} filled before its stop`);
      }
    }
    for (const { orderId, touch } of touches) {
      const order = orders.find((o) => o.id === orderId)!;
      for (const t of trades.filter((x) => x.order_id === orderId)) {
        if (order.side === OrderSide.Bid ? t.price_ticks < touch : t.price_ticks > touch)
          problems.push(`market order ${orderId} filled at ${t.price_ticks}, better than the touch ${touch}`);
      }
    }
    for (const contractId of CONTRACT_IDS) {
      const own = trades.filter((t) => t.contract_id === contractId);
      const signed = own.reduce((s, t) => s + (t.side === OrderSide.Bid ? t.size : -t.size), 0);
      const held = positions.find((p) => p.contract_id === contractId)?.size ?? 0;
      if (signed !== held) problems.push(`${contractId}: position ${held} but trades sum to ${signed}`);
      if (held === 0 && own.length > 0) {
        const contract = CALENDAR.byId(contractId)!;
        const cash =
          own.reduce((s, t) => s + (t.side === OrderSide.Bid ? -1 : 1) * t.price_ticks * t.size, 0) *
          contract.tickValue;
        const pnl = own.reduce((s, t) => s + (t.pnl ?? 0), 0);
        if (Math.abs(cash - pnl) > 0.01 * own.length) problems.push(`${contractId}: P&L ${pnl} but cash flow ${cash}`);
      }
      const halfTurns = own.filter((t) => t.pnl === null).reduce((s, t) => s + t.size, 0);
      const closes = own.filter((t) => t.pnl !== null).reduce((s, t) => s + t.size, 0);
      if (closes > halfTurns)
        problems.push(`${contractId}: more contracts closed (${closes}) than opened (${halfTurns})`);
    }
    return problems;
  } finally {
    core.close();
  }
}

describe('matching engine properties', () => {
  it('fills no better than the touch, within limits and sizes, with trades summing to fillVolume and to the positions', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 1000 }),
        fc.array(command, { minLength: 5, maxLength: 30 }),
        fc.record({ partialFills: fc.boolean(), queue: fc.boolean() }),
        (seed, commands, fills) => {
          expect(run(seed, commands, fills)).toEqual([]);
        },
      ),
      { numRuns: 40 },
    );
    // The properties mean something only if orders actually filled, some of them in several trades.
    expect(fillsSeen).toBeGreaterThan(20);
    expect(partsSeen).toBeGreaterThan(3);
  });
});
