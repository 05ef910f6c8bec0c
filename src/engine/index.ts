/** The engine's public surface: import from here in adapters, the CLI and strategies. */
export * from './types.ts';
export * from './ticks.ts';
export * from './trailing.ts';
export * from './timeframe.ts';
export { createLogger, silentLogger, type Logger } from './log.ts';
export * from './indicators.ts';
export * from './intents.ts';
export * from './trading-day.ts';
export * from './market-hours.ts';
export * from './account-rules.ts';
export * from './accounting.ts';
export * from './risk.ts';
export * from './strategy.ts';
export * from './on-bar.ts';
export * from './resample.ts';
export * from './runner.ts';
export * from './errors.ts';
export * from './pass-lock.ts';
