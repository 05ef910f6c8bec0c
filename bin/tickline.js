#!/usr/bin/env node
// The CLI is TypeScript run through tsx's loader, which also lets quants load strategy files written in
// TypeScript without a build step.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/cli/main.ts');
process.exitCode = await main(process.argv.slice(2));
