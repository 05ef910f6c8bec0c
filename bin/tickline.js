#!/usr/bin/env node
// The CLI is the compiled JavaScript in dist/ (`npm run build`; npm install and npm pack build it through
// `prepare`). tsx is loaded only when a strategy written in TypeScript is.
let main;
try {
  ({ main } = await import('../dist/cli/main.js'));
} catch (error) {
  if (error?.code !== 'ERR_MODULE_NOT_FOUND' || !String(error.message).includes('/dist/cli/main.js')) throw error;
  process.stderr.write('tickline: dist/ is missing: run `npm run build` in the tickline checkout\n');
  process.exit(1);
}
process.exitCode = await main(process.argv.slice(2));
