import { describe, expect, it } from 'vitest';
import { EXIT_CODE_OF_KIND, ExitCode, UsageError, errorReport, exitCodeFor, kindOf } from '../../../src/cli/exit.ts';
import { ConfigError } from '../../../src/cli/config-loader.ts';
// Through the entry points, which stay put when modules move inside the package.
import { EngineError, StrategyError } from 'tickline';
import { CsvBarsError } from 'tickline/backtest';
import { GatewayError, GatewayRejection, LoginError, LoginErrorCode, PlaceErrorCode } from 'tickline/gateway';
import { JournalError } from 'tickline/live';

function nodeError(code: string, message: string): NodeJS.ErrnoException {
  return Object.assign(new Error(message), { code });
}

describe('exit codes: one table from the kind of error', () => {
  it('matches the README: 2 nothing was run, 1 a failure while running, 3 a rule broken', () => {
    expect(EXIT_CODE_OF_KIND).toEqual({ usage: 2, config: 2, input: 2, environment: 2, runtime: 1, ruleBreak: 3 });
  });

  it("gives each error its kind's code", () => {
    expect(exitCodeFor(new UsageError('--x'))).toBe(ExitCode.Usage);
    expect(exitCodeFor(new ConfigError([{ file: 'a.yaml', line: 1, path: 'x', message: 'm' }]))).toBe(ExitCode.Usage);
    expect(exitCodeFor(new CsvBarsError([{ file: 'a.csv', line: 2, column: 'c', message: 'm' }]))).toBe(ExitCode.Usage);
    expect(exitCodeFor(new StrategyError('STRATEGY_PARAMS', 'm'))).toBe(ExitCode.Usage);
    expect(exitCodeFor(new StrategyError('STRATEGY_FAILED', 'm'))).toBe(ExitCode.Failure);
    expect(exitCodeFor(new JournalError('m', 'JOURNAL_LOCKED'))).toBe(ExitCode.Usage);
    expect(exitCodeFor(new JournalError('m'))).toBe(ExitCode.Failure);
    expect(exitCodeFor(new EngineError('UNKNOWN_CONTRACT', 'm'))).toBe(ExitCode.Failure);
  });

  it("tells the gateway's setup faults from its faults while running, keeping its fields", () => {
    const refused = new GatewayError('CONNECTION_FAILED', 'no route', {
      endpoint: 'Auth/loginKey',
      outcome: 'not-sent',
    });
    expect([refused.kind, refused.code, refused.endpoint, refused.outcome]).toEqual([
      'environment',
      'CONNECTION_FAILED',
      'Auth/loginKey',
      'not-sent',
    ]);
    expect(kindOf(new LoginError('Auth/loginKey', LoginErrorCode, 3, 'bad key'))).toBe('environment');
    const rejected = new GatewayRejection('Order/place', PlaceErrorCode, 2, 'no');
    expect([rejected.kind, rejected.errorCode, rejected.errorMessage]).toEqual(['runtime', 2, 'no']);
    expect(exitCodeFor(rejected)).toBe(ExitCode.Failure);
  });

  it('knows a port that cannot be used; anything else unknown is a failure that asks for --verbose', () => {
    expect(exitCodeFor(nodeError('EADDRINUSE', 'listen EADDRINUSE: address already in use'))).toBe(ExitCode.Usage);
    expect(exitCodeFor(nodeError('ERR_SOCKET_BAD_PORT', 'bad port'))).toBe(ExitCode.Usage);
    const unknown = nodeError('ENOENT', "ENOENT: no such file or directory, open 'x'");
    expect(exitCodeFor(unknown)).toBe(ExitCode.Failure);
    expect(errorReport('paper', unknown, false)).toBe(
      "paper failed: ENOENT: no such file or directory, open 'x' (run again with --verbose for the stack trace)",
    );
    expect(exitCodeFor(new TypeError('x is undefined'))).toBe(ExitCode.Failure);
  });

  it('reports a mistake whole, a failure by its first line with its hint, the stack only when asked', () => {
    const config = new ConfigError([
      { file: 'a.yaml', line: 1, path: 'x', message: 'one' },
      { file: 'a.yaml', line: 2, path: 'y', message: 'two' },
    ]);
    expect(errorReport('backtest', config, false)).toBe('backtest: a.yaml:1: x: one\na.yaml:2: y: two');
    const login = new LoginError('Auth/loginKey', LoginErrorCode, 3, null);
    expect(errorReport('paper', login, false)).toMatch(
      /^paper: Auth\/loginKey failed: .*\(check TICKLINE_USERNAME and TICKLINE_API_KEY\)$/,
    );
    expect(errorReport('paper', login, true)).toMatch(/\n\s+at /);
  });
});
