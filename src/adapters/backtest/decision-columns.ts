/**
 * The guard's decisions a backtest keeps for decisions.csv and the report, as columns. A decision kept as
 * its objects held the intent and the target it came from alive to the run's end: about 285 bytes a
 * decision, 110 MB of a 10 M-bar run's heap. The usual decision, a target expanded into one market order
 * under the engine's own id (`sma-cross-12`), is kept as numbers and made again, equal key for key and in
 * the same key order, when read; any other keeps its objects as they are. The strategy id is a code and the
 * guard's plain acceptance a flag, so the usual decision keeps no reference at all (a block's array of them,
 * kept to the run's end, was copied by every scavenge).
 */
import { asStored, BLOCK_MASK, BLOCK_SHIFT, ColumnBlocks, Interned, sequenceIds } from '../../engine/column-blocks.ts';
import { MARKET_ORDER } from '../../engine/intents.ts';
import { ACCEPTED, type GuardResult } from '../../engine/risk.ts';
import type { Intent, Side } from '../../engine/types.ts';
import type { DecisionRecord, DecisionSequence } from '../../report/report-types.ts';

/**
 * time, position, equity, the order's size, the target's size, the id's number, its prefix code (-1: objects
 * kept), contract code, side, strategy code, 1 when the result is the guard's plain `ACCEPTED` (0: in the refs).
 */
const NUMBERS = 11;
/** intent (objects kept), origin (when it has one), result (unless `ACCEPTED`): each written only when kept. */
const REFS = 3;
const TARGET_KEYS = ['kind', 'contractId', 'size', 'id'] as const;
const PLACE_KEYS = ['kind', 'id', 'contractId', 'side', 'size', 'order'] as const;
const SPEC_KEYS = ['type'] as const;

export class DecisionColumns implements DecisionSequence {
  length = 0;
  private readonly blocks = new ColumnBlocks<unknown>(NUMBERS, REFS);
  private readonly contracts = new Interned();
  private readonly strategies = new Interned();

  /** A decision as the engine's `decisions$` carries it, with the position and equity the run saw then. */
  push(
    strategyId: string,
    intent: Intent,
    origin: Intent | undefined,
    result: GuardResult,
    time: number,
    position: number,
    equity: number,
  ): void {
    const k = this.length++;
    const n = this.blocks.numbersFor(k);
    const slot = (k & BLOCK_MASK) * NUMBERS;
    n[slot] = time;
    n[slot + 1] = position;
    n[slot + 2] = equity;
    n[slot + 9] = this.strategies.code(strategyId);
    const accepted = result === ACCEPTED;
    n[slot + 10] = accepted ? 1 : 0;
    const code = origin === undefined ? -1 : expandedTargetCode(intent, origin);
    n[slot + 6] = code;
    this.blocks.setRef(k, 2, accepted ? null : result);
    if (code < 0) {
      this.blocks.setRef(k, 0, intent);
      this.blocks.setRef(k, 1, origin);
      return;
    }
    const place = intent as Intent & { kind: 'place' };
    n[slot + 3] = place.size;
    n[slot + 4] = (origin as Intent & { kind: 'target' }).size;
    n[slot + 5] = sequenceIds.number;
    n[slot + 7] = this.contracts.code(place.contractId);
    n[slot + 8] = place.side === 'buy' ? 0 : 1;
  }

  at(k: number): DecisionRecord | undefined {
    if (k < 0) k += this.length;
    if (!(k >= 0 && k < this.length)) return undefined;
    const n = this.blocks.numbersOf(k >> BLOCK_SHIFT);
    const slot = (k & BLOCK_MASK) * NUMBERS;
    const refs = this.blocks.refsOf(k >> BLOCK_SHIFT);
    const ref = (k & BLOCK_MASK) * REFS;
    const strategyId = this.strategies.value(n[slot + 9]!);
    const result = n[slot + 10] === 1 ? ACCEPTED : (refs[ref + 2] as GuardResult);
    const time = n[slot]!;
    // `asStored`: a run that writes its decisions as it goes makes records of this shape on its hot path.
    const position = asStored(n[slot + 1]!);
    const equity = asStored(n[slot + 2]!);
    const code = n[slot + 6]!;
    if (code < 0) {
      const intent = refs[ref] as Intent;
      // No origin is a slot never written: undefined, or null once read back.
      const origin = (refs[ref + 1] as Intent | null | undefined) ?? null;
      return origin === null
        ? { strategyId, intent, result, time, position, equity }
        : { strategyId, intent, origin, result, time, position, equity };
    }
    const id = sequenceIds.decode(code, n[slot + 5]!);
    const contractId = this.contracts.value(n[slot + 7]!);
    const side: Side = n[slot + 8] === 0 ? 'buy' : 'sell';
    // Sizes `asStored`: these objects have the shapes of the router's own target and place intents.
    const origin: Intent = { kind: 'target', contractId, size: asStored(n[slot + 4]!), id };
    const intent: Intent = { kind: 'place', id, contractId, side, size: asStored(n[slot + 3]!), order: MARKET_ORDER };
    return { strategyId, intent, origin, result, time, position, equity };
  }

  *[Symbol.iterator](): Iterator<DecisionRecord> {
    for (let k = 0; k < this.length; k++) yield this.at(k)!;
  }
}

/**
 * The id's prefix code when `intent` is a market order a target was expanded into under its own id, both
 * with exactly the keys (in order) the engine gives them, so that making them again gives the same
 * objects; else -1.
 */
function expandedTargetCode(intent: Intent, origin: Intent): number {
  if (intent.kind !== 'place' || origin.kind !== 'target') return -1;
  if (intent.id === undefined || intent.id !== origin.id || intent.contractId !== origin.contractId) return -1;
  if (intent.side !== 'buy' && intent.side !== 'sell') return -1;
  if (!isNumber(intent.size) || !isNumber(origin.size) || intent.order.type !== 'market') return -1;
  if (!keysAre(origin, TARGET_KEYS) || !keysAre(intent, PLACE_KEYS) || !keysAre(intent.order, SPEC_KEYS)) return -1;
  return sequenceIds.encode(intent.id);
}

function isNumber(value: unknown): value is number {
  return typeof value === 'number';
}

/** The object's own enumerable keys are exactly `names`, in that order. */
function keysAre(o: object, names: readonly string[]): boolean {
  let k = 0;
  for (const key in o) {
    if (!Object.hasOwn(o, key) || key !== names[k]) return false;
    k++;
  }
  return k === names.length;
}
