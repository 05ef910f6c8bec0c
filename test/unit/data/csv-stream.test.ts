import { afterAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import path from 'node:path';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import {
  joinParts,
  loadCsvBars,
  newClaims,
  readParts,
  sharedColumns,
  takeWork,
  type CsvSplit,
  type LoadedCsvBars,
  type PartContext,
} from '../../../src/data/csv-parallel.ts';
import { PriceGrid } from '../../../src/engine/ticks.ts';
import { CsvBarsError, CsvBarsReader, parseCsvBars, readCsvBars, type CsvBars } from '../../../src/data/csv.ts';
import * as reference from './csv-reference.ts';

const ES = new PriceGrid(0.25, 12.5);
const ES_CSV = path.resolve(import.meta.dirname, '../../../../shared/data/es-minute-lean.csv');

type Outcome = { ok: true; columns: number[][]; segments: unknown } | { ok: false; problems: unknown };

function outcomeOf(read: () => CsvBars | reference.CsvBars): Outcome {
  try {
    const { bars, segments } = read();
    const columns = [bars.time, bars.open, bars.high, bars.low, bars.close, bars.volume].map((c) => Array.from(c));
    return { ok: true, columns, segments };
  } catch (error) {
    if (error instanceof CsvBarsError || error instanceof reference.CsvBarsError)
      return { ok: false, problems: error.problems };
    throw error;
  }
}

/** Feeds the bytes to the streaming reader cut at the given offsets. */
function streamed(bytes: Buffer, cuts: readonly number[], grid: PriceGrid, file: string): CsvBars {
  return streamedReader(bytes, cuts, grid, file).read();
}

function streamedReader(
  bytes: Buffer,
  cuts: readonly number[],
  grid: PriceGrid,
  file: string,
): { reader: CsvBarsReader; read: () => CsvBars } {
  const reader = new CsvBarsReader(grid, file, 4);
  return { reader, read: () => pushAll(reader, bytes, cuts) };
}

function pushAll(reader: CsvBarsReader, bytes: Buffer, cuts: readonly number[]): CsvBars {
  let from = 0;
  for (const cut of [...cuts].sort((a, b) => a - b)) {
    reader.push(bytes.subarray(from, cut));
    from = cut;
  }
  reader.push(bytes.subarray(from));
  return reader.end();
}

const timeCell = fc.oneof(
  fc
    .record({
      y: fc.integer({ min: 1990, max: 2030 }),
      mo: fc.integer({ min: 0, max: 13 }),
      d: fc.integer({ min: 0, max: 32 }),
      h: fc.integer({ min: 0, max: 25 }),
      mi: fc.integer({ min: 0, max: 60 }),
      s: fc.integer({ min: 0, max: 60 }),
    })
    .chain((p) =>
      fc.constantFrom('Z', '+00:00', '-05:00', '+05:30', '+24:00', '-23:59', 'z', '').map((offset) => {
        const two = (n: number) => String(n).padStart(2, '0');
        return `${p.y}-${two(p.mo)}-${two(p.d)}T${two(p.h)}:${two(p.mi)}:${two(p.s)}${offset}`;
      }),
    ),
  fc.constantFrom(
    '2024-01-02T15:00:00Z',
    '2024-01-02T15:00:00.500Z',
    ' 2024-01-02T15:01:00Z',
    '2024-01-02 15:02',
    'soon',
    '',
    '0999-01-01T00:00:00Z',
    '2024-02-29T23:59:59+01:00',
  ),
);
const priceCell = fc.oneof(
  fc.integer({ min: 0, max: 40_000 }).map((ticks) => ES.toPrice(ticks).toString()),
  fc
    .integer({ min: 0, max: 40_000 })
    .map((ticks) => ES.toPrice(ticks).toFixed(fc.sample(fc.integer({ min: 0, max: 3 }), 1)[0]!)),
  fc.constantFrom(
    '100.1',
    '0100.25',
    '100.',
    '.25',
    '-0',
    '-1.25',
    '1e3',
    '0.0000001',
    '0.000000',
    ' 100.5 ',
    'abc',
    '',
    '1234567.25',
    '100.250000000',
    '100.2500000001',
    'é',
  ),
);
const volumeCell = fc.oneof(
  fc.nat({ max: 100_000 }).map(String),
  fc.constantFrom('', 'x', '1.0', '1e3', '-1', '007', ' 5', '1.5', '9999999999999999'),
);
const contractCell = fc.constantFrom('201312', '201403', '', ' 201403', 'H24é', 'Z9');
const row = fc.oneof(
  {
    weight: 8,
    arbitrary: fc
      .tuple(timeCell, priceCell, priceCell, priceCell, priceCell, volumeCell, contractCell)
      .map((cells) => cells.join(',')),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      '',
      '   ',
      '2024-01-02T15:05:00Z,100,101',
      '2024-01-02T16:00:00Z,1,2,1,2,3,201312,extra,cells',
    ),
  },
);
/** Mostly valid, increasing rows so the fast path carries most lines, with bad rows mixed in. */
const goodRow = fc.tuple(
  fc.integer({ min: 1, max: 120 }),
  fc.integer({ min: 4000, max: 8000 }),
  fc.nat({ max: 8 }),
  fc.nat({ max: 8 }),
  fc.nat({ max: 999 }),
  fc.constantFrom('201312', '201403'),
);

const document = fc
  .record({
    header: fc.constantFrom(
      't,o,h,l,c,v,contract',
      'contract,v,c,l,h,o,t',
      '\ufefft, O ,h,l,c,v,contract',
      't,o,h,c,v,contract',
      't,o,h,l,c,v',
      'T,O,H,L,C,V',
    ),
    rows: fc.array(
      fc.oneof(
        row,
        goodRow.map((g) => g),
      ),
      { maxLength: 30 },
    ),
    crlf: fc.boolean(),
    trailingNewline: fc.boolean(),
  })
  .map(({ header, rows, crlf, trailingNewline }) => {
    const names = header
      .replace('\ufeff', '')
      .split(',')
      .map((h) => h.trim().toLowerCase());
    let time = Date.parse('2024-01-02T00:00:00Z');
    const lines = rows.map((r) => {
      if (typeof r === 'string') {
        // Generated rows are in t,o,h,l,c,v,contract order; place them per the header.
        const cells = r.split(',');
        if (cells.length < 7) return r;
        const byName: Record<string, string> = {
          t: cells[0]!,
          o: cells[1]!,
          h: cells[2]!,
          l: cells[3]!,
          c: cells[4]!,
          v: cells[5]!,
          contract: cells[6]!,
        };
        return [...names.map((n) => byName[n] ?? ''), ...cells.slice(7)].join(',');
      }
      const [step, low, up, down, volume, contract] = r;
      time += step * 60_000;
      const byName: Record<string, string> = {
        t: new Date(time).toISOString().replace('.000', ''),
        o: ES.toPrice(low + down).toString(),
        h: ES.toPrice(low + up + down).toString(),
        l: ES.toPrice(low).toString(),
        c: ES.toPrice(low + Math.min(up, down)).toString(),
        v: String(volume),
        contract,
      };
      return names.map((n) => byName[n] ?? '').join(',');
    });
    const eol = crlf ? '\r\n' : '\n';
    return [header, ...lines].join(eol) + (trailingNewline ? eol : '');
  });

describe('streaming CSV reader equals the whole-file reader', () => {
  it('on the real ES file, read from disk and pushed in pieces', () => {
    const expected = outcomeOf(() => reference.readCsvBars(ES_CSV, ES));
    expect(expected.ok).toBe(true);
    expect(outcomeOf(() => readCsvBars(ES_CSV, ES))).toEqual(expected);
    const bytes = readFileSync(ES_CSV);
    fc.assert(
      fc.property(fc.array(fc.nat({ max: bytes.length }), { maxLength: 12 }), (cuts) => {
        expect(outcomeOf(() => streamed(bytes, cuts, ES, ES_CSV))).toEqual(expected);
      }),
      { numRuns: 15 },
    );
  });

  it('on generated files: any split point, CRLF, trailing newline, bad rows, odd forms', () => {
    fc.assert(
      fc.property(document, fc.array(fc.nat(), { maxLength: 6 }), (text, cutSeeds) => {
        const bytes = Buffer.from(text, 'utf8');
        const cuts = cutSeeds.map((s) => s % (bytes.length + 1));
        const expected = outcomeOf(() => reference.parseCsvBars(text, ES, 'x.csv'));
        expect(outcomeOf(() => streamed(bytes, cuts, ES, 'x.csv'))).toEqual(expected);
      }),
      { numRuns: 400 },
    );
  });

  it('on other grids (0.1 and 0.01), where decimals decide alignment', () => {
    for (const grid of [new PriceGrid(0.1, 10), new PriceGrid(0.01, 10), new PriceGrid(0.005, 5)]) {
      fc.assert(
        fc.property(
          fc.array(fc.tuple(fc.integer({ min: 0, max: 999_999_999 }), fc.integer({ min: 3, max: 9 })), {
            minLength: 1,
            maxLength: 20,
          }),
          (cells) => {
            const lines = cells.map(([nanosPrefix, digits], i) => {
              const price = (nanosPrefix / 10 ** digits).toFixed(digits);
              return `2024-01-02T15:${String(i).padStart(2, '0')}:00Z,${price},${price},${price},${price},1`;
            });
            const text = ['t,o,h,l,c,v', ...lines].join('\n');
            expect(outcomeOf(() => streamed(Buffer.from(text), [], grid, 'g.csv'))).toEqual(
              outcomeOf(() => reference.parseCsvBars(text, grid, 'g.csv')),
            );
          },
        ),
        { numRuns: 100 },
      );
    }
  });

  it('checks every bound of a bar (high above open, close and low; low below open and close) as the whole-file reader', () => {
    // Prices within a few ticks of each other, so every one of the bounds is broken alone in some rows.
    const bar = fc.tuple(
      fc.integer({ min: 0, max: 3 }),
      fc.integer({ min: 0, max: 3 }),
      fc.integer({ min: 0, max: 3 }),
      fc.integer({ min: 0, max: 3 }),
    );
    fc.assert(
      fc.property(
        fc.array(bar, { minLength: 1, maxLength: 12 }),
        fc.constantFrom('t,o,h,l,c,v', 't,o,h,l,c,v,contract'),
        (rows, header) => {
          const lines = rows.map(([o, h, l, c], i) => {
            const cells = [
              `2024-01-02T15:${two(i)}:00Z`,
              ...[o, h, l, c].map((t) => ES.toPrice(4000 + t).toString()),
              '1',
            ];
            return (header.endsWith('contract') ? [...cells, 'Z24'] : cells).join(',');
          });
          const text = [header, ...lines].join('\n');
          expect(outcomeOf(() => streamed(Buffer.from(text), [], ES, 'b.csv'))).toEqual(
            outcomeOf(() => reference.parseCsvBars(text, ES, 'b.csv')),
          );
        },
      ),
      { numRuns: 300 },
    );
  });

  it('stops at the same 1000 problems on a file of bad rows', () => {
    const text = [
      't,o,h,l,c,v',
      ...Array.from({ length: 1500 }, (_, i) => `2024-01-02T15:00:00Z,100.1,101,99,100,${i}`),
    ].join('\n');
    const expected = outcomeOf(() => reference.parseCsvBars(text, ES, 'bad.csv'));
    expect(expected.ok).toBe(false);
    expect(outcomeOf(() => streamed(Buffer.from(text), [100, 5000], ES, 'bad.csv'))).toEqual(expected);
  });
});

const GRIDS = [
  new PriceGrid(0.25, 12.5),
  new PriceGrid(0.1, 10),
  new PriceGrid(0.01, 10),
  new PriceGrid(0.005, 5),
  new PriceGrid(1, 5),
];
const two = (n: number) => String(n).padStart(2, '0');

/** `utc` as the wall-clock time of `offsetMinutes` east of UTC, with that offset (`Z` for 0 when asked). */
function isoWithOffset(utc: number, offsetMinutes: number, zulu: boolean): string {
  const local = new Date(utc + offsetMinutes * 60_000).toISOString().slice(0, 19);
  if (offsetMinutes === 0 && zulu) return `${local}Z`;
  const sign = offsetMinutes < 0 ? '-' : '+';
  const abs = Math.abs(offsetMinutes);
  return `${local}${sign}${two(Math.floor(abs / 60))}:${two(abs % 60)}`;
}

/** A price of `ticks` on `grid` written with any number of decimals from the fewest needed to the grid's own. */
function priceText(grid: PriceGrid, ticks: number, extraDecimals: number, signedZero: boolean): string {
  const price = grid.toPrice(ticks);
  const shortest = price.toString();
  const needed = shortest.includes('.') ? shortest.length - shortest.indexOf('.') - 1 : 0;
  const text = price.toFixed(Math.min(grid.decimals, needed + extraDecimals));
  return ticks === 0 && signedZero ? `-${text}` : text;
}

/** Valid plain rows: increasing times in any offset, prices on the grid (negative ones too), volumes up to 15 digits. */
const plainFile = fc
  .record({
    grid: fc.constantFrom(...GRIDS),
    order: fc.shuffledSubarray(['t', 'o', 'h', 'l', 'c', 'v', 'unused'], { minLength: 7, maxLength: 7 }),
    crlf: fc.boolean(),
    trailingNewline: fc.boolean(),
    rows: fc.array(
      fc.record({
        step: fc.integer({ min: 1, max: 3 * 86_400 }),
        offset: fc.constantFrom(0, 0, 60, -300, 330, 345, -570, 23 * 60 + 59, -(23 * 60 + 59)),
        zulu: fc.boolean(),
        low: fc.integer({ min: -50_000, max: 50_000 }),
        up: fc.nat({ max: 40 }),
        down: fc.nat({ max: 40 }),
        extra: fc.nat({ max: 3 }),
        signedZero: fc.boolean(),
        volume: fc.oneof(fc.nat({ max: 1000 }), fc.integer({ min: 0, max: 999_999_999_999_999 })),
      }),
      { minLength: 1, maxLength: 40 },
    ),
  })
  .map(({ grid, order, crlf, trailingNewline, rows }) => {
    let time = Date.UTC(1999, 11, 30, 23, 0, 0);
    const lines = rows.map((r) => {
      time += r.step * 1000;
      const price = (ticks: number) => priceText(grid, ticks, r.extra, r.signedZero);
      const cells: Record<string, string> = {
        t: isoWithOffset(time, r.offset, r.zulu),
        o: price(r.low + r.down),
        h: price(r.low + r.up + r.down),
        l: price(r.low),
        c: price(r.low + Math.min(r.up, r.down)),
        v: String(r.volume),
        unused: 'any "text", here',
      };
      return order.map((name) => cells[name]!.replace(',', ';')).join(',');
    });
    const eol = crlf ? '\r\n' : '\n';
    return { grid, text: [order.join(','), ...lines].join(eol) + (trailingNewline ? eol : '') };
  });

describe('the byte-level fast path', () => {
  it('reads every plain row itself (any grid, negative prices, fewer decimals than the grid, offsets, big volumes, any column order) and equals the whole-file reader', () => {
    fc.assert(
      fc.property(plainFile, fc.array(fc.nat(), { maxLength: 6 }), ({ grid, text }, cutSeeds) => {
        const bytes = Buffer.from(text, 'utf8');
        const cuts = cutSeeds.map((s) => s % (bytes.length + 1));
        const { reader, read } = streamedReader(bytes, cuts, grid, 'plain.csv');
        const outcome = outcomeOf(read);
        expect(outcome.ok).toBe(true);
        expect(outcome).toEqual(outcomeOf(() => reference.parseCsvBars(text, grid, 'plain.csv')));
        expect(reader.generalLines).toBe(0);
      }),
      { numRuns: 300 },
    );
  });

  it('leaves odd prices to the general path with the same outcome on every grid: more decimals than the grid, off-grid, exponents, tiny, signs, dots', () => {
    const odd = fc.constantFrom(
      '1.2500',
      '1.250000001',
      '-1.3',
      '+1.25',
      '1e2',
      '0.0000001',
      '-0',
      '-0.0',
      '1.',
      '.5',
      '-.5',
      '--1',
      '1234567',
      '999999.995',
      '0.005',
      '-999999.99',
      ' 1.25',
      '1.25 ',
    );
    fc.assert(
      fc.property(
        fc.constantFrom(...GRIDS),
        fc.array(fc.tuple(odd, fc.integer({ min: -400, max: 400 })), { minLength: 1, maxLength: 12 }),
        fc.array(fc.nat(), { maxLength: 4 }),
        (grid, cells, cutSeeds) => {
          const lines = cells.map(([cell, ticks], i) => {
            const plain = grid.toPrice(ticks).toString();
            return `2024-01-02T15:${two(i)}:00Z,${cell},${cell},${plain},${plain},1`;
          });
          const text = ['t,o,h,l,c,v', ...lines].join('\n');
          const bytes = Buffer.from(text);
          const cuts = cutSeeds.map((s) => s % (bytes.length + 1));
          expect(outcomeOf(() => streamed(bytes, cuts, grid, 'odd.csv'))).toEqual(
            outcomeOf(() => reference.parseCsvBars(text, grid, 'odd.csv')),
          );
        },
      ),
      { numRuns: 300 },
    );
  });

  it('reads a file whose fields share a cell (one price column for open, high, low and close)', () => {
    const text = ['when,price,size', '2024-01-02T15:00:00Z,100.25,3', '2024-01-02T15:01:00-01:00,-0.5,4'].join('\n');
    const { bars } = parseCsvBars(text, ES, 'ticks.csv', {
      columns: { time: 'when', open: 'price', high: 'price', low: 'price', close: 'price', volume: 'size' },
    });
    expect([...bars.time]).toEqual([Date.parse('2024-01-02T15:00:00Z'), Date.parse('2024-01-02T16:01:00Z')]);
    for (const column of [bars.open, bars.high, bars.low, bars.close]) expect([...column]).toEqual([401, -2]);
    expect([...bars.volume]).toEqual([3, 4]);
  });

  it('reads the real ES file without the general path', () => {
    const reader = new CsvBarsReader(ES, ES_CSV);
    reader.push(readFileSync(ES_CSV));
    reader.end();
    expect(reader.generalLines).toBe(0);
  });
});

describe('a large file read on two cores', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'tickline-csv-parallel-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  let n = 0;
  /** The middle of the file, as the worker would pick it had it started before the reading thread. */
  const MIDDLE: CsvSplit = { stepBytes: 1, firstSteps: 0 };
  /**
   * The file read by one thread and by two (every file counts as large here, split as `split` says); both
   * outcomes and the threads used.
   */
  async function bothWays(
    text: string,
    grid: PriceGrid,
    split: CsvSplit = MIDDLE,
  ): Promise<{ one: Outcome; two: Outcome; threads: number | undefined }> {
    const file = path.join(dir, `f${n++}.csv`);
    writeFileSync(file, text);
    let threads: number | undefined;
    const two = await (async (): Promise<Outcome> => {
      try {
        const read = await loadCsvBars(file, grid, 'x.csv', {}, 1, split);
        threads = read.threads;
        return outcomeOf(() => read);
      } catch (error) {
        return outcomeOf(() => {
          throw error;
        });
      }
    })();
    return { one: outcomeOf(() => readCsvBars(file, grid, 'x.csv')), two, threads };
  }

  it('gives the columns and contract changes of one thread wherever the file is split, and the worker reads every line of its first part', async () => {
    await fc.assert(
      fc.asyncProperty(plainFile, fc.double({ min: 0, max: 1, noNaN: true }), async ({ grid, text }, where) => {
        // This thread keeps `firstSteps` bytes and half of the rest; the worker starts with the other half.
        const size = Buffer.byteLength(text);
        const firstSteps = Math.floor(where * size);
        const { one, two, threads } = await bothWays(text, grid, { stepBytes: 1, firstSteps });
        expect(two).toEqual(one);
        const bytes = Buffer.from(text);
        const dataStart = bytes.indexOf(10) + 1;
        const split = Math.max(dataStart, firstSteps + Math.ceil((size - firstSteps) / 2));
        let workerLines = 0;
        for (let p = dataStart; p < size; p = bytes.indexOf(10, p) < 0 ? size : bytes.indexOf(10, p) + 1) {
          const end = bytes.indexOf(10, p) < 0 ? size : bytes.indexOf(10, p);
          if (p >= split && bytes.toString('utf8', p, end).trim() !== '') workerLines++;
        }
        expect(threads).toBe(workerLines > 0 ? 2 : 1);
      }),
      { numRuns: 25 },
    );
    // A worker per read: a fraction of a second each when it runs the sources through tsx.
  }, 60_000);

  it('gives the columns of one thread when the threads hand their rests over in small steps', async () => {
    await fc.assert(
      fc.asyncProperty(plainFile, fc.integer({ min: 1, max: 64 }), async ({ grid, text }, stepBytes) => {
        const { one, two } = await bothWays(text, grid, { stepBytes });
        expect(two).toEqual(one);
      }),
      { numRuns: 10 },
    );
  }, 60_000);

  /** A new file of this text. */
  function fileOf(text: string): string {
    const file = path.join(dir, `f${n++}.csv`);
    writeFileSync(file, text);
    return file;
  }

  /**
   * The file read in parts in this thread: this thread's part first (it then takes over halves of the
   * worker's until one step is left), then the worker's; the parts joined, or `fallback` when the join
   * reads the file again.
   */
  function readInParts(
    file: string,
    grid: PriceGrid,
    stepBytes: number,
    where: number,
    fallback: () => CsvBars,
  ): LoadedCsvBars {
    const bytes = readFileSync(file);
    const text = bytes.toString('utf8');
    const steps = Math.ceil(bytes.length / stepBytes);
    const claims = newClaims(steps, Math.floor(where * steps));
    // A byte a line: rooms far larger than the parts, so no part runs into the next.
    const capacity = Math.ceil(bytes.length * 1.1) + 4096;
    const memory = new SharedArrayBuffer(capacity * 6 * 8);
    const context: PartContext = {
      displayName: 'x.csv',
      tickSize: grid.tickSize,
      tickValue: grid.tickValue,
      options: {},
      header: text.slice(0, text.indexOf('\n')).replace(/\r$/, ''),
      size: bytes.length,
      dataStart: bytes.indexOf(10) + 1,
      bytesPerLine: 1,
      stepBytes,
      claims: claims.buffer as SharedArrayBuffer,
      memory,
      capacity,
    };
    const fd = openSync(file, 'r');
    try {
      const first = new CsvBarsReader(grid, 'x.csv', undefined, {}, sharedColumns(memory, capacity, 0, capacity));
      const parts = [...readParts(fd, 0, context, first, true), ...readParts(fd, 1, context, undefined, true)];
      return joinParts(memory, capacity, parts, 2, () => ({ ...fallback(), threads: 1 }));
    } finally {
      closeSync(fd);
    }
  }

  it('joins parts handed over at any step into the columns of one thread', () => {
    fc.assert(
      fc.property(
        plainFile,
        fc.integer({ min: 1, max: 50 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        ({ grid, text }, stepBytes, where) => {
          const file = fileOf(text);
          const joined = outcomeOf(() =>
            readInParts(file, grid, stepBytes, where, () => {
              throw new Error('read again in one thread');
            }),
          );
          expect(joined).toEqual(outcomeOf(() => readCsvBars(file, grid, 'x.csv')));
        },
      ),
      { numRuns: 200 },
    );
  });

  it('joins the contract months of parts handed over at any step, and reads a file with problems again, as one thread', () => {
    fc.assert(
      fc.property(
        document.filter((text) => text.includes('\n')),
        fc.integer({ min: 1, max: 50 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (text, stepBytes, where) => {
          const file = fileOf(text);
          const one = () => readCsvBars(file, ES, 'x.csv');
          expect(outcomeOf(() => readInParts(file, ES, stepBytes, where, one))).toEqual(outcomeOf(one));
        },
      ),
      { numRuns: 200 },
    );
  });

  it('hands out every step once, each part a run of steps, however the two threads interleave', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 60 }),
        fc.option(fc.nat({ max: 70 }), { nil: undefined }),
        fc.array(fc.boolean(), { maxLength: 400 }),
        (steps, firstSteps, schedule) => {
          const claims = newClaims(steps, firstSteps);
          const takeOver = [firstSteps === undefined, true];
          const read = new Array<number>(steps).fill(0);
          // Per thread: the steps of its current part, and its finished parts as [first, last] steps.
          // This thread starts with its part from step 0; the worker with none (or a test's).
          const current: (number[] | undefined)[] = [[], undefined];
          const parts: [number, number][] = [];
          const done = [false, false];
          const close = (thread: 0 | 1) => {
            const part = current[thread];
            if (part !== undefined && part.length > 0) {
              for (let k = 1; k < part.length; k++) expect(part[k]).toBe(part[k - 1]! + 1);
              parts.push([part[0]!, part.at(-1)!]);
            }
            current[thread] = undefined;
          };
          let turn = 0;
          while (!done[0] || !done[1]) {
            const thread: 0 | 1 = done[0] ? 1 : done[1] ? 0 : schedule[turn++ % Math.max(1, schedule.length)] ? 1 : 0;
            const take = takeWork(claims, thread, takeOver[thread]);
            if (take.kind === 'step') {
              read[take.step]!++;
              (current[thread] ??= []).push(take.step);
            } else {
              close(thread);
              if (take.kind === 'done') done[thread] = true;
              else {
                expect(thread === 0 && firstSteps !== undefined).toBe(false);
                read[take.from]!++;
                current[thread] = [take.from];
              }
            }
          }
          expect(read).toEqual(new Array(steps).fill(1));
          // The parts tile the steps.
          parts.sort((a, b) => a[0] - b[0]);
          parts.forEach((part, k) => expect(part[0]).toBe(k === 0 ? 0 : parts[k - 1]![1] + 1));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('reads the whole file in this thread, as one, when it has claimed every step before the worker runs', async () => {
    await fc.assert(
      fc.asyncProperty(plainFile, async ({ grid, text }) => {
        const { one, two, threads } = await bothWays(text, grid, {});
        expect(two).toEqual(one);
        expect(threads).toBe(1);
      }),
      { numRuns: 5 },
    );
  }, 60_000);

  it('words problems anywhere, rows out of order across the middle and contract months exactly as one thread', async () => {
    await fc.assert(
      fc.asyncProperty(document, async (text) => {
        const { one, two } = await bothWays(text, ES);
        expect(two).toEqual(one);
      }),
      { numRuns: 30 },
    );
    const rows = (from: number, count: number) =>
      Array.from(
        { length: count },
        (_, i) =>
          `${new Date(Date.UTC(2024, 0, 2) + (from + i) * 60_000).toISOString()},1,2,1,2,5,${from + i < 6 ? 'Z3' : 'H4'}`,
      );
    const backwards = ['t,o,h,l,c,v,contract', ...rows(0, 5), ...rows(3, 5)].join('\n');
    const result = await bothWays(backwards, ES);
    expect(result.one.ok).toBe(false);
    expect(result.two).toEqual(result.one);
    const months = await bothWays(['t,o,h,l,c,v,contract', ...rows(0, 12)].join('\n'), ES);
    expect(months.threads).toBe(2);
    expect(months.two).toEqual(months.one);
  }, 60_000);

  it('reads the real ES file on two threads as one does', async () => {
    const read = await loadCsvBars(ES_CSV, ES, ES_CSV, {}, 1, { stepBytes: 1 << 16, firstSteps: 2 });
    expect(read.threads).toBe(2);
    expect(outcomeOf(() => read)).toEqual(outcomeOf(() => readCsvBars(ES_CSV, ES)));
  });
});
