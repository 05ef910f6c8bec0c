// Entry of a sweep worker run from the sources when dist/ has no up-to-date build. Node 20 ignores
// `--import tsx` in a worker's execArgv, so the worker registers tsx's loader itself before importing the
// TypeScript module that does the work.
import { register } from 'tsx/esm/api';

register();
const worker = await import('./sweep-worker.ts');
export default worker.default;
