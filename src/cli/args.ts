/**
 * Every command parses its flags here, so an unknown or malformed flag is a usage error (exit 2, with
 * the command's usage) in every command alike, never a stack trace.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { UsageError } from './exit.ts';

export type ParseArgsOptionsConfig = NonNullable<ParseArgsConfig['options']>;

/** What `parseArgs` returns for the flags `O`. */
export type FlagValues<O extends ParseArgsOptionsConfig> = ReturnType<
  typeof parseArgs<{ options: O; strict: true; allowPositionals: false }>
>['values'];

/** The flags' values; `--help` and `-h` are added to every command and come back as `help`. */
export function parseCommandArgs<const O extends ParseArgsOptionsConfig>(
  args: string[],
  options: O,
  usage: string,
): FlagValues<O & typeof HELP> {
  return parseCommandLine(args, options, usage, 0).values;
}

/** The flags' values and up to `maxPositionals` arguments that are not flags (`tickline init [dir]`). */
export function parseCommandLine<const O extends ParseArgsOptionsConfig>(
  args: string[],
  options: O,
  usage: string,
  maxPositionals: number,
): { values: FlagValues<O & typeof HELP>; positionals: string[] } {
  let parsed: { values: unknown; positionals: string[] };
  try {
    parsed = parseArgs({ args, options: { ...options, ...HELP }, strict: true, allowPositionals: maxPositionals > 0 });
  } catch (error) {
    throw new UsageError(`${(error as Error).message}\n\n${usage}`);
  }
  if (parsed.positionals.length > maxPositionals)
    throw new UsageError(`unexpected argument '${parsed.positionals[maxPositionals]}'\n\n${usage}`);
  return { values: parsed.values as FlagValues<O & typeof HELP>, positionals: parsed.positionals };
}

const HELP = { help: { type: 'boolean', short: 'h' } } as const;
