// Entry of a sweep worker thread. Node 20 ignores `--import tsx` in a worker's execArgv, so the worker
// registers tsx's loader itself before importing the TypeScript module that does the work.
import { register } from 'tsx/esm/api';

register();
await import('./optimize-worker.ts');
