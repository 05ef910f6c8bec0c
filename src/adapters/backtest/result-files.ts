/**
 * The result files of a backtest, each written as a stream (trades, orders and decisions row by row, the
 * equity curve at the rows `outputs.equity` chooses), so the output phase is linear in what it writes and
 * never holds a whole file as one string. The same outcome always gives the same bytes.
 */
import { copyFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { writeReport } from '../../report/html.ts';
import { evaluationJson } from '../../report/evaluation-report.ts';
import { cents } from '../../report/statistics.ts';
import { analyseTrades, type TradeFacts } from '../../report/trade-analysis.ts';
import type { ClosedTrade } from '../../report/report-types.ts';
import type { OrderRecord } from './venue-book.ts';
import type { BacktestOutcome } from './definition-run.ts';
import { decisionsCsvLines } from './decisions-csv.ts';
import { z } from 'zod';
import {
  equityRows,
  IsoTimeFormatter,
  JsonArrayText,
  rowSerializer,
  writeEquityCsv,
  writeJson,
  writeJsonArray,
  writeStreamed,
  type JsonLayout,
} from './outputs.ts';

export interface WrittenFiles {
  readonly dir: string;
  readonly report: string;
  readonly files: readonly string[];
}

const TRADES_CSV_HEADER =
  'contractId,side,size,entryTime,exitTime,entryPrice,exitPrice,pnl,fees,net,durationSeconds,maeTicks,mfeTicks,mae,mfe,label';

/** A CSV field: quoted (quotes doubled) when it holds a comma, a quote or a line break. */
function csvField(text: string): string {
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** A round turn as trades.json and trades.csv hold it: prices as decimals, times ISO, money in cents. */
export const TradeRow = z.strictObject({
  contractId: z.string(),
  side: z.enum(['long', 'short']),
  size: z.number(),
  entryTime: z.string(),
  exitTime: z.string(),
  entryPrice: z.number(),
  exitPrice: z.number(),
  pnl: z.number(),
  fees: z.number(),
  net: z.number(),
  /** Exit time minus entry time, in seconds. */
  durationSeconds: z.number(),
  /** Maximum adverse and favourable excursion per contract, in ticks (<= 0, >= 0), and in money for the size. */
  maeTicks: z.number(),
  mfeTicks: z.number(),
  mae: z.number(),
  mfe: z.number(),
  /** The entry's label (the intent's `label`), null without one. */
  label: z.string().nullable(),
});
export type TradeRow = z.infer<typeof TradeRow>;

/** An order as orders.json holds it (the order list, in placement order). */
export const OrderRow = z.strictObject({
  id: z.string(),
  contractId: z.string(),
  side: z.string(),
  size: z.number(),
  type: z.string(),
  role: z.string(),
  parentId: z.string().nullable(),
  limitPrice: z.number().nullable(),
  stopPrice: z.number().nullable(),
  trailPrice: z.number().nullable(),
  placedAt: z.string(),
  state: z.string(),
  fillPrice: z.number().nullable(),
  fillTime: z.string().nullable(),
  modifies: z.number(),
});
export type OrderRow = z.infer<typeof OrderRow>;

const tradeJson = rowSerializer(TradeRow);
const orderJson = rowSerializer(OrderRow);

/** Write every result file into `dir`. */
export async function writeBacktestOutputs(dir: string, outcome: BacktestOutcome): Promise<WrittenFiles> {
  mkdirSync(dir, { recursive: true });
  const { result, statistics } = outcome;
  const layout: JsonLayout = outcome.outputs.json;
  const grid = outcome.contract.grid;
  // Averaged entries can be fractional ticks: print them with extra places instead of rounding to the grid.
  const price = (ticks: number): number =>
    Number.isInteger(ticks) ? grid.toPrice(ticks) : Number((ticks * grid.tickSize).toFixed(grid.decimals + 4));
  const iso = new IsoTimeFormatter();
  const at = (ms: number): string => iso.format(ms);
  const analysis = analyseTrades(outcome.report);
  // Each trade's facts made for its row only: no array of every trade's.
  const tradeRow = (t: ClosedTrade, f: TradeFacts): TradeRow => ({
    contractId: t.contractId,
    side: t.side === 'buy' ? 'long' : 'short',
    size: t.size,
    entryTime: at(t.entryTime),
    exitTime: at(t.exitTime),
    entryPrice: price(t.entryPrice),
    exitPrice: price(t.exitPrice),
    pnl: cents(t.pnl),
    fees: cents(t.fees),
    net: cents(t.pnl - t.fees),
    durationSeconds: (t.exitTime - t.entryTime) / 1000,
    maeTicks: f.maeTicks,
    mfeTicks: f.mfeTicks,
    mae: f.mae,
    mfe: f.mfe,
    label: t.label ?? null,
  });
  const orderRow = (o: OrderRecord): OrderRow => ({
    id: o.id,
    contractId: o.contractId,
    side: o.side,
    size: o.size,
    type: o.type,
    role: o.role,
    parentId: o.parentId,
    limitPrice: o.limitPrice === null ? null : price(o.limitPrice),
    stopPrice: o.stopPrice === null ? null : price(o.stopPrice),
    trailPrice: o.trailPrice === null ? null : price(o.trailPrice),
    placedAt: at(o.placedAt),
    state: o.state,
    fillPrice: o.fillPrice === null ? null : price(o.fillPrice),
    fillTime: o.fillTime === null ? null : at(o.fillTime),
    modifies: o.modifies,
  });
  const summary = {
    name: outcome.name,
    title: outcome.title,
    data: outcome.history.description,
    bars: result.bars,
    orderListHash: result.orderListHash,
    passed: result.passed,
    verdict: result.verdict,
    startingBalance: result.startingBalance,
    endingBalance: cents(result.endingBalance),
    endingEquity: cents(result.endingEquity),
    openPosition: result.openPosition,
    rejectedIntents: result.rejectedIntents,
    rejections: result.rejections,
    violations: result.violations.length,
    rolls: result.rolls.length,
    gaps: result.gaps.length,
    closestApproach: result.closestApproach.map((a) => ({
      rule: a.rule,
      minRoom: cents(a.minRoom),
      time: a.time === null ? null : at(a.time),
    })),
  };
  const file = (name: string) => path.join(dir, name);
  const written: string[] = [];
  const json = (name: string, value: unknown) => {
    writeJson(file(name), value, layout);
    written.push(name);
  };

  // Both trade files in one pass: each trade's row (its times and prices as text) is made once.
  writeStreamed(file('trades.csv'), (csvFile) =>
    writeStreamed(file('trades.json'), (jsonFile) => {
      csvFile.write(`${TRADES_CSV_HEADER}\n`);
      const array = new JsonArrayText(jsonFile, layout, tradeJson);
      let i = 0;
      for (const trade of outcome.report.trades) {
        const t = tradeRow(trade, analysis.fact(i++, trade));
        csvFile.write(
          `${t.contractId},${t.side},${t.size},${t.entryTime},${t.exitTime},${t.entryPrice},${t.exitPrice},${t.pnl},${t.fees},${t.net},${t.durationSeconds},${t.maeTicks},${t.mfeTicks},${t.mae},${t.mfe},${t.label === null ? '' : csvField(t.label)}\n`,
        );
        array.add(t);
      }
      array.end();
    }),
  );
  writeJsonArray(file('orders.json'), result.eachOrder?.() ?? result.orders, orderRow, layout, orderJson);
  written.push('trades.csv', 'trades.json', 'orders.json');
  json('violations.json', result.violations);
  json('statistics.json', statistics);
  json('daily.json', statistics.daily);
  json('daystats.json', statistics.dayStats);
  json('summary.json', summary);
  if (outcome.decisionsFile !== undefined) {
    // Written while the run went; elsewhere when the outputs go to another folder than it was told.
    if (path.resolve(outcome.decisionsFile) !== path.resolve(file('decisions.csv')))
      copyFileSync(outcome.decisionsFile, file('decisions.csv'));
  } else {
    writeStreamed(file('decisions.csv'), (out) => {
      for (const line of decisionsCsvLines(result.decisions, grid)) out.write(line);
    });
  }
  written.push('decisions.csv');
  json(
    'rolls.json',
    result.rolls.map((r) => ({ time: at(r.time), from: r.from, to: r.to, position: r.position, action: r.action })),
  );
  json(
    'gaps.json',
    result.gaps.map((g) => ({
      from: at(g.from),
      to: at(g.to),
      hours: Number(((g.to - g.from) / 3_600_000).toFixed(2)),
      flattened: g.flattened,
    })),
  );
  if (outcome.report.evaluation !== undefined) json('evaluation.json', evaluationJson(outcome.report.evaluation));
  if (outcome.report.strategies !== undefined) json('strategies.json', outcome.report.strategies);
  if (outcome.equityFile !== undefined) {
    // Written while the run streamed; elsewhere when the outputs go to another folder than it was told.
    if (path.resolve(outcome.equityFile) !== path.resolve(file('equity.csv')))
      copyFileSync(outcome.equityFile, file('equity.csv'));
  } else if (outcome.equityRows !== undefined) {
    writeEquityCsv(file('equity.csv'), outcome.equityRows);
  } else {
    writeEquityCsv(
      file('equity.csv'),
      equityRows(
        result.equity,
        outcome.outputs.equity,
        Array.from(outcome.report.trades, (t) => t.exitTime),
        result.riskConfig.tradingDay,
      ),
    );
  }
  written.push('equity.csv');
  const reportPath = file('report.html');
  await writeReport(reportPath, outcome.report, statistics, { analysis });
  return { dir, report: reportPath, files: [...written, 'report.html'] };
}
