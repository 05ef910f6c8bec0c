/**
 * `evaluation:` in a paper or live config: the preset a backtest is judged by sets the guard's account
 * limits, contract cap and hours, so paper and live trade under the same floors; a limit set twice is a
 * config error with its line.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/cli/config-loader.ts';
import { loadTradingConfig } from '../../../src/cli/trading-config.ts';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'tickline-trading-config-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const BASE =
  'strategy: { name: sma-cross, id: bot }\ncontracts: [F.US.EP]\ntimeframe: { unit: minute }\njournal: j.sqlite\n';

function write(name: string, text: string): string {
  const file = path.join(dir, name);
  writeFileSync(file, text);
  return file;
}

describe('an evaluation in a paper or live config', () => {
  it("a preset's floors become the guard's limits, its cap the tighter one and its hours the sessions", () => {
    const config = loadTradingConfig(
      write(
        'paper.yaml',
        `${BASE}evaluation: topstep-50k\nrisk: { maxPositionSize: 8 }\nlimits: { personalDailyLossLimit: 400 }\n`,
      ),
    );
    expect(config.limits).toMatchObject({
      startingBalance: 50_000,
      dailyLossLimit: 1_000,
      maximumLossLimit: { amount: 2_000, variant: 'trailingEndOfDay', lockAbove: 0 },
      personalDailyLossLimit: 400,
    });
    expect(config.risk.maxPositionSize).toBe(5);
    expect(config.risk.sessions).toMatchObject({ timeZone: 'America/Chicago', flatBy: '15:10' });
  });

  it('an evaluation file of its own, relative to the config file', () => {
    write(
      'mine.yaml',
      'name: Mine\nsource: test\nreadOn: "2026-11-23"\nnote: test\nstartingBalance: 25000\nprofitTarget: 1500\nmaximumLossLimit: { amount: 1500, variant: static }\n',
    );
    const config = loadTradingConfig(write('live.yaml', `${BASE}evaluation: ./mine.yaml\n`));
    expect(config.limits).toMatchObject({
      startingBalance: 25_000,
      maximumLossLimit: { amount: 1_500, variant: 'static' },
    });
  });

  it('a limit the evaluation sets, set again in limits, is an error naming its line; an unknown preset lists the presets', () => {
    const file = write('clash.yaml', `${BASE}evaluation: topstep-50k\nlimits:\n  dailyLossLimit: 500\n`);
    expect(() => loadTradingConfig(file)).toThrow(ConfigError);
    expect(() => loadTradingConfig(file)).toThrow(
      /clash\.yaml:7.*limits\.dailyLossLimit.*set by the evaluation "Topstep 50K Trading Combine"/s,
    );
    expect(() => loadTradingConfig(write('unknown.yaml', `${BASE}evaluation: nosuch-firm\n`))).toThrow(
      /no evaluation preset "nosuch-firm".*topstep-50k/,
    );
  });
});
