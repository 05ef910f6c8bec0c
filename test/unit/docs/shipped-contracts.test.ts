/**
 * The shipped paper and live configs and `init`'s paper.yaml name symbol ids (`F.US.EP`), never a delivery
 * month: a month expires, and a new user's first paper run would send every order to a dead contract. A
 * month of the real ES file's years (before 2020) names history, which does not expire, and is allowed.
 * The check reads the files against the contract calendar, not today's date, so it gives the same answer
 * next month. The code blocks of the README and of docs/ (and the examples docs/api.md shows) are held to
 * the same rule: an example copied from them must still work after the month it would name expires.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CALENDAR } from '../../../src/market/contract-months.ts';

const REPO = path.resolve(import.meta.dirname, '../../..');
/** History from before the simulator's and the gateway's years: the ES file's months. */
const HISTORY_BEFORE = Date.UTC(2020, 0, 1);
const ID = /\bCON\.F\.US\.[A-Z0-9]+\.[FGHJKMNQUVXZ]\d{2}\b/g;
const NAME = new RegExp(
  `\\b(?:${CALENDAR.roots()
    .map((r) => r.root)
    .join('|')})[FGHJKMNQUVXZ]\\d{1,2}\\b`,
  'g',
);

/** Every month a text names (ids and names), with the expiry the calendar gives it. */
function namedMonths(text: string): { text: string; expiry: number }[] {
  const found: { text: string; expiry: number }[] = [];
  for (const match of [...text.matchAll(ID), ...text.matchAll(NAME)]) {
    // A one-digit year is read as the nearest such year to the history's era's end, so `ESZ5` is 2025.
    const contract = CALENDAR.resolve(match[0], HISTORY_BEFORE + 6 * 365 * 86_400_000);
    if (contract) found.push({ text: match[0], expiry: contract.expiry });
  }
  return found;
}

function modernMonths(text: string): string[] {
  return namedMonths(text)
    .filter((m) => m.expiry >= HISTORY_BEFORE)
    .map((m) => m.text);
}

describe('trading configs name no month that time will expire', () => {
  it('finds the months a text names (the check can fail)', () => {
    expect(modernMonths('contracts: [CON.F.US.EP.Z25]  # or ESH26, MESZ5, F.US.EP')).toEqual([
      'CON.F.US.EP.Z25',
      'ESH26',
      'MESZ5',
    ]);
    expect(modernMonths('contract: ESH14  # CON.F.US.EP.Z13 in the ES file')).toEqual([]);
  });

  it('in the shipped paper and live configs', () => {
    const offenders = ['config/paper.yaml', 'config/live.yaml'].flatMap((file) =>
      modernMonths(readFileSync(path.join(REPO, file), 'utf8')).map((month) => `${file}: ${month}`),
    );
    expect(offenders).toEqual([]);
  });

  it("in init's paper.yaml", () => {
    const template = readFileSync(path.join(REPO, 'src/cli/init-files.ts'), 'utf8');
    const paper = /const PAPER_YAML = `([\s\S]*?)`;/.exec(template);
    expect(paper).not.toBeNull();
    expect(modernMonths(paper![1]!)).toEqual([]);
  });
});

/** The fenced code blocks of a markdown text. */
function codeBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/^```[^\n]*\n([\s\S]*?)^```/gm)].map((m) => m[1]!);
}

describe('documentation code names no month that time will expire', () => {
  it('finds the code blocks of a text (the check can fail)', () => {
    const text = ['prose ESZ5 is not code', '```sh', 'tickline fetch-bars --contract ESZ5', '```', ''].join('\n');
    expect(codeBlocks(text).flatMap(modernMonths)).toEqual(['ESZ5']);
  });

  it("in the README's and docs' code blocks and docs/examples", () => {
    const docs = readdirSync(path.join(REPO, 'docs')).filter((f) => f.endsWith('.md'));
    const examples = readdirSync(path.join(REPO, 'docs', 'examples')).filter((f) => f.endsWith('.ts'));
    const offenders = [
      ...['README.md', ...docs.map((f) => `docs/${f}`)].flatMap((file) =>
        codeBlocks(readFileSync(path.join(REPO, file), 'utf8'))
          .flatMap(modernMonths)
          .map((month) => `${file}: ${month}`),
      ),
      ...examples.flatMap((f) =>
        modernMonths(readFileSync(path.join(REPO, 'docs', 'examples', f), 'utf8')).map(
          (month) => `docs/examples/${f}: ${month}`,
        ),
      ),
    ];
    expect(offenders).toEqual([]);
  });
});
