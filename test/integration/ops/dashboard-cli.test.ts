import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Journal } from '../../../src/adapters/live/journal.ts';
import { accountsResponseSchema } from '../../../src/ops/dashboard/dashboard-feed.ts';
import { ensureDist, printedDashboard, startCli } from '../built-cli.ts';

let dir: string;
beforeAll(ensureDist, 240_000);
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'tickline-dashboard-cli-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

// A Monday, 09:00 CT: the market is open.
const CONFIG = `
strategy: { name: sma-cross, id: dashcli, params: { fast: 2, slow: 4, size: 1 } }
contracts: [F.US.EP]
timeframe: { unit: minute }
simulator: { speed: 240, seed: 3, startTime: '2025-01-06T15:00:00Z' }
journal: journal.sqlite
poll: { openOrdersMs: 30000, ordersMs: 60000, tradesMs: 30000, positionsMs: 30000, accountMs: 120000, closeDelayMs: 1000, staleAfterMs: 600000 }
log: { level: info }
`;

describe('tickline paper --dashboard', () => {
  it('prints the URL with its token, guards it, and journals a kill from the page as the dashboard’s', async () => {
    const configFile = path.join(dir, 'paper.yaml');
    writeFileSync(configFile, CONFIG);
    const cli = startCli(['paper', '--config', configFile, '--dashboard'], dir);
    const { child, err, exited } = cli;
    try {
      const { origin, token } = await printedDashboard(cli, 25_000);
      const refused = await fetch(`${origin}/api/accounts`);
      expect(refused.status).toBe(401);
      expect(await refused.text()).toBe('{"error":"unauthorized"}');
      const auth = { authorization: `Bearer ${token}` };
      const answer = accountsResponseSchema.parse(
        await (await fetch(`${origin}/api/accounts`, { headers: auth })).json(),
      );
      expect(answer.accounts).toHaveLength(1);
      const id = answer.accounts[0]!.id;
      const killed = await fetch(`${origin}/api/actions`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ action: 'kill', account: id, confirm: true }),
      });
      expect(killed.status).toBe(200);
      expect(((await killed.json()) as { results: { ok: boolean }[] }).results[0]!.ok).toBe(true);
      child.kill('SIGINT');
      expect(await exited).toBe(130);
      const log = path.join(dir, 'journal.log');
      expect(existsSync(log)).toBe(true);
      const logged = readFileSync(log, 'utf8');
      expect(logged).toContain('dashboard listening');
      expect(logged).not.toContain(token);
      expect(err()).not.toContain(token);
    } finally {
      child.kill('SIGKILL');
    }
    const j = Journal.open(path.join(dir, 'journal.sqlite'));
    try {
      const kills = j.entries({ kind: 'kill-switch' }).map((e) => (e.payload as { source?: string }).source);
      expect(kills.slice(0, 2)).toEqual(['dashboard', 'dashboard']);
    } finally {
      j.close();
    }
  }, 90_000);
});
