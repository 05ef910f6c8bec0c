#!/usr/bin/env node
// The CLI is the compiled JavaScript in dist/ (`npm run build`; npm install and npm pack build it through
// `prepare`). tsx is loaded only when a strategy written in TypeScript is.
import { existsSync } from 'node:fs';

const entry = new URL('../dist/cli/main.js', import.meta.url);
if (!existsSync(entry)) {
  process.stderr.write('tickline: dist/ is missing: run `npm run build` in the tickline checkout\n');
  process.exit(1);
}
const { main } = await import(entry.href);
process.exitCode = await main(process.argv.slice(2));
