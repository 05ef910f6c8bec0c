/**
 * Money as the gateway books it: in cents, half up. The simulator books trades and balances this way, and
 * a live or paper engine books its closed trades the same way, so the two balances cannot drift apart.
 * (Reports round for display with `cents` of src/report/statistics.ts, which rounds halves away from zero.)
 */
export function gatewayCents(value: number): number {
  return Math.round(value * 100) / 100;
}
