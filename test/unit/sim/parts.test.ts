import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CsvBarsError } from '../../../src/data/csv.ts';
import { ConfigError, parseConfig } from '../../../src/cli/config-loader.ts';
import { SimConfig, simOptions } from '../../../src/cli/sim.ts';
import { createClock } from '../../../src/sim/clock.ts';
import { openSimulator } from '../../../src/sim/index.ts';
import { RateLimiter } from '../../../src/sim/request-budget.ts';
import { SimRuleError, mllVariant } from '../../../src/sim/rule-templates.ts';

const dir = mkdtempSync(path.join(tmpdir(), 'tickline-sim-unit-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('clock', () => {
  it('stands still in manual mode until advanced', () => {
    const clock = createClock('manual', 1000, () => 5);
    expect(clock.now()).toBe(1000);
    clock.advance(250);
    expect(clock.now()).toBe(1250);
    expect(() => clock.advance(-1)).toThrow(RangeError);
  });

  it('runs accelerated from the start time', () => {
    let real = 0;
    const clock = createClock({ speed: 60 }, 10_000, () => real);
    real = 1000;
    expect(clock.now()).toBe(70_000);
  });
});

describe('maximum loss limit sources', () => {
  it('map spec 2.11 maximumSource and minimumSource onto the engine variants', () => {
    expect(mllVariant(0, null)).toBe('static');
    expect(mllVariant(1, null)).toBe('trailingEndOfDay');
    expect(mllVariant(1, 0)).toBe('trailingUntilLocked');
    expect(mllVariant(2, null)).toBe('trailingIntraday');
  });

  it('refuse combinations the engine has no variant for, naming the field', () => {
    expect(() => mllVariant(3, null)).toThrow(/maximumSource must be 0, 1 or 2, got 3/);
    expect(() => mllVariant(2, 0)).toThrow(/minimumSource 0 .* needs maximumSource 1/);
    expect(() => mllVariant(0, 0)).toThrow(SimRuleError);
    expect(() => mllVariant(1, 1)).toThrow(/minimumSource must be null or 0/);
  });
});

describe('rate limiter', () => {
  it('allows the budget per caller and bucket, then says how long to wait', () => {
    let now = 0;
    const limiter = new RateLimiter(
      { bars: { requests: 2, windowMs: 30_000 }, default: { requests: 1, windowMs: 60_000 } },
      () => now,
    );
    expect([limiter.take('a', 'bars'), limiter.take('a', 'bars'), limiter.take('a', 'bars')]).toEqual([0, 0, 30]);
    expect(limiter.take('b', 'bars')).toBe(0);
    expect(limiter.take('a', 'default')).toBe(0);
    now = 10_000;
    expect(limiter.take('a', 'bars')).toBe(20);
    now = 30_001;
    expect(limiter.take('a', 'bars')).toBe(0);
  });
});

describe("bar files (read with the backtest's CSV reader)", () => {
  it('refuses a replay file, reporting every bad line and column at once', () => {
    const file = path.join(dir, 'bad.csv');
    writeFileSync(
      file,
      't,o,h,l,c,v\n2025-01-01T00:00:00Z,1,2,1,2,5\n2025-01-01T00:01:00Z,1.1,2,1,2,5\n2025-01-01T00:00:30Z,1,2,1,2,5\nnot-a-time,1,2,1,2,5\n',
    );
    try {
      openSimulator({ market: { source: 'csv', path: file }, clock: 'manual' });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(CsvBarsError);
      const problems = (error as CsvBarsError).problems;
      expect(problems).toContainEqual(expect.objectContaining({ file, line: 3, column: 'o' }));
      expect(problems).toContainEqual(
        expect.objectContaining({
          file,
          line: 4,
          column: 't',
          message: expect.stringMatching(/not after the previous bar/),
        }),
      );
      expect(problems).toContainEqual(
        expect.objectContaining({ file, line: 5, column: 't', message: expect.stringMatching(/not an ISO 8601 time/) }),
      );
    }
  });

  it('replays a good file in ticks, taking the bar length from the smallest spacing', () => {
    const file = path.join(dir, 'good.csv');
    // Five-minute bars with a gap: the bar length is five minutes, not the gap.
    writeFileSync(
      file,
      't,o,h,l,c,v\n2025-01-01T00:00:00Z,1,2,0.75,1.5,5\n2025-01-01T00:05:00Z,1.5,2,1,2,7\n2025-01-01T01:00:00Z,2,2.25,2,2.25,3\n',
    );
    const start = Date.parse('2025-01-01T00:00:00Z');
    const sim = openSimulator({
      market: { source: 'csv', path: file },
      clock: 'manual',
      startTime: start + 2 * 3_600_000,
    });
    try {
      const market = sim.engine.market('CON.F.US.EP.Z25')!;
      const bars = market.bars(
        { unit: 'minute', unitNumber: 5 },
        start,
        start + 3_600_000,
        sim.engine.clock.now(),
        10,
        false,
      );
      expect(bars.map((b) => [b.t - start, b.l])).toEqual([
        [3_600_000, 8],
        [300_000, 4],
        [0, 3],
      ]);
      // Open through the whole second bar; closed in the gap after it, at that bar's close.
      expect(market.isOpen(start + 9 * 60_000)).toBe(true);
      expect(market.isOpen(start + 30 * 60_000)).toBe(false);
      expect(market.lastPrice(start + 30 * 60_000)).toBe(8);
    } finally {
      sim.close();
    }
  });
});

describe('sim config', () => {
  it('accepts the shipped config/sim.yaml', async () => {
    const { readFileSync } = await import('node:fs');
    const text = readFileSync(path.resolve(import.meta.dirname, '../../../config/sim.yaml'), 'utf8');
    expect(parseConfig(text, 'config/sim.yaml', SimConfig)).toMatchObject({
      port: 5005,
      market: { source: 'synthetic' },
    });
  });

  it('takes fills, pending answers and extra roots, and trades a root added there', () => {
    const text = [
      'fills: { spread: { type: fixed, ticks: 2 }, partialFills: false, queue: true }',
      'pending: { places: 0.1, cancels: 0.2, settleMs: 250 }',
      'roots:',
      '  - { root: FDAX, symbol: FDAX, title: DAX Futures, tickSize: 0.5, tickValue: 12.5, startPrice: 24000, cycle: HMUZ,',
      '      expiry: { rule: nthWeekday, nth: 3, weekday: friday }, listed: 3 }',
    ].join('\n');
    const config = parseConfig(text, 'sim.yaml', SimConfig);
    expect(config).toMatchObject({
      fills: { spread: { type: 'fixed', ticks: 2 }, partialFills: false, queue: true },
      pending: { places: 0.1, cancels: 0.2, settleMs: 250 },
    });
    const sim = openSimulator({
      ...simOptions(config),
      dbPath: ':memory:',
      clock: 'manual',
      startTime: Date.UTC(2026, 10, 23, 15),
    });
    try {
      expect(
        sim.engine
          .contractAvailable()
          .contracts.filter((c) => c.symbolId === 'F.US.FDAX')
          .map((c) => [c.id, c.activeContract]),
      ).toEqual([
        ['CON.F.US.FDAX.Z26', true],
        ['CON.F.US.FDAX.H27', false],
        ['CON.F.US.FDAX.M27', false],
      ]);
      expect(sim.engine.quote('CON.F.US.FDAX.Z26')).toMatchObject({ ask: expect.any(Number), bid: expect.any(Number) });
      const { bid, ask } = sim.engine.quote('CON.F.US.FDAX.Z26')!;
      expect(ask - bid).toBe(2);
    } finally {
      sim.close();
    }
    expect(() => parseConfig('roots: [{ root: X }]\n', 'sim.yaml', SimConfig)).toThrow(ConfigError);
  });

  it('reports unknown keys with the file and line, all at once', () => {
    const text = 'port: 5005\nprot: 1\nmarket:\n  source: synthetic\n  speed: 3\n';
    try {
      parseConfig(text, 'sim.yaml', SimConfig);
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      const message = (error as ConfigError).message;
      expect(message).toMatch(/sim\.yaml:2: prot: unknown key/);
      expect(message).toMatch(/sim\.yaml:5: market\.speed: unknown key/);
    }
  });
});
