/**
 * `tickline paper --config config/paper.yaml`: run a strategy against a simulated account. Without
 * `gateway.url` the local simulator is started in-process with an accelerated clock (so a session of
 * bars passes quickly); with one, the account must be a simulated account of that gateway and the
 * credentials come from TICKLINE_USERNAME and TICKLINE_API_KEY.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { ExitCode, UsageError } from './exit.ts';
import { runTrading, type LocalGateway } from '../adapters/live/run.ts';
import type { LiveConfig } from '../adapters/live/config.ts';
import type { Logger } from '../engine/log.ts';
import { startSimulator } from '../sim/index.ts';
import { Limits } from '../adapters/gateway/endpoints.ts';

export const summary = 'Paper trade a strategy on the local simulator (default) or a gateway sim account';

const USAGE = `Usage: tickline paper --config <file.yaml>

Runs the configured strategy on a simulated account, journaling every order to the configured SQLite
journal, until session.maxBars closed bars have passed or Ctrl-C. SIGUSR2 triggers the kill switch.

Options:
  --config <file>   paper configuration (see config/paper.yaml and docs/live.md)
  --help            this text`;

export async function startLocalSimulator(config: LiveConfig, logger: Logger): Promise<LocalGateway> {
  const dbPath = config.simulator.dbPath ?? path.join(path.dirname(path.resolve(config.journal)), 'paper-sim.sqlite');
  mkdirSync(path.dirname(path.resolve(dbPath)), { recursive: true });
  const sim = await startSimulator({
    clock: { speed: config.simulator.speed },
    seed: config.simulator.seed,
    dbPath,
    logger: logger.child({ part: 'sim' }),
    // The simulator counts its rate budgets on the wall clock; with the market running `speed` times
    // faster, the gateway's budgets (per 30 s and 60 s of market time) are `speed` times more requests
    // per wall window. The poll plan is checked in market time, as it would be against a real gateway.
    rateLimits: {
      bars: { requests: Limits.rate.bars.requests * Math.ceil(config.simulator.speed), windowMs: Limits.rate.bars.windowMs },
      default: { requests: Limits.rate.default.requests * Math.ceil(config.simulator.speed), windowMs: Limits.rate.default.windowMs },
    },
  });
  return {
    tradingUrl: sim.tradingUrl,
    adminUrl: sim.adminUrl,
    adminHeaders: sim.adminHeaders,
    credentials: { userName: sim.demo.userName, apiKey: sim.demo.apiKey },
    accountId: sim.demo.accountId,
    accountName: sim.demo.accountName,
    now: () => sim.clock.now(),
    speed: config.simulator.speed,
    close: () => sim.close(),
  };
}

export async function run(args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: { config: { type: 'string' }, help: { type: 'boolean' } }, strict: true });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return ExitCode.Ok;
  }
  if (!values.config) throw new UsageError(`--config is required\n\n${USAGE}`);
  return runTrading({ mode: 'paper', configFile: values.config, startLocal: startLocalSimulator });
}
