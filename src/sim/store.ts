/**
 * The simulator's state in SQLite (WAL): users, tokens, templates, rules, accounts, orders, trades,
 * positions and violations. Every request that changes state runs in one transaction, so a kill -9 leaves
 * either all of an operation or none of it; an accepted order is on disk before its id is answered.
 * Times are epoch ms, prices integer ticks (position averages may be fractional ticks), money in USD.
 */
import Database from 'better-sqlite3';

export type Db = Database.Database;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS users (
  id INTEGER PRIMARY KEY,
  user_name TEXT NOT NULL UNIQUE COLLATE NOCASE,
  email TEXT NOT NULL COLLATE NOCASE,
  api_key TEXT,
  first_name TEXT NOT NULL DEFAULT '',
  last_name TEXT NOT NULL DEFAULT '',
  screen_name TEXT,
  password TEXT,
  internal_tag INTEGER NOT NULL DEFAULT 0,
  agreements_signed INTEGER NOT NULL DEFAULT 1,
  subscription_active INTEGER NOT NULL DEFAULT 1,
  api_key_login_enabled INTEGER NOT NULL DEFAULT 1,
  created_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS tokens (
  token TEXT PRIMARY KEY,
  user_id INTEGER NOT NULL REFERENCES users(id),
  issued_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  revoked INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS templates (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  title TEXT NOT NULL,
  title_color TEXT,
  description TEXT NOT NULL,
  notes TEXT,
  starting_balance REAL NOT NULL,
  margin REAL NOT NULL,
  is_active INTEGER NOT NULL DEFAULT 1,
  tag INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS rules (
  id INTEGER PRIMARY KEY,
  template_id INTEGER NOT NULL REFERENCES templates(id),
  kind TEXT NOT NULL CHECK (kind IN ('dailyLossLimit', 'maximumLossLimit')),
  amount REAL NOT NULL,
  violation_duration INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS accounts (
  id INTEGER PRIMARY KEY,
  user_id INTEGER NOT NULL REFERENCES users(id),
  name TEXT NOT NULL UNIQUE,
  template_id INTEGER NOT NULL REFERENCES templates(id),
  starting_balance REAL NOT NULL,
  margin REAL NOT NULL,
  simulated INTEGER NOT NULL DEFAULT 1,
  is_leader INTEGER NOT NULL DEFAULT 0,
  is_follower INTEGER NOT NULL DEFAULT 0,
  active INTEGER NOT NULL DEFAULT 1,
  personal_daily_loss_limit REAL,
  personal_daily_profit_target REAL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS orders (
  id INTEGER PRIMARY KEY,
  account_id INTEGER NOT NULL REFERENCES accounts(id),
  contract_id TEXT NOT NULL,
  type INTEGER NOT NULL,
  side INTEGER NOT NULL,
  size INTEGER NOT NULL,
  limit_ticks INTEGER,
  stop_ticks INTEGER,
  trail_distance INTEGER,
  trail_extreme INTEGER,
  triggered INTEGER NOT NULL DEFAULT 0,
  status INTEGER NOT NULL,
  fill_volume INTEGER NOT NULL DEFAULT 0,
  filled_ticks INTEGER,
  custom_tag TEXT,
  stop_loss_bracket TEXT,
  take_profit_bracket TEXT,
  bracket_of INTEGER,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  UNIQUE (account_id, custom_tag)
);
CREATE INDEX IF NOT EXISTS orders_open ON orders (status, contract_id);
CREATE INDEX IF NOT EXISTS orders_account ON orders (account_id, created_at);
CREATE TABLE IF NOT EXISTS trades (
  id INTEGER PRIMARY KEY,
  account_id INTEGER NOT NULL REFERENCES accounts(id),
  contract_id TEXT NOT NULL,
  order_id INTEGER NOT NULL REFERENCES orders(id),
  side INTEGER NOT NULL,
  size INTEGER NOT NULL,
  price_ticks INTEGER NOT NULL,
  pnl REAL,
  fees REAL NOT NULL,
  entry_ticks REAL,
  entered_at INTEGER,
  voided INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS trades_account ON trades (account_id, created_at);
CREATE INDEX IF NOT EXISTS trades_time ON trades (created_at);
CREATE TABLE IF NOT EXISTS positions (
  id INTEGER PRIMARY KEY,
  account_id INTEGER NOT NULL REFERENCES accounts(id),
  contract_id TEXT NOT NULL,
  size INTEGER NOT NULL,
  average_ticks REAL NOT NULL,
  opened_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  UNIQUE (account_id, contract_id)
);
CREATE TABLE IF NOT EXISTS violations (
  id INTEGER PRIMARY KEY,
  account_id INTEGER NOT NULL REFERENCES accounts(id),
  type INTEGER NOT NULL,
  duration INTEGER NOT NULL,
  rule_id INTEGER,
  trade_day INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  balance REAL NOT NULL,
  realized_pnl REAL NOT NULL,
  unrealized_pnl REAL NOT NULL,
  minimum_balance REAL NOT NULL,
  daily_loss_limit REAL NOT NULL,
  personal_daily_loss_limit REAL,
  personal_daily_profit_target REAL,
  voided INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS violations_account ON violations (account_id, expires_at);
`;

export function openStore(path: string): Db {
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  // FULL: a commit is durable before the response that reports it leaves the process.
  db.pragma('synchronous = FULL');
  db.pragma('foreign_keys = ON');
  db.exec(SCHEMA);
  addMissingColumns(db);
  return db;
}

/** Columns added after the first release, here only, so a new file and one from then end up alike. */
const ADDED_COLUMNS: ReadonlyArray<readonly [table: string, column: string, definition: string]> = [
  ['rules', 'maximum_source', 'INTEGER NOT NULL DEFAULT 0'],
  ['rules', 'minimum_source', 'INTEGER'],
  ['accounts', 'high_balance', 'REAL'],
  ['accounts', 'high_balance_through', 'INTEGER NOT NULL DEFAULT 0'],
  ['accounts', 'high_equity', 'REAL'],
  ['accounts', 'pending_places', 'INTEGER NOT NULL DEFAULT 0'],
  ['accounts', 'pending_cancels', 'INTEGER NOT NULL DEFAULT 0'],
  // Contracts x ticks of every fill so far: the average fill price of a partly filled order.
  ['orders', 'filled_value', 'REAL NOT NULL DEFAULT 0'],
  ['orders', 'queue_ahead', 'INTEGER'],
  ['orders', 'touch_bar', 'INTEGER'],
  ['orders', 'settle_at', 'INTEGER'],
  ['orders', 'cancel_at', 'INTEGER'],
];

function addMissingColumns(db: Db): void {
  for (const [table, column, definition] of ADDED_COLUMNS) {
    const columns = db.prepare(`PRAGMA table_info(${table})`).all() as { name: string }[];
    if (!columns.some((c) => c.name === column)) db.exec(`ALTER TABLE ${table} ADD COLUMN ${column} ${definition}`);
  }
}

export function getMeta(db: Db, key: string): string | undefined {
  const row = db.prepare('SELECT value FROM meta WHERE key = ?').get(key) as { value: string } | undefined;
  return row?.value;
}

export function setMeta(db: Db, key: string, value: string): void {
  db.prepare('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value').run(
    key,
    value,
  );
}

// Row shapes as stored.
export interface UserRow {
  id: number;
  user_name: string;
  email: string;
  api_key: string | null;
  first_name: string;
  last_name: string;
  screen_name: string | null;
  password: string | null;
  internal_tag: number;
  agreements_signed: number;
  subscription_active: number;
  api_key_login_enabled: number;
  created_at: number;
}
export interface TemplateRow {
  id: number;
  name: string;
  title: string;
  title_color: string | null;
  description: string;
  notes: string | null;
  starting_balance: number;
  margin: number;
  is_active: number;
  tag: number;
}
export interface RuleRow {
  id: number;
  template_id: number;
  kind: 'dailyLossLimit' | 'maximumLossLimit';
  amount: number;
  violation_duration: number;
  /** Spec 2.11 `maximumLossLimit.maximumSource` (see rule-templates.ts for the meaning this simulator gives it). */
  maximum_source: number;
  /** Spec 2.11 `maximumLossLimit.minimumSource`. */
  minimum_source: number | null;
}
export interface AccountRow {
  id: number;
  user_id: number;
  name: string;
  template_id: number;
  starting_balance: number;
  margin: number;
  simulated: number;
  is_leader: number;
  is_follower: number;
  active: number;
  personal_daily_loss_limit: number | null;
  personal_daily_profit_target: number | null;
  /** Highest end-of-day balance (null: the starting balance), counted for the trading days before `high_balance_through`. */
  high_balance: number | null;
  /** Start (epoch ms) of the trading day up to which `high_balance` has been rolled. */
  high_balance_through: number;
  /** Highest equity (balance + unrealized) seen at a rule check (null: the starting balance). */
  high_equity: number | null;
  /** Test hook: the next this-many `Order/place` requests answer OrderPending (6). */
  pending_places: number;
  /** Test hook: the next this-many `Order/cancel` requests answer Pending (4). */
  pending_cancels: number;
  created_at: number;
  updated_at: number;
}
export interface OrderRow {
  id: number;
  account_id: number;
  contract_id: string;
  type: number;
  side: number;
  size: number;
  limit_ticks: number | null;
  stop_ticks: number | null;
  trail_distance: number | null;
  trail_extreme: number | null;
  triggered: number;
  status: number;
  fill_volume: number;
  filled_ticks: number | null;
  custom_tag: string | null;
  stop_loss_bracket: string | null;
  take_profit_bracket: string | null;
  bracket_of: number | null;
  /** Sum of size x price (ticks) of the fills so far. */
  filled_value: number;
  /** Queue model: contracts still ahead of this resting limit order at its price. */
  queue_ahead: number | null;
  /** Start of the last bar in which a touch (not a trade-through) filled this order or worked its queue. */
  touch_bar: number | null;
  /** A pending place: when it settles into a working order. */
  settle_at: number | null;
  /** A pending cancel: when it takes effect (if the order is still working then). */
  cancel_at: number | null;
  created_at: number;
  updated_at: number;
}
export interface TradeRow {
  id: number;
  account_id: number;
  contract_id: string;
  order_id: number;
  side: number;
  size: number;
  price_ticks: number;
  pnl: number | null;
  fees: number;
  entry_ticks: number | null;
  entered_at: number | null;
  voided: number;
  created_at: number;
}
export interface PositionRow {
  id: number;
  account_id: number;
  contract_id: string;
  size: number;
  average_ticks: number;
  opened_at: number;
  updated_at: number;
}
export interface ViolationRow {
  id: number;
  account_id: number;
  type: number;
  duration: number;
  rule_id: number | null;
  trade_day: number;
  created_at: number;
  expires_at: number;
  balance: number;
  realized_pnl: number;
  unrealized_pnl: number;
  minimum_balance: number;
  daily_loss_limit: number;
  personal_daily_loss_limit: number | null;
  personal_daily_profit_target: number | null;
  voided: number;
}
