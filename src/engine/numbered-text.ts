/**
 * Texts made of a fixed prefix and a counter (the engine's client ids `sma-cross-12`, the simulated venue's
 * fill ids `F12`), written as `prefix + n` writes them.
 *
 * Why not `prefix + n`: V8 turns the number into a string through its cache of recent numbers' strings,
 * which holds the last several thousand of them alive. A backtest made two such strings an order, so each
 * minor collection found some 450 KB of them still referenced from the cache and copied them (2 ms a
 * collection; the collector's pauses over twenty 1 M-bar runs 79 ms, 40 ms with the texts made here:
 * docs/bench.md, issue 30's tenth turn). Here the number's last two digits come from a table of constant
 * strings and the rest, a hundredth of the counter, is converted once per hundred texts.
 */

/** '00' .. '99'. */
const TWO_DIGITS: readonly string[] = Array.from({ length: 100 }, (_, k) => (k < 10 ? `0${k}` : `${k}`));
/** '0' .. '99' (no leading zero): a number below 100. */
const BELOW_HUNDRED: readonly string[] = Array.from({ length: 100 }, (_, k) => `${k}`);

export class NumberedText {
  private hundreds = -1;
  /** `prefix` followed by `hundreds` (the prefix alone below 100). */
  private head = '';

  constructor(readonly prefix: string) {}

  /** `prefix + n`, the same text; the fast way for whole numbers 0 to 2^53 - 1. */
  text(n: number): string {
    if (!(Number.isSafeInteger(n) && n >= 0)) return this.prefix + n;
    if (n < 100) return this.prefix + BELOW_HUNDRED[n]!;
    const hundreds = Math.floor(n / 100);
    if (hundreds !== this.hundreds) {
      this.hundreds = hundreds;
      this.head = this.prefix + hundreds;
    }
    return this.head + TWO_DIGITS[n - hundreds * 100]!;
  }
}
