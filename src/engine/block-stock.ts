/**
 * Typed arrays lent to one run after another in a thread (a sweep's jobs), each run's given back whole when
 * the caller is done with it. A sweep of 64 runs on 1 M bars otherwise allocated 900 MB of column blocks
 * and equity points, and every allocation that size is memory the system hands over page by page: a pool
 * thread took over a hundred thousand page faults a sweep (docs/bench.md, "Issue 30, eleventh turn").
 */

/** Arrays given back, by length, ready for the next lease. */
export class BlockStock {
  private readonly spare = new Map<number, Float64Array[]>();

  /** A lease for one run: what it takes comes from here, and goes back here at `end`. */
  lease(): BlockLease {
    return new BlockLease(this);
  }

  /** An array of `length` from the spares, or a new one; its values are those it was given back with. */
  take(length: number): Float64Array {
    return this.spare.get(length)?.pop() ?? new Float64Array(length);
  }

  /**
   * A run's arrays back. The stock keeps only lengths this run used: what it holds is at most a run's worth
   * (a walk-forward's folds, each of its own length, would otherwise leave a curve's room a fold).
   */
  give(arrays: readonly Float64Array[]): void {
    // A run that took nothing (parameters refused before it started) says nothing of the next run's needs.
    if (arrays.length === 0) return;
    for (const length of [...this.spare.keys()])
      if (!arrays.some((a) => a.length === length)) this.spare.delete(length);
    for (const array of arrays) {
      let spare = this.spare.get(array.length);
      if (spare === undefined) {
        spare = [];
        this.spare.set(array.length, spare);
      }
      spare.push(array);
    }
  }

  /** Arrays waiting for a lease (tests). */
  get spares(): number {
    let n = 0;
    for (const spare of this.spare.values()) n += spare.length;
    return n;
  }
}

/** What holds lent arrays: emptied when the lease ends, so a late read fails instead of reading another run's. */
export interface Borrower {
  forget(): void;
}

/**
 * One run's loan from a stock. Whatever took from it (`ColumnBlocks`, the equity points) must not be read
 * after `end`: its arrays are another run's from then on, and the borrowers are emptied.
 */
export class BlockLease {
  private readonly lent: Float64Array[] = [];
  private readonly borrowers: Borrower[] = [];
  private ended = false;

  constructor(private readonly stock: BlockStock) {}

  /**
   * An array of `length` holding anything (an earlier run's values): a borrower writes each value before it
   * reads it, as the columns write a row whole when they add it.
   */
  take(length: number, by: Borrower): Float64Array {
    // A lease that ended lends nothing more: what a forgotten borrower would take is its own.
    if (this.ended) return new Float64Array(length);
    const array = this.stock.take(length);
    this.lent.push(array);
    if (!this.borrowers.includes(by)) this.borrowers.push(by);
    return array;
  }

  /** Everything lent goes back to the stock; the borrowers are emptied. */
  end(): void {
    if (this.ended) return;
    this.ended = true;
    for (const borrower of this.borrowers) borrower.forget();
    this.stock.give(this.lent);
    this.lent.length = 0;
    this.borrowers.length = 0;
  }
}
