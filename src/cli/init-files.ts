/**
 * What `tickline init` writes into a quant's project: the files themselves (an example strategy on the
 * public API, its unit test, a backtest and a paper config, tsconfig, .gitignore, README) and the
 * package.json fields it needs. Versions come from tickline's own package.json, so a scaffold installs
 * the rxjs, zod, TypeScript and vitest this release was tested with.
 */

export interface ScaffoldVersions {
  /** The dependency spec of tickline itself: `^0.1.0`, or `file:../tickline` from a checkout. */
  readonly tickline: string;
  readonly rxjs: string;
  readonly zod: string;
  readonly typescript: string;
  readonly vitest: string;
  readonly typesNode: string;
}

export const SCRIPTS: Readonly<Record<string, string>> = {
  backtest: 'tickline backtest --config backtest.yaml',
  optimize: 'tickline optimize --config backtest.yaml --grid fast=5,10,20 --grid slow=30,50',
  paper: 'tickline paper --config paper.yaml',
  test: 'tsc --noEmit && vitest run',
};

export function dependencies(v: ScaffoldVersions): Record<string, string> {
  return { tickline: v.tickline, rxjs: v.rxjs, zod: v.zod };
}

export function devDependencies(v: ScaffoldVersions): Record<string, string> {
  return { '@types/node': v.typesNode, typescript: v.typescript, vitest: v.vitest };
}

/**
 * npm runs only the install scripts a project allows: better-sqlite3 builds the SQLite binding of the
 * paper and live journal, esbuild sets up tsx's compiler; tickline's own `prepare` builds dist/ when it is
 * installed from a checkout.
 */
export function allowScripts(v: ScaffoldVersions): Record<string, boolean> {
  return { 'better-sqlite3': true, esbuild: true, ...(v.tickline.startsWith('file:') ? { tickline: true } : {}) };
}

/** A new project's package.json. */
export function packageJson(name: string, v: ScaffoldVersions): Record<string, unknown> {
  return {
    name,
    version: '0.1.0',
    private: true,
    type: 'module',
    scripts: { ...SCRIPTS },
    dependencies: dependencies(v),
    devDependencies: devDependencies(v),
    allowScripts: allowScripts(v),
  };
}

/** Every other file, by path relative to the project. */
export function projectFiles(name: string): Record<string, string> {
  return {
    'tsconfig.json': TSCONFIG,
    'strategies/example.ts': EXAMPLE_STRATEGY,
    'strategies/example.test.ts': EXAMPLE_TEST,
    'strategies/per-bar.ts': PER_BAR_STRATEGY,
    'strategies/per-bar.test.ts': PER_BAR_TEST,
    'backtest.yaml': BACKTEST_YAML,
    'paper.yaml': PAPER_YAML,
    '.gitignore': GITIGNORE,
    'README.md': readme(name),
  };
}

// tsx and vitest run the TypeScript, tsc only checks it: "preserve" checks imports as those tools resolve
// them, whatever the package's type.
const TSCONFIG = `{
  "compilerOptions": {
    "target": "ES2022",
    "module": "preserve",
    "lib": ["ES2023"],
    "types": ["node"],
    "strict": true,
    "noUncheckedIndexedAccess": true,
    "skipLibCheck": false,
    "allowImportingTsExtensions": true,
    "noEmit": true,
    "verbatimModuleSyntax": true,
    "isolatedModules": true
  }
}
`;

const EXAMPLE_STRATEGY = `/**
 * An example strategy: long when the fast EMA of the close crosses above the slow one, short when it
 * crosses below, always in the market after the first cross. Start your own from here.
 */
import { map } from 'rxjs';
import { z } from 'zod';
import { crossover, defineStrategy, ema, target } from 'tickline';

export default defineStrategy({
  name: 'example',
  description: 'EMA(fast)/EMA(slow) crossover of the close: cross up targets +size, cross down -size.',
  params: z
    .strictObject({
      fast: z.number().int().positive().default(10),
      slow: z.number().int().positive().default(30),
      size: z.number().int().positive().default(1),
    })
    .refine((p) => p.fast < p.slow, { message: 'fast must be shorter than slow' }),
  // Intents during the first bars are refused (WARM_UP): the slow EMA needs this many to mean anything.
  warmup: (p) => p.slow,
  run: ({ bars, params }) =>
    bars().pipe(
      crossover(ema(params.fast), ema(params.slow)),
      map((cross) => target(cross.direction === 'up' ? params.size : -params.size)),
    ),
});
`;

const PER_BAR_STRATEGY = `/**
 * A per-bar example: decides on each closed bar with \`onBar\`, where its position and working orders are
 * current. Buys an RSI dip while the close is above its trend SMA (sells the mirror), each entry with a
 * stop-loss / take-profit bracket, sized so a stop-out loses about \`riskPerTrade\` (and never more than the
 * account's limits leave room for). Time of day from \`ctx.session\`: no entry in the last
 * \`noEntryMinutes\` before the market closes, flat \`flatMinutes\` before it.
 */
import { z } from 'zod';
import { defineStrategy, flatten, marketOrder, onBar, RsiKernel, SmaKernel } from 'tickline';

export default defineStrategy({
  name: 'per-bar-example',
  description: 'RSI dips with the trend, bracketed, sized from the money risked; flat before the close.',
  params: z
    .strictObject({
      trend: z.number().int().min(2).default(200),
      rsiPeriod: z.number().int().min(2).default(14),
      oversold: z.number().min(0).max(100).default(35),
      overbought: z.number().min(0).max(100).default(65),
      riskPerTrade: z.number().positive().default(60),
      stopLossTicks: z.number().int().positive().default(12),
      takeProfitTicks: z.number().int().positive().default(24),
      noEntryMinutes: z.number().nonnegative().default(30),
      flatMinutes: z.number().nonnegative().default(10),
    })
    .refine((p) => p.oversold < p.overbought, { message: 'oversold must be below overbought' })
    .refine((p) => p.flatMinutes <= p.noEntryMinutes, { message: 'flatMinutes must not exceed noEntryMinutes' }),
  // RSI needs one bar more than its period (it works on changes).
  warmup: (p) => Math.max(p.trend, p.rsiPeriod + 1),
  run: (ctx) => {
    // State lives here, once per run; the handler below runs once per bar.
    const p = ctx.params;
    const trend = new SmaKernel(p.trend);
    const strength = new RsiKernel(p.rsiPeriod);
    const bracket = { stopLossTicks: p.stopLossTicks, takeProfitTicks: p.takeProfitTicks };
    return onBar(ctx, (bar) => {
      // Bar fields are ticks; the kernels give NaN while warming up, and NaN fails every comparison.
      const mean = trend.next(bar.close);
      const rsi = strength.next(bar.close);
      const session = ctx.session; // the market at this bar's end: open, minutesToClose, tradingDay
      const busy = ctx.position() !== 0 || ctx.openOrders().length > 0;
      if (!session.open) return;
      if (session.minutesToClose <= p.flatMinutes) return busy ? flatten() : undefined;
      if (busy || session.minutesToClose <= p.noEntryMinutes) return;
      // Contracts a stop-out of stopLossTicks costs riskPerTrade for, within the risk guard's room.
      const size = ctx.sizing.fromRisk(p.riskPerTrade, p.stopLossTicks);
      if (size === 0) return;
      if (bar.close > mean && rsi <= p.oversold) return marketOrder('buy', size, { bracket, label: 'dip' });
      if (bar.close < mean && rsi >= p.overbought) return marketOrder('sell', size, { bracket, label: 'rip' });
    });
  },
});
`;

const PER_BAR_TEST = `import { describe, expect, it } from 'vitest';
import { BacktestConfig, executeBacktest } from 'tickline/backtest';
import perBar from './per-bar.ts';

const config = BacktestConfig.parse({
  strategy: { name: perBar.name, params: {} },
  contract: 'MESZ5',
  data: { source: 'synthetic', seed: 7, sessions: 3 },
});

describe('per-bar example', () => {
  it('trades with brackets, never into the risk limits, and holds nothing over a close', async () => {
    const { result } = await executeBacktest(config, 'per-bar', { strategy: perBar, recordEquity: false });
    expect(result.trades.length).toBeGreaterThan(0);
    expect(result.orders.some((o) => o.role !== 'entry')).toBe(true);
    expect(result.rejections.RISK_EXCEEDS_ROOM ?? 0).toBe(0);
    expect(result.openPosition).toBe(0);
  });
});
`;

const EXAMPLE_TEST = `import { describe, expect, it } from 'vitest';
import { BacktestConfig, executeBacktest } from 'tickline/backtest';
import example from './example.ts';

// Two sessions of the embedded synthetic market: seeded, so the same run gives the same orders.
const config = BacktestConfig.parse({
  strategy: { name: example.name, params: { fast: 5, slow: 20 } },
  contract: 'MESZ5',
  data: { source: 'synthetic', seed: 7, sessions: 2 },
});

describe('example strategy', () => {
  it('trades the synthetic market, deterministically', async () => {
    const first = await executeBacktest(config, 'example', { strategy: example, recordEquity: false });
    const again = await executeBacktest(config, 'example', { strategy: example, recordEquity: false });
    expect(first.result.trades.length).toBeGreaterThan(0);
    expect(again.result.orderListHash).toBe(first.result.orderListHash);
  });

  it('refuses a fast EMA that is not shorter than the slow one', async () => {
    const wrong = { ...config, strategy: { name: example.name, params: { fast: 30, slow: 20 } } };
    await expect(executeBacktest(wrong, 'example', { strategy: example })).rejects.toThrow(/fast must be shorter than slow/);
  });
});
`;

const BACKTEST_YAML = `# \`npm run backtest\`: strategies/example.ts on tickline's embedded synthetic market (seeded: no network,
# no data files), with a 50K evaluation account's rules. Paths in this file are relative to it; results
# go to out/backtest/ in the working directory. Keys: see tickline's docs/backtest.md.
strategy:
  name: ./strategies/example.ts
  params:
    fast: 10
    slow: 30
contract: MESZ5           # Micro E-mini S&P 500: tick 0.25, tick value 1.25
timeframe: { unit: minute, unitNumber: 5 }
data:
  source: synthetic
  seed: 42
  sessions: 10            # ten Globex sessions of 1-minute bars
# To backtest a CSV file of bars (t,o,h,l,c,v) instead:
#   data: { source: csv, file: data/es-minutes.csv }
account:
  startingBalance: 50000
  dailyLossLimit: 1000
  maximumLossLimit: { amount: 2000, variant: trailingEndOfDay }
fills:
  slippageTicks: 1
  feePerContractPerSide: 0.37
`;

const PAPER_YAML = `# \`npm run paper\`: strategies/example.ts on tickline's local gateway simulator, started in-process with a
# clock 60 times faster than real time, for 60 one-minute bars. Paths in this file are relative to it.
# To paper trade on a gateway's simulated account, set gateway.url (and account.name) and export
# TICKLINE_USERNAME and TICKLINE_API_KEY. Keys: see tickline's docs/live.md.
strategy:
  name: ./strategies/example.ts
  id: example
  params: { fast: 5, slow: 20, size: 1 }
contracts: [F.US.MES]   # the front month of each moment, rolled (roll:); a contract id pins one month
timeframe: { unit: minute, unitNumber: 1 }
simulator:
  speed: 60
  seed: 7
journal: var/paper.sqlite
# Gateway (simulated) milliseconds: at speed 60, 15 s of market time is 250 ms of wall time.
poll:
  openOrdersMs: 15000
  ordersMs: 30000
  tradesMs: 15000
  positionsMs: 15000
  accountMs: 60000
  closeDelayMs: 1000
risk:
  maxPositionSize: 2
session:
  maxBars: 60
  flattenOnExit: true
`;

const GITIGNORE = `node_modules/
out/
var/
.cache/
.tickline/
`;

function readme(name: string): string {
  return `# ${name}

Trading strategies on [tickline](https://www.npmjs.com/package/tickline).

\`\`\`sh
npm install
npm run backtest   # strategies/example.ts on the synthetic market: summary, then out/backtest/report.html
npm test           # type check, then the strategies' unit tests (vitest)
npm run optimize   # a grid of the example's parameters, ranked by Sharpe ratio
npm run paper      # paper trading on tickline's local gateway simulator
\`\`\`

- \`strategies/\`: one module per strategy (\`export default defineStrategy({ name, params, run })\`), with
  its tests beside it. \`example.ts\` works on whole chunks of bars (the fast style for target positions);
  \`per-bar.ts\` decides bar by bar with \`onBar\` (orders with brackets, sizing from the money risked, the
  market's hours from \`ctx.session\`): \`npx tickline backtest --config backtest.yaml --strategy
  ./strategies/per-bar.ts\`.
- \`backtest.yaml\`, \`paper.yaml\`: what the scripts run. Paths written in a config file are relative to
  that file; paths given on the command line are relative to the working directory.
- \`npx tickline --help\` lists every command; \`npx tickline backtest --help\` one command's options.
`;
}
