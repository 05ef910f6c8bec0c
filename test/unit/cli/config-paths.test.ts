/**
 * One rule for paths, in every command: a path written in a config file is relative to that file; a path
 * given on the command line is relative to the working directory. The configs here live in a folder that
 * is not the working directory (the repository root), so the two readings always differ.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { main } from '../../../src/cli/main.ts';
import { ExitCode } from '../../../src/cli/exit.ts';
import { loadSimConfig } from '../../../src/cli/sim.ts';
import { loadTradingConfig } from '../../../src/cli/trading-config.ts';
import { Journal } from '../../../src/adapters/live/journal.ts';
import { startSimulator } from '../../../src/sim/index.ts';
import { captureOutput } from './capture-output.ts';

const ENGINE = path.resolve(import.meta.dirname, '../../../src/engine/index.ts');

let dir: string;
let sub: string;
const { err } = captureOutput();

beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'tickline-paths-'));
  sub = path.join(dir, 'configs');
  mkdirSync(sub);
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** A strategy file that flips its target every `every` bars. */
function writeStrategy(file: string, name: string): void {
  writeFileSync(
    file,
    `import { map } from 'rxjs';
import { z } from 'zod';
import { defineStrategy, target } from ${JSON.stringify(ENGINE)};
export default defineStrategy({
  name: ${JSON.stringify(name)},
  params: z.strictObject({ size: z.number().int().positive().default(1) }),
  run: ({ barRecords, params }) => barRecords().pipe(map((bar, i) => target(Math.floor(i / 10) % 2 === 0 ? params.size : -params.size))),
});
`,
  );
}

/** Two hours of one-minute MES bars on the 0.25 grid. */
function writeBars(file: string): void {
  const lines = ['t,o,h,l,c,v'];
  for (let i = 0; i < 120; i++) {
    const t = new Date(Date.UTC(2025, 2, 3, 14, 30) + i * 60_000).toISOString();
    const c = 5000 + 0.25 * Math.round(24 * Math.sin(i / 7));
    lines.push(`${t},${c},${c + 0.5},${c - 0.5},${c},100`);
  }
  writeFileSync(file, `${lines.join('\n')}\n`);
}

const fromCwd = (file: string): string => path.relative(process.cwd(), file);

describe('paths in a backtest definition are relative to it; on the command line, to the working directory', () => {
  beforeEach(() => {
    writeStrategy(path.join(sub, 'flip.ts'), 'flip');
    writeBars(path.join(sub, 'bars.csv'));
    writeFileSync(
      path.join(sub, 'def.yaml'),
      'strategy: { name: ./flip.ts }\ncontract: MESZ5\ndata: { source: csv, file: bars.csv }\nout: results\n',
    );
  });

  it('backtest: the strategy, the data and the output folder of the file are beside it', async () => {
    expect(await main(['backtest', '--config', path.join(sub, 'def.yaml')]), err.join('')).toBe(ExitCode.Ok);
    expect(existsSync(path.join(sub, 'results', 'summary.json'))).toBe(true);
    const summary = JSON.parse(readFileSync(path.join(sub, 'results', 'summary.json'), 'utf8')) as {
      bars: number;
      data: string;
    };
    expect(summary.bars).toBe(120);
    expect(summary.data).toBe(fromCwd(path.join(sub, 'bars.csv')));
  });

  it('backtest: --strategy, --data and --out are read from the working directory', async () => {
    const other = path.join(dir, 'elsewhere');
    mkdirSync(other);
    writeStrategy(path.join(other, 'flip.ts'), 'flip-elsewhere');
    writeBars(path.join(other, 'bars.csv'));
    const args = [
      '--strategy',
      fromCwd(path.join(other, 'flip.ts')),
      '--data',
      fromCwd(path.join(other, 'bars.csv')),
      '--out',
      fromCwd(path.join(other, 'out')),
    ];
    expect(await main(['backtest', '--config', path.join(sub, 'def.yaml'), ...args]), err.join('')).toBe(ExitCode.Ok);
    const summary = JSON.parse(readFileSync(path.join(other, 'out', 'summary.json'), 'utf8')) as {
      title: string;
      data: string;
    };
    expect(summary.title).toContain('flip-elsewhere');
    expect(summary.data).toBe(fromCwd(path.join(other, 'bars.csv')));
    expect(existsSync(path.join(sub, 'results'))).toBe(false);
  });

  it('optimize: the same definition writes its table into the output folder beside it', async () => {
    expect(
      await main(['optimize', '--config', path.join(sub, 'def.yaml'), '--grid', 'size=1,2', '--workers', '1']),
      err.join(''),
    ).toBe(ExitCode.Ok);
    const csv = readFileSync(path.join(sub, 'results', 'optimize.csv'), 'utf8')
      .trim()
      .split('\n');
    expect(csv).toHaveLength(3);
  });
});

describe('paths in the other configs are relative to the file', () => {
  it('sim: the database and a replayed bar file; ":memory:" and an absent dbPath (the default, in the working directory) stay as they are', () => {
    writeFileSync(path.join(sub, 'sim.yaml'), 'dbPath: state/sim.db\nmarket: { source: csv, path: bars.csv }\n');
    expect(loadSimConfig(path.join(sub, 'sim.yaml'))).toMatchObject({
      dbPath: path.join(sub, 'state', 'sim.db'),
      market: { path: path.join(sub, 'bars.csv') },
    });
    writeFileSync(path.join(sub, 'memory.yaml'), "dbPath: ':memory:'\n");
    expect(loadSimConfig(path.join(sub, 'memory.yaml')).dbPath).toBe(':memory:');
    writeFileSync(path.join(sub, 'default.yaml'), 'port: 0\n');
    expect(loadSimConfig(path.join(sub, 'default.yaml')).dbPath).toBeUndefined();
  });

  it('paper and live: the strategy, the journal, the log and the simulator database', () => {
    writeFileSync(
      path.join(sub, 'paper.yaml'),
      'strategy: { name: ./flip.ts, id: flip }\ncontracts: [CON.F.US.MES.Z25]\ntimeframe: { unit: minute }\njournal: var/journal.sqlite\nlog: { file: logs/paper.log }\nsimulator: { dbPath: sim.sqlite }\n',
    );
    expect(loadTradingConfig(path.join(sub, 'paper.yaml'))).toMatchObject({
      strategy: { name: path.join(sub, 'flip.ts') },
      journal: path.join(sub, 'var', 'journal.sqlite'),
      log: { file: path.join(sub, 'logs', 'paper.log') },
      simulator: { dbPath: path.join(sub, 'sim.sqlite') },
    });
    writeFileSync(
      path.join(sub, 'builtin.yaml'),
      'strategy: { name: sma-cross, id: x }\ncontracts: [CON.F.US.MES.Z25]\ntimeframe: { unit: minute }\njournal: j.sqlite\n',
    );
    expect(loadTradingConfig(path.join(sub, 'builtin.yaml')).strategy.name).toBe('sma-cross');
  });

  it('flatten: journals into the journal named by the config, beside the config', async () => {
    const sim = await startSimulator({ clock: 'manual', historyDays: 1 });
    const saved = { user: process.env.TICKLINE_USERNAME, key: process.env.TICKLINE_API_KEY };
    try {
      const journalFile = path.join(sub, 'state', 'journal.sqlite');
      mkdirSync(path.dirname(journalFile));
      Journal.open(journalFile).close();
      writeFileSync(
        path.join(sub, 'live.yaml'),
        `strategy: { name: sma-cross, id: x }\ncontracts: [CON.F.US.EP.Z25]\ntimeframe: { unit: minute }\naccount: { id: ${sim.demo.accountId} }\njournal: state/journal.sqlite\nlog: { level: error }\n`,
      );
      process.env.TICKLINE_USERNAME = sim.demo.userName;
      process.env.TICKLINE_API_KEY = sim.demo.apiKey;
      expect(
        await main(['flatten', '--config', path.join(sub, 'live.yaml'), '--url', sim.tradingUrl]),
        err.join(''),
      ).toBe(ExitCode.Ok);
      const journal = Journal.open(journalFile);
      try {
        expect(journal.entries({ kind: 'flatten-command' }).map((e) => e.phase)).toEqual(['before', 'after']);
      } finally {
        journal.close();
      }
    } finally {
      for (const [key, value] of [
        ['TICKLINE_USERNAME', saved.user],
        ['TICKLINE_API_KEY', saved.key],
      ] as const) {
        if (value === undefined) delete process.env[key];
        else process.env[key] = value;
      }
      await sim.close();
    }
  });
});
