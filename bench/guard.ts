/**
 * Risk guard throughput: the real `checkIntent` over a rotating set of realistic intents against a state
 * shaped like the runner's (a book of working orders in a Map, a position, a last price, rule floors,
 * every optional check switched on), so each call walks the checks a live account would.
 */
import {
  checkIntent,
  riskConfigSchema,
  type GuardOrder,
  type GuardState,
  type ResolvedRiskConfig,
} from '../src/engine/risk.ts';
import type { Intent, Side } from '../src/engine/types.ts';
import { CONTRACT } from './reference.ts';

export interface GuardBench {
  readonly intents: readonly Intent[];
  readonly state: GuardState;
  readonly limits: ResolvedRiskConfig;
}

export function guardBench(): GuardBench {
  const id = CONTRACT.id;
  const last = 20_000; // 5000.00 on the 0.25 grid
  const book = new Map<string, GuardOrder>([
    ['s-1', { contractId: id, side: 'sell', size: 1, order: { type: 'stop', stopPrice: last - 40 }, trailStop: NaN }],
    ['s-2', { contractId: id, side: 'sell', size: 1, order: { type: 'limit', limitPrice: last + 80 }, trailStop: NaN }],
    [
      's-3',
      {
        contractId: id,
        side: 'sell',
        size: 1,
        order: { type: 'trailingStop', trailPrice: last - 20 },
        trailStop: last - 20,
      },
    ],
  ]);
  const sendTimes = [0, 0, 0, 0, 0];
  const now = Date.UTC(2026, 10, 16, 15, 0);
  const state: GuardState = {
    now,
    tradingState: 'ACTIVE',
    lockedUntil: 0,
    session: 'open',
    equity: 50_350,
    dayPnl: 350,
    dailyLossFloor: 49_000,
    maximumLossFloor: 48_000,
    personalDailyLossLimit: 800,
    personalDailyProfitTarget: 1_500,
    contract: (contractId) => (contractId === id ? CONTRACT : undefined),
    position: (contractId) => (contractId === id ? 1 : 0),
    lastPrice: (contractId) => (contractId === id ? last : NaN),
    order: (orderId) => book.get(orderId),
    openOrderCount: () => book.size,
    workingEntrySize: (contractId: string, side: Side) => {
      let total = 0;
      for (const order of book.values()) {
        if (
          order.contractId === contractId &&
          order.side === side &&
          (order.order.type === 'market' || order.order.type === 'limit')
        )
          total += order.size;
      }
      return total;
    },
    hasStopOrder: (contractId: string, side: Side) => {
      for (const order of book.values()) {
        if (
          order.contractId === contractId &&
          order.side === side &&
          order.order.type !== 'market' &&
          order.order.type !== 'limit'
        )
          return true;
      }
      return false;
    },
    marketPhase: () => 'open',
    ordersSince: (since) => {
      let count = 0;
      for (const t of sendTimes) if (t >= since) count++;
      return count;
    },
  };
  const limits = riskConfigSchema.parse({
    maxPositionSize: 5,
    maxOpenOrders: 20,
    maxOrderRate: { orders: 50, windowMs: 60_000 },
    maxTrailTicks: 400,
    requireProtectiveStop: true,
    refuseLooseningTrail: true,
    safetyBuffer: 100,
  });
  const intents: Intent[] = [
    // An entry with a bracket: every opening check down to the risk-versus-room sizing.
    {
      kind: 'place',
      id: 'b-1',
      contractId: id,
      side: 'buy',
      size: 1,
      order: { type: 'market' },
      bracket: { stopLossTicks: 16, takeProfitTicks: 32 },
    },
    // A limit entry protected by the working sell stop.
    { kind: 'place', id: 'b-2', contractId: id, side: 'buy', size: 1, order: { type: 'limit', limitPrice: last - 8 } },
    // Closing the long: reduces risk, accepted early.
    { kind: 'place', id: 'b-3', contractId: id, side: 'sell', size: 1, order: { type: 'market' } },
    // A trailing stop with an absolute trailPrice: side and distance checks.
    {
      kind: 'place',
      id: 'b-4',
      contractId: id,
      side: 'sell',
      size: 1,
      order: { type: 'trailingStop', trailPrice: last - 12 },
    },
    // A trail tightened by a modify.
    { kind: 'modify', id: 'b-5', orderId: 's-3', trailPrice: last - 10 },
    // A trailPrice passed as a distance by mistake: rejected with a reason (allocates its message).
    {
      kind: 'place',
      id: 'b-6',
      contractId: id,
      side: 'sell',
      size: 1,
      order: { type: 'trailingStop', trailPrice: 12 },
    },
    // A misaligned limit price: rejected.
    {
      kind: 'place',
      id: 'b-7',
      contractId: id,
      side: 'buy',
      size: 1,
      order: { type: 'limit', limitPrice: last - 8.5 },
    },
    { kind: 'cancel', id: 'b-8', orderId: 's-2' },
  ];
  return { intents, state, limits };
}

/** `count` guard checks cycling over the intents; returns accepted ones (so the work cannot be skipped). */
export function runGuardChecks(bench: GuardBench, count: number): number {
  const { intents, state, limits } = bench;
  const n = intents.length;
  let accepted = 0;
  for (let k = 0; k < count; k++) {
    if (checkIntent(intents[k % n]!, state, limits).accepted) accepted++;
  }
  return accepted;
}
