import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DecisionColumns } from '../../../src/adapters/backtest/decision-columns.ts';
import { MARKET_ORDER } from '../../../src/engine/intents.ts';
import { ACCEPTED, type GuardResult } from '../../../src/engine/risk.ts';
import type { Intent } from '../../../src/engine/types.ts';
import type { DecisionRecord } from '../../../src/report/report-types.ts';

const number = fc.oneof(fc.integer({ min: -50, max: 50 }), fc.double(), fc.constant(-0));
const id = fc.oneof(
  fc.tuple(fc.constantFrom('sma-cross-', 'bot-a-', 'risk-'), fc.nat()).map(([p, n]) => `${p}${n}`),
  fc.string(),
  fc.constant('x-007'),
);
/** The guard's own `ACCEPTED` (kept as a flag), an equal object that is not it, a reduction, a refusal. */
const result: fc.Arbitrary<GuardResult> = fc.oneof(
  fc.constant(ACCEPTED),
  fc.constant({ accepted: true } as GuardResult),
  fc.record({ accepted: fc.constant(true as const), size: fc.nat() }),
  fc.record({
    accepted: fc.constant(false as const),
    code: fc.constant('MAX_POSITION_SIZE' as const),
    message: fc.string(),
  }),
);

/** A target the engine expanded into a market order: the shape the columns keep as numbers. */
const expanded = fc
  .record({
    id,
    contractId: fc.constantFrom('CON.F.US.EP.Z25', 'CON.F.US.MES.H26'),
    side: fc.constantFrom('buy', 'sell'),
    size: number,
    target: number,
    // The engine's own frozen terms, or an equal object of a strategy's.
    order: fc.constantFrom(MARKET_ORDER, { type: 'market' }),
  })
  .map(({ id, contractId, side, size, target, order }) => ({
    origin: { kind: 'target', contractId, size: target, id } as Intent,
    intent: { kind: 'place', id, contractId, side, size, order } as Intent,
  }));

/** Near misses and other decisions: a label, another key order, another order type, no origin, another id. */
const other = fc.oneof(
  expanded.map(({ origin, intent }) => ({ origin: { ...origin, label: 'x' } as Intent, intent })),
  expanded.map(({ origin, intent }) => ({ origin, intent: { ...intent, label: 'fade' } as Intent })),
  expanded.map(({ origin, intent }) => {
    const { kind, contractId, size, id } = origin as Intent & { kind: 'target' };
    return { origin: { kind, size, contractId, id } as Intent, intent };
  }),
  expanded.map(({ origin, intent }) => ({
    origin,
    intent: { ...intent, order: { type: 'limit', limitPrice: 3 } } as Intent,
  })),
  expanded.map(({ origin, intent }) => ({ origin, intent: { ...intent, id: `${intent.id}x` } as Intent })),
  expanded.map(({ intent }) => ({ origin: undefined, intent })),
  fc.constant({ origin: undefined, intent: { kind: 'cancel', orderId: 'a-1', id: 'a-1' } as Intent }),
);

const decision = fc.record({
  strategyId: fc.oneof(fc.constantFrom('sma-cross', 'bot-a', 'risk'), fc.string()),
  pair: fc.oneof(expanded, other),
  result,
  time: fc.integer({ min: 0, max: 2 ** 45 }),
  position: number,
  equity: number,
});

describe('decision columns', () => {
  it('give back every decision key for key, in the key order it was made with', () => {
    fc.assert(
      // Short lists, and lists that cross a block of 1,024 rows.
      fc.property(
        fc.oneof(fc.array(decision), fc.array(decision, { minLength: 1_025, maxLength: 2_100 })),
        (decisions) => {
          const columns = new DecisionColumns();
          const made: DecisionRecord[] = [];
          for (const d of decisions) {
            const { intent, origin } = d.pair;
            columns.push(d.strategyId, intent, origin, d.result, d.time, d.position, d.equity);
            const { strategyId, result, time, position, equity } = d;
            made.push(
              origin === undefined
                ? { strategyId, intent, result, time, position, equity }
                : { strategyId, intent, origin, result, time, position, equity },
            );
          }
          expect(columns.length).toBe(made.length);
          const back = [...columns];
          expect(back).toStrictEqual(made);
          // The same text, so a file written from either is the same.
          expect(JSON.stringify(back)).toBe(JSON.stringify(made));
          expect(columns.at(-1)).toStrictEqual(made.at(-1));
          expect(columns.at(made.length)).toBeUndefined();
          // The guard's own acceptance and the engine's market terms come back as the very objects.
          back.forEach((d, k) => {
            if (made[k]!.result === ACCEPTED) expect(d.result).toBe(ACCEPTED);
          });
        },
      ),
      { numRuns: 60 },
    );
  });
});
