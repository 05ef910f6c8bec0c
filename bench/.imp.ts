const t0 = performance.now();
const which = process.argv[2]!;
await import(which);
console.log(which, (performance.now() - t0).toFixed(0), 'ms');
