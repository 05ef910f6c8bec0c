// Preloaded into a measured child process: reports its peak resident set size when it exits.
process.on('exit', () => process.stderr.write(`\nMAXRSS_KIB ${process.resourceUsage().maxRSS}\n`));
