import { afterAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadBacktestConfig } from '../../../src/cli/backtest.ts';
import { executeBacktest } from '../../../src/adapters/backtest/execute.ts';
import { writeBacktestOutputs } from '../../../src/adapters/backtest/result-files.ts';
import {
  IsoTimeFormatter,
  type StreamedTextFile,
  equityRows,
  writeEquityCsv,
  writeJsonArray,
  writeStreamed,
} from '../../../src/adapters/backtest/outputs.ts';
import { TradingCalendar } from '../../../src/engine/trading-day.ts';
import { cents, endOfDayEquity } from '../../../src/report/statistics.ts';

const ROOT = path.resolve(import.meta.dirname, '../../..');
const dir = mkdtempSync(path.join(tmpdir(), 'tickline-outputs-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** equity.csv as the whole-string writer made it before the streamed one. */
function wholeStringEquityCsv(curve: { time: ArrayLike<number>; equity: ArrayLike<number> }): string {
  const lines = ['time,equity'];
  for (let i = 0; i < curve.time.length; i++)
    lines.push(`${new Date(curve.time[i]!).toISOString()},${cents(curve.equity[i]!)}`);
  return `${lines.join('\n')}\n`;
}

describe('streamed outputs', () => {
  it('format times exactly as toISOString, in any order and far from today', () => {
    const times = fc.oneof(fc.integer({ min: -8.6e15, max: 8.6e15 }), fc.integer({ min: 1.3e12, max: 1.8e12 }));
    fc.assert(
      fc.property(
        fc.array(times, { maxLength: 50 }),
        fc.array(fc.integer({ min: 0, max: 3_600_000 }), { maxLength: 50 }),
        (starts, steps) => {
          const iso = new IsoTimeFormatter();
          let t = starts[0] ?? 0;
          for (const ms of [...starts, ...steps.map((s) => (t += s))])
            expect(iso.format(ms)).toBe(new Date(ms).toISOString());
        },
      ),
    );
  });

  it.each(['es-sma-cross', 'es-breakout', 'es-mean-reversion', 'default'])(
    'per-bar equity.csv of backtest/%s.yaml is byte-identical to the whole-string one',
    async (name) => {
      const { config } = await loadBacktestConfig({
        config: path.join(ROOT, 'backtest', `${name}.yaml`),
        params: [],
      } as never);
      const outcome = await executeBacktest({ ...config, outputs: { equity: 'per-bar', json: 'pretty' } }, name, {
        cwd: ROOT,
      });
      const out = path.join(dir, name);
      await writeBacktestOutputs(out, outcome);
      expect(readFileSync(path.join(out, 'equity.csv'), 'utf8')).toBe(wholeStringEquityCsv(outcome.result.equity));
      // per-trade and daily are subsets of the same rows: the first and last bar and each exit; each day's close.
      const rowsOf = async (mode: 'per-trade' | 'daily') => {
        const file = path.join(out, `equity-${mode}.csv`);
        writeEquityCsv(
          file,
          equityRows(
            outcome.result.equity,
            mode,
            outcome.result.trades.map((t) => t.exitTime),
            outcome.result.riskConfig.tradingDay,
          ),
        );
        return readFileSync(file, 'utf8').trim().split('\n').slice(1);
      };
      const perBar = new Set(readFileSync(path.join(out, 'equity.csv'), 'utf8').trim().split('\n').slice(1));
      const perTrade = await rowsOf('per-trade');
      for (const row of perTrade) expect(perBar.has(row)).toBe(true);
      expect(perTrade.length).toBeLessThanOrEqual(outcome.result.trades.length + 2);
      // Exactly: the first bar, the last, and each bar [its start, the next bar's start) in which a trade ended.
      const { time, equity } = outcome.result.equity;
      const exits = outcome.result.trades.map((t) => t.exitTime);
      const chosen = Array.from(time.keys()).filter(
        (i) =>
          i === 0 ||
          i === time.length - 1 ||
          exits.some((e) => e >= time[i]! && e < (time[i + 1] ?? Number.POSITIVE_INFINITY)),
      );
      expect(outcome.result.trades.length).toBeGreaterThan(0);
      expect(perTrade).toEqual(chosen.map((i) => `${new Date(time[i]!).toISOString()},${cents(equity[i]!)}`));
      const daily = await rowsOf('daily');
      const dayEnds = endOfDayEquity(outcome.result.equity, new TradingCalendar(outcome.result.riskConfig.tradingDay));
      expect(daily.map((row) => Number(row.split(',')[1]))).toEqual(dayEnds.map((d) => cents(d.equity)));
    },
  );

  it('write a JSON array element by element as JSON.stringify writes the whole array, compact and pretty', () => {
    const value = fc.jsonValue({ maxDepth: 3 }).filter((v) => v !== undefined);
    let n = 0;
    fc.assert(
      fc.property(
        fc.array(value, { maxLength: 12 }),
        fc.constantFrom('compact' as const, 'pretty' as const),
        (items, layout) => {
          const file = path.join(dir, `array-${n++}.json`);
          writeJsonArray(file, items, (item) => item, layout);
          const expected = layout === 'pretty' ? JSON.stringify(items, null, 2) : JSON.stringify(items);
          expect(readFileSync(file, 'utf8')).toBe(`${expected}\n`);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('keep text of any length and any characters across the buffer, and leave no file when a writer fails', () => {
    const file = path.join(dir, 'long.txt');
    const parts = ['é∑😀'.repeat(200_000), 'x', 'a,b\n'.repeat(300_000), '€'.repeat(400_000)];
    writeStreamed(file, (out: StreamedTextFile) => {
      for (const part of parts) out.write(part);
    });
    expect(readFileSync(file, 'utf8')).toBe(parts.join(''));
    const failed = path.join(dir, 'failed.txt');
    expect(() =>
      writeStreamed(failed, (out) => {
        out.write('half a result\n');
        throw new Error('a bad row');
      }),
    ).toThrow('a bad row');
    expect(existsSync(failed)).toBe(false);
    expect(readdirSync(dir).filter((name) => name.endsWith('.partial'))).toEqual([]);
  });

  it.each(['es-breakout', 'es-mean-reversion'])(
    'compact JSON of backtest/%s.yaml is the pretty JSON on one line, key for key',
    async (name) => {
      const { config } = await loadBacktestConfig({
        config: path.join(ROOT, 'backtest', `${name}.yaml`),
        params: [],
      } as never);
      const outcome = await executeBacktest(config, name, { cwd: ROOT });
      const compact = path.join(dir, `${name}-compact`);
      const pretty = path.join(dir, `${name}-pretty`);
      await writeBacktestOutputs(compact, { ...outcome, outputs: { ...outcome.outputs, json: 'compact' } });
      await writeBacktestOutputs(pretty, { ...outcome, outputs: { ...outcome.outputs, json: 'pretty' } });
      expect(outcome.result.orders.some((o) => o.stopPrice !== null || o.limitPrice !== null)).toBe(true);
      for (const file of readdirSync(compact).filter((f) => f.endsWith('.json'))) {
        const oneLine = readFileSync(path.join(compact, file), 'utf8');
        expect(oneLine.split('\n')).toHaveLength(2);
        expect(oneLine).toBe(`${JSON.stringify(JSON.parse(readFileSync(path.join(pretty, file), 'utf8')))}\n`);
      }
    },
  );
});
