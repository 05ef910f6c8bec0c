/**
 * Each paper config's local simulator keeps its state in a database named after its journal, so two
 * configs of one folder never share a simulated account (deleting one journal would otherwise report the
 * other config's orders as unjournaled).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { defaultSimulatorDb, startLocalSimulator } from '../../../src/cli/paper.ts';
import { liveConfigSchema } from '../../../src/adapters/live/live-config.ts';
import { createLogger } from '../../../src/engine/log.ts';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'tickline-paper-db-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const logger = createLogger({ name: 'test', level: 'silent' });
const config = (journal: string) =>
  liveConfigSchema.parse({
    strategy: { name: 'sma-cross', id: 'bot' },
    contracts: ['F.US.EP'],
    timeframe: { unit: 'minute' },
    journal,
  });

describe("a paper config's simulator database", () => {
  it('is named after its journal, beside it', () => {
    expect(defaultSimulatorDb('/x/var/paper.sqlite')).toBe('/x/var/paper.sim.sqlite');
    expect(defaultSimulatorDb('/x/var/journal.db')).toBe('/x/var/journal.sim.sqlite');
  });

  it('differs for two journals of one folder; a resumed journal of the shared database starts on a copy', async () => {
    for (const name of ['a', 'b']) {
      const sim = await startLocalSimulator(config(path.join(dir, `${name}.sqlite`)), logger);
      await sim.close();
    }
    expect(existsSync(path.join(dir, 'a.sim.sqlite'))).toBe(true);
    expect(existsSync(path.join(dir, 'b.sim.sqlite'))).toBe(true);
    expect(existsSync(path.join(dir, 'paper-sim.sqlite'))).toBe(false);

    // A journal from before, with the folder's shared database: its own starts as a copy of that one.
    const shared = await startLocalSimulator(
      {
        ...config(path.join(dir, 'old.sqlite')),
        simulator: { ...config('x').simulator, dbPath: path.join(dir, 'paper-sim.sqlite') },
      },
      logger,
    );
    await shared.close();
    writeFileSync(path.join(dir, 'old.sqlite'), '');
    const resumed = await startLocalSimulator(config(path.join(dir, 'old.sqlite')), logger);
    await resumed.close();
    expect(existsSync(path.join(dir, 'old.sim.sqlite'))).toBe(true);
  });
});
