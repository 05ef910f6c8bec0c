import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { README, listedReasonCodes, reasonCodesMarkdown } from './reason-codes.ts';

describe('README', () => {
  const readme = readFileSync(README, 'utf8');

  it('lists exactly the risk guard reason codes of the code', () => {
    expect(listedReasonCodes(readme), 'regenerate with: node --import tsx test/unit/docs/reason-codes.ts').toBe(
      reasonCodesMarkdown(),
    );
  });

  it('keeps the quick start true: npm start and npm test are scripts', () => {
    const pkg = JSON.parse(readFileSync(path.join(path.dirname(README), 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    expect(readme).toMatch(/npm install\nnpm start[^\n]*\nnpm test/);
    expect(pkg.scripts.start).toContain('backtest');
    expect(pkg.scripts.test).toBe('biome ci && tsc --noEmit && vitest run');
  });

  it('leaves the benchmark figures to docs/bench.md (a copy here would age with every run)', () => {
    const section = /^## Benchmarks\n([\s\S]*?)^## /m.exec(readme)?.[1] ?? '';
    expect(section).toContain('(docs/bench.md)');
    expect(section).not.toMatch(/^\|/m);
    expect(section).not.toMatch(/bars\/s|req\/s/);
  });
});
