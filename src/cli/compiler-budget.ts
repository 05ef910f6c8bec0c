/**
 * V8's inlining budget for the tickline process.
 *
 * An order of a backtest passes through a dozen small parts (the router, the guard, the venue and its book,
 * the bridge, the accounting, the order, fill and trade columns), each a few calls deep. V8's optimizing
 * compiler inlines callees into a function until their bytecode adds up to 920 bytes (its default
 * `--max-inlined-bytecode-size-cumulative`); the order path's functions reach that, and their remaining
 * calls stay calls, whose arguments and objects then cannot be taken apart. Raised to 2,000, a 1 M-bar
 * backtest took about a tenth less time (docs/bench.md, issue 30's tenth turn), its first run in a fresh
 * process as long as before.
 *
 * The setting is the process's, so the command line sets it for its own process (sweep threads share it);
 * the engine, which may run inside another program, leaves its host's compiler alone.
 */
import v8 from 'node:v8';

export const INLINING_BUDGET_FLAG = '--max-inlined-bytecode-size-cumulative';
export const INLINING_BUDGET = 2_000;

/**
 * Raises V8's inlining budget to INLINING_BUDGET, before the code it concerns is compiled; a budget given to
 * node on its command line (`execArgv`) is left as it is.
 */
export function raiseInliningBudget(execArgv: readonly string[] = process.execArgv): void {
  if (!inliningBudgetGiven(execArgv)) v8.setFlagsFromString(`${INLINING_BUDGET_FLAG}=${INLINING_BUDGET}`);
}

/** Whether node's own arguments set the inlining budget (V8 reads - and _ in a flag's name alike). */
export function inliningBudgetGiven(execArgv: readonly string[]): boolean {
  return execArgv.some((arg) => arg.split('=')[0]!.replaceAll('_', '-') === INLINING_BUDGET_FLAG);
}
