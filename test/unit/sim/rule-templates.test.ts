/** The simulator's rule configuration: checked at template creation, stored with older files migrated, marks kept across restarts. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { OrderSide, OrderType } from '../../../src/protocol/codes.ts';
import { SimRuleError, openSimulator, type SimulatorOptions } from '../../../src/sim/index.ts';
import { openStore, type AccountRow, type RuleRow, type UserRow } from '../../../src/sim/store.ts';

const dir = mkdtempSync(path.join(tmpdir(), 'tickline-sim-rules-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const START = Date.UTC(2025, 10, 3, 14, 0);

describe('template rule configuration', () => {
  it('is refused at creation when the engine has no rule book for it, naming the template', () => {
    expect(() => openSimulator({ templates: [{ name: 'ZERO', maximumLossLimit: { limit: 0 } }] })).toThrow(
      /template ZERO: maximumLossLimit\.amount/,
    );
    expect(() =>
      openSimulator({
        templates: [{ name: 'ODD', maximumLossLimit: { limit: 100, maximumSource: 2, minimumSource: 0 } }],
      }),
    ).toThrow(SimRuleError);
    expect(() =>
      openSimulator({
        templates: [{ name: 'ODD', maximumLossLimit: { limit: 100, maximumSource: 2, minimumSource: 0 } }],
      }),
    ).toThrow(/template ODD: .*needs maximumSource 1/);
  });

  it('gains the newer columns in a database file written before them, with their defaults', () => {
    const file = path.join(dir, 'old.db');
    const old = new Database(file);
    old.exec(`CREATE TABLE rules (id INTEGER PRIMARY KEY, template_id INTEGER NOT NULL, kind TEXT NOT NULL, amount REAL NOT NULL, violation_duration INTEGER NOT NULL);
      INSERT INTO rules VALUES (1, 1, 'maximumLossLimit', 2000, 1);`);
    old.close();
    const db = openStore(file);
    expect(db.prepare('SELECT * FROM rules').get()).toMatchObject({
      maximum_source: 0,
      minimum_source: null,
    } satisfies Partial<RuleRow>);
    const accountColumns = (db.prepare('PRAGMA table_info(accounts)').all() as { name: string }[]).map((c) => c.name);
    expect(accountColumns).toEqual(
      expect.arrayContaining([
        'high_balance',
        'high_balance_through',
        'high_equity',
        'pending_places',
        'pending_cancels',
      ]),
    );
    db.close();
  });
});

describe('maximum loss limit high-water marks', () => {
  it('survive a restart: the trailing intraday floor is the same before and after', () => {
    const options: SimulatorOptions = {
      dbPath: path.join(dir, 'marks.db'),
      clock: 'manual',
      startTime: START,
      seed: 7,
      templates: [
        {
          name: 'INTRADAY',
          startingBalance: 50_000,
          margin: 50_000,
          maximumLossLimit: { limit: 10_000, maximumSource: 2 },
        },
      ],
      users: [
        {
          userName: 'marks',
          apiKey: 'marks-key',
          accounts: [
            { name: 'LONG', template: 'INTRADAY' },
            { name: 'SHORT', template: 'INTRADAY' },
          ],
        },
      ],
    };
    const floorsOf = (core: ReturnType<typeof openSimulator>) =>
      (
        core.db.prepare("SELECT * FROM accounts WHERE name IN ('LONG', 'SHORT') ORDER BY name").all() as AccountRow[]
      ).map((a) => core.engine.floors(a).maximumLossFloor);

    const first = openSimulator(options);
    const user = first.db.prepare("SELECT * FROM users WHERE user_name = 'marks'").get() as UserRow;
    const ids = first.db.prepare("SELECT id FROM accounts WHERE name IN ('LONG', 'SHORT') ORDER BY name").all() as {
      id: number;
    }[];
    for (const [{ id }, side] of [
      [ids[0]!, OrderSide.Bid],
      [ids[1]!, OrderSide.Ask],
    ] as const) {
      expect(
        first.engine.place(user, {
          accountId: id,
          contractId: 'CON.F.US.EP.Z25',
          type: OrderType.Market,
          side,
          size: 1,
        }),
      ).toMatchObject({ success: true });
    }
    first.engine.clock.advance(2 * 3_600_000);
    first.engine.step(first.engine.clock.now());
    const before = floorsOf(first);
    // Either the long or the short side made money at some point: its floor rose above the static one.
    expect(Math.max(...before)).toBeGreaterThan(50_000 - 10_000);
    first.close();

    const second = openSimulator(options);
    expect(floorsOf(second)).toEqual(before);
    second.close();
  });
});
