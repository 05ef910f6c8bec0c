/**
 * Pending answers, as the real service gives them under load: a share of `Order/place` requests answer
 * errorCode 6 (OrderPending) with the order in status Pending (6), which settles into a working order
 * `settleMs` of simulator time later; a share of `Order/cancel` requests answer errorCode 4 (Pending) and
 * take effect `settleMs` later, if the order is still working then (it can fill meanwhile). Which requests
 * do is drawn from a seeded sequence kept in the store, so a run is reproducible and a restart continues
 * it. Off by default.
 *
 * The older test hook stays: an account's `pending_places` / `pending_cancels` counters answer that many
 * requests pending while doing nothing at all.
 */
import { z } from 'zod';
import { getMeta, setMeta, type AccountRow, type Db } from './store.ts';

export const pendingOptionsSchema = z.strictObject({
  /** Share of places answered pending (0 to 1). */
  places: z.number().min(0).max(1).default(0),
  /** Share of cancels answered pending (0 to 1). */
  cancels: z.number().min(0).max(1).default(0),
  /** Simulator milliseconds until a pending answer settles. */
  settleMs: z.number().int().positive().default(500),
  /** Seed of the draws; the market's seed when absent. */
  seed: z.number().int().optional(),
});
export type PendingOptions = z.input<typeof pendingOptionsSchema>;

export class PendingAnswers {
  private readonly options: z.output<typeof pendingOptionsSchema>;

  constructor(
    private readonly db: Db,
    options: PendingOptions | undefined,
    private readonly seed: number,
  ) {
    this.options = pendingOptionsSchema.parse(options ?? {});
  }

  get settleMs(): number {
    return this.options.settleMs;
  }

  /** True when this place answers pending (a seeded draw). */
  place(): boolean {
    return this.options.places > 0 && this.draw() < this.options.places;
  }

  /** True when this cancel answers pending (a seeded draw). */
  cancel(): boolean {
    return this.options.cancels > 0 && this.draw() < this.options.cancels;
  }

  /**
   * Test hook (the account options `pendingPlaces` / `pendingCancels`): while the account's counter is
   * above zero, a request answers pending without acting, and the counter goes down by one.
   */
  takeHook(account: AccountRow, counter: 'pending_places' | 'pending_cancels'): boolean {
    if (account[counter] <= 0) return false;
    this.db.prepare(`UPDATE accounts SET ${counter} = ${counter} - 1 WHERE id = ?`).run(account.id);
    return true;
  }

  /** The next number in [0, 1) of the seeded sequence (a counter hashed with the seed, so it survives restarts). */
  private draw(): number {
    const n = Number(getMeta(this.db, 'pendingDraws') ?? 0);
    setMeta(this.db, 'pendingDraws', String(n + 1));
    let x = Math.imul((this.options.seed ?? this.seed) ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(n + 1, 0xc2b2ae35);
    x = Math.imul(x ^ (x >>> 16), 0x7feb352d);
    x = Math.imul(x ^ (x >>> 15), 0x846ca68b);
    return ((x ^ (x >>> 16)) >>> 0) / 4294967296;
  }
}
