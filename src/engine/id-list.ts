/**
 * Items by string id, in insertion order: the engine's book of working orders and the simulated
 * venue's working orders. What a `Map<string, T>` does for them, without its garbage.
 *
 * A working order lives for a bar or two, so these collections are mostly empty: one order in, one order
 * out. A `Map` emptied by a delete shrinks its hash table, and one whose deleted entries fill the table
 * rehashes on the next insert: ~150 bytes of new table per order for each of the two maps (bench heap
 * profile, 1M-bar run). Here the items sit in an array that is never emptied to length 0 (which would drop
 * its backing store) and ids are found by a linear scan; only past `INDEX_FROM` items, where a scan would
 * cost more than the garbage, is a `Map` kept beside the array.
 */
import { objectArray } from './object-array.ts';
const INDEX_FROM = 32;

export class IdList<T> {
  private readonly ids: string[] = objectArray();
  private readonly items: Array<T | undefined> = objectArray();
  private count = 0;
  private index: Map<string, T> | undefined;

  get size(): number {
    return this.count;
  }

  /** The k-th item in insertion order, 0 <= k < size. */
  at(k: number): T {
    return this.items[k]!;
  }

  get(id: string): T | undefined {
    if (this.index !== undefined) return this.index.get(id);
    const k = this.find(id);
    return k < 0 ? undefined : this.items[k];
  }

  has(id: string): boolean {
    return this.get(id) !== undefined;
  }

  /** Adds at the end, or replaces the item of an id already present in its place (as `Map.set`). */
  set(id: string, item: T): void {
    const k = this.index === undefined ? this.find(id) : this.index.has(id) ? this.find(id) : -1;
    if (k >= 0) {
      this.items[k] = item;
      this.index?.set(id, item);
      return;
    }
    const n = this.count;
    if (n < this.items.length) {
      this.ids[n] = id;
      this.items[n] = item;
    } else {
      this.ids.push(id);
      this.items.push(item);
    }
    this.count = n + 1;
    if (this.index !== undefined) this.index.set(id, item);
    else if (this.count > INDEX_FROM)
      this.index = new Map(this.ids.slice(0, this.count).map((key, j) => [key, this.items[j]!]));
  }

  /** Removes the item of `id`; true when there was one. */
  delete(id: string): boolean {
    const k = this.find(id);
    if (k < 0) return false;
    const n = this.count - 1;
    const { ids, items } = this;
    for (let j = k; j < n; j++) {
      ids[j] = ids[j + 1]!;
      items[j] = items[j + 1];
    }
    // The slot is cleared, not cut off: the arrays keep their capacity (and retain nothing).
    ids[n] = '';
    items[n] = undefined;
    this.count = n;
    if (this.index !== undefined) {
      if (n <= INDEX_FROM / 2) this.index = undefined;
      else this.index.delete(id);
    }
    return true;
  }

  /** A copy of the items in insertion order (safe to iterate while the list changes). */
  values(): T[] {
    return this.items.slice(0, this.count) as T[];
  }

  private find(id: string): number {
    const ids = this.ids;
    for (let k = 0; k < this.count; k++) if (ids[k] === id) return k;
    return -1;
  }
}
