// Entry of the CSV reading worker run from the sources when dist/ has no up-to-date build: Node 20 ignores
// `--import tsx` in a worker's execArgv, so the worker registers tsx's loader itself first.
import { register } from 'tsx/esm/api';

register();
await import('./csv-worker.ts');
