/**
 * A hot stream for the engine's per-order events (venue events, fills, decisions, order updates): what an
 * RxJS `Subject` does for its subscribers, without allocating per value.
 *
 * RxJS 7's `Subject.next` allocates a closure (its `errorContext` callback) and an array iterator with its
 * result objects for every value, about 240 bytes, and an order passed through four of them (the venue's
 * order update, fill and final update, and the engine's fill): ~1 KB of garbage per order in the bench's
 * heap profile. Here `next` loops over an array of the subscribers with an index.
 *
 * The same behaviour as a `Subject` where the engine relies on it: values are delivered synchronously, in
 * subscription order; a subscriber added while a value is delivered gets the next value, not this one; one
 * that unsubscribes during a delivery gets nothing more; a subscriber's throwing handler is reported the way
 * RxJS reports it (each subscriber is RxJS's own `Subscriber`), and the others still get the value; after
 * `complete` (or `error`) later values are ignored and a late subscriber is completed (or errored) at once.
 *
 * A multicast made with `own` carries values an emitter may reuse (one object rewritten for each value, as
 * the backtest's venue does): its plain listeners read each value in the call, and while RxJS subscribers,
 * which may keep a value, are subscribed, they get a copy `own` makes, one a value.
 */
import { Observable } from 'rxjs';

/** What `next` delivers to: RxJS's subscribers and the plain listeners of `listen`. */
interface Receiver<T> {
  next(value: T): void;
  error(error: unknown): void;
  complete(): void;
}

export class Multicast<T> {
  /** Replaced, never changed in place: a delivery in progress keeps iterating the list it started with. */
  private subscribers: ReadonlyArray<Receiver<T>> = [];
  /**
   * RxJS subscribers among `subscribers` (counted by `receive`): with `own`, each value is copied for them
   * while there are any.
   */
  private streams = 0;
  private stopped = false;
  private failure: { readonly error: unknown } | undefined;
  private readonly stream: HotStream<T>;

  /** `own`: a value's copy for subscribers, where the emitter may rewrite the value it passed after the call. */
  constructor(private readonly own?: (value: T) => T) {
    this.stream = new HotObservable<T>(this, (subscriber) => {
      if (this.failure !== undefined) {
        subscriber.error(this.failure.error);
        return undefined;
      }
      if (this.stopped) {
        subscriber.complete();
        return undefined;
      }
      this.receive([...this.subscribers, subscriber]);
      return () => this.receive(this.subscribers.filter((s) => s !== subscriber));
    });
  }

  /**
   * A plain function that gets every value, in order with the subscribers, without RxJS's subscriber
   * (several calls a value); a throw reaches the caller of `next`. Ignores `error` and `complete`. With
   * `own`, the value is the listener's to read during the call only.
   */
  listen(listener: (value: T) => void): { unsubscribe(): void } {
    const receiver = new Listener(listener);
    if (this.stopped) return { unsubscribe: ignore };
    this.receive([...this.subscribers, receiver]);
    return { unsubscribe: () => this.receive(this.subscribers.filter((s) => s !== receiver)) };
  }

  /** The receivers from now on, and how many of them are RxJS subscribers. */
  private receive(list: ReadonlyArray<Receiver<T>>): void {
    this.subscribers = list;
    let streams = 0;
    for (const receiver of list) if (!(receiver instanceof Listener)) streams++;
    this.streams = streams;
  }

  /** True when someone is subscribed (emit only then when building the value costs something). */
  get observed(): boolean {
    return this.subscribers.length > 0;
  }

  next(value: T): void {
    if (this.stopped) return;
    const list = this.subscribers;
    if (this.own === undefined || this.streams === 0) {
      for (let k = 0; k < list.length; k++) list[k]!.next(value);
      return;
    }
    const copy = this.own(value);
    for (let k = 0; k < list.length; k++) {
      const receiver = list[k]!;
      receiver.next(receiver instanceof Listener ? value : copy);
    }
  }

  error(error: unknown): void {
    if (this.stopped) return;
    this.stopped = true;
    this.failure = { error };
    const list = this.subscribers;
    this.receive([]);
    for (const subscriber of list) subscriber.error(error);
  }

  complete(): void {
    if (this.stopped) return;
    this.stopped = true;
    const list = this.subscribers;
    this.receive([]);
    for (const subscriber of list) subscriber.complete();
  }

  /** The stream to hand out (subscribers cannot emit into it), which also takes plain listeners. */
  asObservable(): HotStream<T> {
    return this.stream;
  }
}

/**
 * A multicast's stream as its readers get it: RxJS subscribers, or a plain listener (`Multicast.listen`)
 * for a hot path that reads each value in the call (one call a value, and the emitter may pass a view).
 */
export interface HotStream<T> extends Observable<T> {
  listen(listener: (value: T) => void): { unsubscribe(): void };
}

class HotObservable<T> extends Observable<T> implements HotStream<T> {
  constructor(
    private readonly multicast: Multicast<T>,
    subscribe: ConstructorParameters<typeof Observable<T>>[0],
  ) {
    super(subscribe);
  }

  listen(listener: (value: T) => void): { unsubscribe(): void } {
    return this.multicast.listen(listener);
  }
}

/** A plain listener among the receivers (anything else is an RxJS subscriber). */
class Listener<T> implements Receiver<T> {
  constructor(readonly next: (value: T) => void) {}
  error(): void {}
  complete(): void {}
}

function ignore(): void {}
