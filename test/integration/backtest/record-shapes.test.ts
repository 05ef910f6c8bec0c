import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const FIXTURE = path.join(import.meta.dirname, 'fixtures', 'record-shapes-process.ts');

/**
 * Objects a run's result makes from its columns (orders, fills, decisions, trades) have the shapes of the
 * objects the engine itself makes on its hot path. A number read from a Float64Array is a heap number even
 * when whole, and stored in such a shape it widened a field from small integer to double for the whole
 * process: every later backtest ran two to three times slower (docs/bench.md, issue 30's sixth turn). V8
 * says when it widens a field (--trace-generalization; --no-sparkplug, with which the trace does not crash).
 */
describe('reading a run from its columns', () => {
  it('widens no field of a shape the engine makes (V8 traces each widening; one made on purpose shows the trace works)', () => {
    const child = spawnSync(
      process.execPath,
      ['--no-sparkplug', '--trace-generalization', '--import', 'tsx', FIXTURE],
      { encoding: 'utf8', timeout: 60_000, maxBuffer: 64 * 1024 * 1024 },
    );
    expect(child.status, child.stderr).toBe(0);
    const out = child.stdout;
    const start = out.indexOf('=== reading the run\n');
    const end = out.indexOf('=== read\n');
    expect(start).toBeGreaterThanOrEqual(0);
    expect(end).toBeGreaterThan(start);
    expect(out).toMatch(/=== done [1-9]\d* orders/);
    const between = out.slice(start, end).split('\n');
    // The control: a field that held a small integer, given a fraction.
    expect(between.some((line) => /^\[generalizing\]widenedOnPurpose:s\{.*->d\{/.test(line))).toBe(true);
    const widened = between.filter(
      (line) => /^\[generalizing\]\w+:s\{[^}]*\}->[dh]\{/.test(line) && line.includes('/src/'),
    );
    expect(widened).toEqual([]);
  });
});
