import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Journal, JournalError, parseTag } from '../../../src/adapters/live/journal.ts';
import { newOrder, transition } from '../../../src/adapters/live/order-state.ts';

let dir: string;
let file: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'tickline-journal-'));
  file = path.join(dir, 'j.sqlite');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const base = { contractId: 'C', side: 'buy' as const, spec: { type: 'market' as const } };

describe('journal', () => {
  it('is in WAL mode with synchronous FULL', () => {
    const j = Journal.open(file);
    const db = (j as unknown as { db: { pragma(s: string, o: { simple: true }): unknown } }).db;
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.pragma('synchronous', { simple: true })).toBe(2);
    j.close();
  });

  it('tells every event as it is written, exactly as entries() reads it back', () => {
    const j = Journal.open(file);
    const seen: unknown[] = [];
    const subscription = j.recorded.subscribe((e) => seen.push(e));
    const payload = { at: new Date(0), n: 1 };
    j.record('note', 'event', null, payload);
    payload.n = 2;
    j.beginPlace({ ...newOrder('s-1', 1), ...base }, { customTag: 's-1' });
    expect(seen).toEqual(j.entries());
    expect(seen).toHaveLength(2);
    subscription.unsubscribe();
    j.close();
  });

  it('refuses to journal a tag twice, across reopenings', () => {
    const j = Journal.open(file);
    j.beginPlace({ ...newOrder('s-1', 1), ...base }, { customTag: 's-1' });
    expect(() => j.beginPlace({ ...newOrder('s-1', 1), ...base }, {})).toThrow(JournalError);
    j.close();
    const again = Journal.open(file);
    expect(() => again.beginPlace({ ...newOrder('s-1', 1), ...base }, {})).toThrow(JournalError);
    again.close();
  });

  it('restores the tag sequence past everything journaled or noted', () => {
    const j = Journal.open(file);
    j.beginPlace({ ...newOrder('s-7', 1), ...base }, {});
    expect(j.nextSequence('s')).toBe(8);
    j.noteSequence('s', 5);
    expect(j.nextSequence('s')).toBe(8);
    j.noteSequence('s', 12);
    expect(j.reserveTag('s')).toBe('s-13');
    j.close();
    const again = Journal.open(file);
    expect(again.nextSequence('s')).toBe(14);
    expect(again.nextSequence('other')).toBe(1);
    again.close();
    expect(parseTag('my-strat-42')).toEqual({ strategyId: 'my-strat', sequence: 42 });
  });

  it('applies a fill once and keeps order state with its cause', () => {
    const j = Journal.open(file, { now: () => 1_000 });
    j.beginPlace({ ...newOrder('s-1', 2), ...base }, {});
    const accepted = transition(j.order('s-1')!, { type: 'placeAccepted', venueOrderId: 9 }).order;
    j.saveOrder(accepted, { kind: 'place', phase: 'after', payload: { orderId: 9 } });
    const fill = {
      fillId: '77',
      tag: 's-1',
      venueOrderId: 9,
      contractId: 'C',
      side: 'buy' as const,
      size: 1,
      price: 100,
      fees: 1.4,
      time: 1_000,
    };
    expect(j.addFill(fill)).toBe(true);
    expect(j.addFill(fill)).toBe(false);
    expect(j.orderByVenueId(9)?.tag).toBe('s-1');
    expect(j.order('s-1')?.fillIds).toEqual(['77']);
    expect(Object.fromEntries(j.positionsFromFills())).toEqual({ C: 1 });
    expect(j.entries({ tag: 's-1' }).map((e) => `${e.kind}/${e.phase}`)).toEqual([
      'place/before',
      'place/after',
      'fill/event',
    ]);
    j.close();
  });
});

describe('journal lock: one bot per journal', () => {
  it('a second open fails with JOURNAL_LOCKED naming the holding process; readers are not blocked; close releases it', () => {
    const first = Journal.open(file);
    let error: unknown;
    try {
      Journal.open(file);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(JournalError);
    expect((error as JournalError).code).toBe('JOURNAL_LOCKED');
    expect((error as Error).message).toContain(`process ${process.pid} on `);
    expect((error as Error).message).toContain(file);
    const reader = Journal.open(file, { lock: false });
    expect(reader.orders()).toEqual([]);
    reader.close();
    first.close();
    Journal.open(file).close();
  });

  it('a process killed with SIGKILL releases the lock', async () => {
    const { spawn } = await import('node:child_process');
    // The child keeps the journal referenced: one it let go could be collected, and its lock with it.
    const script = `import { Journal } from ${JSON.stringify(path.resolve('src/adapters/live/journal.ts'))}; globalThis.held = Journal.open(${JSON.stringify(file)}); process.stdout.write('held\\n'); setInterval(() => {}, 1000);`;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (d: Buffer) => d.toString().includes('held') && resolve());
      child.on('exit', () => reject(new Error('child exited before holding the journal')));
    });
    expect(() => Journal.open(file)).toThrow(/in use by process/);
    const exited = new Promise((resolve) => child.on('exit', resolve));
    child.kill('SIGKILL');
    await exited;
    Journal.open(file).close();
  }, 20_000);

  it('a journal path that is a folder is JOURNAL_OPEN with the path', () => {
    try {
      Journal.open(dir);
      expect.unreachable();
    } catch (e) {
      expect((e as JournalError).code).toBe('JOURNAL_OPEN');
      expect((e as Error).message).toContain(dir);
    }
  });
});
