import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, parseConfig } from '../../../src/cli/config-loader.ts';
import { CredentialsError, credentialsFromEnv, liveConfigSchema } from '../../../src/adapters/live/live-config.ts';
import { assertPlan } from '../../../src/adapters/live/rate-plan.ts';

const ROOT = path.resolve(import.meta.dirname, '../../..');

describe('paper and live configuration', () => {
  it('the shipped configs are valid and their poll plans fit the rate budgets', () => {
    for (const file of ['config/paper.yaml', 'config/live.yaml']) {
      const c = loadConfig(path.join(ROOT, file), liveConfigSchema);
      const { closeDelayMs: _d, staleAfterMs: _s, ...intervals } = c.poll;
      expect(() =>
        assertPlan(
          c.contracts.map((contractId) => ({ contractId, timeframe: c.timeframe })),
          intervals,
        ),
      ).not.toThrow();
    }
  });

  it('reports every unknown key and bad value at once, with lines', () => {
    const text =
      'strategy: { name: x, id: 1bad, apiKey: secret }\ncontracts: []\ntimeframe: { unit: minute }\njournal: j.sqlite\npassword: nope\n';
    try {
      parseConfig(text, 'bad.yaml', liveConfigSchema);
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      const issues = (error as ConfigError).issues.map((i) => `${i.line}:${i.path}`);
      expect(issues).toEqual(
        expect.arrayContaining(['1:strategy.id', '1:strategy.apiKey', '2:contracts', '5:password']),
      );
    }
  });

  it('takes credentials only from the environment and names what is missing', () => {
    expect(credentialsFromEnv({ TICKLINE_USERNAME: 'u', TICKLINE_API_KEY: 'k' })).toEqual({
      userName: 'u',
      apiKey: 'k',
    });
    expect(() => credentialsFromEnv({ TICKLINE_USERNAME: 'u' })).toThrow(CredentialsError);
    expect(() => credentialsFromEnv({})).toThrow(/TICKLINE_USERNAME and TICKLINE_API_KEY/);
  });
});

describe('roll settings', () => {
  const base =
    'strategy: { name: sma-cross, id: bot }\ncontracts: [ES]\ntimeframe: { unit: minute }\njournal: j.sqlite\n';

  it('default to the backtest’s: roll, the root’s own days, 30 minutes before a pinned month’s settlement', () => {
    expect(parseConfig(base, 'ok.yaml', liveConfigSchema).roll).toEqual({ mode: 'roll', expiryMarginMinutes: 30 });
    expect(
      parseConfig(`${base}roll: { mode: flatten, daysBeforeExpiry: 8 }\n`, 'ok.yaml', liveConfigSchema).roll,
    ).toEqual({ mode: 'flatten', daysBeforeExpiry: 8, expiryMarginMinutes: 30 });
  });

  it('are strict: an unknown key or a bad mode is an error', () => {
    expect(() => parseConfig(`${base}roll: { mode: hold }\n`, 'bad.yaml', liveConfigSchema)).toThrow(ConfigError);
    expect(() => parseConfig(`${base}roll: { by: volume }\n`, 'bad.yaml', liveConfigSchema)).toThrow(/by/);
  });
});
