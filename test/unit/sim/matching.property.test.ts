/**
 * Properties of the matching engine over random order flows on the synthetic market: fills respect their
 * limits and stops, lie on the grid and inside the traded range, positions equal the sum of the trades,
 * and the profit and loss of a flat contract equals its cash flow in ticks.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { OrderSide, OrderStatus, OrderType } from '../../../src/adapters/gateway/codes.ts';
import { findContract } from '../../../src/sim/catalogue.ts';
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
    type: fc.constantFrom(OrderType.Market, OrderType.Limit, OrderType.Stop, OrderType.StopLimit, OrderType.TrailingStop),
    side: fc.constantFrom(OrderSide.Bid, OrderSide.Ask),
    size: fc.integer({ min: 1, max: 3 }),
    offset: fc.integer({ min: -20, max: 20 }),
    gap: fc.integer({ min: 0, max: 6 }),
  }),
  fc.record({ kind: fc.constant('advance' as const), minutes: fc.integer({ min: 1, max: 20 }) }),
  fc.record({ kind: fc.constant('cancel' as const), pick: fc.nat() }),
);

let fillsSeen = 0;

function run(seed: number, commands: Command[]) {
  const core = openSimulator({ clock: 'manual', startTime: START, seed, users: [{ userName: 'p', apiKey: 'k', accounts: [{ name: 'P', template: 'PRACTICE' }] }] });
  try {
    const { engine, db } = core;
    const user = db.prepare("SELECT * FROM users WHERE user_name = 'p'").get() as UserRow;
    const accountId = (db.prepare("SELECT id FROM accounts WHERE name = 'P'").get() as { id: number }).id;
    for (const c of commands) {
      if (c.kind === 'advance') {
        engine.clock.advance(c.minutes * 60_000);
        engine.step(engine.clock.now());
      } else if (c.kind === 'cancel') {
        const open = db.prepare('SELECT id FROM orders WHERE account_id = ? AND status = ?').all(accountId, OrderStatus.Open) as { id: number }[];
        if (open.length > 0) engine.cancel(user, { accountId, orderId: open[c.pick % open.length]!.id });
      } else {
        const contract = findContract(CONTRACT_IDS[c.contract]!)!;
        const last = engine.lastPrice(contract.id)!;
        const price = (ticks: number) => contract.grid.toPrice(Math.max(1, ticks));
        const level = last + c.offset;
        engine.place(user, {
          accountId,
          contractId: contract.id,
          type: c.type,
          side: c.side,
          size: c.size,
          limitPrice: c.type === OrderType.Limit ? price(level) : c.type === OrderType.StopLimit ? price(level + (c.side === OrderSide.Bid ? c.gap : -c.gap)) : null,
          stopPrice: c.type === OrderType.Stop || c.type === OrderType.StopLimit ? price(level) : null,
          trailPrice: c.type === OrderType.TrailingStop ? price(last + (c.side === OrderSide.Bid ? 1 : -1) * (Math.abs(c.offset) + 1)) : null,
        });
      }
    }
    const orders = db.prepare('SELECT * FROM orders WHERE account_id = ?').all(accountId) as OrderRow[];
    const trades = db.prepare('SELECT * FROM trades WHERE account_id = ?').all(accountId) as TradeRow[];
    const positions = db.prepare('SELECT * FROM positions WHERE account_id = ?').all(accountId) as PositionRow[];
    const problems: string[] = [];
    for (const o of orders.filter((x) => x.status === OrderStatus.Filled)) {
      fillsSeen++;
      const fill = o.filled_ticks!;
      const buy = o.side === OrderSide.Bid;
      if (!Number.isInteger(fill)) problems.push(`order ${o.id} filled off the grid`);
      if ((o.type === OrderType.Limit || o.type === OrderType.StopLimit) && (buy ? fill > o.limit_ticks! : fill < o.limit_ticks!)) problems.push(`order ${o.id} filled through its limit`);
      if (o.type === OrderType.Stop && (buy ? fill < o.stop_ticks! : fill > o.stop_ticks!)) problems.push(`order ${o.id} filled before its stop`);
      const market = engine.market(o.contract_id)!;
      const i = market.barAt(o.updated_at);
      if (i < 0 || fill < market.base.low(i) || fill > market.base.high(i)) problems.push(`order ${o.id} filled at ${fill} outside the bar traded then`);
    }
    for (const contractId of CONTRACT_IDS) {
      const own = trades.filter((t) => t.contract_id === contractId);
      const signed = own.reduce((s, t) => s + (t.side === OrderSide.Bid ? t.size : -t.size), 0);
      const held = positions.find((p) => p.contract_id === contractId)?.size ?? 0;
      if (signed !== held) problems.push(`${contractId}: position ${held} but trades sum to ${signed}`);
      if (held === 0 && own.length > 0) {
        const contract = findContract(contractId)!;
        const cash = own.reduce((s, t) => s + (t.side === OrderSide.Bid ? -1 : 1) * t.price_ticks * t.size, 0) * contract.tickValue;
        const pnl = own.reduce((s, t) => s + (t.pnl ?? 0), 0);
        if (Math.abs(cash - pnl) > 0.01 * own.length) problems.push(`${contractId}: P&L ${pnl} but cash flow ${cash}`);
      }
      const halfTurns = own.filter((t) => t.pnl === null).reduce((s, t) => s + t.size, 0);
      const closes = own.filter((t) => t.pnl !== null).reduce((s, t) => s + t.size, 0);
      if (closes > halfTurns) problems.push(`${contractId}: more contracts closed (${closes}) than opened (${halfTurns})`);
    }
    return problems;
  } finally {
    core.close();
  }
}

describe('matching engine properties', () => {
  it('respects limits and stops, the grid, the traded range and the accounting', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1000 }), fc.array(command, { minLength: 5, maxLength: 30 }), (seed, commands) => {
        expect(run(seed, commands)).toEqual([]);
      }),
      { numRuns: 40 },
    );
    // The properties mean something only if orders of every kind actually filled.
    expect(fillsSeen).toBeGreaterThan(20);
  });
});
