/**
 * The intents a push's strategies decided, waiting for their bar: four parallel arrays, not an object an
 * intent. A chunk runs through the strategies before its bars are walked, so every intent of a chunk waits
 * here until the walk reaches it: as objects they outlived the young generation (a million-bar chunk holds
 * tens of thousands), and the collector copied each one out of it. The arrays keep their capacity between
 * pushes (a slot is cleared, never the length cut to 0, which would drop the backing store).
 */
import { objectArray } from './object-array.ts';
import type { Instance } from './strategy-host.ts';
import type { Intent } from './types.ts';

export class PendingIntents {
  /** Intents held; the next one to decide is at `cursor`. */
  length = 0;
  cursor = 0;
  private readonly instances: (Instance | undefined)[] = objectArray();
  private readonly strategyIds: string[] = objectArray();
  private readonly intents: (Intent | undefined)[] = objectArray();
  private readonly ats: number[] = [];

  push(instance: Instance | undefined, strategyId: string, intent: Intent, at: number): void {
    const k = this.length;
    if (k < this.intents.length) {
      this.instances[k] = instance;
      this.strategyIds[k] = strategyId;
      this.intents[k] = intent;
      this.ats[k] = at;
    } else {
      this.instances.push(instance);
      this.strategyIds.push(strategyId);
      this.intents.push(intent);
      this.ats.push(at);
    }
    this.length = k + 1;
  }

  /** The bar index the k-th intent waits for. */
  at(k: number): number {
    return this.ats[k]!;
  }

  instance(k: number): Instance | undefined {
    return this.instances[k];
  }

  strategyId(k: number): string {
    return this.strategyIds[k]!;
  }

  intent(k: number): Intent {
    return this.intents[k]!;
  }

  /** The bar the next intent waits for, or `none` when every one was decided. */
  nextAt(none: number): number {
    return this.cursor < this.length ? this.ats[this.cursor]! : none;
  }

  /** Every intent let go, the capacity kept. */
  clear(): void {
    for (let k = 0; k < this.length; k++) {
      this.instances[k] = undefined;
      this.strategyIds[k] = '';
      this.intents[k] = undefined;
    }
    this.length = 0;
    this.cursor = 0;
  }

  /** In order of their bar; intents of one bar keep the order they came in (a stable sort). */
  sortByBar(): void {
    const n = this.length;
    const ats = this.ats;
    let sorted = true;
    for (let k = 1; k < n; k++) if (ats[k]! < ats[k - 1]!) sorted = false;
    if (sorted) return;
    const order = Array.from({ length: n }, (_, k) => k).sort((a, b) => ats[a]! - ats[b]!);
    this.keep(order);
  }

  /** Every intent waits for bar `at` (a live catch-up decides them all at its last bar). */
  moveAllTo(at: number): void {
    for (let k = 0; k < this.length; k++) this.ats[k] = at;
  }

  /**
   * Only the undecided intents at `kept` (indexes at or after the cursor, in the order given) stay after the
   * decided ones; the rest are let go.
   */
  keepUndecided(kept: readonly number[]): void {
    const order: number[] = [];
    for (let k = 0; k < this.cursor; k++) order.push(k);
    for (const k of kept) order.push(k);
    this.keep(order);
  }

  private keep(order: readonly number[]): void {
    const instances = order.map((k) => this.instances[k]);
    const strategyIds = order.map((k) => this.strategyIds[k]!);
    const intents = order.map((k) => this.intents[k]!);
    const ats = order.map((k) => this.ats[k]!);
    const before = this.length;
    for (let k = 0; k < order.length; k++) {
      this.instances[k] = instances[k];
      this.strategyIds[k] = strategyIds[k]!;
      this.intents[k] = intents[k]!;
      this.ats[k] = ats[k]!;
    }
    for (let k = order.length; k < before; k++) {
      this.instances[k] = undefined;
      this.strategyIds[k] = '';
      this.intents[k] = undefined;
    }
    this.length = order.length;
  }
}
