// Preloaded into a measured child process: reports its peak resident set size when it exits. Worker
// threads inherit the preload; only the main thread reports (a worker's exit is not the process's).
// The peak is /proc/self/status's VmHWM where there is one: on Linux `maxRSS` also counts the parent's
// resident set at the fork (kept across exec), so a bench holding 50 M generated bars while it starts the
// command would report its own memory as the command's.
if (require('node:worker_threads').isMainThread) {
  process.on('exit', () => {
    let kib = process.resourceUsage().maxRSS;
    try {
      const hwm = /VmHWM:\s+(\d+) kB/.exec(require('node:fs').readFileSync('/proc/self/status', 'utf8'));
      if (hwm !== null) kib = Number(hwm[1]);
    } catch {
      // No /proc (not Linux): maxRSS it is.
    }
    process.stderr.write(`\nMAXRSS_KIB ${kib}\n`);
  });
}
