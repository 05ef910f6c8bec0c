/**
 * The README's table of risk guard reason codes, rendered from the code. Run this file
 * (`node --import tsx test/unit/docs/reason-codes.ts`) to rewrite the table between its markers.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { reasonCodeTable } from '../../../src/engine/risk.ts';

export const README = path.resolve(import.meta.dirname, '../../../README.md');
export const START = '<!-- reason-codes:start -->';
export const END = '<!-- reason-codes:end -->';

export function reasonCodesMarkdown(): string {
  const rows = reasonCodeTable().map((r) => `| \`${r.code}\` | ${r.description.replaceAll('|', '\\|')} |`);
  return ['| Code | Meaning |', '|---|---|', ...rows].join('\n');
}

export function listedReasonCodes(readme: string): string {
  const from = readme.indexOf(START);
  const to = readme.indexOf(END);
  if (from < 0 || to < from) throw new Error(`README.md lacks the markers ${START} … ${END}`);
  return readme.slice(from + START.length, to).trim();
}

if (process.argv[1] === import.meta.filename) {
  const text = readFileSync(README, 'utf8');
  listedReasonCodes(text);
  const updated = `${text.slice(0, text.indexOf(START) + START.length)}\n${reasonCodesMarkdown()}\n${text.slice(text.indexOf(END))}`;
  writeFileSync(README, updated);
}
