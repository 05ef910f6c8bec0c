import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { IdList } from '../../../src/engine/id-list.ts';

type Op = { op: 'set'; id: string; value: number } | { op: 'delete'; id: string } | { op: 'get'; id: string };

describe('IdList', () => {
  it('behaves as a Map<string, T>: get, has, set (in place for a present id), delete, size and insertion order, above and below the indexed size', () => {
    // Ids from a pool of 60 so that runs cross the 32 items where a Map index is kept, and back.
    const id = fc.integer({ min: 0, max: 59 }).map((k) => `s-${k}`);
    const op: fc.Arbitrary<Op> = fc.oneof(
      { weight: 3, arbitrary: fc.record({ op: fc.constant('set' as const), id, value: fc.integer() }) },
      { weight: 2, arbitrary: fc.record({ op: fc.constant('delete' as const), id }) },
      { weight: 1, arbitrary: fc.record({ op: fc.constant('get' as const), id }) },
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 400 }), (ops) => {
        const list = new IdList<{ value: number }>();
        const map = new Map<string, { value: number }>();
        for (const o of ops) {
          if (o.op === 'set') {
            const item = { value: o.value };
            list.set(o.id, item);
            map.set(o.id, item);
          } else if (o.op === 'delete') {
            expect(list.delete(o.id)).toBe(map.delete(o.id));
          }
          expect(list.get(o.id)).toBe(map.get(o.id));
          expect(list.has(o.id)).toBe(map.has(o.id));
          expect(list.size).toBe(map.size);
        }
        const values = [...map.values()];
        expect(list.values()).toEqual(values);
        expect(Array.from({ length: list.size }, (_, k) => list.at(k))).toEqual(values);
      }),
      { numRuns: 300 },
    );
  });
});
