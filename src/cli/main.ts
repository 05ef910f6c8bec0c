/**
 * The `tickline` command: one file per subcommand in this folder, each exporting
 * `run(args: string[]): Promise<number>` and a one-line `summary`.
 */
import { EXIT_CODE_OF_KIND, ExitCode, cliRun, errorReport, exitCodeFor, wantsVerbose } from './exit.ts';
import { scrubSecrets } from '../engine/secrets.ts';
import { ownPackage } from './own-package.ts';
import { raiseInliningBudget } from './compiler-budget.ts';

interface CommandModule {
  run(args: string[]): Promise<number>;
  summary: string;
}

const COMMANDS: Record<string, () => Promise<CommandModule>> = {
  backtest: () => import('./backtest.ts'),
  optimize: () => import('./optimize.ts'),
  worker: () => import('./worker.ts'),
  sweep: () => import('./sweep.ts'),
  evaluate: () => import('./evaluate.ts'),
  'fetch-bars': () => import('./fetch-bars.ts'),
  import: () => import('./import.ts'),
  sim: () => import('./sim.ts'),
  paper: () => import('./paper.ts'),
  live: () => import('./live.ts'),
  run: () => import('./run-node.ts'),
  flatten: () => import('./flatten.ts'),
  init: () => import('./init.ts'),
};

async function usage(): Promise<string> {
  const lines = ['Usage: tickline <command> [options]   (tickline --version prints the version)', '', 'Commands:'];
  for (const [name, load] of Object.entries(COMMANDS)) {
    const summary = await load().then(
      (m) => m.summary,
      () => '(unavailable)',
    );
    lines.push(`  ${name.padEnd(12)} ${summary}`);
  }
  lines.push(
    '',
    "Run `tickline <command> --help` for a command's options. Errors are one line; --verbose (or",
    'TICKLINE_LOG_LEVEL=debug) adds the stack trace.',
  );
  return lines.join('\n');
}

export async function main(argv: string[]): Promise<number> {
  raiseInliningBudget();
  const [name, ...rest] = argv;
  if (name === '--version' || name === '-v') {
    process.stdout.write(`${ownPackage().version}\n`);
    return ExitCode.Ok;
  }
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(`${await usage()}\n`);
    return name === undefined ? EXIT_CODE_OF_KIND.usage : ExitCode.Ok;
  }
  const load = COMMANDS[name];
  if (!load) {
    process.stderr.write(`Unknown command "${name}".\n\n${await usage()}\n`);
    return EXIT_CODE_OF_KIND.usage;
  }
  const verbose = wantsVerbose(rest);
  const outerVerbose = cliRun.verbose;
  cliRun.verbose = verbose;
  try {
    return await (await load()).run(rest.filter((arg) => arg !== '--verbose'));
  } catch (error) {
    process.stderr.write(`${scrubSecrets(errorReport(name, error, verbose))}\n`);
    return exitCodeFor(error);
  } finally {
    cliRun.verbose = outerVerbose;
  }
}
