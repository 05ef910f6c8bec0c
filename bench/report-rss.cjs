// Preloaded into a measured child process: reports its peak resident set size when it exits. Worker
// threads inherit the preload; only the main thread reports (a worker's exit is not the process's).
if (require('node:worker_threads').isMainThread) {
  process.on('exit', () => process.stderr.write(`\nMAXRSS_KIB ${process.resourceUsage().maxRSS}\n`));
}
