/**
 * Exact conversion between decimal prices and integer ticks. Inside the engine every price is a count of
 * ticks; decimals exist only at the edges (wire, CSV, config, reports). A price and a tick size are both
 * read as integers of 1e-9 (the gateway sends at most 9 decimal places), so alignment is decided by
 * integer divisibility, never by comparing floats: 0.1, 0.25, 0.01 and 0.005 grids are all exact.
 */
import { TicklineError } from './errors.ts';

const NANOS = 1_000_000_000;

/** The exact integer count of 1e-9 units in a decimal number given as a JS number. */
export function toNanos(value: number): number {
  if (!Number.isFinite(value)) throw new RangeError(`not a finite number: ${value}`);
  // Math.round(value * 1e9) can land one unit off for values near a half; the shortest decimal string
  // of a double is exactly the decimal a human or a JSON decimal wrote, so read the digits instead.
  const text = Math.abs(value).toString();
  let nanos: number;
  if (text.includes('e')) {
    nanos = Math.round(Math.abs(value) * NANOS);
  } else {
    const dot = text.indexOf('.');
    const whole = dot < 0 ? text : text.slice(0, dot);
    const fraction = dot < 0 ? '' : text.slice(dot + 1);
    const digits = `${fraction}000000000`.slice(0, 9);
    // Digits beyond the 9th cannot be represented on the wire; round them half away from zero.
    const roundUp = fraction.length > 9 && fraction.charCodeAt(9) >= 53;
    nanos = Number(whole) * NANOS + Number(digits) + (roundUp ? 1 : 0);
  }
  if (!Number.isSafeInteger(nanos)) throw new RangeError(`price out of range: ${value}`);
  return value < 0 ? -nanos : nanos;
}

/** The price grid of one contract: tick size and tick value, with exact conversions. */
export class PriceGrid {
  readonly tickSize: number;
  readonly tickValue: number;
  /** Tick size in 1e-9 units (an integer). */
  readonly tickNanos: number;
  /** Decimal places needed to print any price on this grid. */
  readonly decimals: number;

  constructor(tickSize: number, tickValue: number) {
    if (!(tickSize > 0)) throw new RangeError(`tick size must be positive, got ${tickSize}`);
    if (!(tickValue > 0)) throw new RangeError(`tick value must be positive, got ${tickValue}`);
    this.tickSize = tickSize;
    this.tickValue = tickValue;
    this.tickNanos = toNanos(tickSize);
    let decimals = 0;
    while (decimals < 9 && this.tickNanos % 10 ** (9 - decimals) !== 0) decimals++;
    this.decimals = decimals;
  }

  /** True when `price` lies exactly on the grid. */
  isAligned(price: number): boolean {
    return toNanos(price) % this.tickNanos === 0;
  }

  /**
   * Ticks of a decimal price. Exact (an integer) when the price is on the grid; otherwise a fractional
   * number, which the risk guard rejects as misaligned. Never throws for finite input.
   */
  toTicks(price: number): number {
    const nanos = toNanos(price);
    const remainder = nanos % this.tickNanos;
    if (remainder === 0) return nanos / this.tickNanos;
    // Keep the result visibly fractional even where float division would round it to an integer.
    const whole = (nanos - remainder) / this.tickNanos;
    return whole + remainder / this.tickNanos;
  }

  /** Ticks of a decimal price that must be on the grid (data at the edges); throws a TickAlignmentError otherwise. */
  toTicksExact(price: number, what = 'price'): number {
    const ticks = this.toTicks(price);
    if (!Number.isInteger(ticks)) throw new TickAlignmentError(what, price, this.tickSize);
    return ticks;
  }

  /** Nearest grid price in ticks (for data whose decimals carry float noise, such as a synthetic feed). */
  roundToTicks(price: number): number {
    return Math.round(toNanos(price) / this.tickNanos);
  }

  /** The decimal price of a whole number of ticks, as the shortest exact JS number. */
  toPrice(ticks: number): number {
    const nanos = ticks * this.tickNanos;
    // Whole ticks are a whole count of nanos; divided once, that is the correctly rounded double of the
    // exact decimal, which is what reading its printed digits back gives, without a string per price.
    if (Number.isInteger(ticks) && Number.isSafeInteger(nanos)) return nanos / NANOS + 0;
    return Number((nanos / NANOS).toFixed(this.decimals));
  }

  /** Money value of a number of ticks for a number of contracts. */
  money(ticks: number, contracts = 1): number {
    return ticks * this.tickValue * contracts;
  }
}

export class TickAlignmentError extends TicklineError {
  override readonly name = 'TickAlignmentError';
  readonly kind = 'runtime';
  readonly code = 'TICK_MISALIGNED';
  constructor(
    readonly what: string,
    readonly price: number,
    readonly tickSize: number,
  ) {
    super(`${what} ${price} is not a multiple of the tick size ${tickSize}`);
  }
}
