/**
 * The warm pool of sweep workers (tinypool): threads started once and reused for every job of a sweep and
 * for every sweep of a search or a walk-forward that passes the same pool. The workers run the compiled
 * JavaScript of dist/ (for a built-in strategy, the worker bundled into one file); tsx only when no
 * up-to-date build exists (a checkout run from its sources before `npm run build`).
 *
 * tinypool over piscina, measured on this 2-core machine under load (1 thread, a task that adds one, node
 * 20): start-up to the first answer 60-131 ms against 83-141 ms, 108-147 us a task awaited one by one
 * against 97-150 us, 63-96 us a task queued against 78-130 us; the same within noise, and tinypool is 100 kB
 * without a native add-on (piscina 0.9 MB plus @napi-rs). Both costs are small beside one backtest.
 */
import { fileURLToPath } from 'node:url';
import Tinypool from 'tinypool';
import { TicklineError } from '../engine/errors.ts';
import { compileStrategy, type CompiledStrategy } from '../strategies/compile.ts';
import { isStrategyFile } from '../strategies/index.ts';
import { bundledWorkerEntry, threadExecArgv, workerEntry } from '../data/worker-entry.ts';

/** Where a worker thread's code lives: compiled JavaScript, or the sources through tsx. */
export function sweepWorkerEntry(): URL {
  return workerEntry(import.meta.url, 'sweep-worker');
}

/**
 * Where the threads of a sweep of `strategy` (a built-in's name or a file) load their code from. A
 * built-in runs in the one-file build of the worker when there is one (its threads start in about half
 * the time); a strategy file imports tickline's modules from dist/, so its threads load those modules.
 */
export function sweepThreadEntry(strategy: string): URL {
  return isStrategyFile(strategy) ? sweepWorkerEntry() : bundledWorkerEntry(import.meta.url, 'sweep-worker');
}

/** The folder of tickline's code (src/ or dist/) that the pool's workers run. */
export function sweepWorkerTree(): string {
  return fileURLToPath(new URL('../', sweepWorkerEntry()));
}

/**
 * A pool of `threads` sweep workers for sweeps of `strategy` (a built-in's name or a strategy file, as the
 * definition names it), started on the first task, kept until `close`.
 */
export class SweepPool {
  private pool: Tinypool | undefined;
  private readonly strategies = new Map<string, Promise<CompiledStrategy>>();
  private readonly entry: URL;

  constructor(
    readonly threads: number,
    readonly strategy: string,
  ) {
    this.entry = sweepThreadEntry(strategy);
  }

  /**
   * Refuses a sweep of a strategy the threads cannot load as they were started: a strategy file on
   * threads of the one-file build would get second copies of tickline's modules.
   */
  checkStrategy(strategy: string): void {
    if (isStrategyFile(strategy) && !isStrategyFile(this.strategy))
      throw new SweepPoolError(
        `a pool started for the built-in strategy '${this.strategy}' cannot run the strategy file ${strategy}: start a pool for it`,
      );
  }

  /** Strategy files compiled for the threads so far. */
  get compiledCount(): number {
    return this.strategies.size;
  }

  get started(): boolean {
    return this.pool !== undefined;
  }

  /** Start the threads now (they load their modules while this thread does other work, such as reading bars). */
  start(): this {
    this.tinypool();
    return this;
  }

  run<T>(task: unknown): Promise<T> {
    return this.tinypool().run(task) as Promise<T>;
  }

  private tinypool(): Tinypool {
    this.pool ??= new Tinypool({
      filename: this.entry.href,
      minThreads: this.threads,
      maxThreads: this.threads,
      // A worker keeps its loaded strategy and compiled code between tasks: that is what makes it warm.
      isolateWorkers: false,
      execArgv: threadExecArgv(process.execArgv),
    });
    return this.pool;
  }

  /** A TypeScript strategy file compiled for the workers, once for every sweep run on this pool. */
  compiledStrategy(file: string): Promise<CompiledStrategy> {
    let compiled = this.strategies.get(file);
    if (compiled === undefined) {
      compiled = compileStrategy(file, sweepWorkerTree());
      this.strategies.set(file, compiled);
    }
    return compiled;
  }

  async close(): Promise<void> {
    const pool = this.pool;
    this.pool = undefined;
    const strategies = [...this.strategies.values()];
    this.strategies.clear();
    await pool?.destroy();
    await Promise.all(strategies.map(async (s) => (await s.catch(() => undefined))?.dispose()));
  }
}

export class SweepPoolError extends TicklineError {
  override readonly name = 'SweepPoolError';
  readonly kind = 'runtime';
  readonly code = 'SWEEP_POOL_STRATEGY';
}
