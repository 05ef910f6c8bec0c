import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { describe, expect, it } from 'vitest';
import { BacktestConfig } from '../../../src/adapters/backtest/backtest-config.ts';
import { executeBacktest } from '../../../src/adapters/backtest/execute.ts';
import { readCsvBars } from '../../../src/data/csv.ts';
import { priceTicks, readParquetBars } from '../../../src/data/parquet.ts';
import fc from 'fast-check';
import { PriceGrid } from '../../../src/engine/ticks.ts';

const ES_CSV = path.resolve(import.meta.dirname, '../../../../shared/data/es-minute-lean.csv');
const ES = new PriceGrid(0.25, 12.5);
const dir = mkdtempSync(path.join(tmpdir(), 'tickline-parquet-'));

/** Runs one DuckDB statement (the tests write their Parquet files with it). */
async function duck(sql: string): Promise<void> {
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  try {
    await connection.run(sql);
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

const columns = {
  time: 'DateTime',
  open: 'Open',
  high: 'High',
  low: 'Low',
  close: 'Close',
  volume: 'Volume',
  contract: 'Month',
};

describe('Parquet bar files', () => {
  it("property: the fast tick check agrees with the grid's exact decimal reading, on and off the grid", () => {
    const grids = [0.25, 0.1, 0.01, 0.005, 0.015625, 0.00005, 1].map((size) => new PriceGrid(size, 1));
    fc.assert(
      fc.property(
        fc.constantFrom(...grids),
        fc.integer({ min: -2_000_000, max: 20_000_000 }),
        fc.double({ min: -1e5, max: 1e6, noNaN: true }),
        (grid, ticks, any) => {
          expect(priceTicks(grid, grid.toPrice(ticks))).toBe(ticks);
          const exact = grid.toTicks(any);
          expect(priceTicks(grid, any)).toBe(Number.isInteger(exact) ? exact : Number.NaN);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('round trip: the ES file written as Parquet (an instant column, its own names) reads back to the same bars and months', async () => {
    const file = path.join(dir, 'es.parquet');
    await duck(
      `COPY (SELECT t::TIMESTAMPTZ AS DateTime, o AS Open, h AS High, l AS Low, c AS Close, v AS Volume, contract AS Month FROM read_csv('${ES_CSV}', header = true, columns = {'t': 'VARCHAR', 'o': 'DOUBLE', 'h': 'DOUBLE', 'l': 'DOUBLE', 'c': 'DOUBLE', 'v': 'BIGINT', 'contract': 'VARCHAR'})) TO '${file}' (FORMAT parquet)`,
    );
    const fromCsv = readCsvBars(ES_CSV, ES);
    const fromParquet = await readParquetBars(file, ES, 'es.parquet', { columns });
    expect(fromParquet.segments).toEqual(fromCsv.segments);
    for (const key of ['time', 'open', 'high', 'low', 'close', 'volume'] as const)
      expect([...fromParquet.bars[key]]).toEqual([...fromCsv.bars[key]]);
  });

  it('a timestamp without zone is a wall-clock time of data.timeZone (UTC without it); text times read as in a CSV', async () => {
    const csv = path.join(dir, 'local.csv');
    writeFileSync(
      csv,
      [
        'when,o,h,l,c,v',
        '2024-01-08 08:30:00,4750,4750.5,4749.75,4750.25,3',
        '2024-07-08 08:30:00,5600,5600,5600,5600,1',
      ].join('\n'),
    );
    const naive = path.join(dir, 'naive.parquet');
    const text = path.join(dir, 'text.parquet');
    await duck(
      `COPY (SELECT "when"::TIMESTAMP AS "when", o, h, l, c, v FROM read_csv('${csv}', header = true, columns = {'when': 'VARCHAR', 'o': 'DOUBLE', 'h': 'DOUBLE', 'l': 'DOUBLE', 'c': 'DOUBLE', 'v': 'BIGINT'})) TO '${naive}' (FORMAT parquet)`,
    );
    await duck(
      `COPY (SELECT "when"::VARCHAR AS "when", o, h, l, c, v FROM read_csv('${csv}', header = true, columns = {'when': 'VARCHAR', 'o': 'DOUBLE', 'h': 'DOUBLE', 'l': 'DOUBLE', 'c': 'DOUBLE', 'v': 'BIGINT'})) TO '${text}' (FORMAT parquet)`,
    );
    const chicago = [Date.parse('2024-01-08T14:30:00Z'), Date.parse('2024-07-08T13:30:00Z')];
    const mapping = { columns: { time: 'when' }, timeZone: 'America/Chicago' };
    expect([...(await readParquetBars(naive, ES, 'naive.parquet', mapping)).bars.time]).toEqual(chicago);
    expect([...(await readParquetBars(text, ES, 'text.parquet', mapping)).bars.time]).toEqual(chicago);
    expect([...(await readParquetBars(naive, ES, 'naive.parquet', { columns: { time: 'when' } })).bars.time]).toEqual([
      Date.parse('2024-01-08T08:30:00Z'),
      Date.parse('2024-07-08T08:30:00Z'),
    ]);
    await expect(readParquetBars(text, ES, 'text.parquet', { columns: { time: 'when' } })).rejects.toThrow(
      'text.parquet:1 column when: "2024-01-08 08:30:00" is not a time',
    );
    await expect(readParquetBars(naive, ES, 'naive.parquet')).rejects.toThrow(
      'no column "t" for time (found: when,o,h,l,c,v); name the file\'s columns in data.columns',
    );
    await expect(readParquetBars(naive, new PriceGrid(1, 5), 'naive.parquet', mapping)).rejects.toThrow(
      'price 4750.5 is not a multiple of the tick size 1',
    );
  });

  it('a contract: ES backtest of the Parquet file equals the one of the CSV file', async () => {
    const file = path.join(dir, 'es.parquet');
    const run = (data: object) =>
      executeBacktest(
        BacktestConfig.parse({
          strategy: { name: 'sma-cross', params: { fast: 20, slow: 50 } },
          contract: 'ES',
          data,
          fills: { slippageTicks: 1, feePerContractPerSide: 1.4 },
        }),
        'p',
        { recordEquity: false },
      );
    const parquet = await run({ source: 'csv', file, columns });
    const csv = await run({ source: 'csv', file: ES_CSV });
    expect(parquet.result.orderListHash).toBe(csv.result.orderListHash);
    expect(parquet.result.rolls).toEqual(csv.result.rolls);
    expect(parquet.result.trades.length).toBeGreaterThan(10);
  });
});
