/** The report's public surface: statistics, the terminal summary and the HTML report. */
export type * from './report-types.ts';
export { computeStatistics, cents, ratio, tradingDayConfig, TRADING_DAYS_PER_YEAR } from './statistics.ts';
export { headlineVerdict, renderSummary, statisticRows, type HeadlineVerdict } from './format.ts';
export { renderReport, writeReport, type RenderOptions } from './html.ts';
export { ReportInputError, validateReportInput } from './validate.ts';
export {
  analyseTrades,
  ExcursionTracker,
  tradeExcursions,
  type TradeAnalysis,
  type TradeBreakdown,
  type TradeExcursion,
  type TradeFacts,
} from './trade-analysis.ts';
