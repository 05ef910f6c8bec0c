import { NEVER, map, filter } from 'rxjs';
import { z } from 'zod';
import { defineStrategy } from '../src/engine/strategy.ts';
import { crossover, sma, indicator } from '../src/engine/indicators.ts';
import { runBacktest } from '../src/adapters/backtest/run.ts';
import { AccountConfig } from '../src/adapters/backtest/config.ts';
import { CONTRACT, MINUTE, referenceBars } from './reference.ts';
const mode = process.argv[2];
const strategy = defineStrategy({
  name: 'x', params: z.object({}),
  run: ({ bars }) => mode === 'never' ? NEVER : mode === 'ind' ? bars().pipe(indicator(sma(10)), map(() => { throw 1; }), ) as never : bars().pipe(crossover(sma(10), sma(30)), filter(() => false)) as never,
});
const bars = referenceBars(1_000_000);
for (let r = 0; r < 6; r++) {
  const t = performance.now();
  runBacktest({ contract: CONTRACT, bars, dataTimeframe: MINUTE, timeframe: MINUTE, strategy, params: {}, account: AccountConfig.parse({}), risk: {}, fills: { slippageTicks: 0, feePerContractPerSide: 0 }, recordEquity: false });
  console.log('run', (performance.now() - t).toFixed(0));
}
