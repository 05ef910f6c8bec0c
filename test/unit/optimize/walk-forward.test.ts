import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BacktestConfig } from '../../../src/adapters/backtest/backtest-config.ts';
import { loadHistory } from '../../../src/adapters/backtest/definition-run.ts';
import { resolveContract } from '../../../src/adapters/backtest/contract.ts';
import {
  runWalkForward,
  walkForwardFolds,
  WalkForwardError,
  type FoldPlan,
} from '../../../src/optimize/walk-forward.ts';
import { seenSpans } from './fixtures/recording-strategy.ts';

const arbPlan = fc.record({
  folds: fc.integer({ min: 1, max: 12 }),
  trainWindows: fc.integer({ min: 1, max: 6 }),
  mode: fc.constantFrom('rolling' as const, 'anchored' as const),
});

describe('walk-forward folds', () => {
  it('train strictly before their test window, test windows one after another to the end', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 200_000 }), arbPlan, (bars, plan) => {
        fc.pre(bars >= plan.folds + plan.trainWindows);
        const folds = walkForwardFolds(bars, plan);
        expect(folds).toHaveLength(plan.folds);
        for (const [k, fold] of folds.entries()) {
          const [trainStart, trainEnd] = fold.train;
          const [testStart, testEnd] = fold.test;
          expect(trainStart).toBeGreaterThanOrEqual(0);
          expect(trainEnd).toBeGreaterThan(trainStart);
          expect(testEnd).toBeGreaterThan(testStart);
          // No bar of the test window (nor any later bar) is in the training window.
          expect(trainEnd).toBeLessThanOrEqual(testStart);
          for (const later of folds.slice(k)) expect(trainEnd).toBeLessThanOrEqual(later.test[0]);
          if (k > 0) expect(testStart).toBe(folds[k - 1]!.test[1]);
          if (plan.mode === 'rolling') expect(trainEnd - trainStart).toBe(folds[0]!.train[1] - folds[0]!.train[0]);
          else expect(trainStart).toBe(0);
        }
        expect(folds[folds.length - 1]!.test[1]).toBe(bars);
      }),
      { numRuns: 500 },
    );
  });

  it('refuse plans the history is too short for', () => {
    expect(() => walkForwardFolds(5, { folds: 4, trainWindows: 3, mode: 'rolling' })).toThrow(WalkForwardError);
    expect(() => walkForwardFolds(100, { folds: 0, trainWindows: 3, mode: 'rolling' })).toThrow(WalkForwardError);
  });
});

describe('walk-forward runs', () => {
  const file = fileURLToPath(new URL('./fixtures/recording-strategy.ts', import.meta.url));
  const config = BacktestConfig.parse({
    strategy: { name: file, params: { size: 1 } },
    contract: 'MESZ5',
    data: { source: 'synthetic', seed: 11, sessions: 4, start: '2025-03-02' },
  });
  const grid = { fast: [3, 5, 8], slow: [13, 21] };

  it("never show a fold's search a bar of its test window, and stitch the folds' out-of-sample results", async () => {
    const history = await loadHistory(config, resolveContract(config.contract));
    const time = history.bars.time;
    await fc.assert(
      fc.asyncProperty(
        arbPlan.filter((p) => p.folds <= 4),
        async (plan: FoldPlan) => {
          const spans = seenSpans();
          spans.length = 0;
          const folds = walkForwardFolds(time.length, plan);
          const result = await runWalkForward({ config, name: 'wf' }, history, grid, {
            plan,
            method: 'grid',
            trials: 6,
            seed: 1,
            metric: 'netPnl',
            workers: 1,
          });
          // Each fold: its six training runs, then its test run (which starts with the strategy's warm-up).
          expect(spans).toHaveLength(plan.folds * 7);
          for (const [k, fold] of folds.entries()) {
            const runs = spans.slice(k * 7, k * 7 + 7);
            for (const training of runs.slice(0, 6)) {
              expect(training.first).toBe(time[fold.train[0]]);
              expect(training.last).toBe(time[fold.train[1] - 1]);
              expect(training.last).toBeLessThan(time[fold.test[0]]!);
            }
            expect(runs[6]!.last).toBe(time[fold.test[1] - 1]);
          }
          const tested = result.folds.filter((f) => f.test !== undefined);
          const sum = tested.reduce((s, f) => s + f.test!.netPnl, 0);
          expect(result.statistics.netPnl).toBeCloseTo(sum, 6);
          expect(result.statistics.trades).toBe(tested.reduce((n, f) => n + f.test!.trades, 0));
          const firstTest = time[folds[0]!.test[0]]!;
          for (let k = 0; k < result.equity.time.length; k++) {
            expect(result.equity.time[k]).toBeGreaterThanOrEqual(firstTest);
            if (k > 0) expect(result.equity.time[k]).toBeGreaterThanOrEqual(result.equity.time[k - 1]!);
          }
          for (const f of result.folds)
            expect(f.chosen === undefined || grid.fast.includes(f.chosen.fast as number)).toBe(true);
        },
      ),
      { numRuns: 6 },
    );
  });

  it('choose and test the same on two lanes as on one', async () => {
    const history = await loadHistory(config, resolveContract(config.contract));
    const options = {
      plan: { folds: 3, trainWindows: 2, mode: 'anchored' as const },
      method: 'tpe' as const,
      trials: 4,
      seed: 3,
      metric: 'sharpe' as const,
    };
    const one = await runWalkForward({ config, name: 'wf' }, history, grid, { ...options, workers: 1 });
    const two = await runWalkForward({ config, name: 'wf' }, history, grid, { ...options, workers: 2 });
    expect(two.folds.map((f) => [f.chosen, f.orderListHash])).toEqual(
      one.folds.map((f) => [f.chosen, f.orderListHash]),
    );
    expect(two.statistics).toEqual(one.statistics);
  });
});
