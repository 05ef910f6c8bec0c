/**
 * The README's fetch-bars examples against the local simulator (`npm run sim`, started here in-process
 * on the wall clock, as a quant starts it): each returns bars. A range the simulator has no history for
 * is an error that says why, not "0 bars in cache" and exit 0.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { main } from '../../../src/cli/main.ts';
import { ExitCode } from '../../../src/cli/exit.ts';
import { whyNoBars } from '../../../src/cli/fetch-bars.ts';
import { startSimulator, type SimHandle } from '../../../src/sim/index.ts';

const REPO = path.resolve(import.meta.dirname, '../../..');

/** The README's `node bin/tickline.js fetch-bars ...` lines, as argument lists (without their comments). */
function readmeFetchBars(): string[][] {
  const readme = readFileSync(path.join(REPO, 'README.md'), 'utf8');
  return [...readme.matchAll(/^node bin\/tickline\.js (fetch-bars [^#\n]*)/gm)].map((m) => m[1]!.trim().split(/\s+/));
}

let sim: SimHandle;
let dir: string;
let out: string[];
let err: string[];
const saved = { ...process.env };

beforeAll(async () => {
  sim = await startSimulator({ port: 0 });
});
afterAll(() => sim.close());

beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'tickline-fetch-sim-'));
  out = [];
  err = [];
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => (out.push(String(chunk)), true));
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => (err.push(String(chunk)), true));
  process.env.TICKLINE_BASE_URL = sim.tradingUrl;
  process.env.TICKLINE_USERNAME = sim.demo.userName;
  process.env.TICKLINE_API_KEY = sim.demo.apiKey;
  process.env.TICKLINE_LOG_LEVEL = 'silent';
});

afterEach(() => {
  vi.restoreAllMocks();
  process.env = { ...saved };
  rmSync(dir, { recursive: true, force: true });
});

describe("the README's fetch-bars examples against the local simulator", () => {
  it('each returns bars', async () => {
    const examples = readmeFetchBars();
    expect(examples.length).toBeGreaterThanOrEqual(2);
    for (const args of examples) {
      out.length = 0;
      expect(await main([...args, '--cache', path.join(dir, 'bars.sqlite')]), args.join(' ')).toBe(ExitCode.Ok);
      const counts = [...out.join('').matchAll(/: (\d+) bars in cache/g)].map((m) => Number(m[1]));
      expect(counts.length, args.join(' ')).toBeGreaterThan(0);
      expect(
        counts.reduce((a, b) => a + b, 0),
        args.join(' '),
      ).toBeGreaterThan(0);
    }
  });

  it("a range before the simulator's history is an error that says why (exit 2)", async () => {
    const args = ['fetch-bars', '--contract', 'CON.F.US.EP.Z25', '--from', '2025-01-02', '--to', '2025-01-31'];
    expect(await main([...args, '--cache', path.join(dir, 'bars.sqlite')])).toBe(ExitCode.Usage);
    expect(out.join('')).toContain('CON.F.US.EP.Z25: 0 bars in cache');
    const said = err.join('');
    expect(said).toContain('no bars for the whole range');
    expect(said).toContain('synthetic bars only from historyDays');
  });

  it('a month that had expired before the range, and a range the market was closed over, say so', async () => {
    const cache = ['--cache', path.join(dir, 'bars.sqlite')];
    // (The simulator answers bars for any month it is asked for, an expired one included: the reason is
    // read from the contract calendar.)
    expect(
      whyNoBars({ contractId: 'CON.F.US.EP.H13', from: Date.UTC(2025, 0, 2), to: Date.UTC(2025, 0, 31) }),
    ).toContain('ESH3 expired on 2013-03-15, before the range');
    expect(
      whyNoBars({ contractId: 'CON.F.US.EP.Z30', from: Date.UTC(2025, 0, 2), to: Date.UTC(2025, 0, 31) }),
    ).toContain('ESZ0 was not yet listed over the range');
    // Saturday 2024-01-06: the CME is closed from Friday's close to Sunday's open.
    expect(
      await main([
        'fetch-bars',
        '--contract',
        'CON.F.US.EP.H24',
        '--from',
        '2024-01-06T00:00:00Z',
        '--to',
        '2024-01-06T12:00:00Z',
        ...cache,
      ]),
    ).toBe(ExitCode.Usage);
    expect(err.join('')).toContain('the market was closed over the whole range');
  });

  it('a reversed range names both ends (exit 2)', async () => {
    expect(await main(['fetch-bars', '--contract', 'ES', '--from', '2014-01-01', '--to', '2013-01-01'])).toBe(
      ExitCode.Usage,
    );
    expect(err.join('')).toContain('the range ends before it starts: --to 2013-01-01');
  });
});
