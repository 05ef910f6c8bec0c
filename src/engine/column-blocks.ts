/**
 * Growable columns in blocks: what a run keeps of each order, fill or closed trade, as numbers in typed
 * arrays and strings in plain arrays, instead of one object each (see order-columns.ts and
 * trade-columns.ts for why).
 */
/**
 * The columns go in blocks of 1,024 items, added and never copied: copying grown arrays of references
 * element by element was 2% of a run's CPU, and typed arrays grown by doubling allocated (and zeroed) twice
 * what they held, outside the heap, where V8 counts it towards its next full collection.
 */
export const BLOCK_SHIFT = 10;
export const BLOCK_MASK = (1 << BLOCK_SHIFT) - 1;

/** The block of numbers that item `k` goes in, added when `k` starts one. */
export function numberBlock(blocks: Float64Array[], k: number, width: number): Float64Array {
  const b = k >> BLOCK_SHIFT;
  if (b === blocks.length) blocks.push(new Float64Array((BLOCK_MASK + 1) * width));
  return blocks[b]!;
}

/** The block of `blocks` that item `k` goes in, added when `k` starts one. */
export function refBlock<T>(blocks: T[][], k: number, width: number): T[] {
  const b = k >> BLOCK_SHIFT;
  if (b === blocks.length) blocks.push(new Array<T>((BLOCK_MASK + 1) * width));
  return blocks[b]!;
}

/** Whether `id` is `F<n>` (checked without making the string). */
export function isSequenceId(id: string, n: number): boolean {
  if (id.length < 2 || id.length > 17 || id.charCodeAt(0) !== 0x46 || id.charCodeAt(1) === 0x30) return false;
  let value = 0;
  for (let k = 1; k < id.length; k++) {
    const digit = id.charCodeAt(k) - 0x30;
    if (digit < 0 || digit > 9) return false;
    value = value * 10 + digit;
  }
  return value === n;
}

/** A few strings (contract ids) that repeat: each kept once, a column holds its number. */
export class Interned {
  private readonly values: string[] = [];
  private readonly codes = new Map<string, number>();
  private last: string | undefined;
  private lastCode = -1;

  code(value: string): number {
    if (value === this.last) return this.lastCode;
    let code = this.codes.get(value);
    if (code === undefined) {
      code = this.values.length;
      this.values.push(value);
      this.codes.set(value, code);
    }
    this.last = value;
    this.lastCode = code;
    return code;
  }

  value(code: number): string {
    return this.values[code]!;
  }
}
