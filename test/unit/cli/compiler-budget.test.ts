import { describe, expect, it } from 'vitest';
import { INLINING_BUDGET_FLAG, inliningBudgetGiven } from '../../../src/cli/compiler-budget.ts';

describe("the command line's inlining budget", () => {
  it('is left as node was told, in either spelling', () => {
    expect(inliningBudgetGiven([`${INLINING_BUDGET_FLAG}=3000`])).toBe(true);
    expect(inliningBudgetGiven(['--max_inlined_bytecode_size_cumulative=500'])).toBe(true);
    expect(inliningBudgetGiven(['--import', 'tsx', `${INLINING_BUDGET_FLAG}=920`])).toBe(true);
  });
  it('is raised when node was told nothing of it, also beside flags whose names start the same', () => {
    expect(inliningBudgetGiven([])).toBe(false);
    expect(inliningBudgetGiven(['--max-inlined-bytecode-size=800', '--import', 'tsx'])).toBe(false);
    expect(inliningBudgetGiven(['--max-inlined-bytecode-size-cumulativeX=1'])).toBe(false);
  });
});
