import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { executeBacktest } from '../../../src/adapters/backtest/execute.ts';
import { BacktestConfig } from '../../../src/adapters/backtest/backtest-config.ts';
import { loadEvaluationRules, presetNames } from '../../../src/cli/evaluations.ts';
import { main } from '../../../src/cli/main.ts';
import { evaluationAccount, evaluationRulesSchema, withEvaluationRisk } from '../../../src/engine/evaluation-rules.ts';
import smaCross from '../../../src/strategies/sma-cross.ts';

const VARIANTS = ['static', 'trailingIntraday', 'trailingEndOfDay', 'trailingUntilLocked'] as const;

describe("a run's evaluation and the engine agree (one source of floors)", () => {
  for (const variant of VARIANTS) {
    it(`${variant}: the replay fails at the instant the engine recorded the maximum loss limit break`, async () => {
      const rules = evaluationRulesSchema.parse({
        name: 'tight',
        startingBalance: 50_000,
        profitTarget: 3_000,
        maximumLossLimit: { amount: 60, variant },
        dailyLossLimit: { amount: 40 },
      });
      const config = BacktestConfig.parse({
        strategy: { name: 'sma-cross', params: { fast: 10, slow: 30 } },
        contract: 'MESZ5',
        timeframe: { unit: 'minute', unitNumber: 5 },
        data: { source: 'synthetic', seed: 42, sessions: 10, start: '2025-01-05' },
        account: evaluationAccount(rules),
      });
      const outcome = await executeBacktest(config, 'agree', {
        strategy: smaCross,
        evaluation: rules,
        monteCarlo: { paths: 200 },
      });
      const engineBreak = outcome.result.violations.find((v) => v.rule === 'maximumLossLimit');
      expect(engineBreak).toBeDefined();
      const evaluation = outcome.report.evaluation!;
      expect(evaluation.outcome).toMatchObject({
        status: 'failed',
        rule: 'maximumLossLimit',
        time: Date.parse(engineBreak!.triggeredAt),
      });
      // The Monte Carlo draws only from the days the account traded, up to the break.
      expect(evaluation.monteCarlo!.sampleDays).toBe(evaluation.outcome.dayNumber);
    });
  }

  it("an evaluation caps the guard: the tighter position size wins, its hours replace the definition's", () => {
    const rules = evaluationRulesSchema.parse({
      name: 'x',
      startingBalance: 50_000,
      profitTarget: 3_000,
      maximumLossLimit: { amount: 2_000 },
      maximumContracts: 5,
      tradingHours: { open: '08:30', close: '15:00' },
    });
    expect(withEvaluationRisk({ maxPositionSize: 2 }, rules)).toEqual({
      maxPositionSize: 2,
      sessions: { open: '08:30', close: '15:00' },
    });
    expect(withEvaluationRisk({ maxPositionSize: 9, sessions: { open: '00:00', close: '23:59' } }, rules)).toEqual({
      maxPositionSize: 5,
      sessions: { open: '08:30', close: '15:00' },
    });
  });
});

describe('evaluation presets', () => {
  it('every shipped preset loads strictly and names its source, the date it was read and a note to check the rules', () => {
    expect(presetNames().length).toBeGreaterThanOrEqual(4);
    for (const name of presetNames()) {
      const preset = loadEvaluationRules(name);
      expect(preset.source.length, name).toBeGreaterThan(20);
      expect(preset.readOn, name).toMatch(/^\d{4}-\d{2}-\d{2}$/);
      expect(preset.note, name).toMatch(/check the firm's current rules/i);
    }
  });
});

describe('tickline evaluate', () => {
  let dir: string;
  let out: string[];
  let err: string[];
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'tickline-evaluate-'));
    out = [];
    err = [];
    vi.spyOn(process.stdout, 'write').mockImplementation(
      (chunk: string | Uint8Array) => (out.push(String(chunk)), true),
    );
    vi.spyOn(process.stderr, 'write').mockImplementation(
      (chunk: string | Uint8Array) => (err.push(String(chunk)), true),
    );
  });
  afterEach(() => {
    vi.restoreAllMocks();
    rmSync(dir, { recursive: true, force: true });
  });

  const definition = `strategy:\n  name: sma-cross\n  params: { fast: 5, slow: 20 }\ncontract: MESZ5\ndata: { source: synthetic, seed: 3, sessions: 3, start: 2025-03-02 }\n`;

  it('judges the run by a preset and prints the pass probability; evaluation.json holds it all', async () => {
    const file = path.join(dir, 'run.yaml');
    writeFileSync(file, `${definition}account: { dailyLossLimit: 500 }\n`);
    const outDir = path.join(dir, 'out');
    expect(
      await main([
        'evaluate',
        '--config',
        file,
        '--evaluation',
        'topstep-50k',
        '--out',
        outDir,
        '--paths',
        '500',
        '--seed',
        '7',
      ]),
    ).toBe(0);
    const text = out.join('');
    expect(text).toMatch(/\nEvaluation: Topstep 50K Trading Combine: (passed|failed|did not pass)/);
    expect(text).toMatch(
      /Monte Carlo: pass probability \d+\.\d+% \(95% CI [\d.]+% to [\d.]+%\); 500 paths of up to 60 days drawn from 3 \(seed 7, blocks of 1\)/,
    );
    expect(text).toContain("check the firm's current rules");
    const saved = JSON.parse(readFileSync(path.join(outDir, 'evaluation.json'), 'utf8'));
    expect(saved.rules).toMatchObject({
      name: 'Topstep 50K Trading Combine',
      maximumContracts: 5,
      readOn: '2026-11-23',
    });
    expect(saved.monteCarlo).toMatchObject({ paths: 500, seed: 7 });
    // The preset's rules ran the guard: the command-line evaluation replaced the definition's daily limit.
    const summary = JSON.parse(readFileSync(path.join(outDir, 'summary.json'), 'utf8'));
    expect(summary.closestApproach.map((a: { rule: string }) => a.rule)).toEqual([
      'dailyLossLimit',
      'maximumLossLimit',
    ]);
    // The same seed gives the same file.
    await main([
      'evaluate',
      '--config',
      file,
      '--evaluation',
      'topstep-50k',
      '--out',
      path.join(dir, 'again'),
      '--paths',
      '500',
      '--seed',
      '7',
    ]);
    expect(readFileSync(path.join(dir, 'again', 'evaluation.json'), 'utf8')).toBe(
      readFileSync(path.join(outDir, 'evaluation.json'), 'utf8'),
    );
  });

  it('lists the presets', async () => {
    expect(await main(['evaluate', '--list'])).toBe(0);
    expect(out.join('')).toMatch(/topstep-50k\s+Topstep 50K Trading Combine, read on 2026-11-23/);
  });

  it('names what is wrong: an unknown preset, no evaluation, a definition setting what its evaluation sets', async () => {
    const file = path.join(dir, 'run.yaml');
    writeFileSync(file, definition);
    expect(await main(['evaluate', '--config', file, '--evaluation', 'nope'])).toBe(2);
    expect(err.join('')).toContain('no evaluation preset "nope"; the presets are apex-50k');
    expect(await main(['evaluate', '--config', file])).toBe(2);
    expect(err.join('')).toContain('no evaluation: pass --evaluation');
    const clash = path.join(dir, 'clash.yaml');
    writeFileSync(clash, `${definition}evaluation: topstep-50k\naccount:\n  maximumLossLimit: { amount: 100 }\n`);
    expect(await main(['backtest', '--config', clash])).toBe(2);
    expect(err.join('')).toContain(
      `${clash}:8: account.maximumLossLimit: set by the evaluation "Topstep 50K Trading Combine": leave it out`,
    );
  });
});
