import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ContractMap } from '../../../src/engine/contract-map.ts';

describe('values by contract id', () => {
  it('property: any sequence of lookups, known ids or not, answers as a Map does', () => {
    const id = fc.constantFrom('CON.F.US.EP.Z26', 'CON.F.US.ENQ.Z26', 'CON.F.US.MES.Z26', 'unknown', '');
    fc.assert(
      fc.property(fc.uniqueArray(id, { maxLength: 3 }), fc.array(id, { maxLength: 30 }), (known, lookups) => {
        const entries = known.map((k, n) => [k, { n }] as const);
        const map = new Map(entries);
        const contracts = new ContractMap(entries);
        // Each id also as a string of its own (not the same object as the key).
        for (const k of lookups) {
          expect(contracts.get(k)).toBe(map.get(k));
          expect(contracts.get(`${k} `.trimEnd())).toBe(map.get(k));
        }
        expect([...contracts.values()]).toEqual([...map.values()]);
      }),
    );
  });
});
