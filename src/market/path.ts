/**
 * The intrabar price path both venues assume: inside a bar the price walks straight lines open -> first
 * extreme -> second extreme -> close, the low first on an up bar (close >= open) and the high first on a
 * down bar. The simulator trades along it; the backtest's fill model asks it which way the last trade
 * moved before a bar opened (the tick rule of the quotes) and, with `sameBar: 'path'`, which bracket leg a
 * bar reaches first.
 */

/** The path's four prices: open, first extreme, second extreme, close. */
export function pathPrices(open: number, high: number, low: number, close: number): [number, number, number, number] {
  return close >= open ? [open, low, high, close] : [open, high, low, close];
}

/** True when the bar's path visits its low before its high. */
export function lowFirst(open: number, close: number): boolean {
  return close >= open;
}

/**
 * The direction of the bar's last price change (+1 up, -1 down), or 0 when the bar never moves: the last
 * segment of the path that is not flat.
 */
export function lastMove(open: number, high: number, low: number, close: number): -1 | 0 | 1 {
  const [o, first, second, c] = pathPrices(open, high, low, close);
  if (c !== second) return c > second ? 1 : -1;
  if (second !== first) return second > first ? 1 : -1;
  if (first !== o) return first > o ? 1 : -1;
  return 0;
}
