import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { AccountConfig } from '../../../src/adapters/backtest/backtest-config.ts';
import { resolveContract } from '../../../src/adapters/backtest/contract.ts';
import { DECISIONS_CSV_HEADER, decisionsCsvLines } from '../../../src/adapters/backtest/decisions-csv.ts';
import { runBacktest } from '../../../src/adapters/backtest/run.ts';
import { syntheticBars } from '../../../src/data/synthetic-bars.ts';
import { main } from '../../../src/cli/main.ts';
import { TradingCalendar } from '../../../src/engine/trading-day.ts';
import { decisionLines, rejectionLine, summarizeDecisions } from '../../../src/report/decisions.ts';
import type { DecisionRecord } from '../../../src/report/report-types.ts';
import guarded from './fixtures/guarded-strategy.ts';

const contract = resolveContract('MESZ5');
const bars = syntheticBars({
  seed: 5,
  grid: contract.grid,
  startPrice: 6700,
  start: Date.UTC(2025, 2, 2),
  sessions: 3,
});
const calendar = new TradingCalendar();

function run() {
  return runBacktest({
    contract,
    bars,
    dataTimeframe: { unit: 'minute', unitNumber: 1 },
    timeframe: { unit: 'minute', unitNumber: 1 },
    strategy: guarded,
    params: {},
    account: AccountConfig.parse({}),
    risk: { maxPositionSize: 1 },
    fills: { slippageTicks: 1, feePerContractPerSide: 0.37 },
  });
}

describe('decisions of a strategy with known refusals', () => {
  const n = bars.time.length;

  it('records every decision with its outcome, code and the numbers behind it', () => {
    const result = run();
    expect(result.decisions).toHaveLength(n);
    expect(result.rejectedIntents).toBe(n - 1);
    expect(result.rejections).toEqual({ TICK_MISALIGNED: 2, MAX_POSITION_SIZE: n - 3 });
    const csv = [...decisionsCsvLines(result.decisions, contract.grid)].join('').trimEnd().split('\n');
    expect(csv[0]).toBe(DECISIONS_CSV_HEADER);
    expect(csv).toHaveLength(n + 1);
    const header = DECISIONS_CSV_HEADER.split(',');
    const cell = (line: string, name: string) => splitCsv(line)[header.indexOf(name)];
    const firstPrice = contract.grid.toPrice(bars.close[0]!) + 0.13;
    expect(cell(csv[1]!, 'result')).toBe('rejected');
    expect(cell(csv[1]!, 'code')).toBe('TICK_MISALIGNED');
    expect(cell(csv[1]!, 'limitPrice')).toBe(String(firstPrice));
    expect(cell(csv[1]!, 'intent')).toBe(`place buy 1 limit ${firstPrice}`);
    expect(cell(csv[1]!, 'message')).toContain(String(firstPrice));
    expect(cell(csv[3]!, 'result')).toBe('accepted');
    expect(cell(csv[3]!, 'acceptedSize')).toBe('1');
    // The refusal names the position, the working order and the cap; the position column is what the guard saw.
    expect(cell(csv[5]!, 'code')).toBe('MAX_POSITION_SIZE');
    expect(cell(csv[5]!, 'message')).toBe('position 1 with working 0 and this buy 1 exceeds 1');
    expect(cell(csv[5]!, 'position')).toBe('1');
    expect(Number(cell(csv[5]!, 'equity'))).toBeCloseTo(result.decisions.at(4)!.equity!, 2);
  });

  it('tallies refusals by code in order of first occurrence and warns that the strategy stopped trading', () => {
    const result = run();
    const days = [...new Set(Array.from(bars.time, (t) => calendar.dayOf(t)))];
    const summary = summarizeDecisions(result.decisions, {
      grid: contract.grid,
      dayOf: (t) => calendar.dayOf(t),
      days,
    });
    expect(rejectionLine(summary)).toBe(`Rejected ${n - 1}: TICK_MISALIGNED 2, MAX_POSITION_SIZE ${n - 3}`);
    expect(summary.accepted).toBe(1);
    expect(summary.firsts.map((f) => [f.code, f.count])).toEqual([
      ['TICK_MISALIGNED', 2],
      ['MAX_POSITION_SIZE', n - 3],
    ]);
    expect(summary.stopped).toHaveLength(1);
    expect(summary.stopped[0]).toMatchObject({
      strategyId: 'guarded',
      rejected: n - 3,
      dayNumber: 1,
      days: days.length,
    });
    const lines = decisionLines(summary);
    expect(lines[1]).toMatch(
      /^Warning: strategy guarded stopped trading on \d{4}-\d\d-\d\d \(trading day 1 of \d+\): all \d+ of its intents/,
    );
  });

  it('does not warn when the refusals end on the day of the last accepted intent', () => {
    const records: DecisionRecord[] = [
      decision(Date.UTC(2025, 2, 4, 15), true),
      decision(Date.UTC(2025, 2, 4, 16), false),
      decision(Date.UTC(2025, 2, 4, 17, 30), true),
      decision(Date.UTC(2025, 2, 4, 20), false),
    ];
    const summary = summarizeDecisions(records, { dayOf: (t) => calendar.dayOf(t) });
    expect(summary.stopped).toEqual([]);
    expect(
      summarizeDecisions([...records, decision(Date.UTC(2025, 2, 5, 23), false)], { dayOf: (t) => calendar.dayOf(t) })
        .stopped,
    ).toHaveLength(1);
  });
});

function decision(time: number, accepted: boolean): DecisionRecord {
  return {
    time,
    strategyId: 's',
    intent: { kind: 'target', contractId: 'X', size: 1 },
    result: accepted ? { accepted: true } : { accepted: false, code: 'FLAT_BY', message: 'past the flat-by time' },
  };
}

/** Splits one CSV line with quoted fields. */
function splitCsv(line: string): string[] {
  const cells: string[] = [];
  let current = '';
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quoted) {
      if (c === '"' && line[i + 1] === '"') (current += '"'), i++;
      else if (c === '"') quoted = false;
      else current += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') cells.push(current), (current = '');
    else current += c;
  }
  cells.push(current);
  return cells;
}

describe('tickline backtest prints why intents were refused', () => {
  let dir: string;
  let out: string[];
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'tickline-decisions-'));
    out = [];
    vi.spyOn(process.stdout, 'write').mockImplementation(
      (chunk: string | Uint8Array) => (out.push(String(chunk)), true),
    );
    vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
  });
  afterEach(() => {
    vi.restoreAllMocks();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a summary line of refusals by code, a stop warning and decisions.csv', async () => {
    const file = path.join(dir, 'guarded.yaml');
    const strategy = path.resolve('test/unit/backtest/fixtures/guarded-strategy.ts');
    writeFileSync(
      file,
      `strategy:\n  name: ${strategy}\ncontract: MESZ5\ndata: { source: synthetic, seed: 5, sessions: 3, start: 2025-03-02 }\nrisk: { maxPositionSize: 1 }\n`,
    );
    const outDir = path.join(dir, 'out');
    await main(['backtest', '--config', file, '--out', outDir]);
    const text = out.join('');
    const n = bars.time.length;
    // The last bar of each of the 3 sessions ends at the close (16:00 CT): what is decided there is refused.
    expect(text).toContain(`\nRejected ${n - 1}: TICK_MISALIGNED 2, MAX_POSITION_SIZE ${n - 6}, MARKET_CLOSED 3\n`);
    expect(text).toMatch(/\nWarning: strategy guarded stopped trading on /);
    const csv = readFileSync(path.join(outDir, 'decisions.csv'), 'utf8').trimEnd().split('\n');
    expect(csv).toHaveLength(n + 1);
    const summary = JSON.parse(readFileSync(path.join(outDir, 'summary.json'), 'utf8'));
    expect(summary.rejections).toEqual({ TICK_MISALIGNED: 2, MAX_POSITION_SIZE: n - 6, MARKET_CLOSED: 3 });
  });
});
