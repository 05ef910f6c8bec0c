/**
 * What keeps a live strategy's exposure at its target when orders resolve after the decision (live mode).
 *
 * A target counts an order whose outcome is unknown only in the direction that cannot overshoot; when such
 * an order turns out to execute (acknowledged, filled), or an order given up as lost turns up after all,
 * the exposure differs from the target and nobody will decide again until the next bar. The keeper
 * remembers each strategy's last target per contract and which orders must re-assert it, and schedules one
 * re-assertion per strategy and contract on a microtask, so it never runs inside the venue call or event
 * that caused it; the engine then orders at most what brings the exposure back.
 */
export type TargetKey = string;

export function targetKey(strategyId: string, contractId: string): TargetKey {
  return `${strategyId}\u0000${contractId}`;
}

export function parseTargetKey(key: TargetKey): { strategyId: string; contractId: string } {
  const separator = key.indexOf('\u0000');
  return { strategyId: key.slice(0, separator), contractId: key.slice(separator + 1) };
}

export class TargetKeeper {
  private readonly targets = new Map<TargetKey, number>();
  /** Orders whose outcome re-asserts a target (pending ones a decision counted, adopted ones). */
  private readonly watched = new Map<string, TargetKey>();
  private readonly queue = new Set<TargetKey>();

  /** `reassert` re-decides one strategy's target on one contract (called on a microtask). */
  constructor(private readonly reassert: (strategyId: string, contractId: string, size: number) => void) {}

  noteTarget(strategyId: string, contractId: string, size: number): void {
    this.targets.set(targetKey(strategyId, contractId), size);
  }

  /** The outcome of this order must re-assert that target. */
  watch(orderId: string, key: TargetKey): void {
    this.watched.set(orderId, key);
  }

  watching(orderId: string): TargetKey | undefined {
    return this.watched.get(orderId);
  }

  unwatch(orderId: string): void {
    this.watched.delete(orderId);
  }

  schedule(key: TargetKey): void {
    if (this.queue.size === 0) queueMicrotask(() => this.flush());
    this.queue.add(key);
  }

  /** After the engine flattened on its own (breach, kill switch, flat-by): every target stands at flat. */
  zero(): void {
    for (const key of this.targets.keys()) this.targets.set(key, 0);
  }

  private flush(): void {
    const keys = [...this.queue];
    this.queue.clear();
    for (const key of keys) {
      const size = this.targets.get(key);
      if (size === undefined) continue;
      const { strategyId, contractId } = parseTargetKey(key);
      this.reassert(strategyId, contractId, size);
    }
  }
}
