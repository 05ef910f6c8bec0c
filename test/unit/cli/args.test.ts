import { afterEach, describe, expect, it, vi } from 'vitest';
import { main } from '../../../src/cli/main.ts';
import { ExitCode } from '../../../src/cli/exit.ts';

const COMMANDS = ['backtest', 'optimize', 'fetch-bars', 'sim', 'paper', 'live', 'flatten', 'worker', 'sweep'];

afterEach(() => {
  vi.restoreAllMocks();
});

describe('every command parses its flags alike', () => {
  it.each(COMMANDS)('%s: an unknown flag is a usage error naming it, with the usage', async (command) => {
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    expect(await main([command, '--no-such-flag'])).toBe(ExitCode.Usage);
    const written = stderr.mock.calls.map((c) => String(c[0])).join('');
    expect(written).toContain("'--no-such-flag'");
    expect(written).toContain(`Usage: tickline ${command}`);
  });

  it.each(COMMANDS)('%s: -h prints the usage and exits 0', async (command) => {
    const stdout = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    expect(await main([command, '-h'])).toBe(ExitCode.Ok);
    expect(stdout.mock.calls.map((c) => String(c[0])).join('')).toContain(`Usage: tickline ${command}`);
  });
});
