import { describe, expect, it } from 'vitest';
import { OrderStatus, OrderType } from '../../../src/protocol/codes.ts';
import { silentLogger } from '../../../src/engine/log.ts';
import { CALENDAR } from '../../../src/market/contract-months.ts';
import { createClock } from '../../../src/sim/clock.ts';
import { SimContracts } from '../../../src/sim/contracts.ts';
import { SimEngine } from '../../../src/sim/sim-core.ts';
import { ContractMarket, FixedBars } from '../../../src/sim/market/market.ts';
import { openStore, type UserRow } from '../../../src/sim/store.ts';

const ES = CALENDAR.byId('CON.F.US.EP.Z25')!;
const NOW = Date.UTC(2025, 0, 6, 14, 0);

/** An engine whose ES market only starts trading an hour from now, so ES has no last traded price yet. */
function engineWithoutPrice() {
  const db = openStore(':memory:');
  const later = Float64Array.of(NOW + 3_600_000);
  const market = new ContractMarket(
    ES.grid,
    new FixedBars(60_000, {
      time: later,
      open: Float64Array.of(24000),
      high: Float64Array.of(24004),
      low: Float64Array.of(23996),
      close: Float64Array.of(24002),
      volume: Float64Array.of(10),
    }),
    {
      spread: { type: 'fixed', ticks: 1 },
      book: { sizeShare: 0.25, minSize: 1, maxSize: 1000, levels: 5 },
      partialFills: true,
      queue: false,
    },
  );
  const clock = createClock('manual', NOW);
  const engine = new SimEngine(db, clock, new SimContracts(CALENDAR, clock), new Map([['ES', market]]), silentLogger);
  db.prepare(
    "INSERT INTO templates (id, name, title, description, starting_balance, margin, tag) VALUES (1, 't', 't', '', 50000, 50000, 0)",
  ).run();
  db.prepare(
    "INSERT INTO users (id, user_name, email, api_key, created_at) VALUES (1, 'u', 'u@example.com', 'k', 0)",
  ).run();
  db.prepare(
    "INSERT INTO accounts (id, user_id, name, template_id, starting_balance, margin, created_at, updated_at) VALUES (1, 1, 'A', 1, 50000, 50000, 0, 0)",
  ).run();
  // A trailing stop left from an earlier session (the store is the only state).
  db.prepare(
    'INSERT INTO orders (id, account_id, contract_id, type, side, size, trail_distance, trail_extreme, status, created_at, updated_at) VALUES (1, 1, ?, ?, 1, 1, 8, 24000, ?, 0, 0)',
  ).run(ES.id, OrderType.TrailingStop, OrderStatus.Open);
  const user = db.prepare('SELECT * FROM users WHERE id = 1').get() as UserRow;
  return { engine, user };
}

describe('SimEngine', () => {
  it('rejects a modify with errorCode 3 (Rejected: modify has no OutsideTradingHours) while the market is not trading', () => {
    const { engine, user } = engineWithoutPrice();
    expect(engine.modify(user, { accountId: 1, orderId: 1, trailPrice: 5999 })).toMatchObject({
      success: false,
      errorCode: 3,
      errorMessage: expect.stringMatching(/not trading at .*outside trading hours/),
    });
  });

  it('refuses a place outside trading hours with errorCode 5', () => {
    const { engine, user } = engineWithoutPrice();
    expect(
      engine.place(user, { accountId: 1, contractId: ES.id, type: OrderType.Market, side: 0, size: 1 }),
    ).toMatchObject({ success: false, errorCode: 5 });
  });
});
