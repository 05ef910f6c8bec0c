/**
 * Values by contract id, all given when it is made (a run's contracts are fixed), with the one looked up
 * last remembered: an order's way asks for its contract's position, last price and ledger line several
 * times, and a string-keyed `Map` lookup each time was about 2% of a backtest (docs/bench.md, issue 30's
 * tenth turn).
 */
export class ContractMap<T> {
  private readonly map: ReadonlyMap<string, T>;
  private lastId: string | undefined = undefined;
  private last: T | undefined = undefined;

  constructor(entries: Iterable<readonly [string, T]>) {
    this.map = new Map(entries);
  }

  get(contractId: string): T | undefined {
    if (contractId === this.lastId) return this.last;
    const value = this.map.get(contractId);
    this.lastId = contractId;
    this.last = value;
    return value;
  }

  values(): IterableIterator<T> {
    return this.map.values();
  }
}
