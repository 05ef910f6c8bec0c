import { afterEach, describe, expect, it, vi } from 'vitest';
import { Subject, filter, map, type Observable, type Subscription } from 'rxjs';
import { Multicast } from '../../../src/engine/multicast.ts';

interface Hot<T> {
  next(value: T): void;
  complete(): void;
  error(error: unknown): void;
  readonly observed: boolean;
  asObservable(): Observable<T>;
}

/** The same script against an RxJS Subject and a Multicast: what each subscriber saw, in order. */
function script(hot: Hot<number>): string[] {
  const log: string[] = [];
  const stream = hot.asObservable();
  log.push(`observed ${hot.observed}`);
  const subs: Subscription[] = [];
  subs.push(stream.subscribe((v) => log.push(`a ${v}`)));
  let late: Subscription | undefined;
  subs.push(
    stream.subscribe((v) => {
      log.push(`b ${v}`);
      // Subscribed during a delivery: gets the next value, not this one.
      if (v === 2 && late === undefined)
        late = stream.subscribe({ next: (w) => log.push(`late ${w}`), complete: () => log.push('late done') });
      // Unsubscribing another subscriber during a delivery: it gets nothing more.
      if (v === 3) subs[2]!.unsubscribe();
    }),
  );
  subs.push(
    stream
      .pipe(
        filter((v) => v % 2 === 1),
        map((v) => v * 10),
      )
      .subscribe({ next: (v) => log.push(`c ${v}`), complete: () => log.push('c done') }),
  );
  log.push(`observed ${hot.observed}`);
  for (let v = 1; v <= 5; v++) hot.next(v);
  subs[0]!.unsubscribe();
  hot.next(6);
  hot.complete();
  hot.next(7);
  stream.subscribe({ next: (v) => log.push(`after ${v}`), complete: () => log.push('after done') });
  log.push(`observed ${hot.observed}`);
  return log;
}

describe('Multicast', () => {
  afterEach(() => vi.useRealTimers());

  it('delivers like an RxJS Subject: order, subscribing and unsubscribing during a delivery, complete, late subscribers', () => {
    const expected = script(new Subject<number>());
    expect(expected).toContain('late 3');
    expect(expected).not.toContain('late 2');
    expect(script(new Multicast<number>())).toEqual(expected);
  });

  it('errors like a Subject, also for late subscribers', () => {
    const run = (hot: Hot<number>) => {
      const log: string[] = [];
      hot.asObservable().subscribe({ next: (v) => log.push(`v ${v}`), error: (e) => log.push(`error ${String(e)}`) });
      hot.next(1);
      hot.error('boom');
      hot.next(2);
      hot.asObservable().subscribe({ error: (e) => log.push(`late error ${String(e)}`) });
      return log;
    };
    expect(run(new Multicast<number>())).toEqual(run(new Subject<number>()));
  });

  it('a throwing subscriber does not stop the others (reported as RxJS reports it)', () => {
    vi.useFakeTimers();
    const run = (hot: Hot<number>) => {
      const log: string[] = [];
      hot.asObservable().subscribe(() => {
        throw new Error('subscriber bug');
      });
      hot.asObservable().subscribe((v) => log.push(`v ${v}`));
      hot.next(1);
      hot.next(2);
      return log;
    };
    expect(run(new Multicast<number>())).toEqual(['v 1', 'v 2']);
    expect(run(new Subject<number>())).toEqual(['v 1', 'v 2']);
    // RxJS throws unhandled subscriber errors asynchronously (a timer), for both.
    expect(() => vi.runAllTimers()).toThrow('subscriber bug');
  });
});

describe('Multicast.listen', () => {
  it('delivers in subscription order with the subscribers, stops on unsubscribe and after complete, and lets a throw reach next()', () => {
    const hot = new Multicast<number>();
    const log: string[] = [];
    hot.asObservable().subscribe((v) => log.push(`s ${v}`));
    const listening = hot.listen((v) => {
      log.push(`l ${v}`);
      if (v === 3) throw new Error('boom');
    });
    hot.asObservable().subscribe((v) => log.push(`t ${v}`));
    expect(hot.observed).toBe(true);
    hot.next(1);
    expect(() => hot.next(3)).toThrow('boom');
    listening.unsubscribe();
    hot.next(2);
    hot.complete();
    hot.next(4);
    hot.listen((v) => log.push(`late ${v}`));
    hot.next(5);
    expect(log).toEqual(['s 1', 'l 1', 't 1', 's 3', 'l 3', 's 2', 't 2']);
  });
});

describe('Multicast with own (values an emitter may rewrite)', () => {
  it('gives listeners the value and RxJS subscribers one copy a value, made only while a subscriber is subscribed', () => {
    let copies = 0;
    const hot = new Multicast<{ n: number }>((v) => {
      copies++;
      return { ...v };
    });
    const view = { n: 0 };
    const listened: Array<{ n: number }> = [];
    const listening = hot.listen((v) => listened.push(v));
    hot.next(view);
    expect(copies).toBe(0);
    const a: Array<{ n: number }> = [];
    const b: Array<{ n: number }> = [];
    const subA = hot.asObservable().subscribe((v) => a.push(v));
    const subB = hot.asObservable().subscribe((v) => b.push(v));
    view.n = 1;
    hot.next(view);
    view.n = 2;
    hot.next(view);
    expect(copies).toBe(2);
    expect(a).toEqual([{ n: 1 }, { n: 2 }]);
    expect(a[0]).not.toBe(view);
    expect(b[1]).toBe(a[1]);
    expect(listened.every((v) => v === view)).toBe(true);
    subA.unsubscribe();
    subA.unsubscribe();
    hot.next(view);
    expect(copies).toBe(3);
    subB.unsubscribe();
    hot.next(view);
    expect(copies).toBe(3);
    listening.unsubscribe();
    expect(hot.observed).toBe(false);
    hot.asObservable().subscribe(() => {});
    hot.complete();
    hot.next(view);
    expect(copies).toBe(3);
  });
});
