/** The `sim` command's YAML config reaches the simulator: trailing maximum loss templates and the pending-answer hooks. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OrderSide, OrderType } from '../../../src/protocol/codes.ts';
import type { AdminClient } from '../../../src/adapters/gateway/admin-client.ts';
import type { TradingClient } from '../../../src/adapters/gateway/trading.ts';
import { parseConfig } from '../../../src/cli/config-loader.ts';
import { SimConfig, simOptions } from '../../../src/cli/sim.ts';
import { startSimulator, type SimHandle } from '../../../src/sim/index.ts';
import { ES, GENEROUS_RATES, START, accountIds, adminClient, tradingClient } from './sim-harness.ts';

const YAML = `
dbPath: ':memory:'
port: 0
templates:
  - name: TRAIL-LOCK
    startingBalance: 50000
    maximumLossLimit: { limit: 2000, maximumSource: 1, minimumSource: 0 }
  - name: TRAIL-INTRADAY
    maximumLossLimit: { limit: 1500, duration: 2, maximumSource: 2, minimumSource: null }
users:
  - userName: yaml-user
    apiKey: yaml-key
    accounts:
      - { name: Y-LOCK, template: TRAIL-LOCK, pendingPlaces: 1, pendingCancels: 1 }
`;

describe('sim YAML config', () => {
  let sim: SimHandle;
  let admin: AdminClient;
  let client: TradingClient;

  beforeAll(async () => {
    const config = parseConfig(YAML, 'sim.yaml', SimConfig);
    sim = await startSimulator({
      ...simOptions(config),
      clock: 'manual',
      startTime: START,
      rateLimits: GENEROUS_RATES,
    });
    admin = adminClient(sim);
    client = tradingClient(sim, { userName: 'yaml-user', apiKey: 'yaml-key' });
  });
  afterAll(async () => {
    await client.close();
    await admin.close();
    await sim.close();
  });

  /** The rule configuration of a template's maximum loss limit (rule ids are global, so look for it). */
  async function maximumLossRule(templateName: string) {
    const template = (await admin.listTemplates()).find((t) => t.name === templateName)!;
    for (let ruleId = 1; ruleId < 20; ruleId++) {
      const rule = await admin.ruleConfiguration(template.id, ruleId).catch(() => undefined);
      if (rule?.configuration.maximumLossLimit) return rule;
    }
    throw new Error(`template ${templateName} has no maximum loss limit rule`);
  }

  it('creates templates whose rule configuration reports maximumSource and minimumSource', async () => {
    const lock = await maximumLossRule('TRAIL-LOCK');
    expect(lock.configuration).toMatchObject({
      violationDuration: 1,
      maximumLossLimit: { limit: 2000, maximumSource: 1, minimumSource: 0 },
    });
    const intraday = await maximumLossRule('TRAIL-INTRADAY');
    expect(intraday.configuration).toMatchObject({
      violationDuration: 2,
      maximumLossLimit: { limit: 1500, maximumSource: 2, minimumSource: null },
    });
  });

  it('gives accounts the pending-answer hooks', async () => {
    const accountId = (await accountIds(client))['Y-LOCK']!;
    const order = { accountId, contractId: ES, type: OrderType.Limit, side: OrderSide.Bid, size: 1, limitPrice: 1000 };
    await expect(client.placeOrder(order)).rejects.toMatchObject({ errorCode: 6 });
    const id = await client.placeOrder(order);
    await expect(client.cancelOrder({ accountId, orderId: id })).rejects.toMatchObject({ errorCode: 4 });
    await client.cancelOrder({ accountId, orderId: id });
  });

  it('refuses unknown values of the two sources with the line', () => {
    const bad = 'templates:\n  - name: X\n    maximumLossLimit: { limit: 100, maximumSource: 3 }\n';
    expect(() => parseConfig(bad, 'sim.yaml', SimConfig)).toThrow(
      /sim\.yaml:3: templates\[0\]\.maximumLossLimit\.maximumSource/,
    );
  });
});
