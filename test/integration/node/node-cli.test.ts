import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Journal } from '../../../src/adapters/live/journal.ts';
import { accountsResponseSchema } from '../../../src/ops/dashboard/dashboard-feed.ts';
import { ensureDist, printedDashboard, startCli } from '../built-cli.ts';
import { until } from '../live/live-harness.ts';

let dir: string;
beforeAll(ensureDist, 240_000);
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'tickline-node-cli-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

// A Monday, 09:00 CT: the market is open.
const CONFIG = `
mode: paper
journals: var
accounts: [{ name: NODE-A }, { name: NODE-B }]
bots:
  - { id: fast, strategy: sma-cross, params: { fast: 2, slow: 4, size: 1 }, contracts: [F.US.EP], accounts: [NODE-A, { name: NODE-B, size: 2 }] }
  - { id: slow, strategy: sma-cross, params: { fast: 3, slow: 6, size: 1 }, contracts: [F.US.EP], accounts: [NODE-A] }
simulator: { speed: 240, seed: 3, startTime: '2025-01-06T15:00:00Z' }
poll: { openOrdersMs: 30000, ordersMs: 60000, tradesMs: 30000, positionsMs: 30000, accountMs: 120000, closeDelayMs: 1000, staleAfterMs: 600000 }
log: { level: info }
`;

describe('tickline run (a trading node)', () => {
  it('serves both accounts on the dashboard, takes commands on standard input, flattens one account or all', async () => {
    const configFile = path.join(dir, 'node.yaml');
    writeFileSync(configFile, CONFIG);
    const cli = startCli(['run', '--config', configFile, '--dashboard'], dir);
    const { child, out, err, exited } = cli;
    try {
      const { origin, token } = await printedDashboard(cli, 30_000);
      await until(() => /\[NODE-B\] NODE-B/.test(out()), 10_000, 'the accounts lines');
      expect(out()).toMatch(/\[NODE-A\] NODE-A \(\d+\): bots fast, slow; reconciled: no differences/);
      expect(out()).toMatch(/\[NODE-B\] NODE-B \(\d+\): bots fast x2; reconciled: no differences/);
      expect((await fetch(`${origin}/api/accounts`)).status).toBe(401);
      const auth = { authorization: `Bearer ${token}` };
      const accounts = async () =>
        accountsResponseSchema.parse(await (await fetch(`${origin}/api/accounts`, { headers: auth })).json()).accounts;
      expect((await accounts()).map((a) => a.name)).toEqual(['NODE-A', 'NODE-B']);

      child.stdin.write('pause fast\n');
      await until(() => out().includes('fast paused on NODE-A, NODE-B'), 10_000, 'the pause');
      child.stdin.write('resume fast\nfrobnicate\n');
      await until(() => out().includes('fast resumed on NODE-A, NODE-B'), 10_000, 'the resume');
      await until(() => out().includes('commands: pause <bot>'), 10_000, 'the help line');

      // One bot of one account from the page's API: the other account's copy of it trades on.
      const b = (await accounts()).find((x) => x.name === 'NODE-B')!;
      expect(b.bots.map((x) => x.id)).toEqual(['fast']);
      const paused = await fetch(`${origin}/api/actions`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ action: 'pause', account: b.id, bot: 'fast', confirm: true }),
      });
      expect(paused.status).toBe(200);
      const bots = new Map((await accounts()).map((x) => [x.name, x.bots]));
      expect(bots.get('NODE-B')!.map((x) => [x.id, x.paused])).toEqual([['fast', true]]);
      expect(bots.get('NODE-A')!.map((x) => [x.id, x.paused])).toEqual([
        ['fast', false],
        ['slow', false],
      ]);

      const a = (await accounts()).find((x) => x.name === 'NODE-A')!;
      const killed = await fetch(`${origin}/api/actions`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ action: 'kill', account: a.id, confirm: true }),
      });
      expect(killed.status).toBe(200);
      const states = new Map((await accounts()).map((x) => [x.name, x.state.state]));
      expect(states.get('NODE-A')).toBe('HALTED');
      expect(states.get('NODE-B')).toBe('ACTIVE');

      child.kill('SIGUSR2');
      await until(() => (out().match(/kill switch: /g) ?? []).length >= 2, 20_000, 'SIGUSR2 on every account');
      child.kill('SIGINT');
      expect(await exited).toBe(130);
      expect(out()).toMatch(/\[NODE-B\] ended: .* state HALTED/);
      expect(err()).not.toContain(token);
    } finally {
      child.kill('SIGKILL');
    }
    for (const name of ['NODE-A', 'NODE-B']) {
      const j = Journal.open(path.join(dir, 'var', `${name}.sqlite`));
      try {
        const sources = j.entries({ kind: 'kill-switch' }).map((e) => (e.payload as { source?: string }).source);
        expect(sources, name).toContain('signal');
        expect(j.entries({ kind: 'control' }).map((e) => e.payload)).toEqual([
          { action: 'pause', bot: 'fast', source: 'command' },
          { action: 'resume', bot: 'fast', source: 'command' },
          ...(name === 'NODE-B' ? [{ action: 'pause', bot: 'fast', source: 'dashboard' }] : []),
        ]);
      } finally {
        j.close();
      }
    }
  }, 120_000);
});
