import { spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const FIXTURE = path.join(import.meta.dirname, 'fixtures', 'record-shapes-process.ts');

/**
 * Objects a run's result makes from its columns (orders, fills, decisions, trades) have the shapes of the
 * objects the engine itself makes on its hot path. A number read from a Float64Array is a heap number even
 * when whole, and stored in such a shape it widened a field from small integer to double for the whole
 * process: every later backtest ran two to three times slower (docs/bench.md, issue 30's sixth turn). V8
 * says when it widens a field (--trace-generalization; --no-sparkplug, with which the trace does not crash;
 * --no-lazy-feedback-allocation, without which a widening at a function's first calls was not always traced).
 */
describe('reading a run from its columns', () => {
  it('widens no field of a shape the engine makes (V8 traces each widening; one made on purpose shows the trace works)', () => {
    // V8 prints its trace through the C library's buffer. To a pipe, which Node makes non-blocking, a full
    // pipe lost whole pieces of it under load; to a file it loses nothing.
    const folder = mkdtempSync(path.join(os.tmpdir(), 'tickline-shapes-'));
    const traceFile = path.join(folder, 'trace.txt');
    const out = openSync(traceFile, 'w');
    let child: ReturnType<typeof spawnSync>;
    try {
      child = spawnSync(
        process.execPath,
        ['--no-sparkplug', '--no-lazy-feedback-allocation', '--trace-generalization', '--import', 'tsx', FIXTURE],
        { encoding: 'utf8', timeout: 120_000, stdio: ['ignore', out, 'pipe'] },
      );
    } finally {
      closeSync(out);
    }
    const lines = readFileSync(traceFile, 'utf8').split('\n');
    rmSync(folder, { recursive: true, force: true });
    expect(child.status, String(child.stderr)).toBe(0);
    expect(String(child.stderr)).toMatch(/=== done [1-9]\d* orders/);
    // The control: a field that held a small integer, given a fraction.
    expect(lines.some((line) => /^\[generalizing\]widenedOnPurpose:s\{.*->d\{/.test(line))).toBe(true);
    // A widening names the field and the file it happened in. The fields below hold whole numbers in this
    // run's own objects (market orders without slippage or fees: sizes, whole ticks, counts); none may be
    // widened where objects are made from the columns. Money may widen by its value (a fraction, or -0 for
    // a trade closed at its entry price), as the engine's own objects widen it.
    const whole =
      'size|filledSize|modifies|limitPrice|stopPrice|trailPrice|fillPrice|price|fees|entryPrice|exitPrice|position';
    const widening = new RegExp(`^\\[generalizing\\](${whole}):s\\{[^}]*\\}->[dh]\\{`);
    const widened = lines.filter(
      (line) =>
        widening.test(line) &&
        /\/src\/(adapters\/backtest\/(order|decision)-columns|engine\/trade-columns)\.ts/.test(line),
    );
    expect(widened).toEqual([]);
  });
});
