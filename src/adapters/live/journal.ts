/**
 * The live adapter's journal: an SQLite file (better-sqlite3, WAL) that records every intent, request,
 * response, fill and risk event before and after it happens, and the current state of every order the
 * bot placed. It is what makes a `kill -9` survivable: an order is written here (state `submitting`,
 * with its customTag) in a committed transaction before the place request leaves the process, so after
 * any crash the restart knows every tag that may exist at the gateway and looks each unresolved one up.
 *
 * Durability: `synchronous = FULL`. WAL with NORMAL already survives a killed process (the write is in
 * the OS page cache), but it can lose the last commits on a power loss or kernel crash, and the one
 * commit we cannot afford to lose is the "about to place tag X" row: without it an order could exist at
 * the gateway that the journal never heard of. The bot commits a handful of rows per bar, so an fsync
 * per commit costs nothing that matters.
 */
import Database from 'better-sqlite3';
import type { Database as SqliteDatabase } from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import { Subject, type Observable } from 'rxjs';
import type { BracketSpec, OrderSpec, Side } from '../../engine/types.ts';
import type { LiveOrder, LiveOrderState } from './order-state.ts';
import { TicklineError, type ErrorKind } from '../../engine/errors.ts';

export type JournalPhase = 'before' | 'after' | 'event';

export interface JournalEntry {
  readonly seq: number;
  readonly time: number;
  readonly kind: string;
  readonly phase: JournalPhase;
  readonly tag: string | null;
  readonly payload: unknown;
}

/** An order as the journal keeps it: the state machine's record plus what was asked for. */
export interface JournaledOrder extends LiveOrder {
  readonly contractId: string;
  readonly side: Side;
  readonly spec: OrderSpec;
  readonly bracket?: BracketSpec;
  readonly createdAt: number;
  readonly updatedAt: number;
}

export interface JournaledFill {
  readonly fillId: string;
  readonly tag: string | null;
  readonly venueOrderId: number;
  readonly contractId: string;
  readonly side: Side;
  readonly size: number;
  /** Ticks. */
  readonly price: number;
  readonly fees: number;
  readonly time: number;
}

export class JournalError extends TicklineError {
  override readonly name = 'JournalError';
  readonly kind: ErrorKind;
  constructor(
    message: string,
    /** JOURNAL: a broken invariant; JOURNAL_OPEN: the file cannot be used; JOURNAL_LOCKED: another bot holds it. */
    readonly code: 'JOURNAL' | 'JOURNAL_OPEN' | 'JOURNAL_LOCKED' = 'JOURNAL',
  ) {
    super(message);
    // A journal that cannot be opened or is held by another bot stops a start; a broken invariant is a failure.
    this.kind = code === 'JOURNAL' ? 'runtime' : 'environment';
  }
}

/** Who holds a journal: kept in its meta table by the process that holds the lock, for the next one's message. */
interface LockOwner {
  readonly pid: number;
  readonly host: string;
  readonly since: string;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS sequences (strategy_id TEXT PRIMARY KEY, last INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS orders (
  tag TEXT PRIMARY KEY,
  contract_id TEXT NOT NULL,
  side TEXT NOT NULL,
  size INTEGER NOT NULL,
  spec TEXT NOT NULL,
  bracket TEXT,
  state TEXT NOT NULL,
  filled_size INTEGER NOT NULL,
  venue_order_id INTEGER,
  cancel_wanted INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS orders_state ON orders(state);
CREATE UNIQUE INDEX IF NOT EXISTS orders_venue ON orders(venue_order_id) WHERE venue_order_id IS NOT NULL;
CREATE TABLE IF NOT EXISTS fills (
  fill_id TEXT PRIMARY KEY,
  tag TEXT,
  venue_order_id INTEGER NOT NULL,
  contract_id TEXT NOT NULL,
  side TEXT NOT NULL,
  size INTEGER NOT NULL,
  price INTEGER NOT NULL,
  fees REAL NOT NULL,
  time INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS fills_tag ON fills(tag);
CREATE TABLE IF NOT EXISTS events (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  time INTEGER NOT NULL,
  kind TEXT NOT NULL,
  phase TEXT NOT NULL,
  tag TEXT,
  payload TEXT NOT NULL
);
`;

interface OrderRow {
  tag: string;
  contract_id: string;
  side: string;
  size: number;
  spec: string;
  bracket: string | null;
  state: string;
  filled_size: number;
  venue_order_id: number | null;
  cancel_wanted: number;
  created_at: number;
  updated_at: number;
}

/** `<strategyId>-<sequence>`: the customTag of every order the bot places. */
export function formatTag(strategyId: string, sequence: number): string {
  return `${strategyId}-${sequence}`;
}

export function parseTag(tag: string): { strategyId: string; sequence: number } | undefined {
  const match = /^(.+)-(\d+)$/.exec(tag);
  if (!match) return undefined;
  return { strategyId: match[1]!, sequence: Number(match[2]) };
}

export class Journal {
  readonly file: string;
  private readonly db: SqliteDatabase;
  private readonly now: () => number;

  private constructor(file: string, db: SqliteDatabase, now: () => number) {
    this.file = file;
    this.db = db;
    this.now = now;
  }

  /**
   * Open (or create) a journal. By default the process takes the journal's lock for as long as it stays
   * open: two bots on one journal would place under each other's tags. The lock is SQLite's exclusive
   * lock on a small companion file (`<journal>.lock`), so readers of the journal itself are never blocked,
   * and the operating system drops it with the process: a `kill -9` leaves nothing to clean up.
   * `lock: false` opens it for reading alongside the bot that holds it.
   */
  static open(file: string, options: { now?: () => number; lock?: boolean } = {}): Journal {
    const memory = file === ':memory:';
    let db: SqliteDatabase;
    try {
      if (!memory) mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
      db = new Database(file);
    } catch (error) {
      throw new JournalError(
        `journal ${file} cannot be opened: ${error instanceof Error ? error.message : String(error)} (journal must be a writable file path)`,
        'JOURNAL_OPEN',
      );
    }
    let lock: SqliteDatabase | undefined;
    try {
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = FULL');
      db.pragma('busy_timeout = 5000');
      db.exec(SCHEMA);
      if ((options.lock ?? true) && !memory) lock = Journal.acquire(db, file);
    } catch (error) {
      db.close();
      if (error instanceof JournalError) throw error;
      throw new JournalError(
        `journal ${file} cannot be used: ${error instanceof Error ? error.message : String(error)}`,
        'JOURNAL_OPEN',
      );
    }
    const journal = new Journal(file, db, options.now ?? Date.now);
    journal.lock = lock;
    return journal;
  }

  private lock: SqliteDatabase | undefined;

  private static acquire(db: SqliteDatabase, file: string): SqliteDatabase {
    const lock = new Database(`${file}.lock`);
    try {
      lock.pragma('busy_timeout = 0');
      lock.pragma('locking_mode = EXCLUSIVE');
      lock.exec('BEGIN EXCLUSIVE; CREATE TABLE IF NOT EXISTS held (pid INTEGER); COMMIT');
    } catch (error) {
      lock.close();
      if ((error as { code?: string }).code !== 'SQLITE_BUSY') throw error;
      const owner = readOwner(db);
      const who =
        owner === undefined ? 'another process' : `process ${owner.pid} on ${owner.host} (since ${owner.since})`;
      throw new JournalError(
        `journal ${file} is in use by ${who}: one bot per journal; stop that bot first, or give this one its own journal file`,
        'JOURNAL_LOCKED',
      );
    }
    const owner: LockOwner = { pid: process.pid, host: hostname(), since: new Date().toISOString() };
    db.prepare('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value').run(
      'owner',
      JSON.stringify(owner),
    );
    return lock;
  }

  close(): void {
    this.recordedSubject.complete();
    if (this.db.open) this.db.close();
    if (this.lock?.open) this.lock.close();
  }

  // ---------------------------------------------------------------- sequences

  /** The next sequence number for a strategy's tags: one past the highest ever journaled or reserved. */
  nextSequence(strategyId: string): number {
    const row = this.db.prepare('SELECT last FROM sequences WHERE strategy_id = ?').get(strategyId) as
      | { last: number }
      | undefined;
    return (row?.last ?? 0) + 1;
  }

  /** Remember that `sequence` is used (an order found at the gateway, or one the engine stamped). */
  noteSequence(strategyId: string, sequence: number): void {
    this.db
      .prepare(
        'INSERT INTO sequences (strategy_id, last) VALUES (?, ?) ON CONFLICT(strategy_id) DO UPDATE SET last = max(last, excluded.last)',
      )
      .run(strategyId, sequence);
  }

  /** Reserve the next tag of a strategy durably (for orders the adapter itself originates). */
  reserveTag(strategyId: string): string {
    return this.db.transaction(() => {
      const sequence = this.nextSequence(strategyId);
      this.noteSequence(strategyId, sequence);
      return formatTag(strategyId, sequence);
    })();
  }

  // ---------------------------------------------------------------- events

  private readonly recordedSubject = new Subject<JournalEntry>();
  /**
   * Every event as it is written, in journal order: what watches a running bot (the dashboard, the
   * notifications) follows the journal itself, so it never shows what the journal does not hold.
   * Subscribers run synchronously after the insert; an error of theirs is RxJS's to report, never the writer's.
   */
  readonly recorded: Observable<JournalEntry> = this.recordedSubject.asObservable();

  record(kind: string, phase: JournalPhase, tag: string | null, payload: unknown): void {
    const time = this.now();
    const text = JSON.stringify(payload ?? null);
    const info = this.db
      .prepare('INSERT INTO events (time, kind, phase, tag, payload) VALUES (?, ?, ?, ?, ?)')
      .run(time, kind, phase, tag, text);
    // The payload as `entries` reads it back (JSON), not the writer's object, which it may still change.
    if (this.recordedSubject.observed)
      this.recordedSubject.next({
        seq: Number(info.lastInsertRowid),
        time,
        kind,
        phase,
        tag,
        payload: JSON.parse(text),
      });
  }

  entries(options: { kind?: string; tag?: string; afterSeq?: number } = {}): JournalEntry[] {
    const rows = this.db
      .prepare(
        `SELECT seq, time, kind, phase, tag, payload FROM events
         WHERE (@kind IS NULL OR kind = @kind) AND (@tag IS NULL OR tag = @tag) AND seq > @after ORDER BY seq`,
      )
      .all({ kind: options.kind ?? null, tag: options.tag ?? null, after: options.afterSeq ?? 0 }) as {
      seq: number;
      time: number;
      kind: string;
      phase: JournalPhase;
      tag: string | null;
      payload: string;
    }[];
    return rows.map((r) => ({ ...r, payload: JSON.parse(r.payload) as unknown }));
  }

  // ---------------------------------------------------------------- orders

  /**
   * Write a new order (state `submitting`) and the request about to be sent, in one committed
   * transaction. Call it before the request leaves the process. A tag already journaled is refused:
   * that is the guarantee that no customTag is ever sent twice.
   */
  beginPlace(order: Omit<JournaledOrder, 'createdAt' | 'updatedAt' | 'fillIds'>, request: unknown): void {
    const time = this.now();
    this.db.transaction(() => {
      const exists = this.db.prepare('SELECT 1 FROM orders WHERE tag = ?').get(order.tag);
      if (exists) throw new JournalError(`order ${order.tag} is already journaled; a customTag is never placed twice`);
      this.db
        .prepare(
          `INSERT INTO orders (tag, contract_id, side, size, spec, bracket, state, filled_size, venue_order_id, cancel_wanted, created_at, updated_at)
           VALUES (@tag, @contract_id, @side, @size, @spec, @bracket, @state, @filled_size, @venue_order_id, @cancel_wanted, @time, @time)`,
        )
        .run({
          tag: order.tag,
          contract_id: order.contractId,
          side: order.side,
          size: order.size,
          spec: JSON.stringify(order.spec),
          bracket: order.bracket === undefined ? null : JSON.stringify(order.bracket),
          state: order.state,
          filled_size: order.filledSize,
          venue_order_id: order.venueOrderId ?? null,
          cancel_wanted: order.cancelWanted ? 1 : 0,
          time,
        });
      const parsed = parseTag(order.tag);
      if (parsed) this.noteSequence(parsed.strategyId, parsed.sequence);
      this.record('place', 'before', order.tag, request);
    })();
  }

  /** Save an order's new state, with the event that caused it, atomically. */
  saveOrder(order: LiveOrder, cause: { kind: string; phase: JournalPhase; payload: unknown }): void {
    this.db.transaction(() => {
      const result = this.db
        .prepare(
          `UPDATE orders SET state = ?, filled_size = ?, venue_order_id = ?, cancel_wanted = ?, updated_at = ? WHERE tag = ?`,
        )
        .run(
          order.state,
          order.filledSize,
          order.venueOrderId ?? null,
          order.cancelWanted ? 1 : 0,
          this.now(),
          order.tag,
        );
      if (result.changes !== 1) throw new JournalError(`order ${order.tag} is not in the journal`);
      this.record(cause.kind, cause.phase, order.tag, cause.payload);
    })();
  }

  /** After an accepted modify: the order's new prices and size. */
  updateTerms(tag: string, spec: OrderSpec, size: number): void {
    this.db
      .prepare('UPDATE orders SET spec = ?, size = ?, updated_at = ? WHERE tag = ?')
      .run(JSON.stringify(spec), size, this.now(), tag);
  }

  order(tag: string): JournaledOrder | undefined {
    const row = this.db.prepare('SELECT * FROM orders WHERE tag = ?').get(tag) as OrderRow | undefined;
    return row === undefined ? undefined : this.fromRow(row);
  }

  orderByVenueId(venueOrderId: number): JournaledOrder | undefined {
    const row = this.db.prepare('SELECT * FROM orders WHERE venue_order_id = ?').get(venueOrderId) as
      | OrderRow
      | undefined;
    return row === undefined ? undefined : this.fromRow(row);
  }

  orders(filter: { states?: readonly LiveOrderState[] } = {}): JournaledOrder[] {
    // Filtered by SQLite (indexed by state): a weeks-long journal's finished orders are not read for the live ones.
    const states = filter.states;
    const rows = (
      states === undefined
        ? this.db.prepare('SELECT * FROM orders ORDER BY created_at, rowid').all()
        : states.length === 0
          ? []
          : this.db
              .prepare(
                `SELECT * FROM orders WHERE state IN (${states.map(() => '?').join(', ')}) ORDER BY created_at, rowid`,
              )
              .all(...states)
    ) as OrderRow[];
    return rows.map((r) => this.fromRow(r));
  }

  private fromRow(row: OrderRow): JournaledOrder {
    return {
      tag: row.tag,
      contractId: row.contract_id,
      side: row.side as Side,
      size: row.size,
      spec: JSON.parse(row.spec) as OrderSpec,
      ...(row.bracket === null ? {} : { bracket: JSON.parse(row.bracket) as BracketSpec }),
      state: row.state as LiveOrderState,
      filledSize: row.filled_size,
      ...(row.venue_order_id === null ? {} : { venueOrderId: row.venue_order_id }),
      // Read from the journal, not a map of every order's fills kept for the whole run (memory stays flat).
      fillIds: (
        this.db.prepare('SELECT fill_id FROM fills WHERE tag = ? ORDER BY rowid').all(row.tag) as { fill_id: string }[]
      ).map((f) => f.fill_id),
      cancelWanted: row.cancel_wanted === 1,
      createdAt: row.created_at,
      updatedAt: row.updated_at,
    };
  }

  // ---------------------------------------------------------------- fills

  /**
   * Record a fill once, with the fill transition of its order (`order`) in the same transaction; false
   * when its id was already journaled (the fill is then ignored and the order left as it was).
   */
  addFill(
    fill: JournaledFill,
    order?: { order: LiveOrder; cause: { kind: string; phase: JournalPhase; payload: unknown } },
  ): boolean {
    return this.db.transaction(() => {
      const result = this.db
        .prepare(
          `INSERT OR IGNORE INTO fills (fill_id, tag, venue_order_id, contract_id, side, size, price, fees, time)
           VALUES (@fillId, @tag, @venueOrderId, @contractId, @side, @size, @price, @fees, @time)`,
        )
        .run({ ...fill });
      if (result.changes === 0) return false;
      this.record('fill', 'event', fill.tag, fill);
      if (order !== undefined) this.saveOrder(order.order, order.cause);
      return true;
    })();
  }

  /** Fills journaled without a tag for one gateway order (its trades came before the order was known). */
  untaggedFills(venueOrderId: number): JournaledFill[] {
    return (
      this.db
        .prepare('SELECT * FROM fills WHERE venue_order_id = ? AND tag IS NULL ORDER BY time, rowid')
        .all(venueOrderId) as Record<string, unknown>[]
    ).map(fillFromRow);
  }

  /**
   * An untagged fill turns out to be one of our orders' (an order adopted after it was given up): it is
   * tagged, with the order's fill transition (`order`), in one transaction.
   */
  tagFill(
    fillId: string,
    tag: string,
    order?: { order: LiveOrder; cause: { kind: string; phase: JournalPhase; payload: unknown } },
  ): void {
    this.db.transaction(() => {
      const result = this.db.prepare('UPDATE fills SET tag = ? WHERE fill_id = ? AND tag IS NULL').run(tag, fillId);
      if (result.changes !== 1) throw new JournalError(`fill ${fillId} is not an untagged fill`);
      this.record('fill-tagged', 'event', tag, { fillId });
      if (order !== undefined) this.saveOrder(order.order, order.cause);
    })();
  }

  hasFill(fillId: string): boolean {
    return this.db.prepare('SELECT 1 FROM fills WHERE fill_id = ?').get(fillId) !== undefined;
  }

  fills(): JournaledFill[] {
    return (this.db.prepare('SELECT * FROM fills ORDER BY time, rowid').all() as Record<string, unknown>[]).map(
      fillFromRow,
    );
  }

  /** Net signed position per contract implied by the journaled fills. */
  positionsFromFills(): Map<string, number> {
    const net = new Map<string, number>();
    for (const f of this.fills())
      net.set(f.contractId, (net.get(f.contractId) ?? 0) + (f.side === 'buy' ? f.size : -f.size));
    for (const [k, v] of net) if (v === 0) net.delete(k);
    return net;
  }

  // ---------------------------------------------------------------- meta

  getMeta(key: string): string | undefined {
    return (this.db.prepare('SELECT value FROM meta WHERE key = ?').get(key) as { value: string } | undefined)?.value;
  }

  setMeta(key: string, value: string): void {
    this.db
      .prepare('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value')
      .run(key, value);
  }
}

function readOwner(db: SqliteDatabase): LockOwner | undefined {
  const row = db.prepare('SELECT value FROM meta WHERE key = ?').get('owner') as { value: string } | undefined;
  if (row === undefined) return undefined;
  try {
    const parsed = JSON.parse(row.value) as Partial<LockOwner>;
    return typeof parsed.pid === 'number'
      ? { pid: parsed.pid, host: String(parsed.host), since: String(parsed.since) }
      : undefined;
  } catch (error) {
    // A damaged owner record says nothing about who holds the lock; the lock itself is what counts.
    void error;
    return undefined;
  }
}

function fillFromRow(r: Record<string, unknown>): JournaledFill {
  return {
    fillId: r.fill_id as string,
    tag: r.tag as string | null,
    venueOrderId: r.venue_order_id as number,
    contractId: r.contract_id as string,
    side: r.side as Side,
    size: r.size as number,
    price: r.price as number,
    fees: r.fees as number,
    time: r.time as number,
  };
}
