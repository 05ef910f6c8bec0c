// Worker threads do not inherit the parent's `--import tsx` hooks (Node 20), so each worker registers
// tsx itself before importing its TypeScript entry.
import { register } from 'tsx/esm/api';
import { workerData } from 'node:worker_threads';

register();
await import(workerData.entry);
