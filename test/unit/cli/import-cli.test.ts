import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { main } from '../../../src/cli/main.ts';
import { ExitCode } from '../../../src/cli/exit.ts';
import { captureOutput } from './capture-output.ts';

let dir: string;
const { out, err } = captureOutput();

beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'tickline-import-'));
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** A day of one-minute bars in an export's own header, Chicago wall-clock times, a gentle zigzag. */
function exportFile(bars: number): string {
  const rows = ['DateTime,Open,High,Low,Close,Volume'];
  const start = Date.UTC(2024, 0, 8, 8, 30);
  for (let i = 0; i < bars; i++) {
    const local = new Date(start + i * 60_000).toISOString().slice(0, 19).replace('T', ' ');
    const close = 4750 + (i % 40 < 20 ? i % 40 : 40 - (i % 40)) * 0.25;
    rows.push(`${local},${close - 0.25},${close + 0.25},${close - 0.5},${close},${10 + (i % 7)}`);
  }
  return `${rows.join('\n')}\n`;
}

describe('tickline import', () => {
  it('stores the parsed file once; backtests read it (same results), and a changed file is parsed again', async () => {
    const csv = path.join(dir, 'export.csv');
    writeFileSync(csv, exportFile(600));
    const config = path.join(dir, 'run.yaml');
    writeFileSync(
      config,
      [
        'strategy: { name: sma-cross, params: { fast: 5, slow: 20 } }',
        'contract: ESH4',
        'data:',
        '  source: csv',
        '  file: export.csv',
        '  cache: cache/bars.sqlite',
        '  columns: { time: datetime, open: open, high: high, low: low, close: close, volume: volume }',
        '  timeZone: America/Chicago',
        `out: out`,
        '',
      ].join('\n'),
    );
    expect(await main(['backtest', '--config', config])).toBe(ExitCode.Ok);
    const parsedRun = out.join('');
    expect(parsedRun).not.toContain('(imported)');
    // 08:30 Chicago in January is 14:30 UTC.
    const hash = /orders sha256: ([0-9a-f]{64})/.exec(parsedRun)![1];

    out.length = 0;
    expect(await main(['import', '--config', config])).toBe(ExitCode.Ok);
    expect(out.join('')).toMatch(
      /export\.csv: 600 bars from 2024-01-08T14:30:00\.000Z to 2024-01-09T00:29:00\.000Z imported in \d+ ms/,
    );

    out.length = 0;
    expect(await main(['backtest', '--config', config])).toBe(ExitCode.Ok);
    expect(out.join('')).toContain('export.csv (imported)');
    expect(out.join('')).toContain(`orders sha256: ${hash}`);

    // A changed file is stale: parsed again, with its new bars.
    writeFileSync(csv, exportFile(400));
    out.length = 0;
    expect(await main(['backtest', '--config', config])).toBe(ExitCode.Ok);
    expect(out.join('')).not.toContain('(imported)');
    expect(out.join('')).toContain('400 bars');
  });

  it('refuses a definition without a CSV source (exit 2)', async () => {
    const config = path.join(dir, 'synthetic.yaml');
    writeFileSync(config, 'strategy: { name: sma-cross }\ndata: { source: synthetic }\n');
    expect(await main(['import', '--config', config])).toBe(ExitCode.Usage);
    expect(err.join('')).toContain('import reads CSV files');
  });
});
