import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { NumberedText } from '../../../src/engine/numbered-text.ts';

describe('a prefix and a counter as text', () => {
  it('property: the text of any number, in any order, is what prefix + n writes', () => {
    const number = fc.oneof(
      fc.integer({ min: 0, max: 1_000 }),
      fc.integer({ min: 0, max: 2_000_000_000 }),
      fc.constantFrom(0, -0, 99, 100, 101, 999, 1_000, 9_999, 10_000, Number.MAX_SAFE_INTEGER, 2 ** 53),
      fc.double({ noNaN: false }),
      fc.integer({ min: -1_000, max: -1 }),
    );
    fc.assert(
      fc.property(fc.string({ maxLength: 12 }), fc.array(number, { maxLength: 60 }), (prefix, numbers) => {
        const texts = new NumberedText(prefix);
        for (const n of numbers) expect(texts.text(n)).toBe(prefix + n);
      }),
      { numRuns: 2_000 },
    );
  });
  it('counting up across hundreds, as the engine numbers its orders', () => {
    const texts = new NumberedText('sma-cross-');
    for (let n = 0; n < 25_000; n++) expect(texts.text(n)).toBe(`sma-cross-${n}`);
  });
});
