import { describe, expect, it } from 'vitest';
import { threadExecArgv } from '../../../src/data/worker-entry.ts';

describe("tickline's worker threads", () => {
  it("start with this process's flags but tsx's loader, which a thread does not need", () => {
    const tsx = [
      '--require',
      '/repo/node_modules/tsx/dist/preflight.cjs',
      '--import',
      'file:///repo/node_modules/tsx/dist/loader.mjs',
    ];
    expect(threadExecArgv(tsx)).toEqual([]);
    expect(threadExecArgv(['--import=tsx', '--loader', 'tsx/esm', '-r', 'tsx/cjs'])).toEqual([]);
    const own = ['--enable-source-maps', '--import', './my-hooks.mjs', '--require=dotenv/config', '--trace-warnings'];
    expect(threadExecArgv([...own.slice(0, 2), ...tsx, ...own.slice(2)])).toEqual(own);
    // A module of the same name elsewhere, or a flag that loads nothing, is kept.
    expect(threadExecArgv(['--import', './tsx-helpers.mjs', '--title', 'tsx'])).toEqual([
      '--import',
      './tsx-helpers.mjs',
      '--title',
      'tsx',
    ]);
  });
});
