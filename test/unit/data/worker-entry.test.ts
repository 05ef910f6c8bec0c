import { describe, expect, it } from 'vitest';
import { threadExecArgv } from '../../../src/data/worker-entry.ts';

/** A thread that takes every flag: what is dropped is tsx's loader only. */
const every = () => true;

describe("tickline's worker threads", () => {
  it("start with this process's flags but tsx's loader, which a thread does not need", () => {
    const tsx = [
      '--require',
      '/repo/node_modules/tsx/dist/preflight.cjs',
      '--import',
      'file:///repo/node_modules/tsx/dist/loader.mjs',
    ];
    expect(threadExecArgv(tsx, every)).toEqual([]);
    expect(threadExecArgv(['--import=tsx', '--loader', 'tsx/esm', '-r', 'tsx/cjs'], every)).toEqual([]);
    const own = ['--enable-source-maps', '--import', './my-hooks.mjs', '--require=dotenv/config', '--trace-warnings'];
    expect(threadExecArgv([...own.slice(0, 2), ...tsx, ...own.slice(2)], every)).toEqual(own);
    // A module of the same name elsewhere, or a flag that loads nothing, is kept.
    expect(threadExecArgv(['--import', './tsx-helpers.mjs', '--conditions', 'tsx'], every)).toEqual([
      '--import',
      './tsx-helpers.mjs',
      '--conditions',
      'tsx',
    ]);
  });

  it('start without the flags a thread refuses, each asked about with its value; loaders are not asked about', () => {
    const asked: string[][] = [];
    const refusesV8 = (flag: readonly string[]) => {
      asked.push([...flag]);
      return !flag[0]!.startsWith('--max-');
    };
    expect(
      threadExecArgv(
        [
          '--max-old-space-size=8192',
          '--title',
          'sweep',
          '--import',
          './hooks.mjs',
          '--max-semi-space-size',
          '64',
          '--no-warnings',
        ],
        refusesV8,
      ),
    ).toEqual(['--title', 'sweep', '--import', './hooks.mjs', '--no-warnings']);
    expect(asked).toEqual([
      ['--max-old-space-size=8192'],
      ['--title', 'sweep'],
      ['--max-semi-space-size', '64'],
      ['--no-warnings'],
    ]);
  });

  it("drop what node's worker threads refuse (V8's flags, the process's own) and keep the rest", () => {
    expect(
      threadExecArgv([
        '--max-old-space-size=512',
        '--enable-source-maps',
        '--max-inlined-bytecode-size-cumulative=2000',
        '--stack-trace-limit=50',
        '--title=tickline',
        '--no-warnings',
      ]),
    ).toEqual(['--enable-source-maps', '--no-warnings']);
  });
});
