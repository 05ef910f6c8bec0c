await import('../src/adapters/backtest/optimize.ts');
const c = process.cpuUsage(); const t0 = performance.now();
await import('../src/adapters/gateway/trading.ts');
const d = process.cpuUsage(c);
console.log('marginal trading.ts', (performance.now() - t0).toFixed(0), 'ms wall', ((d.user + d.system) / 1000).toFixed(0), 'ms cpu');
