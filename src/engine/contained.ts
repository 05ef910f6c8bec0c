/**
 * Streams handed to a strategy, with its callbacks contained. RxJS reports a throw inside a subscriber's
 * `next` asynchronously, as an unhandled error that ends the process: in the per-bar style
 * (`ctx.barRecords().subscribe(bar => ...)`) a bug in the strategy would kill a live bot with its position
 * open. Here the strategy's own callbacks run inside a try/catch, so the engine learns at once which
 * strategy failed, on which bar, and can halt it and act (flatten or hold) instead.
 */
import { Observable, Subscriber, type Observer, type Operator, type Subscription } from 'rxjs';

type Callback<T> = ((value: T) => void) | undefined;

export class ContainedObservable<T> extends Observable<T> {
  constructor(
    source: Observable<T>,
    private readonly onThrow: (error: unknown) => void,
  ) {
    super((subscriber) => source.subscribe(subscriber));
  }

  override subscribe(observerOrNext?: Partial<Observer<T>> | ((value: T) => void) | null): Subscription {
    // Operators subscribe with their own Subscriber, which already routes a throw to the error channel.
    if (observerOrNext instanceof Subscriber || observerOrNext === null || observerOrNext === undefined)
      return super.subscribe(observerOrNext ?? undefined);
    if (typeof observerOrNext === 'function')
      return super.subscribe({ next: this.guard(observerOrNext), error: this.onThrow } as Observer<T>);
    const observer = observerOrNext;
    return super.subscribe({
      next: this.guard(observer.next?.bind(observer)),
      error: this.guard(observer.error?.bind(observer)) ?? ((error: unknown) => this.onThrow(error)),
      complete: this.guard(observer.complete?.bind(observer)),
    } as Observer<T>);
  }

  /**
   * Operators (`pipe`) lift: the stream they return is contained too, so `ctx.barRecords().pipe(filter(...))
   * .subscribe(bar => ...)` has its callback guarded like `ctx.barRecords().subscribe(...)`, and an error
   * raised along the chain reaches the engine instead of RxJS's unhandled path.
   */
  override lift<R>(operator?: Operator<T, R>): Observable<R> {
    const lifted = new ContainedObservable<R>(this as unknown as Observable<R>, this.onThrow);
    lifted.source = this;
    lifted.operator = operator;
    return lifted;
  }

  private guard<V>(callback: Callback<V>): Callback<V> {
    if (callback === undefined) return undefined;
    const onThrow = this.onThrow;
    return (value: V) => {
      try {
        callback(value);
      } catch (error) {
        onThrow(error);
      }
    };
  }
}
